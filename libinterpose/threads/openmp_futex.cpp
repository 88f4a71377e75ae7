#include "threads/openmp_futex.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "threads/lockstep.hpp"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1  // si_code of a seccomp trap's SIGSYS
#endif
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

namespace s4bxi::interpose::openmp_futex {
namespace {

struct Text {
    const char* name = nullptr;
    uintptr_t begin = 0;
    uintptr_t end = 0;  // one past the last byte
};

int find_text(dl_phdr_info* info, size_t, void* raw)
{
    auto* text = static_cast<Text*>(raw);
    if (!info->dlpi_name || std::strcmp(info->dlpi_name, text->name) != 0) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[i];
        if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
        text->begin = info->dlpi_addr + segment.p_vaddr;
        text->end = text->begin + segment.p_memsz;
        return 1;
    }
    return 0;
}

// Traps futex calls whose instruction lies in [begin, end): libgomp's code only, not libc's
// (the lockstep's own hand-over, glibc's locks) nor anyone else's. libseccomp cannot test
// the instruction pointer: classic BPF, by hand. The segment must not cross a 4 GiB line
// (BPF compares 32-bit words).
bool trap_futex_calls_in(const Text& text)
{
    uint64_t last = text.end - 1;
    uint32_t high = static_cast<uint32_t>(text.begin >> 32);
    if (text.end <= text.begin || static_cast<uint32_t>(last >> 32) != high) return false;
    constexpr uint32_t kIpLow = offsetof(seccomp_data, instruction_pointer);
    sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 8),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 6),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, high, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, static_cast<uint32_t>(text.begin), 0, 2),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, static_cast<uint32_t>(last), 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    // Every thread of the process (TSYNC), or, if one cannot take it, the creating thread
    // and the workers it starts, which inherit it.
    for (unsigned long flags : {SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_SPEC_ALLOW,
                                static_cast<unsigned long>(SECCOMP_FILTER_FLAG_TSYNC),
                                static_cast<unsigned long>(SECCOMP_FILTER_FLAG_SPEC_ALLOW), 0ul})
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program) == 0) return true;
    return false;
}

struct sigaction g_previous {};

// The call as the thread made it, but for its third argument when `value` is given.
long real_futex(const greg_t* regs, greg_t value)
{
    long rc = syscall(SYS_futex, regs[REG_RDI], regs[REG_RSI], value, regs[REG_R10], regs[REG_R8], regs[REG_R9]);
    return rc == -1 ? -errno : rc;
}

long real_futex(const greg_t* regs)
{
    return real_futex(regs, regs[REG_RDX]);
}

[[noreturn]] void unsupported(int op)
{
    std::fprintf(stderr,
                 "s4bxi: rank %d: not supported yet: futex operation %d of the OpenMP runtime in a thread in "
                 "lockstep\n",
                 rank_id(), op);
    std::fflush(stderr);
    _exit(127);
}

// What the kernel would answer, the lockstep deciding who waits and who wakes.
long answer(const greg_t* regs)
{
    if (!on_lockstep_thread()) return real_futex(regs);
    auto* word = reinterpret_cast<const uint32_t*>(regs[REG_RDI]);
    int op = static_cast<int>(regs[REG_RSI]);
    auto value = static_cast<uint32_t>(regs[REG_RDX]);
    bool timed = regs[REG_R10] != 0;
    bool any_bits = static_cast<uint32_t>(regs[REG_R9]) == FUTEX_BITSET_MATCH_ANY;
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT_BITSET:
        if (!any_bits) unsupported(op);
        [[fallthrough]];
    case FUTEX_WAIT:
        return lockstep::futex_wait(word, value, timed);
    case FUTEX_WAKE_BITSET:
        if (!any_bits) unsupported(op);
        [[fallthrough]];
    case FUTEX_WAKE: {
        int count = static_cast<int>(value);
        int woken = lockstep::futex_wake(word, count);
        // A thread outside the lockstep may wait in the kernel on the same word: as many
        // as the call may still wake.
        if (woken < count) {
            long more = real_futex(regs, count - woken);
            if (more > 0) woken += static_cast<int>(more);
        }
        return woken;
    }
    default:
        unsupported(op);
    }
}

void on_sigsys(int signal, siginfo_t* info, void* context)
{
    if (info->si_code != SYS_SECCOMP || info->si_syscall != SYS_futex) {
        // Someone else's trap: theirs to answer.
        if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
            g_previous.sa_sigaction(signal, info, context);
            return;
        }
        if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
            g_previous.sa_handler(signal);
            return;
        }
        ::signal(SIGSYS, SIG_DFL);
        raise(SIGSYS);
        return;
    }
    int saved_errno = errno;
    greg_t* regs = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
    regs[REG_RAX] = answer(regs);
    errno = saved_errno;
}

bool install(const char* library)
{
    Text text;
    text.name = library;
    if (dl_iterate_phdr(find_text, &text) == 0) return false;
    struct sigaction action {};
    action.sa_sigaction = on_sigsys;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, &g_previous) != 0) return false;
    if (trap_futex_calls_in(text)) return true;
    sigaction(SIGSYS, &g_previous, nullptr);
    return false;
}

}  // namespace

bool runtime_thread(void* (*start)(void*))
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(start), &info) || !info.dli_fname) return false;
    const char* slash = std::strrchr(info.dli_fname, '/');
    if (std::strncmp(slash ? slash + 1 : info.dli_fname, "libgomp.so", 10) != 0) return false;
    // Called by the simulated thread before the lockstep starts, or by the thread with the
    // turn: never by two threads at once.
    static int trapped = 0;  // 0: not tried yet; 1: trapped; -1: could not be
    if (trapped == 0) trapped = install(info.dli_fname) ? 1 : -1;
    return trapped == 1;
}

}  // namespace s4bxi::interpose::openmp_futex

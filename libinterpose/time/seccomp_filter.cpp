// Rank side of the direct-syscall time trap: a seccomp filter whose time syscalls become
// user notifications for the server (see seccomp_filter.hpp and docs/time.md).
#include "time/seccomp_filter.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "s4bxi/time_math.hpp"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

namespace s4bxi::interpose {
namespace {

using namespace s4bxi::timemath;

constexpr clockid_t kVirtualClocks[] = {kRealtime,        kMonotonic, kMonotonicRaw,  kRealtimeCoarse,
                                        kMonotonicCoarse, kBoottime,  kRealtimeAlarm, kBoottimeAlarm,
                                        kTai};
constexpr clockid_t kSleepClocks[] = {kRealtime, kMonotonic, kBoottime, kTai};

// The kernel reads a clockid_t argument as a 32-bit int: compare only the low half.
scmp_arg_cmp clock_is(unsigned arg, clockid_t clock)
{
    return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, 0xffffffffull, static_cast<uint32_t>(clock)};
}

scmp_arg_cmp not_magic(unsigned arg)
{
    return scmp_arg_cmp{arg, SCMP_CMP_NE, kUntrappedMagic, 0};
}

bool add_rules(scmp_filter_ctx ctx)
{
    const uint32_t notify = SCMP_ACT_NOTIFY;
    for (clockid_t clock : kVirtualClocks)
        if (seccomp_rule_add(ctx, notify, SCMP_SYS(clock_gettime), 2, clock_is(0, clock), not_magic(2)) != 0)
            return false;
    for (clockid_t clock : kSleepClocks)
        if (seccomp_rule_add(ctx, notify, SCMP_SYS(clock_nanosleep), 2, clock_is(0, clock), not_magic(4)) != 0)
            return false;
    return seccomp_rule_add(ctx, notify, SCMP_SYS(gettimeofday), 1, not_magic(2)) == 0 &&
           seccomp_rule_add(ctx, notify, SCMP_SYS(time), 1, not_magic(1)) == 0 &&
           seccomp_rule_add(ctx, notify, SCMP_SYS(nanosleep), 1, not_magic(2)) == 0;
}

// Loads the program libseccomp generated with flags libseccomp 2.5 does not know
// (WAIT_KILLABLE_RECV). Returns the listener fd (close-on-exec) or -1.
int load_with_flags(scmp_filter_ctx ctx, unsigned long flags)
{
    int memfd = static_cast<int>(syscall(SYS_memfd_create, "s4bxi-seccomp", MFD_CLOEXEC));
    if (memfd < 0) return -1;
    int listener = -1;
    struct stat st {};
    if (seccomp_export_bpf(ctx, memfd) == 0 && fstat(memfd, &st) == 0 && st.st_size > 0 &&
        st.st_size % sizeof(sock_filter) == 0 && st.st_size <= 4096 * static_cast<off_t>(sizeof(sock_filter))) {
        void* code = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, memfd, 0);
        if (code != MAP_FAILED) {
            sock_fprog program{static_cast<unsigned short>(st.st_size / sizeof(sock_filter)),
                               static_cast<sock_filter*>(code)};
            listener = static_cast<int>(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program));
            if (listener < 0) listener = -1;
            munmap(code, static_cast<size_t>(st.st_size));
        }
    }
    close(memfd);
    return listener;
}

}  // namespace

int install_time_trap(bool wait_killable)
{
    int saved_errno = errno;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) return -1;
    int listener = -1;
    // SPEC_ALLOW / CTL_SSB: before Linux 5.16 the kernel's default turned speculation
    // mitigations (SSBD, STIBP) on for every process under a seccomp filter, slowing the
    // application's own code, which the measured CPU model charges. The filter is no
    // security boundary: leave the process as it was (refused by old libseccomp: ignored).
    (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_SSB, 1);
    // 32-bit (int 0x80) and x32 syscalls, e.g. of a 32-bit child, pass untouched: a child
    // must never be killed by our filter.
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW) == 0 && add_rules(ctx) &&
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
        if (wait_killable) {
            listener = load_with_flags(ctx, SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV |
                                                SECCOMP_FILTER_FLAG_SPEC_ALLOW);
        } else if (seccomp_load(ctx) == 0) {
            listener = seccomp_notify_fd(ctx);
            if (listener >= 0) {
                // libseccomp's listener may lack close-on-exec: exec'd children must not hold it.
                int fd_flags = fcntl(listener, F_GETFD);
                if (fd_flags >= 0) fcntl(listener, F_SETFD, fd_flags | FD_CLOEXEC);
            }
        }
    }
    seccomp_release(ctx);
    errno = saved_errno;
    return listener;
}

int install_time_trap()
{
    int listener = install_time_trap(true);
    return listener >= 0 ? listener : install_time_trap(false);
}

long untrapped_clock_gettime(clockid_t clock, timespec* ts)
{
    return syscall(SYS_clock_gettime, clock, ts, kUntrappedMagic);
}

long untrapped_gettimeofday(timeval* tv, void* tz)
{
    return syscall(SYS_gettimeofday, tv, tz, kUntrappedMagic);
}

long untrapped_nanosleep(const timespec* req, timespec* rem)
{
    return syscall(SYS_nanosleep, req, rem, kUntrappedMagic);
}

long untrapped_clock_nanosleep(clockid_t clock, int flags, const timespec* req, timespec* rem)
{
    return syscall(SYS_clock_nanosleep, clock, flags, req, rem, kUntrappedMagic);
}

}  // namespace s4bxi::interpose

// Fatal signals of a rank: backtrace (libunwind, local), report to the server, die of the
// signal. Everything the handler does is async-signal-safe: static buffers, no malloc, no
// stdio; libunwind is warmed up at installation so that it does not initialise itself in
// the handler.
#define UNW_LOCAL_ONLY
#include "crash/crash_handler.hpp"

#include <fcntl.h>
#include <libunwind.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "time/seccomp_filter.hpp"

namespace s4bxi::interpose {

// Of the rank's state (rank/rank_state.cpp); weak so that this file also links where it is
// absent (tests).
bool in_call() __attribute__((weak));

namespace crash {
namespace {

struct Writer {
    char* out;
    size_t capacity;  // including the NUL
    size_t pos = 0;
    bool ok = true;

    void put(char c)
    {
        if (ok && pos + 1 < capacity) out[pos++] = c;
        else ok = false;
    }
    void text(const char* s, size_t max_chars = ~size_t{0})
    {
        size_t n = 0;
        for (; s[n] && n < max_chars; ++n) put(s[n]);
        if (s[n]) {
            put('.');
            put('.');
            put('.');
        }
    }
    void hex(uintptr_t value)
    {
        char digits[2 * sizeof value];
        int n = 0;
        do {
            digits[n++] = "0123456789abcdef"[value & 0xf];
            value >>= 4;
        } while (value);
        put('0');
        put('x');
        while (n) put(digits[--n]);
    }
    void dec(uint64_t value)
    {
        char digits[20];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + value % 10);
            value /= 10;
        } while (value);
        while (n) put(digits[--n]);
    }
    // Keeps the current line if it fitted whole, else drops it. Returns whether it fitted.
    bool commit(size_t line_start)
    {
        if (ok) return true;
        pos = line_start;
        ok = true;
        return false;
    }
};

}  // namespace

size_t format_report(char* out, size_t capacity, int signal_number, bool has_address, uintptr_t address,
                     const Frame* frames, size_t count)
{
    if (capacity == 0) return 0;
    Writer w{out, capacity};
    size_t start = w.pos;
    w.text("signal=");
    w.dec(static_cast<uint64_t>(signal_number < 0 ? 0 : signal_number));
    w.put('\n');
    if (!w.commit(start)) {
        out[0] = '\0';
        return 0;
    }
    if (has_address) {
        start = w.pos;
        w.text("addr=");
        w.hex(address);
        w.put('\n');
        w.commit(start);
    }
    size_t written = 0;
    for (; written < count; ++written) {
        const Frame& f = frames[written];
        start = w.pos;
        w.put('#');
        w.dec(written);
        w.put(' ');
        w.hex(f.pc);
        w.put(' ');
        if (f.name && f.name[0]) {
            w.text(f.name, kMaxNameChars);
            w.put('+');
            w.hex(f.offset);
        } else {
            w.text("??");
        }
        if (f.module && f.module[0]) {
            w.text(" (");
            w.text(f.module, 64);
            w.put(')');
        }
        w.put('\n');
        if (!w.commit(start)) break;
    }
    if (written < count) {
        start = w.pos;
        w.text("#... (");
        w.dec(count - written);
        w.text(" more frames)\n");
        w.commit(start);
    }
    out[w.pos] = '\0';
    return w.pos;
}

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kMaxFrames = 48;
constexpr size_t kModuleChars = 64;

alignas(64) char g_alt_stack[64 * 1024];

// The thread that is reporting, and the signal it reports. Static buffers below are used
// by that thread only.
std::atomic<pid_t> g_crashing_tid{0};
std::atomic<int> g_crash_signal{0};
Frame g_frames[kMaxFrames];
char g_names[kMaxFrames][kMaxNameChars + 1];
char g_modules[kMaxFrames][kModuleChars];
char g_maps_chunk[4096];
char g_line[1024];
wire::TextArgs g_report;

pid_t gettid_raw()
{
    return static_cast<pid_t>(syscall(SYS_gettid));
}

// Restores the default action and re-raises on this thread: a raised signal (abort, kill)
// is delivered as soon as it is unblocked; a fault re-executes the faulting instruction
// when the handler returns and is delivered then.
void die_of(int signal_number)
{
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
    syscall(SYS_tgkill, getpid(), gettid_raw(), signal_number);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

uintptr_t parse_hex(const char*& p)
{
    uintptr_t value = 0;
    for (;; ++p) {
        char c = *p;
        if (c >= '0' && c <= '9') value = value * 16 + static_cast<uintptr_t>(c - '0');
        else if (c >= 'a' && c <= 'f') value = value * 16 + static_cast<uintptr_t>(c - 'a' + 10);
        else return value;
    }
}

// One line of /proc/self/maps: "start-end perms offset dev inode   path".
void match_maps_line(const char* line, size_t count)
{
    const char* p = line;
    uintptr_t start = parse_hex(p);
    if (*p != '-') return;
    ++p;
    uintptr_t end = parse_hex(p);
    const char* path = nullptr;
    for (int field = 0; *p && field < 4; ++field) {  // perms, offset, dev, inode
        while (*p == ' ') ++p;
        while (*p && *p != ' ') ++p;
    }
    while (*p == ' ') ++p;
    if (*p) path = p;
    if (!path) return;
    const char* base = path;
    for (const char* q = path; *q; ++q)
        if (*q == '/') base = q + 1;
    for (size_t i = 0; i < count; ++i) {
        if (g_modules[i][0] || g_frames[i].pc < start || g_frames[i].pc >= end) continue;
        size_t n = 0;
        for (; base[n] && n + 1 < kModuleChars; ++n) g_modules[i][n] = base[n];
        g_modules[i][n] = '\0';
    }
}

// Names the file each frame's pc belongs to, from /proc/self/maps (open/read: safe here).
void find_modules(size_t count)
{
    int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
    if (fd < 0) return;
    size_t line_length = 0;
    while (true) {
        ssize_t got = read(fd, g_maps_chunk, sizeof g_maps_chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        for (ssize_t i = 0; i < got; ++i) {
            char c = g_maps_chunk[i];
            if (c == '\n') {
                g_line[line_length] = '\0';
                match_maps_line(g_line, count);
                line_length = 0;
            } else if (line_length + 1 < sizeof g_line) {
                g_line[line_length++] = c;
            }
        }
    }
    close(fd);
}

size_t collect_frames(void* ucontext)
{
    unw_cursor_t cursor;
    unw_context_t context;
    bool from_signal = ucontext &&
                       unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) == 0;
    if (!from_signal) {
        // Unwind from here and skip up to the signal frame.
        if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
        while (unw_is_signal_frame(&cursor) <= 0)
            if (unw_step(&cursor) <= 0) return 0;
        if (unw_step(&cursor) <= 0) return 0;
    }
    size_t count = 0;
    do {
        unw_word_t ip = 0, offset = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        g_names[count][0] = '\0';
        g_modules[count][0] = '\0';
        int rc = unw_get_proc_name(&cursor, g_names[count], sizeof g_names[count], &offset);
        if (rc != 0 && rc != -UNW_ENOMEM) {  // ENOMEM: name cut to the buffer, still useful
            g_names[count][0] = '\0';
            offset = 0;
        }
        g_frames[count] = Frame{static_cast<uintptr_t>(ip), g_names[count], static_cast<uintptr_t>(offset),
                                g_modules[count]};
        ++count;
    } while (count < kMaxFrames && unw_step(&cursor) > 0);
    return count;
}

void write_stderr(const char* text, size_t length)
{
    while (length) {
        ssize_t n = write(STDERR_FILENO, text, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        length -= static_cast<size_t>(n);
    }
}

void report(int signal_number, siginfo_t* info, void* ucontext)
{
    size_t count = collect_frames(ucontext);
    find_modules(count);
    bool has_address = signal_number != SIGABRT && info && info->si_code > 0;
    uintptr_t address = has_address ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
    g_report.length = static_cast<uint32_t>(
        format_report(g_report.text, sizeof g_report.text, signal_number, has_address, address, g_frames, count));
    // The channel belongs to the simulated thread, and is busy inside call(): from
    // anywhere else the report goes to stderr (the server still sees the signal).
    if (!on_simulated_thread() || (in_call && in_call())) {
        static const char kHeader[] = "s4bxi: fatal signal outside the rank's simulated thread or inside a request "
                                      "to the server; backtrace:\n";
        write_stderr(kHeader, sizeof kHeader - 1);
        write_stderr(g_report.text, g_report.length);
        return;
    }
    call(wire::Op::Backtrace, &g_report, sizeof g_report);
}

void handler(int signal_number, siginfo_t* info, void* ucontext)
{
    int saved_errno = errno;
    pid_t self = gettid_raw();
    pid_t expected = 0;
    if (!g_crashing_tid.compare_exchange_strong(expected, self)) {
        if (expected == self) {
            // A fault while reporting: give up the report, die of the first signal.
            die_of(g_crash_signal.load());
            errno = saved_errno;
            return;
        }
        // Another thread is reporting and will end the process; give it time to do so.
        for (int i = 0; i < 200; ++i) {
            timespec pause{0, 10'000'000};
            untrapped_nanosleep(&pause, nullptr);
        }
        die_of(signal_number);
        errno = saved_errno;
        return;
    }
    g_crash_signal.store(signal_number);
    // A forked child inherits the handler but is not a rank: it just dies.
    if (is_rank()) report(signal_number, info, ucontext);
    die_of(signal_number);
    errno = saved_errno;
}

}  // namespace
}  // namespace crash

void install_crash_handler()
{
    using namespace crash;
    stack_t stack{};
    stack.ss_sp = g_alt_stack;
    stack.ss_size = sizeof g_alt_stack;
    stack.ss_flags = 0;
    sigaltstack(&stack, nullptr);

    // Warm libunwind up (lazy binding, per-process caches) outside of any handler.
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
        char name[64];
        unw_word_t offset;
        unw_get_proc_name(&cursor, name, sizeof name, &offset);
        unw_step(&cursor);
    }

    struct sigaction action {};
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int signal_number : kSignals) sigaction(signal_number, &action, nullptr);
}

}  // namespace s4bxi::interpose

// What /proc says of a thread of another process. Shared by the server (is a rank blocked
// outside? through simkernel/host/process_access.hpp, for ranks of its own machine) and the
// rank side (does the simulated thread wait for something of its own?).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace s4bxi {

// The text of /proc/PID/task/TID/NAME into `text` (NUL-terminated); false if unreadable.
inline bool read_thread_file(int pid, int tid, const char* name, char* text, size_t size)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/%s", pid, tid, name);
    FILE* file = std::fopen(path, "re");
    if (!file) return false;
    size_t length = std::fread(text, 1, size - 1, file);
    std::fclose(file);
    text[length] = '\0';
    return true;
}

// What follows the command name in a thread's stat text (the name may hold spaces and
// parentheses): " S ...", from the space before the state (field 3) on; nullptr if the
// text is no stat line.
inline const char* stat_after_name(const char* text)
{
    const char* end = std::strrchr(text, ')');
    return end && end[1] == ' ' ? end + 1 : nullptr;
}

// The page faults, minor and major (fields 10 and 12), in a thread's stat text; false if
// they cannot be read.
inline bool stat_page_faults(const char* text, unsigned long long& faults)
{
    const char* fields = stat_after_name(text);
    unsigned long long minor = 0, major = 0;
    if (!fields || std::sscanf(fields, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minor, &major) != 2)
        return false;
    faults = minor + major;
    return true;
}

// The thread's CPU time in ns from its stat text, utime + stime (fields 14 and 15, clock
// ticks): what a kernel without CONFIG_SCHED_INFO (no schedstat) gives; false if unreadable.
inline bool stat_cpu_ns(const char* text, uint64_t& ns)
{
    const char* fields = stat_after_name(text);
    unsigned long long utime = 0, stime = 0;
    if (!fields || std::sscanf(fields, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return false;
    static const long ticks = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
    ns = (utime + stime) * (1000000000ull / static_cast<unsigned long long>(ticks));
    return true;
}

// The number after `key` ("VmHWM:", "nonvoluntary_ctxt_switches:") in a /proc status file
// (/proc/PID/status, /proc/PID/task/TID/status); 0 when it is not there.
inline uint64_t proc_status_figure(const char* path, const char* key)
{
    FILE* file = std::fopen(path, "re");
    if (!file) return 0;
    char line[256];
    uint64_t value = 0;
    size_t key_length = std::strlen(key);
    while (std::fgets(line, sizeof line, file))
        if (std::strncmp(line, key, key_length) == 0) {
            value = std::strtoull(line + key_length, nullptr, 10);
            break;
        }
    std::fclose(file);
    return value;
}

// The scheduler state of a thread ('R' running or runnable, 'S' sleeping, 'D'
// uninterruptible, 'T'/'t' stopped...), or '\0' when it cannot be read.
inline char thread_state(int pid, int tid)
{
    char text[512];
    if (!read_thread_file(pid, tid, "stat", text, sizeof text)) return '\0';
    const char* fields = stat_after_name(text);
    return fields ? fields[1] : '\0';
}

// True for a thread asleep in a wait that something else ends: 'S', a futex, a pipe, a
// socket, a PMIx fence. Not 'D', the uninterruptible sleep of the kernel's own work for the
// thread, which ends by itself: a major page fault reading back a page the host's memory
// management paged out (proactive reclaim such as DAMON's pages out code that has not run
// for a while), I/O. Taken for a wait on others, such a sleep of 20 ms on a host with slow
// storage would let simulated time run without a rank that only computes, and its next
// call would come at another date.
inline bool sleeps_on_others(char state)
{
    return state == 'S';
}

}  // namespace s4bxi

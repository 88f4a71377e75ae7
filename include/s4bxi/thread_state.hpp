// What /proc says of a thread of another process. Shared by the server (is a rank blocked
// outside?) and the rank side (does the simulated thread wait for something of its own?).
#pragma once

#include <cstdio>
#include <cstring>

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

// The scheduler state of a thread ('R' running or runnable, 'S' sleeping, 'D'
// uninterruptible, 'T'/'t' stopped...), or '\0' when it cannot be read.
inline char thread_state(int pid, int tid)
{
    char text[512];
    if (!read_thread_file(pid, tid, "stat", text, sizeof text)) return '\0';
    const char* state = std::strrchr(text, ')');  // the command name may hold spaces
    return state && state[1] == ' ' ? state[2] : '\0';
}

// True when the thread sleeps in a syscall held by a seccomp filter for its supervisor
// (the kernel function it waits in, /proc/.../wchan).
inline bool thread_waits_for_seccomp_supervisor(int pid, int tid)
{
    char text[64];
    return read_thread_file(pid, tid, "wchan", text, sizeof text) &&
           std::strcmp(text, "seccomp_do_user_notification") == 0;
}

}  // namespace s4bxi

// The scheduler state of a thread, as /proc shows it ('R' running or runnable, 'S'
// sleeping, 'D' uninterruptible, 'T'/'t' stopped...), or '\0' when it cannot be read.
// Shared by the server (is a rank blocked outside?) and the rank side (does the simulated
// thread wait for something of its own?).
#pragma once

#include <cstdio>
#include <cstring>

namespace s4bxi {

inline char thread_state(int pid, int tid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    FILE* stat = std::fopen(path, "re");
    if (!stat) return '\0';
    char text[512];
    size_t length = std::fread(text, 1, sizeof text - 1, stat);
    std::fclose(stat);
    text[length] = '\0';
    const char* state = std::strrchr(text, ')');  // the command name may hold spaces
    return state && state[1] == ' ' ? state[2] : '\0';
}

}  // namespace s4bxi

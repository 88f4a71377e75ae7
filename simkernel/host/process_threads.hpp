// Which thread ids belong to one process, asked of that very process: the kernel's list of
// its threads (/proc/PID/task), held open from the start, answers for it even once the
// process is gone and its pid is another's (that one, inheriting a rank's seccomp filter,
// must not pass for the rank).
#pragma once

#include <sys/types.h>

namespace s4bxi::sim {

class LocalProcesses;

class ProcessThreads {
public:
    ProcessThreads() = default;  // of no process: holds no thread
    ~ProcessThreads();
    ProcessThreads(const ProcessThreads&) = delete;
    ProcessThreads& operator=(const ProcessThreads&) = delete;
    ProcessThreads(ProcessThreads&& other) noexcept;
    ProcessThreads& operator=(ProcessThreads&& other) noexcept;

    // `tid` is a thread of the process, which still lives.
    bool contains(pid_t tid) const;

private:
    friend class LocalProcesses;  // opens it, for a process of the server's machine
    explicit ProcessThreads(pid_t pid);
    void close_directory();
    int task_directory_fd_ = -1;
};

}  // namespace s4bxi::sim

// The CPU time of one thread of another process (a rank's simulated thread), as its own
// CLOCK_THREAD_CPUTIME_ID shows it: the scheduler's sum_exec_runtime, first field of
// /proc/PID/task/TID/schedstat. Without CONFIG_SCHED_INFO, utime + stime of
// /proc/PID/task/TID/stat (clock ticks). While the thread runs, the kernel brings the
// figure up to date at each tick, so a reading may lag by one tick: never ahead. Also the
// thread's page faults, from /proc/PID/task/TID/stat. Opened only through a ProcessAccess
// (process_access.hpp): a thread id names a thread only on its own machine.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace s4bxi::sim {

class LocalProcesses;
class ProcessAccess;

class ThreadCpuClock {
public:
    ThreadCpuClock() = default;  // of no thread: reads 0
    // A thread of another machine: each reading asks its machine (ProcessAccess::
    // read_thread_cpu).
    ThreadCpuClock(const ProcessAccess& machine, pid_t pid, pid_t tid) : asked_(&machine), pid_(pid), tid_(tid) {}
    ~ThreadCpuClock();
    ThreadCpuClock(const ThreadCpuClock&) = delete;
    ThreadCpuClock& operator=(const ThreadCpuClock&) = delete;
    ThreadCpuClock(ThreadCpuClock&& other) noexcept;
    ThreadCpuClock& operator=(ThreadCpuClock&& other) noexcept;

    // Nanoseconds of CPU time; 0 when the thread is gone or nothing can be read.
    uint64_t now_ns() const;

    // Page faults the thread took (minor and major, field 10 and 12 of its stat file);
    // 0 when nothing can be read.
    uint64_t page_faults() const;

private:
    friend class LocalProcesses;  // opens it, for a thread of the server's machine
    ThreadCpuClock(pid_t pid, pid_t tid);
    void close_files();
    int schedstat_fd_ = -1;
    int stat_fd_ = -1;
    const ProcessAccess* asked_ = nullptr;
    pid_t pid_ = 0, tid_ = 0;
};

}  // namespace s4bxi::sim

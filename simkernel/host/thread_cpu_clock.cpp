#include "host/thread_cpu_clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "host/process_access.hpp"
#include "s4bxi/thread_state.hpp"

namespace s4bxi::sim {

ThreadCpuClock::ThreadCpuClock(pid_t pid, pid_t tid)
{
    char path[96];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
    schedstat_fd_ = open(path, O_RDONLY | O_CLOEXEC);
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    stat_fd_ = open(path, O_RDONLY | O_CLOEXEC);
}

namespace {

// The fields of a stat file after the command name, which may contain spaces and
// parentheses: from the state (field 3) on. nullptr when nothing can be read.
const char* stat_fields(int fd, char* buffer, size_t size)
{
    if (fd < 0) return nullptr;
    ssize_t n = pread(fd, buffer, size - 1, 0);
    if (n <= 0) return nullptr;
    buffer[n] = '\0';
    return stat_after_name(buffer);
}

}  // namespace

ThreadCpuClock::~ThreadCpuClock()
{
    close_files();
}

ThreadCpuClock::ThreadCpuClock(ThreadCpuClock&& other) noexcept
    : schedstat_fd_(std::exchange(other.schedstat_fd_, -1)), stat_fd_(std::exchange(other.stat_fd_, -1)),
      asked_(std::exchange(other.asked_, nullptr)), pid_(other.pid_), tid_(other.tid_)
{
}

ThreadCpuClock& ThreadCpuClock::operator=(ThreadCpuClock&& other) noexcept
{
    if (this != &other) {
        close_files();
        schedstat_fd_ = std::exchange(other.schedstat_fd_, -1);
        stat_fd_ = std::exchange(other.stat_fd_, -1);
        asked_ = std::exchange(other.asked_, nullptr);
        pid_ = other.pid_;
        tid_ = other.tid_;
    }
    return *this;
}

void ThreadCpuClock::close_files()
{
    for (int* fd : {&schedstat_fd_, &stat_fd_})
        if (*fd >= 0) {
            close(*fd);
            *fd = -1;
        }
}

uint64_t ThreadCpuClock::now_ns() const
{
    uint64_t ns = 0, faults = 0;
    if (asked_) return asked_->read_thread_cpu(pid_, tid_, ns, faults) ? ns : 0;
    char buffer[512];
    if (schedstat_fd_ >= 0) {
        ssize_t n = pread(schedstat_fd_, buffer, sizeof buffer - 1, 0);
        if (n > 0) {
            buffer[n] = '\0';
            return std::strtoull(buffer, nullptr, 10);
        }
    }
    return stat_fields(stat_fd_, buffer, sizeof buffer) && stat_cpu_ns(buffer, ns) ? ns : 0;
}

uint64_t ThreadCpuClock::page_faults() const
{
    uint64_t ns = 0, asked_faults = 0;
    if (asked_) return asked_->read_thread_cpu(pid_, tid_, ns, asked_faults) ? asked_faults : 0;
    char buffer[512];
    unsigned long long faults = 0;
    return stat_fields(stat_fd_, buffer, sizeof buffer) && stat_page_faults(buffer, faults) ? faults : 0;
}

}  // namespace s4bxi::sim

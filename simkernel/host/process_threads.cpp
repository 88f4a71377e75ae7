#include "host/process_threads.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

namespace s4bxi::sim {

ProcessThreads::ProcessThreads(pid_t pid)
{
    char path[96];
    std::snprintf(path, sizeof path, "/proc/%d/task", pid);
    task_directory_fd_ = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

ProcessThreads::~ProcessThreads()
{
    close_directory();
}

ProcessThreads::ProcessThreads(ProcessThreads&& other) noexcept
    : task_directory_fd_(std::exchange(other.task_directory_fd_, -1))
{
}

ProcessThreads& ProcessThreads::operator=(ProcessThreads&& other) noexcept
{
    if (this != &other) {
        close_directory();
        task_directory_fd_ = std::exchange(other.task_directory_fd_, -1);
    }
    return *this;
}

void ProcessThreads::close_directory()
{
    if (task_directory_fd_ >= 0) {
        close(task_directory_fd_);
        task_directory_fd_ = -1;
    }
}

bool ProcessThreads::contains(pid_t tid) const
{
    char name[16];
    std::snprintf(name, sizeof name, "%d", tid);
    return task_directory_fd_ >= 0 && faccessat(task_directory_fd_, name, F_OK, 0) == 0;
}

}  // namespace s4bxi::sim

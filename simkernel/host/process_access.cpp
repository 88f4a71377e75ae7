#include "host/process_access.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "s4bxi/thread_state.hpp"

namespace s4bxi::sim {
namespace {

// A cross-memory copy moves at most what the kernel takes at once: go on from there.
template <class Transfer>
bool transfer_all(Transfer transfer, pid_t pid, uint64_t address, void* buffer, uint64_t length)
{
    auto* local = static_cast<char*>(buffer);
    while (length > 0) {
        iovec here{local, static_cast<size_t>(length)};
        iovec there{reinterpret_cast<void*>(address), static_cast<size_t>(length)};
        ssize_t moved = transfer(pid, &here, 1, &there, 1, 0);
        if (moved <= 0) return false;
        local += moved;
        address += static_cast<uint64_t>(moved);
        length -= static_cast<uint64_t>(moved);
    }
    return true;
}

// The number after `key` in a /proc status file; 0 when it is not there.
uint64_t status_field(const std::string& path, const std::string& key)
{
    std::ifstream status(path);
    std::string word;
    while (status >> word) {
        if (word == key) {
            uint64_t value = 0;
            status >> value;
            return value;
        }
        status.ignore(1 << 16, '\n');
    }
    return 0;
}

}  // namespace

bool ProcessAccess::thread_waits_for_seccomp_supervisor(pid_t pid, pid_t tid) const
{
    char text[64];
    return read_thread_file(pid, tid, "wchan", text, sizeof text) &&
           std::strcmp(text, "seccomp_do_user_notification") == 0;
}

bool LocalProcesses::read_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length) const
{
    return transfer_all(process_vm_readv, pid, address, buffer, length);
}

bool LocalProcesses::write_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length) const
{
    return transfer_all(process_vm_writev, pid, address, const_cast<void*>(buffer), length);
}

char LocalProcesses::thread_state(pid_t pid, pid_t tid) const
{
    return s4bxi::thread_state(pid, tid);
}

bool LocalProcesses::read_thread_file(pid_t pid, pid_t tid, const char* name, char* text, size_t size) const
{
    return s4bxi::read_thread_file(pid, tid, name, text, size);
}

std::vector<pid_t> LocalProcesses::threads(pid_t pid) const
{
    std::vector<pid_t> tids;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR* tasks = opendir(path);
    if (!tasks) return tids;
    while (const dirent* entry = readdir(tasks))
        if (pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name)); tid > 0) tids.push_back(tid);
    closedir(tasks);
    return tids;
}

bool LocalProcesses::thread_alive(pid_t pid, pid_t tid) const
{
    return syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH;
}

ThreadCpuClock LocalProcesses::thread_cpu_clock(pid_t pid, pid_t tid) const
{
    return ThreadCpuClock(pid, tid);
}

ProcessThreads LocalProcesses::process_threads(pid_t pid) const
{
    return ProcessThreads(pid);
}

uint64_t LocalProcesses::peak_resident_bytes(pid_t pid) const
{
    return status_field("/proc/" + std::to_string(pid) + "/status", "VmHWM:") * 1024;  // in KiB
}

uint64_t LocalProcesses::involuntary_switches(pid_t pid, pid_t tid) const
{
    return status_field("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status",
                        "nonvoluntary_ctxt_switches:");
}

bool LocalProcesses::send_signal(pid_t pid, int signal) const
{
    return kill(pid, signal) == 0;
}

const ProcessAccess& local_processes()
{
    static const LocalProcesses processes;
    return processes;
}

}  // namespace s4bxi::sim

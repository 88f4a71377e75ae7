#include "host/process_access.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "s4bxi/process_vm.hpp"
#include "s4bxi/thread_state.hpp"

namespace s4bxi::sim {

bool ProcessAccess::thread_waits_for_seccomp_supervisor(pid_t pid, pid_t tid) const
{
    char text[64];
    return read_thread_file(pid, tid, "wchan", text, sizeof text) &&
           std::strcmp(text, "seccomp_do_user_notification") == 0;
}

bool LocalProcesses::read_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length) const
{
    return read_process_memory(pid, address, buffer, length);
}

bool LocalProcesses::write_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length) const
{
    return write_process_memory(pid, address, buffer, length);
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
    return proc_status_figure(("/proc/" + std::to_string(pid) + "/status").c_str(), "VmHWM:") * 1024;  // in KiB
}

uint64_t LocalProcesses::involuntary_switches(pid_t pid, pid_t tid) const
{
    return proc_status_figure(("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status").c_str(),
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

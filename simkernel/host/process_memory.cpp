#include "host/process_memory.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace s4bxi::sim {

uint64_t server_peak_resident_bytes()
{
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}

uint64_t process_peak_resident_bytes(pid_t pid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string key;
    while (status >> key) {
        if (key == "VmHWM:") {
            uint64_t kib = 0;
            status >> kib;
            return kib * 1024;
        }
        status.ignore(1 << 16, '\n');
    }
    return 0;
}

uint64_t thread_involuntary_switches(pid_t pid, pid_t tid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
    std::string key;
    while (status >> key) {
        if (key == "nonvoluntary_ctxt_switches:") {
            uint64_t switches = 0;
            status >> switches;
            return switches;
        }
        status.ignore(1 << 16, '\n');
    }
    return 0;
}

HostLoad host_load()
{
    HostLoad load;
    std::ifstream in("/proc/loadavg");
    in >> load.one >> load.five >> load.fifteen;
    return in ? load : HostLoad{};
}

}  // namespace s4bxi::sim

#include "host/process_memory.hpp"

#include <sys/resource.h>

#include <fstream>

namespace s4bxi::sim {

uint64_t server_peak_resident_bytes()
{
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}

HostLoad host_load()
{
    HostLoad load;
    std::ifstream in("/proc/loadavg");
    in >> load.one >> load.five >> load.fifteen;
    return in ? load : HostLoad{};
}

}  // namespace s4bxi::sim

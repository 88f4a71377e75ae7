// The processes of a machine other than the server's, reached through its agent
// (MachineLink::call): each operation is a call the agent carries out on its machine and
// answers, while the server waits (docs/multi-host.md).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "host/process_access.hpp"

namespace s4bxi::sim {

class MachineLink;

class RemoteProcesses final : public ProcessAccess {
public:
    explicit RemoteProcesses(MachineLink& machine) : machine_(machine) {}

    bool read_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length) const override;
    bool write_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length) const override;
    char thread_state(pid_t pid, pid_t tid) const override;
    bool read_thread_file(pid_t pid, pid_t tid, const char* name, char* text, size_t size) const override;
    std::vector<pid_t> threads(pid_t pid) const override;
    bool thread_alive(pid_t pid, pid_t tid) const override;
    ThreadCpuClock thread_cpu_clock(pid_t pid, pid_t tid) const override;
    ProcessThreads process_threads(pid_t pid) const override;  // none: the trap is the agent's
    uint64_t peak_resident_bytes(pid_t pid) const override;
    uint64_t involuntary_switches(pid_t pid, pid_t tid) const override;
    bool send_signal(pid_t pid, int signal) const override;
    bool read_thread_cpu(pid_t pid, pid_t tid, uint64_t& ns, uint64_t& faults) const override;

private:
    // The gate looks at each rank's CPU clock and thread state every millisecond of wall
    // time (scheduling/gate.cpp); over the network a look costs a round trip. A reading is
    // reused for kFreshFor, a tenth of the window that takes a rank for blocked outside.
    static constexpr std::chrono::microseconds kFreshFor{2000};
    struct Reading {
        std::chrono::steady_clock::time_point at;
        int64_t value = 0;
        uint64_t extra = 0;
    };
    bool fresh(std::map<std::pair<pid_t, pid_t>, Reading>& cache, pid_t pid, pid_t tid, Reading& found) const;

    MachineLink& machine_;
    mutable std::mutex mutex_;
    mutable std::map<std::pair<pid_t, pid_t>, Reading> states_, cpu_;
};

}  // namespace s4bxi::sim

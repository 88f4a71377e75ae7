// How the server reaches the processes of one machine: their memory, what the kernel shows
// of their threads, their signals. A pid names a process only on its own machine (another
// machine's PID namespace reuses the same numbers), so the server never acts on a pid
// without the ProcessAccess of the machine it came from: every operation on a rank's
// process goes through the access its record holds (run/registry.hpp, RankRecord::
// process()). A rank of the server's machine is reached by LocalProcesses; a rank of
// another machine through the agent there (registration/remote_processes.hpp,
// docs/multi-host.md), behind this same interface.
//
// `pid` is the process (any of its thread ids reaches its memory), `tid` one of its threads.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/process_threads.hpp"
#include "host/thread_cpu_clock.hpp"

namespace s4bxi::sim {

class ProcessAccess {
public:
    virtual ~ProcessAccess() = default;

    // Copies `length` bytes of the process's memory at `address`, or into it: false when
    // not all of them could be (a bad address, the process gone).
    virtual bool read_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length) const = 0;
    virtual bool write_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length) const = 0;

    // The scheduler state of a thread ('R' running or runnable, 'S' sleeping, 'D'
    // uninterruptible, 'T'/'t' stopped, 'Z' zombie...), '\0' when it cannot be read.
    virtual char thread_state(pid_t pid, pid_t tid) const = 0;
    // The text of one of the kernel's files about a thread ("comm", "wchan", "stat"...),
    // NUL-terminated; false when it cannot be read.
    virtual bool read_thread_file(pid_t pid, pid_t tid, const char* name, char* text, size_t size) const = 0;
    // The ids of the process's threads now; none when the process is gone.
    virtual std::vector<pid_t> threads(pid_t pid) const = 0;
    // The thread may still run: it exists, or whether it does cannot be told.
    virtual bool thread_alive(pid_t pid, pid_t tid) const = 0;
    // A thread's CPU clock and page faults, read at each look without asking anew.
    virtual ThreadCpuClock thread_cpu_clock(pid_t pid, pid_t tid) const = 0;
    // Which thread ids belong to the process, asked of this very process even once its
    // pid is reused.
    virtual ProcessThreads process_threads(pid_t pid) const = 0;

    // The largest resident set of a live process, in bytes; 0 if it cannot be read.
    virtual uint64_t peak_resident_bytes(pid_t pid) const = 0;
    // The times the kernel took the thread off its core against its will (the host's
    // other work); 0 if it cannot be read.
    virtual uint64_t involuntary_switches(pid_t pid, pid_t tid) const = 0;

    // Sends `signal` to the process; false when it could not be sent.
    virtual bool send_signal(pid_t pid, int signal) const = 0;

    // One reading of a thread's CPU clock (ns) and page faults, for a ThreadCpuClock that
    // asks at each reading (another machine's thread); false when nothing could be read.
    virtual bool read_thread_cpu(pid_t, pid_t, uint64_t&, uint64_t&) const { return false; }

    // The thread sleeps in a system call that a seccomp filter holds for its supervisor
    // (the kernel function it waits in, its "wchan").
    bool thread_waits_for_seccomp_supervisor(pid_t pid, pid_t tid) const;
};

// The processes of the server's own machine, reached directly: cross-memory attach, /proc,
// kill and tgkill.
class LocalProcesses final : public ProcessAccess {
public:
    bool read_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length) const override;
    bool write_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length) const override;
    char thread_state(pid_t pid, pid_t tid) const override;
    bool read_thread_file(pid_t pid, pid_t tid, const char* name, char* text, size_t size) const override;
    std::vector<pid_t> threads(pid_t pid) const override;
    bool thread_alive(pid_t pid, pid_t tid) const override;
    ThreadCpuClock thread_cpu_clock(pid_t pid, pid_t tid) const override;
    ProcessThreads process_threads(pid_t pid) const override;
    uint64_t peak_resident_bytes(pid_t pid) const override;
    uint64_t involuntary_switches(pid_t pid, pid_t tid) const override;
    bool send_signal(pid_t pid, int signal) const override;
};

// The one access to the server's own machine. Stateless: any thread may use it.
const ProcessAccess& local_processes();

}  // namespace s4bxi::sim

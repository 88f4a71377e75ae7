#include "process_service.hpp"

#include <cstring>

#include "host/process_access.hpp"

namespace s4bxi::agent {

// As the server reaches the processes of its own machine (simkernel/host/): the same code.
void carry_out(const remote::Call& call, const uint8_t* bytes, size_t length, remote::Result& result,
               std::vector<uint8_t>& out)
{
    const sim::ProcessAccess& here = sim::local_processes();
    result.id = call.id;
    pid_t pid = call.pid, tid = call.tid;
    switch (static_cast<remote::CallOp>(call.op)) {
    case remote::CallOp::ReadMemory:
        if (call.length > remote::kMaxTransfer) break;
        out.resize(call.length);
        result.value = here.read_memory(pid, call.address, out.data(), call.length);
        if (!result.value) out.clear();
        break;
    case remote::CallOp::WriteMemory: result.value = here.write_memory(pid, call.address, bytes, length); break;
    case remote::CallOp::ThreadState: result.value = here.thread_state(pid, tid); break;
    case remote::CallOp::ReadThreadFile: {
        char name[sizeof call.name + 1] = {};
        std::memcpy(name, call.name, sizeof call.name);
        if (std::strchr(name, '/')) break;  // a file of the thread's folder, nothing else
        out.resize(4096);
        result.value = here.read_thread_file(pid, tid, name, reinterpret_cast<char*>(out.data()), out.size());
        out.resize(result.value ? std::strlen(reinterpret_cast<char*>(out.data())) : 0);
        break;
    }
    case remote::CallOp::ListThreads:
        for (pid_t thread : here.threads(pid)) {
            const auto* raw = reinterpret_cast<const uint8_t*>(&thread);
            out.insert(out.end(), raw, raw + sizeof thread);
        }
        result.value = 1;
        break;
    case remote::CallOp::PeakResident: result.value = static_cast<int64_t>(here.peak_resident_bytes(pid)); break;
    case remote::CallOp::InvoluntarySwitches:
        result.value = static_cast<int64_t>(here.involuntary_switches(pid, tid));
        break;
    case remote::CallOp::Signal: result.value = here.send_signal(pid, static_cast<int>(call.length)); break;
    case remote::CallOp::ThreadAlive: result.value = here.thread_alive(pid, tid); break;
    case remote::CallOp::ThreadCpu: {
        sim::ThreadCpuClock clock = here.thread_cpu_clock(pid, tid);
        result.value = static_cast<int64_t>(clock.now_ns());
        result.extra = clock.page_faults();
        break;
    }
    case remote::CallOp::Move: break;  // the server link's: it may reach another agent
    }
}

}  // namespace s4bxi::agent

#include "process_service.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "s4bxi/process_vm.hpp"
#include "s4bxi/thread_state.hpp"

namespace s4bxi::agent {

namespace {

// sum_exec_runtime (ns) from schedstat, else utime + stime from stat; and the page faults.
void thread_cpu(pid_t pid, pid_t tid, remote::Result& result)
{
    char text[512];
    if (read_thread_file(pid, tid, "schedstat", text, sizeof text)) result.value = static_cast<int64_t>(std::strtoull(text, nullptr, 10));
    if (read_thread_file(pid, tid, "stat", text, sizeof text)) {
        unsigned long long faults = 0;
        if (stat_page_faults(text, faults)) result.extra = faults;
        uint64_t ns = 0;
        if (result.value == 0 && stat_cpu_ns(text, ns)) result.value = static_cast<int64_t>(ns);
    }
}

}  // namespace

void carry_out(const remote::Call& call, const uint8_t* bytes, size_t length, remote::Result& result,
               std::vector<uint8_t>& out)
{
    result.id = call.id;
    pid_t pid = call.pid, tid = call.tid;
    char path[96];
    switch (static_cast<remote::CallOp>(call.op)) {
    case remote::CallOp::ReadMemory:
        if (call.length > remote::kMaxTransfer) break;
        out.resize(call.length);
        result.value = read_process_memory(pid, call.address, out.data(), call.length);
        if (!result.value) out.clear();
        break;
    case remote::CallOp::WriteMemory:
        result.value = write_process_memory(pid, call.address, bytes, length);
        break;
    case remote::CallOp::ThreadState: result.value = thread_state(pid, tid); break;
    case remote::CallOp::ReadThreadFile: {
        char name[sizeof call.name + 1] = {};
        std::memcpy(name, call.name, sizeof call.name);
        if (std::strchr(name, '/')) break;  // a file of the thread's folder, nothing else
        out.resize(4096);
        result.value = read_thread_file(pid, tid, name, reinterpret_cast<char*>(out.data()), out.size());
        out.resize(result.value ? std::strlen(reinterpret_cast<char*>(out.data())) : 0);
        break;
    }
    case remote::CallOp::ListThreads: {
        std::snprintf(path, sizeof path, "/proc/%d/task", pid);
        DIR* folder = opendir(path);
        if (!folder) break;
        while (dirent* entry = readdir(folder)) {
            int32_t thread = std::atoi(entry->d_name);
            if (thread <= 0) continue;
            const auto* raw = reinterpret_cast<const uint8_t*>(&thread);
            out.insert(out.end(), raw, raw + sizeof thread);
        }
        closedir(folder);
        result.value = 1;
        break;
    }
    case remote::CallOp::PeakResident:
        std::snprintf(path, sizeof path, "/proc/%d/status", pid);
        result.value = static_cast<int64_t>(proc_status_figure(path, "VmHWM:") * 1024);
        break;
    case remote::CallOp::InvoluntarySwitches:
        std::snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
        result.value = static_cast<int64_t>(proc_status_figure(path, "nonvoluntary_ctxt_switches:"));
        break;
    case remote::CallOp::Signal: result.value = kill(pid, static_cast<int>(call.length)) == 0; break;
    case remote::CallOp::ThreadAlive: result.value = syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH; break;
    case remote::CallOp::ThreadCpu: thread_cpu(pid, tid, result); break;
    case remote::CallOp::Move: break;  // the server link's: it may reach another agent
    }
}

}  // namespace s4bxi::agent

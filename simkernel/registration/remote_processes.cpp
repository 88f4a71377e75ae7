#include "registration/remote_processes.hpp"

#include <algorithm>
#include <cstring>

#include "registration/machine_link.hpp"
#include "s4bxi/remote_wire.hpp"

namespace s4bxi::sim {

namespace {

remote::Call make_call(remote::CallOp op, pid_t pid, pid_t tid = 0)
{
    remote::Call call;
    call.op = static_cast<uint32_t>(op);
    call.pid = pid;
    call.tid = tid;
    return call;
}

}  // namespace

bool RemoteProcesses::read_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length) const
{
    auto* into = static_cast<uint8_t*>(buffer);
    while (length > 0) {  // in pieces the agent takes in one frame
        uint64_t piece = std::min(length, remote::kMaxTransfer);
        remote::Call call = make_call(remote::CallOp::ReadMemory, pid);
        call.address = address;
        call.length = piece;
        remote::Result result;
        std::vector<uint8_t> bytes;
        if (!machine_.call(call, nullptr, 0, result, &bytes) || !result.value || bytes.size() != piece) return false;
        std::memcpy(into, bytes.data(), piece);
        into += piece;
        address += piece;
        length -= piece;
    }
    return true;
}

bool RemoteProcesses::write_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length) const
{
    const auto* from = static_cast<const uint8_t*>(buffer);
    while (length > 0) {
        uint64_t piece = std::min(length, remote::kMaxTransfer);
        remote::Call call = make_call(remote::CallOp::WriteMemory, pid);
        call.address = address;
        call.length = piece;
        remote::Result result;
        if (!machine_.call(call, from, piece, result, nullptr) || !result.value) return false;
        from += piece;
        address += piece;
        length -= piece;
    }
    return true;
}

bool RemoteProcesses::fresh(std::map<std::pair<pid_t, pid_t>, Reading>& cache, pid_t pid, pid_t tid,
                            Reading& found) const
{
    std::lock_guard<std::mutex> hold(mutex_);
    auto entry = cache.find({pid, tid});
    if (entry == cache.end() || std::chrono::steady_clock::now() - entry->second.at > kFreshFor) return false;
    found = entry->second;
    return true;
}

char RemoteProcesses::thread_state(pid_t pid, pid_t tid) const
{
    Reading reading;
    if (fresh(states_, pid, tid, reading)) return static_cast<char>(reading.value);
    remote::Result result;
    if (!machine_.call(make_call(remote::CallOp::ThreadState, pid, tid), nullptr, 0, result, nullptr)) return '\0';
    std::lock_guard<std::mutex> hold(mutex_);
    states_[{pid, tid}] = {std::chrono::steady_clock::now(), result.value, 0};
    return static_cast<char>(result.value);
}

bool RemoteProcesses::read_thread_file(pid_t pid, pid_t tid, const char* name, char* text, size_t size) const
{
    remote::Call call = make_call(remote::CallOp::ReadThreadFile, pid, tid);
    remote::set_text(call.name, name);
    remote::Result result;
    std::vector<uint8_t> bytes;
    if (size == 0 || !machine_.call(call, nullptr, 0, result, &bytes) || !result.value) return false;
    size_t length = std::min(bytes.size(), size - 1);
    std::memcpy(text, bytes.data(), length);
    text[length] = '\0';
    return true;
}

std::vector<pid_t> RemoteProcesses::threads(pid_t pid) const
{
    remote::Result result;
    std::vector<uint8_t> bytes;
    std::vector<pid_t> found;
    if (!machine_.call(make_call(remote::CallOp::ListThreads, pid), nullptr, 0, result, &bytes)) return found;
    for (size_t at = 0; at + sizeof(int32_t) <= bytes.size(); at += sizeof(int32_t)) {
        int32_t thread;
        std::memcpy(&thread, bytes.data() + at, sizeof thread);
        found.push_back(thread);
    }
    return found;
}

bool RemoteProcesses::thread_alive(pid_t pid, pid_t tid) const
{
    remote::Result result;
    // A machine that does not answer is lost: its ranks are reported gone, not held alive.
    return machine_.call(make_call(remote::CallOp::ThreadAlive, pid, tid), nullptr, 0, result, nullptr) && result.value;
}

ThreadCpuClock RemoteProcesses::thread_cpu_clock(pid_t pid, pid_t tid) const
{
    return ThreadCpuClock(*this, pid, tid);
}

ProcessThreads RemoteProcesses::process_threads(pid_t) const
{
    return {};
}

uint64_t RemoteProcesses::peak_resident_bytes(pid_t pid) const
{
    remote::Result result;
    return machine_.call(make_call(remote::CallOp::PeakResident, pid), nullptr, 0, result, nullptr)
               ? static_cast<uint64_t>(result.value)
               : 0;
}

uint64_t RemoteProcesses::involuntary_switches(pid_t pid, pid_t tid) const
{
    remote::Result result;
    return machine_.call(make_call(remote::CallOp::InvoluntarySwitches, pid, tid), nullptr, 0, result, nullptr)
               ? static_cast<uint64_t>(result.value)
               : 0;
}

bool RemoteProcesses::send_signal(pid_t pid, int signal) const
{
    remote::Call call = make_call(remote::CallOp::Signal, pid);
    call.length = static_cast<uint64_t>(signal);
    remote::Result result;
    return machine_.call(call, nullptr, 0, result, nullptr) && result.value;
}

bool RemoteProcesses::read_thread_cpu(pid_t pid, pid_t tid, uint64_t& ns, uint64_t& faults) const
{
    Reading reading;
    if (!fresh(cpu_, pid, tid, reading)) {
        remote::Result result;
        if (!machine_.call(make_call(remote::CallOp::ThreadCpu, pid, tid), nullptr, 0, result, nullptr)) return false;
        reading = {std::chrono::steady_clock::now(), result.value, result.extra};
        std::lock_guard<std::mutex> hold(mutex_);
        cpu_[{pid, tid}] = reading;
    }
    ns = static_cast<uint64_t>(reading.value);
    faults = reading.extra;
    return true;
}

}  // namespace s4bxi::sim

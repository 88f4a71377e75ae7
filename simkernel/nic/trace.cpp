#include "nic/trace.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace s4bxi::sim::trace {

namespace {

struct State {
    std::mutex mutex;
    std::atomic<bool> enabled{false};
    bool computation = true;
    std::string folder;
    std::FILE* file = nullptr;
    uint64_t rows = 0;
};

State& state()
{
    static State instance;
    return instance;
}

constexpr const char* kHeader = "operation_type,initiator_nid,target_nid,start_time,end_time\n";

// Opens log_<index>.csv and writes its header; the caller holds the mutex.
void open_file(State& s, uint64_t index)
{
    if (s.file) std::fclose(s.file);
    std::string path = fmt::format("{}/log_{}.csv", s.folder, index);
    s.file = std::fopen(path.c_str(), "w");
    if (!s.file) throw std::runtime_error(fmt::format("cannot create trace file {}: {}", path, std::strerror(errno)));
    std::fputs(kHeader, s.file);
}

}  // namespace

bool enabled()
{
    return state().enabled.load(std::memory_order_relaxed);
}

std::string format_row(Op op, uint32_t initiator_nid, uint32_t target_nid, double start, double end)
{
    // std::ostream with setprecision(p) and the default float field: printf's %.{p}g.
    int precision = 9;
    for (auto integer = static_cast<unsigned int>(start); integer >= 1; integer /= 10) ++precision;
    char text[128];
    std::snprintf(text, sizeof text, "%d,%u,%u,%.*g,%.*g", static_cast<int>(op), initiator_nid, target_nid, precision,
                  start, precision, end);
    return text;
}

void record(Op op, uint32_t initiator_nid, uint32_t target_nid, double start, double end)
{
    State& s = state();
    if (!s.enabled.load(std::memory_order_relaxed)) return;
    if (op == Op::COMPUTE && !s.computation) return;
    std::string row = format_row(op, initiator_nid, target_nid, start, end);
    std::lock_guard lock(s.mutex);
    if (!s.file) return;
    if (s.rows > 0 && s.rows % kRowsPerFile == 0) open_file(s, s.rows / kRowsPerFile);
    row += '\n';
    std::fwrite(row.data(), 1, row.size(), s.file);
    ++s.rows;
}

void open(const std::string& folder, bool computation)
{
    State& s = state();
    close();
    if (folder.empty() || folder == "/dev/null") return;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec || !std::filesystem::is_directory(folder))
        throw std::runtime_error(
            fmt::format("cannot create the trace folder '{}': {}", folder, ec ? ec.message() : "not a directory"));
    std::lock_guard lock(s.mutex);
    s.folder = folder;
    s.computation = computation;
    s.rows = 0;
    open_file(s, 0);
    s.enabled = true;
}

void close()
{
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.enabled = false;
    if (s.file) {
        std::fclose(s.file);
        s.file = nullptr;
    }
}

uint64_t rows()
{
    return state().rows;
}

}  // namespace s4bxi::sim::trace

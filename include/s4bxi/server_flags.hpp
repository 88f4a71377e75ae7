// The server's command line: every flag s4bxi-launch gives s4bxi-simkernel, and every
// spelling of a choice, written once for both. A new server option adds its flag here,
// its parsing in simkernel/main.cpp and its value in launcher/run.cpp (or, for what
// --print-config needs too, launcher/options.cpp's config_arguments()). Header-only.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace s4bxi::server_flags {

// Where the run happens.
inline constexpr std::string_view kRunDir = "--run-dir";
inline constexpr std::string_view kWorldSize = "--world-size";
inline constexpr std::string_view kPpn = "--ppn";
inline constexpr std::string_view kPlatform = "--platform";
inline constexpr std::string_view kServiceRanks = "--service-ranks";  // comma-separated
inline constexpr std::string_view kListen = "--listen";  // ADDR[:PORT] for ranks of other machines
// The models and the host.
inline constexpr std::string_view kCpuModel = "--cpu-model";
inline constexpr std::string_view kCpuFactor = "--cpu-factor";
inline constexpr std::string_view kCpuThreshold = "--cpu-threshold";
inline constexpr std::string_view kMemoryWaits = "--memory-waits";
inline constexpr std::string_view kLockstep = "--lockstep";
// Waits and their limits.
inline constexpr std::string_view kRegisterTimeout = "--register-timeout";
inline constexpr std::string_view kDeadlockTimeout = "--deadlock-timeout";
// Between the two processes.
inline constexpr std::string_view kSummaryOut = "--summary-out";
inline constexpr std::string_view kReadyFd = "--ready-fd";
inline constexpr std::string_view kLogLevel = "--log-level";
inline constexpr std::string_view kProgress = "--progress";
inline constexpr std::string_view kPrintConfig = "--print-config";
// The configuration overrides and outputs (config_arguments()).
inline constexpr std::string_view kSet = "--set";  // KEY=VALUE, repeatable
inline constexpr std::string_view kEnv = "--env";  // S4BXI_NAME=VALUE, repeatable
inline constexpr std::string_view kTrace = "--trace";
inline constexpr std::string_view kTimeline = "--timeline";
inline constexpr std::string_view kPaje = "--paje";
inline constexpr std::string_view kTimelineFilter = "--timeline-filter";

// The spellings of the choices.
inline constexpr std::string_view kCpuModelMeasured = "measured";
inline constexpr std::string_view kCpuModelZero = "zero";
inline constexpr std::array kCpuModels = {kCpuModelMeasured, kCpuModelZero};
inline constexpr std::array<std::string_view, 4> kLogLevels = {"error", "warning", "info", "debug"};
// --memory-waits and --lockstep: auto (OpenSHMEM programs), on, off.
inline constexpr std::string_view kAuto = "auto";
inline constexpr std::string_view kOn = "on";
inline constexpr std::string_view kOff = "off";
inline constexpr std::array kAutoOnOff = {kAuto, kOn, kOff};

// A flag or a list of spellings as the option parsers take them.
inline std::string flag(std::string_view name)
{
    return std::string(name);
}

template <size_t N>
std::vector<std::string> spellings(const std::array<std::string_view, N>& values)
{
    return {values.begin(), values.end()};
}

}  // namespace s4bxi::server_flags

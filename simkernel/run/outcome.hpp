// How the run ended, and the server's exit codes that say it.
#pragma once

#include <string>
#include <utility>

namespace s4bxi::sim {

// How the run ended. The first failure recorded wins.
struct Outcome {
    std::string status = "ok";  // ok, rank-crash, deadlock, registration-timeout, error
    std::string message;
    int exit_code = 0;
    int abort_status = -1;  // status "abort": the status a rank gave PMI_Abort

    bool failed() const { return status != "ok"; }
    void fail(std::string kind, std::string text, int code)
    {
        if (failed()) return;
        status = std::move(kind);
        message = std::move(text);
        exit_code = code;
    }
};

// Exit codes of s4bxi-simkernel (documented in docs/usage.md).
inline constexpr int kExitRankCrash = 10;
inline constexpr int kExitDeadlock = 11;
inline constexpr int kExitRegistration = 12;
inline constexpr int kExitConfig = 13;
inline constexpr int kExitInterrupted = 14;
// A rank called PMI_Abort: the run ends, and the launcher exits with the rank's status
// (Outcome::abort_status, in the summary).
inline constexpr int kExitRankAbort = 15;

}  // namespace s4bxi::sim

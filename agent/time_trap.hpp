// The ranks' trap of direct time system calls (libinterpose/time/seccomp_filter.*): on the
// server's machine the server answers them from the rank's virtual clock. Here, for now,
// they are let through to the host's clock (docs/multi-host.md, what is not done yet):
// a trap nobody answered would hold the calling thread for ever.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace s4bxi::agent {

class TimeTrap {
public:
    TimeTrap();
    ~TimeTrap();
    TimeTrap(const TimeTrap&) = delete;
    TimeTrap& operator=(const TimeTrap&) = delete;

    // A rank's listener: its notifications are answered from now on. Takes the fd.
    void add(int listener);

private:
    void serve();

    std::mutex mutex_;
    std::vector<int> listeners_;
    int wake_[2] = {-1, -1};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace s4bxi::agent

#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "s4bxi/thread_state.hpp"

using s4bxi::sleeps_on_others;
using s4bxi::stat_after_name;
using s4bxi::stat_page_faults;
using s4bxi::thread_state;

TEST_CASE("only an interruptible sleep is a wait on others", "[thread_state]")
{
    CHECK(sleeps_on_others('S'));
    // A major page fault or I/O: the kernel's own work for the thread, which computes.
    CHECK_FALSE(sleeps_on_others('D'));
    CHECK_FALSE(sleeps_on_others('R'));
    CHECK_FALSE(sleeps_on_others('T'));
    CHECK_FALSE(sleeps_on_others('t'));
    CHECK_FALSE(sleeps_on_others('\0'));
}

TEST_CASE("a stat line is read past a command name with spaces and parentheses", "[thread_state]")
{
    const char* text = "4242 (a (b) c) D 1 4242 4242 0 -1 4194560 17 0 3 0 5 7 0 0 20 0 1 0";
    const char* fields = stat_after_name(text);
    REQUIRE(fields != nullptr);
    CHECK(fields[1] == 'D');
    unsigned long long faults = 0;
    REQUIRE(stat_page_faults(text, faults));
    CHECK(faults == 17 + 3);  // minor (field 10) and major (field 12)
    CHECK(stat_after_name("no stat line") == nullptr);
}

TEST_CASE("a thread waiting on a condition variable reads as asleep on others", "[thread_state]")
{
    std::mutex mutex;
    std::condition_variable wake;
    bool go = false;
    std::atomic<int> tid{0};
    std::thread waiter([&] {
        tid = static_cast<int>(syscall(SYS_gettid));
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return go; });
    });
    while (tid == 0) std::this_thread::yield();
    bool asleep = false;
    for (int look = 0; look < 2000 && !asleep; ++look) {  // up to 2 s on a loaded host
        asleep = sleeps_on_others(thread_state(getpid(), tid));
        if (!asleep) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    {
        std::lock_guard lock(mutex);
        go = true;
    }
    wake.notify_one();
    waiter.join();
    CHECK(asleep);
    CHECK_FALSE(sleeps_on_others(thread_state(getpid(), static_cast<int>(syscall(SYS_gettid)))));  // running
}

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

#include "proc.hpp"

using namespace s4bxi::launcher;

TEST_CASE("parent pid from /proc/PID/stat", "[proc]")
{
    CHECK(parse_stat_ppid("123 (bash) S 45 123 123 0 -1") == 45);
    CHECK(parse_stat_ppid("123 (a) b (c)) R 7 1 1") == 7);
    CHECK(parse_stat_ppid("9 (with space) Z 1 9 9\n") == 1);
    CHECK_FALSE(parse_stat_ppid("garbage"));
    CHECK_FALSE(parse_stat_ppid("1 (x)"));
}

TEST_CASE("descendants from a process table", "[proc]")
{
    std::map<pid_t, pid_t> table = {{1, 0}, {10, 1}, {11, 10}, {12, 11}, {13, 10}, {20, 1}, {21, 20}};
    auto d = descendants_in(table, 10);
    std::sort(d.begin(), d.end());
    CHECK(d == std::vector<pid_t>{11, 12, 13});
    CHECK(descendants_in(table, 12).empty());
}

TEST_CASE("live descendants through /proc", "[proc]")
{
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        pid_t grandchild = ::fork();
        if (grandchild == 0) {
            ::pause();
            ::_exit(0);
        }
        ::pause();
        ::_exit(0);
    }
    std::vector<pid_t> d;
    for (int i = 0; i < 200 && d.size() < 2; ++i) {
        ::usleep(10'000);
        d = descendants_of(::getpid());
    }
    CHECK(std::find(d.begin(), d.end(), child) != d.end());
    CHECK(d.size() >= 2);
    for (pid_t pid : d) ::kill(pid, SIGKILL);
    ::waitpid(child, nullptr, 0);
}

TEST_CASE("signal names", "[proc]")
{
    CHECK(signal_name(SIGSEGV) == "SIGSEGV");
    CHECK(signal_name(SIGKILL) == "SIGKILL");
}

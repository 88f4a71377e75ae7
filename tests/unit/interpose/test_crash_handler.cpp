// Crash reports (crash_handler.cpp): the text format, and a real crash in a forked child
// that goes through the handler, reports through call() (stub) and dies of its signal.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "crash/crash_handler.hpp"
#include "s4bxi/wire.hpp"
#include "stub_runtime.hpp"

using s4bxi::interpose::crash::format_report;
using s4bxi::interpose::crash::Frame;
using s4bxi::interpose::crash::kMaxNameChars;

namespace {

std::string report_of(size_t capacity, int signal_number, bool has_address, uintptr_t address,
                      const std::vector<Frame>& frames)
{
    std::string buffer(capacity, '\xff');
    size_t n = format_report(buffer.data(), capacity, signal_number, has_address, address, frames.data(),
                             frames.size());
    REQUIRE(n < capacity);
    REQUIRE(buffer[n] == '\0');
    return buffer.substr(0, n);
}

}  // namespace

TEST_CASE("a crash report names the signal first, then one line per frame", "[interpose][crash]")
{
    std::vector<Frame> frames = {{0x401136, "crash_here", 0x6, "segfault"}, {0x7f00deadbeef, "", 0, "libc.so.6"},
                                 {0x10, "", 0, ""}};
    CHECK(report_of(512, 11, true, 0, frames) ==
          "signal=11\naddr=0x0\n#0 0x401136 crash_here+0x6 (segfault)\n#1 0x7f00deadbeef ?? (libc.so.6)\n#2 0x10 ??\n");
    CHECK(report_of(512, 6, false, 0, {frames[0]}) == "signal=6\n#0 0x401136 crash_here+0x6 (segfault)\n");
}

TEST_CASE("a crash report fits the wire's text, dropping whole frames", "[interpose][crash]")
{
    std::vector<Frame> frames(40, Frame{0x7fffffffffff, "a_rather_long_function_name_for_a_frame", 0x1234, "libsomething.so"});
    const size_t capacity = sizeof(s4bxi::wire::TextArgs::text);
    std::string text = report_of(capacity, 11, true, 0x10, frames);
    CHECK(text.size() < capacity);
    CHECK(text.rfind("signal=11\naddr=0x10\n#0 ", 0) == 0);
    CHECK(text.back() == '\n');
    // Every line is whole, and the last one counts what was left out.
    size_t lines = 0, frame_lines = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        REQUIRE(end != std::string::npos);
        std::string line = text.substr(start, end - start);
        if (line.rfind("#", 0) == 0 && line.rfind("#...", 0) != 0) {
            CHECK(line.find("a_rather_long_function_name_for_a_frame+0x1234 (libsomething.so)") != std::string::npos);
            ++frame_lines;
        }
        ++lines;
        start = end + 1;
    }
    CHECK(frame_lines > 3);
    CHECK(text.find("#... (" + std::to_string(40 - frame_lines) + " more frames)\n") != std::string::npos);

    // Too small for even the first line: empty.
    CHECK(report_of(5, 11, false, 0, frames).empty());
}

TEST_CASE("long symbol names are cut", "[interpose][crash]")
{
    std::string name(300, 'x');
    std::string text = report_of(1024, 8, false, 0, {Frame{0x1, name.c_str(), 0x2, ""}});
    CHECK(text == "signal=8\n#0 0x1 " + std::string(kMaxNameChars, 'x') + "...+0x2\n");
}

extern "C" __attribute__((noipa)) void s4bxi_test_crash_here(volatile int* p)
{
    *p = 42;
}

namespace {

// Forks a rank that crashes with `crash`; returns its wait status and its report.
std::pair<int, std::string> crash_in_child(void (*crash)())
{
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        close(pipe_fds[0]);
        stub::reset();
        stub::report_fd = pipe_fds[1];
        s4bxi::interpose::install_crash_handler();
        crash();
        _exit(0);
    }
    close(pipe_fds[1]);
    std::string report;
    char buffer[1024];
    ssize_t n;
    while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) report.append(buffer, static_cast<size_t>(n));
    close(pipe_fds[0]);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    return {status, report};
}

}  // namespace

TEST_CASE("a rank that dereferences NULL reports a backtrace and dies of SIGSEGV", "[interpose][crash]")
{
    auto [status, report] = crash_in_child([] { s4bxi_test_crash_here(nullptr); });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSEGV);
    INFO(report);
    CHECK(report.rfind("signal=11\naddr=0x0\n#0 0x", 0) == 0);
    // Frame #0 is the faulting function itself, in this executable.
    size_t first = report.find("#0 ");
    REQUIRE(first != std::string::npos);
    std::string line0 = report.substr(first, report.find('\n', first) - first);
    CHECK(line0.find("s4bxi_test_crash_here+0x") != std::string::npos);
    CHECK(line0.find("(test_interpose_crash") != std::string::npos);
}

TEST_CASE("abort() is reported and still ends in SIGABRT", "[interpose][crash]")
{
    auto [status, report] = crash_in_child([] { abort(); });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGABRT);
    INFO(report);
    CHECK(report.rfind("signal=6\n#0 ", 0) == 0);
    CHECK(report.find("abort") != std::string::npos);
}

TEST_CASE("a signal sent by another process is reported too", "[interpose][crash]")
{
    auto [status, report] = crash_in_child([] { kill(getpid(), SIGBUS); });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGBUS);
    CHECK(report.rfind("signal=7\n#0 ", 0) == 0);  // no fault address for a sent signal
}

TEST_CASE("a process that is not a rank just dies of the signal", "[interpose][crash]")
{
    auto [status, report] = crash_in_child([] {
        stub::rank = false;
        s4bxi_test_crash_here(nullptr);
    });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSEGV);
    CHECK(report.empty());
}

TEST_CASE("a crash on another thread of the rank does not use the channel", "[interpose][crash]")
{
    auto [status, report] = crash_in_child([] {
        int devnull = open("/dev/null", O_WRONLY);  // the report goes to stderr instead
        dup2(devnull, STDERR_FILENO);
        std::thread([] { s4bxi_test_crash_here(nullptr); }).join();
    });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSEGV);
    CHECK(report.empty());
}

// Unit tests that need a SimGrid engine: SimGrid allows one per process, so each case
// runs its body with a fresh engine (the server's settings) in a forked child. Failed
// expectations are printed by the child and make it exit with status 1.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

inline int g_errors = 0;

inline void expect(bool ok, const std::string& what)
{
    if (!ok) {
        std::fprintf(stderr, "  failed: %s\n", what.c_str());
        ++g_errors;
    }
}

inline bool near(double a, double b)
{
    return std::fabs(a - b) <= 1e-15 + 1e-12 * std::fabs(b);
}

// Runs `body` in a child with its own engine; true if it passed.
inline bool in_child(const std::function<void()>& body, std::vector<std::string> extra_config = {})
{
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<std::string> args = {"test", "--log=root.thresh:critical", "--cfg=network/model:CM02",
                                         "--cfg=network/loopback-lat:0", "--cfg=network/loopback-bw:999e9",
                                         "--cfg=surf/precision:1e-9"};
        args.insert(args.end(), extra_config.begin(), extra_config.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        int argc = static_cast<int>(argv.size());
        try {
            simgrid::s4u::Engine engine(&argc, argv.data());
            body();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "  exception: %s\n", e.what());
            ++g_errors;
        }
        std::fflush(nullptr);
        _exit(g_errors == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

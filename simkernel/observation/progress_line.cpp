#include "observation/progress_line.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "run/context.hpp"

namespace s4bxi::sim::observe {

namespace {

constexpr double kFirstAfter = 2.0;  // wall seconds: short runs show nothing
constexpr double kEvery = 0.25;

bool g_enabled = false;
bool g_shown = false;
double g_next = -1.0;
double g_last_wall = 0.0;
uint64_t g_last_ops = 0;

std::string simulated(double seconds)
{
    if (seconds >= 1) return fmt::format("{:.3f} s", seconds);
    if (seconds >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
    return fmt::format("{:.3f} us", seconds * 1e6);
}

}  // namespace

void enable_progress_line()
{
    g_enabled = true;
}

void progress_tick(double wall_now)
{
    if (!g_enabled) return;
    if (g_next < 0) {
        g_next = wall_now + kFirstAfter;
        g_last_wall = wall_now;
        return;
    }
    if (wall_now < g_next) return;
    g_next = wall_now + kEvery;
    int computing = 0, waiting = 0, outside = 0;
    uint64_t ops = 0;
    for (const auto& r : context().registry.ranks()) {
        ops += r->portals_ops;
        switch (r->phase) {
        case RankPhase::Computing: ++computing; break;
        case RankPhase::Waiting: ++waiting; break;
        case RankPhase::BlockedOutside: ++outside; break;
        default: break;
        }
    }
    double rate = wall_now > g_last_wall ? static_cast<double>(ops - g_last_ops) / (wall_now - g_last_wall) : 0.0;
    g_last_wall = wall_now;
    g_last_ops = ops;
    fmt::print(stderr, "\r\033[Ks4bxi: simulated {}, {:.0f} Portals ops/s, ranks: {} computing, {} waiting, {} blocked outside",
               simulated(simgrid::s4u::Engine::get_clock()), rate, computing, waiting, outside);
    std::fflush(stderr);
    g_shown = true;
}

void progress_done()
{
    if (!g_shown) return;
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    g_shown = false;
}

}  // namespace s4bxi::sim::observe

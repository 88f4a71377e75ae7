// A loop that waits for the clock to move, under the zero CPU model: when its readings
// become simulated sleeps, and how long those are.
#include <catch2/catch.hpp>

#include "clock_spin.hpp"

using s4bxi::interpose::ClockSpin;

namespace {

// Reads `now` as request `request` stands, `times` times; returns the last answer.
double read_times(ClockSpin& spin, double now, uint32_t request, uint32_t times)
{
    double sleep = 0.0;
    for (uint32_t i = 0; i < times; ++i) sleep = spin.reading(now, request);
    return sleep;
}

}  // namespace

TEST_CASE("readings of a clock that stands still become a sleep after kReadings")
{
    ClockSpin spin;
    CHECK(read_times(spin, 2.0, 7, ClockSpin::kReadings) == 0.0);  // the first reading only sets the value
    CHECK(spin.reading(2.0, 7) == ClockSpin::kFirstStep);
    // The count starts again after each sleep asked for.
    CHECK(read_times(spin, 2.0, 7, ClockSpin::kReadings - 1) == 0.0);
    CHECK(spin.reading(2.0, 7) == ClockSpin::kFirstStep);
}

TEST_CASE("a request or a new value between readings is no spin")
{
    ClockSpin spin;
    for (uint32_t request = 1; request < 5; ++request)
        CHECK(read_times(spin, 1.0, request, ClockSpin::kReadings) == 0.0);
    for (int step = 0; step < 5; ++step)
        CHECK(read_times(spin, 1.0 + step * 1e-3, 9, ClockSpin::kReadings) == 0.0);
}

TEST_CASE("the steps of one spin grow with the time spent spinning")
{
    ClockSpin spin;
    double now = 10.0;
    uint32_t request = 3;
    double start = now;
    spin.reading(now, request);
    for (int i = 0; i < 200; ++i) {
        double sleep = read_times(spin, now, request, ClockSpin::kReadings);
        REQUIRE(sleep == std::max(ClockSpin::kFirstStep, ClockSpin::kStepFraction * (now - start)));
        spin.slept(++request);  // the sleep is a request of its own
        now += sleep;
        CHECK(spin.reading(now, request) == 0.0);  // the clock moved: counting starts again
    }
    // 200 steps of 1 us, growing by 1/8 once past 8 us: far more than a second of spin.
    CHECK(now - start > 1.0);
}

TEST_CASE("a request of the program's own ends the spin: the next one starts from the first step")
{
    ClockSpin spin;
    spin.reading(5.0, 1);
    double sleep = read_times(spin, 5.0, 1, ClockSpin::kReadings);
    spin.slept(2);
    for (int i = 0; i < 50; ++i) {  // a long spin
        double now = 5.0 + (i + 1) * 1e-3;
        spin.reading(now, 2 + i);
        sleep = read_times(spin, now, 2 + i, ClockSpin::kReadings);
        spin.slept(3 + i);
    }
    CHECK(sleep > ClockSpin::kFirstStep);
    spin.reading(6.0, 100);  // request 100 was the program's (a Portals call, say)
    CHECK(read_times(spin, 6.0, 100, ClockSpin::kReadings) == ClockSpin::kFirstStep);
}

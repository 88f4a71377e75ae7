// A loop that waits for the clock to move, under the zero CPU model: when its readings
// become simulated sleeps, and how long those are.
#include <catch2/catch.hpp>

#include "time/clock_spin.hpp"

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

TEST_CASE("readings of a clock that stands still become a sleep after kReadings, then every kReadingsInSpin")
{
    ClockSpin spin;
    CHECK(read_times(spin, 2.0, 7, ClockSpin::kReadings) == 0.0);  // the first reading only sets the value
    CHECK(spin.reading(2.0, 7) == ClockSpin::kFirstStep);
    // The count starts again after each sleep asked for, shorter now that the spin is known.
    CHECK(read_times(spin, 2.0, 7, ClockSpin::kReadingsInSpin - 1) == 0.0);
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

namespace {

// Spins for `steps` sleeps from `now`, checking each step; returns the date reached.
double spin_for(ClockSpin& spin, double now, uint32_t& request, int steps)
{
    double start = now;
    spin.reading(now, request);
    for (int i = 0; i < steps; ++i) {
        REQUIRE(read_times(spin, now, request, (i == 0 ? ClockSpin::kReadings : ClockSpin::kReadingsInSpin) - 1) == 0.0);
        double sleep = spin.reading(now, request);
        double expected = std::min(ClockSpin::kLongestStep,
                                   std::max(ClockSpin::kFirstStep, ClockSpin::kStepFraction * (now - start)));
        REQUIRE(sleep == expected);
        spin.slept(++request);  // the sleep is a request of its own
        now += sleep;
        REQUIRE(spin.reading(now, request) == 0.0);  // the clock moved: counting starts again
    }
    return now;
}

}  // namespace

TEST_CASE("the steps of one spin grow with the time spent spinning, up to kLongestStep")
{
    ClockSpin spin;
    uint32_t request = 3;
    // 8 steps of 1 us, then growing by 1/8: steps reach 10 us once the spin passes 80 us,
    // after 8 + ln(80/8)/ln(9/8), about 28 steps; the 52 after that are 10 us each.
    double reached = spin_for(spin, 10.0, request, 80);
    CHECK(reached - 10.0 > 80e-6 + 51 * ClockSpin::kLongestStep);
    CHECK(reached - 10.0 < 90e-6 + 53 * ClockSpin::kLongestStep);
}

TEST_CASE("a spin that never ends advances the clock by kLongestStep per kReadingsInSpin readings at most")
{
    // A program that reads the clock for its own reasons and never waits on it (FFTW's
    // planner between measurements): 10 000 steps, 10^6 readings, 0.1 s at most.
    ClockSpin spin;
    uint32_t request = 1;
    double reached = spin_for(spin, 0.0, request, 10000);
    CHECK(reached <= 10000 * ClockSpin::kLongestStep);
    CHECK(reached > 9000 * ClockSpin::kLongestStep);
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
        sleep = read_times(spin, now, 2 + i, ClockSpin::kReadingsInSpin);
        spin.slept(3 + i);
    }
    CHECK(sleep > ClockSpin::kFirstStep);
    spin.reading(6.0, 100);  // request 100 was the program's (a Portals call, say)
    CHECK(read_times(spin, 6.0, 100, ClockSpin::kReadings) == ClockSpin::kFirstStep);
}

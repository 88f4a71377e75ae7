// Loops that wait for the clock to move, under the zero CPU model (pure logic).
#pragma once

#include <algorithm>
#include <cstdint>

namespace s4bxi::interpose {

// Under --cpu-model zero a rank's clock stands still between its requests: computation
// takes no simulated time. A loop that waits for the clock to move (STREAM's checktick
// waits for a microsecond to pass; a benchmark's busy-wait "compute" waits for its
// deadline) would then spin for ever. After kReadings readings of the same value with no
// request between them, the rank is taken to wait for time to pass: the reading first
// sleeps in simulated time, by steps that grow with the time spent spinning so far, as
// the fast-forward of empty polls does, up to kLongestStep (docs/time.md, "Clock-spinning
// loops"). The cap matters for programs that read the clock often for their own reasons
// without waiting on it, with no request for a long while: FFTW's planner reads
// gettimeofday between its measurements (GROMACS plans its FFTs at start-up). Unbounded,
// steps that each add an eighth of the spin so far grew geometrically, to 10^9 s.
//
// Once a spin is recognised, the next step comes after kReadingsInSpin readings, not
// kReadings: what a busy-wait costs in wall time is its readings (OSU's overlap loop
// computes a 25 x 25 product between two), and a spin that already waited has shown what
// it is. kLongestStep shrinks in proportion, so that a reading still costs at most
// kLongestStep / kReadingsInSpin (100 ns) of simulated time.
class ClockSpin {
public:
    static constexpr uint32_t kReadings = 1000;       // to take a loop for a spin
    static constexpr uint32_t kReadingsInSpin = 100;  // between two steps of one spin
    static constexpr double kFirstStep = 1e-6;     // simulated seconds
    static constexpr double kStepFraction = 0.125;  // of the time spent spinning so far
    static constexpr double kLongestStep = 10e-6;  // simulated seconds

    // A reading of `now` (simulated seconds) after the simulated thread's `request`th
    // request to the server made by the program. The count leaves out:
    //  - calls answered without the server (during an outside episode, whose length is
    //    real time);
    //  - the interposer's own requests (the yield of a reading that found the rank had
    //    gone without CPU for a while): they are not the program doing something, and if
    //    they counted, whether a busy-wait ends after 1000 or 2000 readings, and so its
    //    simulated length, would depend on the machine's load;
    //  - the requests of the rank's other threads: a progress thread that polls would
    //    restart the count for ever, and the busy-wait would never end.
    // Returns the simulated sleep to take before answering (0: none).
    double reading(double now, uint32_t request)
    {
        if (request != request_ || now != value_) {
            if (request != after_own_sleep_) spin_start_ = -1.0;  // the program did something
            request_ = request;
            value_ = now;
            count_ = 0;
            return 0.0;
        }
        if (++count_ < (spin_start_ < 0 ? kReadings : kReadingsInSpin)) return 0.0;
        count_ = 0;
        if (spin_start_ < 0) spin_start_ = now;
        return std::clamp(kStepFraction * (now - spin_start_), kFirstStep, kLongestStep);
    }

    // The sleep reading() asked for was taken, and was request number `request`.
    void slept(uint32_t request) { after_own_sleep_ = request; }

private:
    double value_ = -1.0;
    double spin_start_ = -1.0;  // simulated date the current spin began (< 0: none)
    uint32_t request_ = 0;
    uint32_t after_own_sleep_ = 0;
    uint32_t count_ = 0;
};

}  // namespace s4bxi::interpose

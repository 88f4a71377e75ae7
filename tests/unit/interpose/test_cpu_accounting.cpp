// What of the simulated thread's CPU time is charged as compute (cpu_accounting.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "rank/cpu_accounting.hpp"

using namespace s4bxi::interpose::cpuacct;

TEST_CASE("the overhead is the segment's CPU time beyond the application's wall time", "[interpose][cpu]")
{
    // 900 ns of CPU between two readings, of which the application had 200 ns of wall time.
    CHECK(overhead_ns(10'000, 10'900, 5'000, 5'200) == 700);
    // The application's wall time covers the whole segment: nothing is ours.
    CHECK(overhead_ns(10'000, 10'900, 5'000, 5'900) == 0);
    CHECK(overhead_ns(10'000, 10'900, 5'000, 6'000) == 0);
    // Descheduled between the stamps: the wall time exceeds the CPU time, charged whole.
    CHECK(overhead_ns(10'000, 10'900, 5'000, 2'005'000) == 0);
    // No CPU time, or a clock that went back: nothing.
    CHECK(overhead_ns(10'000, 10'000, 5'000, 5'000) == 0);
    CHECK(overhead_ns(10'000, 9'000, 5'000, 5'100) == 0);
    // No exit stamp (first segment after registration, a request from another thread).
    CHECK(overhead_ns(10'000, 10'900, 0, 5'200) == 0);
    // Stamps out of order.
    CHECK(overhead_ns(10'000, 10'900, 5'200, 5'000) == 0);
}

TEST_CASE("the overhead is bounded, so a long computation keeps its time", "[interpose][cpu]")
{
    // 100 ms of compute measured 50 µs shorter on the wall clock (a difference of rate):
    // at most kMaxOverheadNs is taken off.
    CHECK(overhead_ns(0, 100'000'000, 1'000, 1'000 + 99'950'000) == kMaxOverheadNs);
    CHECK(overhead_ns(0, kMaxOverheadNs + 1, 1, 1) == kMaxOverheadNs);
    CHECK(overhead_ns(0, kMaxOverheadNs - 1, 1, 1) == kMaxOverheadNs - 1);
}

namespace {

// The slot as the rank and the server share it.
struct Slot {
    uint64_t base = 0;
    int64_t offset = 0;
};

// A rank reading at `cpu`, the application having called in at `wall`: the base afterwards.
uint64_t read(Ledger& ledger, Slot& slot, uint64_t cpu, int64_t wall)
{
    slot.base = ledger.reading(cpu, wall, slot.base, slot.offset);
    return slot.base;
}

}  // namespace

TEST_CASE("readings move the base of the clock by the interposer's overhead", "[interpose][cpu]")
{
    Ledger ledger;
    Slot slot{1'000, 7};
    ledger.replied(1'000);
    ledger.published(7);
    // No exit stamp yet: the first segment is charged whole.
    CHECK(read(ledger, slot, 2'000, 50'000) == 1'000);
    ledger.returned(50'100);
    // 600 ns of CPU, 150 ns of it the application's: the base moves 450 ns.
    CHECK(read(ledger, slot, 2'600, 50'250) == 1'450);
    ledger.returned(50'400);
    // A reply: the base is the reply's reading, whatever was excluded before.
    ledger.replied(9'000);
    slot.base = 9'000;
    CHECK(ledger.reply_reference(slot.base) == 9'000);
    ledger.returned(60'000);
    CHECK(read(ledger, slot, 9'500, 60'100) == 9'400);
    // "CPU time since the reply" counts from the reply, not from the moved base.
    CHECK(ledger.reply_reference(slot.base) == 9'000);
    CHECK(ledger.known_cpu_since_reply(slot.base) == 500);
}

TEST_CASE("a segment in which the server answered a trapped syscall is charged whole", "[interpose][cpu]")
{
    Ledger ledger;
    Slot slot{1'000, 7};
    ledger.replied(1'000);
    ledger.published(7);
    ledger.returned(50'000);

    SECTION("a trapped clock read: the server published a new offset")
    {
        slot.offset = 8;
        CHECK(read(ledger, slot, 1'900, 50'100) == 1'000);
        // The rank publishes its own offset at this reading; the next segment is split again.
        ledger.published(9);
        slot.offset = 9;
        ledger.returned(50'200);
        CHECK(read(ledger, slot, 2'500, 50'300) == 1'500);
    }
    SECTION("a trapped sleep: the server wrote the slot as a reply")
    {
        slot.base = 4'000;
        slot.offset = 8;
        CHECK(read(ledger, slot, 4'700, 90'000) == 4'000);
        CHECK(ledger.reply_reference(slot.base) == 4'000);
        CHECK(ledger.known_cpu_since_reply(slot.base) == 700);
        ledger.published(9);
        slot.offset = 9;
        ledger.returned(90'100);
        CHECK(read(ledger, slot, 5'300, 90'200) == 4'500);
    }
    SECTION("before the rank reads again, CPU since the reply counts from the server's")
    {
        CHECK(ledger.reply_reference(3'000) == 3'000);
        CHECK(ledger.known_cpu_since_reply(3'000) == 0);
    }
}

TEST_CASE("the clock never goes backward and the base never passes the CPU clock", "[interpose][cpu]")
{
    std::mt19937_64 random(42);
    auto below = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n)(random); };
    Ledger ledger;
    Slot slot{100, 0};
    ledger.replied(100);
    uint64_t cpu = 100;
    int64_t wall = 1'000;
    uint64_t shown = 0;  // CPU time the clock showed last (cpu - base), since the last reply
    for (int i = 0; i < 100'000; ++i) {
        // Our tail after a reading, the application (sometimes computing long, sometimes
        // descheduled), our head before the next reading.
        uint64_t tail = below(2'000), head = below(2'000), work = below(4) == 0 ? below(50'000'000) : below(300);
        cpu += tail;
        wall += static_cast<int64_t>(tail);
        ledger.returned(below(50) == 0 ? 0 : wall);
        uint64_t work_start = cpu;
        cpu += work;
        wall += static_cast<int64_t>(work + (below(10) == 0 ? below(1'000'000) : 0));
        // The stamps may see the application's time a little short of its CPU time (the
        // two host clocks differ slightly in rate).
        int64_t entry = wall - static_cast<int64_t>(work / 20'000);
        cpu += head;
        wall += static_cast<int64_t>(head);
        const uint64_t before = shown;
        const uint64_t event = below(100);
        switch (event) {
        case 0: {  // the server answered a trapped clock read during the work, showing its value
            uint64_t at = work_start + below(work);
            if (at - slot.base > shown) shown = at - slot.base;
            slot.offset += 1;
            break;
        }
        case 1:  // the server answered a trapped sleep: a reply, the clock restarts from it
            slot.base = work_start + below(work);
            slot.offset += 1;
            shown = 0;
            break;
        default: break;
        }
        uint64_t base = read(ledger, slot, cpu, entry);
        REQUIRE(base <= cpu);
        REQUIRE(cpu - base >= shown);
        // The application's work is charged, but for what the stamps missed of it.
        if (event != 1) REQUIRE(cpu - base - before + work / 20'000 >= work);
        shown = cpu - base;
        ledger.published(slot.offset);
        if (below(3) == 0) {  // a request and its reply
            ledger.replied(cpu);
            slot.base = cpu;
            shown = 0;
        }
    }
}

TEST_CASE("in the MPI library the model's charge counts, not the CPU time", "[interpose][cpu]")
{
    Ledger ledger;
    Slot slot{1'000, 7};
    ledger.replied(1'000);
    ledger.published(7);
    ledger.returned(50'000);
    // The application computes 500 ns, then calls MPI_Test, charged 120 ns by the model.
    CHECK(read(ledger, slot, 1'500, 50'500) == 1'000);
    slot.base = ledger.freeze(1'500, 120);
    CHECK(slot.base == 880);
    CHECK(ledger.frozen_ns == 1'500);
    // 3 µs in the library, with a reading that excludes nothing: the clock stands at
    // 1'500 - 880 = 620 ns since the reply, the application's 500 and the call's 120.
    CHECK(read(ledger, slot, 3'000, 52'000) == 880);
    // Out again: the 3 µs are left out, the charge stays.
    slot.base = ledger.thaw(4'500);
    CHECK(slot.base == 3'880);
    CHECK(4'500 - slot.base == 620);
    CHECK(ledger.frozen_ns == 0);
    // The application's next segment counts again, its overhead excluded as before.
    ledger.returned(53'000);
    CHECK(read(ledger, slot, 5'000, 53'400) == 3'980);
}

TEST_CASE("a reply inside the MPI library keeps the clock frozen from the reply on", "[interpose][cpu]")
{
    Ledger ledger;
    Slot slot{1'000, 7};
    ledger.replied(1'000);
    ledger.published(7);
    slot.base = ledger.freeze(1'200, 100);
    // A request carries frozen - base = 300 ns (200 of the application, 100 charged); its
    // reply comes at CPU 6'000, after the wait.
    CHECK(ledger.frozen_ns - slot.base == 300);
    ledger.replied(6'000);
    slot.base = 6'000;
    CHECK(ledger.frozen_ns == 6'000);
    // 700 ns more of the library's code after the reply: none of it counts.
    slot.base = ledger.thaw(6'700);
    CHECK(slot.base == 6'700);
}

TEST_CASE("a sleep the server answered inside the MPI library moves the frozen clock", "[interpose][cpu]")
{
    Ledger ledger;
    Slot slot{1'000, 7};
    ledger.replied(1'000);
    ledger.published(7);
    slot.base = ledger.freeze(1'200, 100);
    // The server served a trapped sleep: new base and frozen clock at its CPU reading.
    slot.base = 8'000;
    CHECK(ledger.reading(8'500, 60'000, slot.base, 8, 8'000) == 8'000);
    CHECK(ledger.frozen_ns == 8'000);
    CHECK(ledger.thaw(8'500) == 8'500);
}

TEST_CASE("a library that spins in one call past the freeze lets its time count", "[interpose][cpu]")
{
    Ledger ledger;
    Slot slot{1'000, 7};
    ledger.replied(1'000);
    ledger.published(7);
    slot.base = ledger.freeze(1'000, 50);
    // 2 ms of CPU in the library without a Portals call: all but the freeze counts.
    slot.base = ledger.thaw(1'000 + 2'000'000);
    CHECK(1'000 + 2'000'000 - slot.base == 50 + 2'000'000 - s4bxi::timemath::kLibraryFreezeNs);
}

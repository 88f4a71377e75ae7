// A remote rank's channel memory, kept the same on its machine and in the server's shadow
// (s4bxi/channel_sync.hpp): each side's writes reach the other, nothing comes back, and
// malformed deltas are refused.
#include <catch2/catch.hpp>

#include <sys/mman.h>

#include <cstring>

#include "s4bxi/channel_sync.hpp"

using s4bxi::remote::Applied;
using s4bxi::remote::ChannelSync;
namespace wire = s4bxi::wire;

namespace {

// A zeroed channel, as a fresh memfd is.
struct Channel {
    uint8_t* memory;
    ChannelSync sync;
    Channel() : memory(map()), sync(memory) {}
    ~Channel() { munmap(memory, ChannelSync::kBytes); }
    static uint8_t* map()
    {
        void* m = mmap(nullptr, ChannelSync::kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(m != MAP_FAILED);
        return static_cast<uint8_t*>(m);
    }
    wire::Slot& slot() { return *reinterpret_cast<wire::Slot*>(memory); }
    wire::Mirror& mirror() { return wire::mirror_of(slot()); }
};

// Ships what `from` changed to `to`; returns what the application said.
Applied ship(Channel& from, Channel& to, size_t* bytes = nullptr)
{
    std::vector<uint8_t> delta;
    from.sync.collect(delta);
    if (bytes) *bytes = delta.size();
    Applied applied;
    REQUIRE(to.sync.apply(delta.data(), delta.size(), applied));
    return applied;
}

size_t pending(Channel& c)
{
    std::vector<uint8_t> delta;
    return c.sync.collect(delta);
}

}  // namespace

TEST_CASE("a request reaches the shadow, its reply the rank, and nothing comes back")
{
    Channel rank, shadow;
    rank.slot().request.op = static_cast<uint32_t>(wire::Op::PtlPut);
    rank.slot().request.seq = 7;
    std::memset(rank.slot().request.args, 0xab, 40);
    rank.slot().state.store(static_cast<uint32_t>(wire::SlotState::Posted));
    Applied applied = ship(rank, shadow);
    CHECK(applied.state);
    CHECK(shadow.slot().state.load() == static_cast<uint32_t>(wire::SlotState::Posted));
    CHECK(shadow.slot().request.seq == 7);
    CHECK(std::memcmp(shadow.slot().request.args, rank.slot().request.args, 40) == 0);
    CHECK(pending(shadow) == 0);  // what it applied is not its own to ship
    CHECK(pending(rank) == 0);

    shadow.slot().reply.seq = 7;
    shadow.slot().reply.rc = -3;
    shadow.slot().sim_time_at_reply_bits.store(0x4010000000000000ull);
    shadow.mirror().replies.store(1);
    shadow.slot().state.store(static_cast<uint32_t>(wire::SlotState::Replied));
    applied = ship(shadow, rank);
    CHECK(applied.state);
    CHECK_FALSE(applied.posted_served);
    CHECK(rank.slot().reply.rc == -3);
    CHECK(rank.slot().sim_time_at_reply() == 4.0);
    CHECK(rank.mirror().replies.load() == 1);
    CHECK(rank.slot().state.load() == static_cast<uint32_t>(wire::SlotState::Replied));
    CHECK(pending(rank) == 0);

    // The rank takes the reply and posts again: the same word, written in turn.
    rank.slot().state.store(static_cast<uint32_t>(wire::SlotState::Posted));
    ship(rank, shadow);
    CHECK(shadow.slot().state.load() == static_cast<uint32_t>(wire::SlotState::Posted));
}

TEST_CASE("each side's futex bookkeeping and the copy orders stay on their machine")
{
    Channel rank, shadow;
    rank.slot().sleepers.store(2);
    rank.slot().posted_sleepers.store(1);
    rank.slot().delivery.state.store(static_cast<uint32_t>(wire::DeliveryState::Posted));
    CHECK(pending(rank) == 0);
    CHECK(shadow.slot().sleepers.load() == 0);
}

TEST_CASE("events, counters and entries of the mirror cross, and only the parts in use are looked at")
{
    Channel rank, shadow;
    // The server opens event queue 0 and counter 0 and writes an event and a count.
    wire::EqMirror& q = shadow.mirror().eqs[0];
    q.window[0].stamp = 3;
    q.window[0].visible_at = 1.5;
    std::memset(q.window[0].event, 0x5c, wire::kEventBytes);
    q.head.store(1);
    q.handle.store(0x20000000);
    wire::open_counter(shadow.mirror().cts[0], 0x40000000, 3);
    wire::write_counter(shadow.mirror().cts[0], 5, 1, 3);
    size_t bytes = 0;
    Applied applied = ship(shadow, rank, &bytes);
    CHECK(applied.anything);
    CHECK_FALSE(applied.state);
    CHECK(bytes < 2 * sizeof(wire::EqMirror));  // the changed bytes, not the mirror
    CHECK(rank.mirror().eqs[0].head.load() == 1);
    CHECK(rank.mirror().eqs[0].window[0].visible_at == 1.5);
    CHECK(rank.mirror().eqs[0].window[0].event[10] == 0x5c);
    uint64_t success = 0, failure = 0;
    REQUIRE(wire::readable_counter(rank.mirror().cts[0], 0x40000000, 4, success, failure));
    CHECK(success == 5);
    CHECK(failure == 1);
    CHECK((rank.mirror().cts[0].version.load() & 1u) == 0);

    // The rank takes the event locally and chooses two entry slots.
    wire::consume_event(rank.mirror().eqs[0], 4);
    rank.mirror().entries[0].handle.store(0x60000000);
    rank.mirror().entries[1].handle.store(0x60000001);
    rank.mirror().entry_slots_used.store(2);
    ship(rank, shadow);
    CHECK(shadow.mirror().eqs[0].tail.load() == 1);
    CHECK(shadow.mirror().entries[1].handle.load() == 0x60000001);

    // A second queue, opened later, is looked at too.
    shadow.mirror().eqs[1].head.store(4);
    shadow.mirror().eqs[1].handle.store(0x20000001);
    ship(shadow, rank);
    CHECK(rank.mirror().eqs[1].head.load() == 4);
    // The server frees an entry: the rank sees its slot free from the next reply.
    wire::free_entry_slot(shadow.mirror().entries[0], 4);
    ship(shadow, rank);
    CHECK(rank.mirror().entries[0].handle.load() == 0);
    CHECK(rank.mirror().entries[0].free_from.load() == 5);
}

TEST_CASE("the rank's call records reach the server, their head last")
{
    Channel rank, shadow;
    wire::CallRecordRing& ring = wire::call_records_of(rank.slot());
    ring.records[0] = {static_cast<uint32_t>(wire::CallRecordKind::Begin), 3, 1, 0, 0.25, 8};
    ring.records[1] = {static_cast<uint32_t>(wire::CallRecordKind::End), 3, 1, 0, 0.5, 0};
    ring.head.store(2);
    ship(rank, shadow);
    wire::CallRecordRing& there = wire::call_records_of(shadow.slot());
    CHECK(there.head.load() == 2);
    CHECK(there.records[1].time == 0.5);
    there.tail.store(2);  // the server drained it
    ship(shadow, rank);
    CHECK(ring.tail.load() == 2);
}

TEST_CASE("a malformed delta is refused whole")
{
    Channel c;
    Applied applied;
    std::vector<uint8_t> delta(8 + 4);
    uint32_t header[2] = {static_cast<uint32_t>(ChannelSync::kBytes - 2), 4};  // past the end
    std::memcpy(delta.data(), header, 8);
    CHECK_FALSE(c.sync.apply(delta.data(), delta.size(), applied));
    header[0] = 0;
    header[1] = 16;  // longer than what follows
    std::memcpy(delta.data(), header, 8);
    CHECK_FALSE(c.sync.apply(delta.data(), delta.size(), applied));
    header[1] = 0;  // empty
    std::memcpy(delta.data(), header, 8);
    CHECK_FALSE(c.sync.apply(delta.data(), 8, applied));
    CHECK_FALSE(c.sync.apply(delta.data(), 5, applied));  // a header cut short
    CHECK_FALSE(applied.anything);
    CHECK(c.slot().state.load() == 0);
}

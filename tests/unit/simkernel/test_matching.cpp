#include <catch2/catch.hpp>
#include <portals4.h>

#include "portals/matching.hpp"

using namespace s4bxi::sim;

namespace {

EntryCriteria me(uint64_t bits, uint64_t ignore, uint64_t length = 100)
{
    EntryCriteria e;
    e.options = PTL_ME_OP_PUT | PTL_ME_OP_GET;
    e.match_bits = bits;
    e.ignore_bits = ignore;
    e.length = length;
    e.match_nid = PTL_NID_ANY;
    e.match_pid = PTL_PID_ANY;
    return e;
}

Incoming put(uint64_t bits, uint64_t length = 10, uint64_t offset = 0)
{
    Incoming m;
    m.match_bits = bits;
    m.nid = 3;
    m.pid = 42;
    m.length = length;
    m.remote_offset = offset;
    return m;
}

}  // namespace

TEST_CASE("match bits must agree outside the ignore bits")
{
    CHECK(criteria_match(me(0xf0, 0), put(0xf0)));
    CHECK_FALSE(criteria_match(me(0xf0, 0), put(0xf1)));
    CHECK(criteria_match(me(0xf0, 0x0f), put(0xf7)));
    CHECK_FALSE(criteria_match(me(0xf0, 0x0f), put(0x70)));
}

TEST_CASE("list entries of a non-matching NI accept anything")
{
    EntryCriteria le = me(0xf0, 0);
    le.matching = false;
    CHECK(criteria_match(le, put(0x1234)));
}

TEST_CASE("the source must match the entry's match_id")
{
    EntryCriteria e = me(0, 0);
    e.match_nid = 3;
    e.match_pid = 42;
    CHECK(criteria_match(e, put(0)));
    e.match_pid = 43;
    CHECK_FALSE(criteria_match(e, put(0)));
    e.match_pid = PTL_PID_ANY;
    e.match_nid = 4;
    CHECK_FALSE(criteria_match(e, put(0)));
    e.logical = true;
    e.match_rank = 7;
    Incoming m = put(0);
    m.rank = 7;
    CHECK(criteria_match(e, m));
    m.rank = 8;
    CHECK_FALSE(criteria_match(e, m));
    e.match_rank = PTL_RANK_ANY;
    CHECK(criteria_match(e, m));
}

TEST_CASE("messages are truncated to the room left in the entry")
{
    auto p = place(me(0, 0, 100), put(0, 30, 80));
    REQUIRE(p);
    CHECK(p->offset == 80);
    CHECK(p->mlength == 20);
    p = place(me(0, 0, 100), put(0, 30, 120));
    REQUIRE(p);
    CHECK(p->mlength == 0);
}

TEST_CASE("NO_TRUNCATE entries refuse messages that do not fit")
{
    EntryCriteria e = me(0, 0, 100);
    e.options |= PTL_ME_NO_TRUNCATE;
    CHECK_FALSE(place(e, put(0, 30, 80)));
    CHECK(place(e, put(0, 20, 80)));
}

TEST_CASE("MANAGE_LOCAL entries place data at their own offset")
{
    EntryCriteria e = me(0, 0, 100);
    e.options |= PTL_ME_MANAGE_LOCAL;
    e.managed_offset = 64;
    auto p = place(e, put(0, 50, 0));
    REQUIRE(p);
    CHECK(p->offset == 64);
    CHECK(p->mlength == 36);
    CHECK(exhausted(100, 92, 9));
    CHECK_FALSE(exhausted(100, 91, 9));
}

TEST_CASE("OP_PUT and OP_GET permissions")
{
    CHECK(access_permitted(PTL_ME_OP_PUT, Access::Put));
    CHECK(access_permitted(PTL_ME_OP_PUT, Access::Atomic));
    CHECK_FALSE(access_permitted(PTL_ME_OP_PUT, Access::Get));
    CHECK_FALSE(access_permitted(PTL_ME_OP_PUT, Access::FetchAtomic));
    CHECK(access_permitted(PTL_ME_OP_GET, Access::Get));
    CHECK(access_permitted(PTL_ME_OP_PUT | PTL_ME_OP_GET, Access::FetchAtomic));
}

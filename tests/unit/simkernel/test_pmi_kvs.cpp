#include <catch2/catch.hpp>

#include "services/pmi_kvs.hpp"

using namespace s4bxi::sim;

TEST_CASE("PMI KVS: a put is what a later get returns")
{
    PmiKvs kvs;
    CHECK_FALSE(kvs.get("kvs", "rank-0").has_value());
    kvs.put("kvs", "rank-0", "nid=3");
    REQUIRE(kvs.get("kvs", "rank-0").has_value());
    CHECK(*kvs.get("kvs", "rank-0") == "nid=3");
}

TEST_CASE("PMI KVS: keys live in their key-value space")
{
    PmiKvs kvs;
    kvs.put("a", "key", "1");
    CHECK_FALSE(kvs.get("b", "key").has_value());
    kvs.put("b", "key", "2");
    CHECK(*kvs.get("a", "key") == "1");
    CHECK(*kvs.get("b", "key") == "2");
}

TEST_CASE("PMI KVS: a second put replaces the value, empty values are values")
{
    PmiKvs kvs;
    kvs.put("kvs", "key", "old");
    kvs.put("kvs", "key", "new");
    CHECK(*kvs.get("kvs", "key") == "new");
    CHECK(kvs.size() == 1);
    kvs.put("kvs", "empty", "");
    REQUIRE(kvs.get("kvs", "empty").has_value());
    CHECK(kvs.get("kvs", "empty")->empty());
}

TEST_CASE("PMI barrier: a round ends with the world-th arrival, then the next begins")
{
    PmiBarrierRounds rounds;
    auto first = rounds.arrive(3);
    auto second = rounds.arrive(3);
    CHECK(first.round == 0);
    CHECK_FALSE(first.last);
    CHECK_FALSE(second.last);
    CHECK(rounds.completed() == 0);
    CHECK(rounds.arrived() == 2);
    auto third = rounds.arrive(3);
    CHECK(third.last);
    CHECK(third.round == 0);
    CHECK(rounds.completed() == 1);
    CHECK(rounds.arrived() == 0);
    auto next = rounds.arrive(3);
    CHECK(next.round == 1);
    CHECK_FALSE(next.last);
}

TEST_CASE("PMI barrier: a world of one never waits")
{
    PmiBarrierRounds rounds;
    CHECK(rounds.arrive(1).last);
    CHECK(rounds.arrive(1).last);
    CHECK(rounds.completed() == 2);
}

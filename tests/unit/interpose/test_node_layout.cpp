// Which ranks share a simulated node under --ppn, as the interposer tells PMIx callers.
#include <catch2/catch.hpp>

#include "identity/node_layout.hpp"

using s4bxi::interpose::NodeLayout;

TEST_CASE("ranks fill the nodes in order, ppn at a time")
{
    NodeLayout layout{8, 4};
    CHECK(layout.nodes() == 2);
    CHECK(layout.node_of(3) == 0);
    CHECK(layout.node_of(4) == 1);
    CHECK(layout.local_rank(6) == 2);
    CHECK(layout.peers(0) == "0,1,2,3");
    CHECK(layout.peers(1) == "4,5,6,7");
    CHECK(layout.size_of_node(1) == 4);
}

TEST_CASE("the last node takes the ranks that are left")
{
    NodeLayout layout{6, 4};
    CHECK(layout.nodes() == 2);
    CHECK(layout.size_of_node(0) == 4);
    CHECK(layout.size_of_node(1) == 2);
    CHECK(layout.peers(1) == "4,5");
    CHECK(layout.local_rank(5) == 1);
}

TEST_CASE("one rank per node: every rank alone")
{
    NodeLayout layout{3, 1};
    CHECK(layout.nodes() == 3);
    for (int r = 0; r < 3; ++r) {
        CHECK(layout.node_of(r) == r);
        CHECK(layout.local_rank(r) == 0);
        CHECK(layout.peers(r) == std::to_string(r));
    }
}

TEST_CASE("a layout without ranks or without ppn is not valid")
{
    CHECK_FALSE(NodeLayout{0, 2}.valid());
    CHECK_FALSE(NodeLayout{4, 0}.valid());
    CHECK(NodeLayout{4, 2}.valid());
}

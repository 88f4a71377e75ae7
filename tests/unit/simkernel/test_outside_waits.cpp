#include <catch2/catch.hpp>

#include "services/outside_waits.hpp"

using s4bxi::sim::FenceBook;

TEST_CASE("a fence completes with the arrival of its last participant", "[outside]")
{
    FenceBook book;
    std::vector<int> all{0, 1, 2};
    auto first = book.arrive(2, all);
    CHECK_FALSE(first.complete);
    CHECK(first.fence == 1);
    CHECK(first.arrived == 1);
    CHECK_FALSE(book.arrive(0, all).complete);
    auto last = book.arrive(1, all);
    CHECK(last.complete);
    CHECK(last.arrived == 3);
}

TEST_CASE("a rank that runs ahead waits in the next fence, not the one it left", "[outside]")
{
    FenceBook book;
    std::vector<int> pair{0, 1};
    book.arrive(0, pair);
    CHECK(book.arrive(1, pair).complete);
    // Rank 0 enters fence 2 while rank 1 has not: it must wait.
    auto ahead = book.arrive(0, pair);
    CHECK(ahead.fence == 2);
    CHECK_FALSE(ahead.complete);
    CHECK(ahead.arrived == 1);
    CHECK(book.arrive(1, pair).complete);
}

TEST_CASE("fences over different sets of ranks are counted apart", "[outside]")
{
    FenceBook book;
    std::vector<int> all{0, 1, 2, 3}, low{0, 1};
    CHECK_FALSE(book.arrive(0, all).complete);
    CHECK_FALSE(book.arrive(0, low).complete);
    CHECK(book.arrive(1, low).complete);  // rank 1 never entered the fence of all
    CHECK_FALSE(book.arrive(1, all).complete);
    CHECK_FALSE(book.arrive(2, all).complete);
    CHECK(book.arrive(3, all).complete);
}

TEST_CASE("a fence of one rank completes at once", "[outside]")
{
    FenceBook book;
    CHECK(book.arrive(5, {5}).complete);
    CHECK(book.arrive(5, {5}).fence == 2);
}

// The server's copy orders (wire::Delivery): taken and carried out once, by the delivery
// thread or by a thread of the rank that waits for its reply, whichever comes first.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "delivery/delivery_thread.hpp"

using s4bxi::interpose::take_delivery_order;
using s4bxi::wire::Delivery;
using s4bxi::wire::DeliveryState;

namespace {

uint32_t state_of(const Delivery& d)
{
    return d.state.load();
}

// An order to copy `length` bytes from `from` to `to`, both in this process: the kernel's
// cross-memory copy works on one's own pid as on another's.
void post(Delivery& d, const void* from, void* to, uint64_t length, bool writes = false)
{
    d.peer_pid = getpid();
    d.writes = writes ? 1 : 0;
    d.source_address = reinterpret_cast<uint64_t>(from);
    d.target_address = reinterpret_cast<uint64_t>(to);
    d.length = length;
    d.moved = 0;
    d.error = 0;
    d.state.store(static_cast<uint32_t>(DeliveryState::Posted));
}

}  // namespace

TEST_CASE("a posted order is carried out by the thread that takes it, and only once")
{
    Delivery d{};
    std::vector<unsigned char> from(300 * 1024), to(from.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 7 + 3);
    post(d, from.data(), to.data(), from.size());
    CHECK(take_delivery_order(d));
    CHECK(state_of(d) == static_cast<uint32_t>(DeliveryState::Done));
    CHECK(d.moved == from.size());
    CHECK(d.error == 0);
    CHECK(std::memcmp(from.data(), to.data(), from.size()) == 0);
    // Done: nothing more to take until the server posts again.
    CHECK_FALSE(take_delivery_order(d));
    CHECK(state_of(d) == static_cast<uint32_t>(DeliveryState::Done));
}

TEST_CASE("a write order copies this rank's bytes into the peer's memory")
{
    Delivery d{};
    std::vector<unsigned char> from(300 * 1024), to(from.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 13 + 1);
    post(d, from.data(), to.data(), from.size(), true);
    CHECK(take_delivery_order(d));
    CHECK(d.moved == from.size());
    CHECK(d.error == 0);
    CHECK(std::memcmp(from.data(), to.data(), from.size()) == 0);
    // Into memory the peer does not map: the error is reported.
    post(d, from.data(), nullptr, 64, true);
    CHECK(take_delivery_order(d));
    CHECK(d.error != 0);
}

TEST_CASE("an order withdrawn, or already taken, is left alone")
{
    Delivery d{};
    unsigned char from[64] = {1}, to[64] = {};
    post(d, from, to, sizeof from);
    d.state.store(static_cast<uint32_t>(DeliveryState::Idle));  // withdrawn by the server
    CHECK_FALSE(take_delivery_order(d));
    CHECK(to[0] == 0);
    post(d, from, to, sizeof from);
    d.state.store(static_cast<uint32_t>(DeliveryState::Taken));  // the other thread copies
    CHECK_FALSE(take_delivery_order(d));
    CHECK(to[0] == 0);
    CHECK(state_of(d) == static_cast<uint32_t>(DeliveryState::Taken));
}

TEST_CASE("a copy that fails reports its error, for the server to copy itself")
{
    Delivery d{};
    unsigned char to[64] = {};
    post(d, nullptr, to, sizeof to);  // an address the source does not map
    CHECK(take_delivery_order(d));
    CHECK(state_of(d) == static_cast<uint32_t>(DeliveryState::Done));
    CHECK(d.error != 0);
    CHECK(d.moved < sizeof to);
}

TEST_CASE("two threads taking the same orders: each is carried out exactly once")
{
    constexpr int kOrders = 2000;
    Delivery d{};
    std::vector<unsigned char> from(4096, 0x5a), to(4096);
    std::atomic<int> taken[2] = {0, 0};
    std::atomic<bool> stop{false};
    auto taker = [&](int who) {
        while (!stop.load())
            if (take_delivery_order(d)) ++taken[who];
    };
    std::thread first(taker, 0), second(taker, 1);
    for (int order = 0; order < kOrders; ++order) {
        post(d, from.data(), to.data(), from.size());
        while (state_of(d) != static_cast<uint32_t>(DeliveryState::Done)) std::this_thread::yield();
        REQUIRE(d.moved == from.size());
        d.state.store(static_cast<uint32_t>(DeliveryState::Idle));
    }
    stop = true;
    first.join();
    second.join();
    CHECK(taken[0] + taken[1] == kOrders);
}

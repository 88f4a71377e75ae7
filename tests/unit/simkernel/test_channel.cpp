#include <catch2/catch.hpp>

#include <thread>

#include "channel/channel_server.hpp"
#include "s4bxi/remote_wire.hpp"
#include "s4bxi/wire.hpp"

using namespace s4bxi;

TEST_CASE("wire structures have fixed sizes")
{
    STATIC_REQUIRE(sizeof(wire::Hello) == 24);
    STATIC_REQUIRE(sizeof(wire::Request) == 40 + wire::kArgBytes);
    STATIC_REQUIRE(sizeof(wire::Reply) == 32 + wire::kArgBytes);
    STATIC_REQUIRE(sizeof(wire::DataArgs) == 2 * 4 + 7 * 8 + 4 * 4);
    // A data command: the arguments, then the carried payload's length and bytes.
    STATIC_REQUIRE(sizeof(wire::FetchArgs) == sizeof(wire::DataArgs) + 2 * 4 + 8 + 32);
    STATIC_REQUIRE(offsetof(wire::DataCommand, carried_length) == sizeof(wire::FetchArgs));
    STATIC_REQUIRE(sizeof(wire::DataCommand) == sizeof(wire::FetchArgs) + 2 * 4 + wire::kCarriedPayloadBytes);
    STATIC_REQUIRE(sizeof(wire::EventReply) == 8 + wire::kEventBytes);
    STATIC_REQUIRE(alignof(wire::Slot) == 64);
    STATIC_REQUIRE(sizeof(wire::PcontrolArgs) == 8);
    // Operation codes are the protocol's: a new one comes last, after the others' numbers.
    STATIC_REQUIRE(static_cast<uint32_t>(wire::Op::CallRecords) == 49);
    STATIC_REQUIRE(static_cast<uint32_t>(wire::Op::Pcontrol) == 51);
}

TEST_CASE("a fresh slot is idle and the doorbell is silent")
{
    auto slot = sim::create_slot();
    auto bell = sim::create_doorbell();
    CHECK(slot.fd >= 0);
    CHECK(slot.object->state.load() == static_cast<uint32_t>(wire::SlotState::Idle));
    double start = sim::wall_now();
    CHECK(sim::wait_doorbell(*bell.object, 0, 0.02) == 0);
    CHECK(sim::wall_now() - start >= 0.015);  // it really waited, then gave up
}

TEST_CASE("a request posted by another thread wakes the server, and the reply wakes the rank")
{
    auto slot = sim::create_slot();
    auto bell = sim::create_doorbell();
    std::thread rank([&] {
        slot.object->request.op = static_cast<uint32_t>(wire::Op::Yield);
        slot.object->request.seq = 7;
        slot.object->state.store(static_cast<uint32_t>(wire::SlotState::Posted));
        bell.object->count.fetch_add(1);
        while (slot.object->state.load() != static_cast<uint32_t>(wire::SlotState::Replied)) {}
    });
    uint32_t seen = 0;
    double deadline = sim::wall_now() + 5;
    while (seen == 0 && sim::wall_now() < deadline) seen = sim::wait_doorbell(*bell.object, 0, 0.1);
    REQUIRE(seen == 1);
    CHECK(slot.object->request.seq == 7);
    slot.object->reply.seq = 7;
    sim::publish_reply(*slot.object);
    rank.join();
    CHECK(slot.object->reply.seq == 7);
}

TEST_CASE("the greeting of a process of another machine: its header, the run's secret, its texts")
{
    using namespace s4bxi::remote;
    std::string secret(kSecretChars, 'a');
    secret[10] = '7';
    CHECK(secret_well_formed(secret));
    CHECK_FALSE(secret_well_formed(secret.substr(1)));
    CHECK_FALSE(secret_well_formed(std::string(kSecretChars, 'A')));  // lower-case hex only
    Hello hello;
    std::memcpy(hello.secret, secret.data(), kSecretChars);
    CHECK(same_secret(secret, hello.secret));
    hello.secret[kSecretChars - 1] = 'b';
    CHECK_FALSE(same_secret(secret, hello.secret));
    CHECK_FALSE(same_secret("", hello.secret));

    FrameHeader header;
    header.kind = static_cast<uint16_t>(Kind::Hello);
    header.length = sizeof(Hello);
    CHECK(header_problem(header).empty());
    header.version = s4bxi::wire::kVersion + 1;
    CHECK(header_problem(header).find("another s4bxi") != std::string::npos);
    header.version = s4bxi::wire::kVersion;
    header.length = 3;
    CHECK(header_problem(header).find("not a greeting") != std::string::npos);
    header.magic = 0;
    CHECK(header_problem(header).find("no magic number") != std::string::npos);

    set_text(hello.machine, std::string(100, 'm'));  // cut to the field, NUL-terminated
    CHECK(text_of(hello.machine) == std::string(63, 'm'));
    set_text(hello.machine, "m1");
    CHECK(text_of(hello.machine) == "m1");
}

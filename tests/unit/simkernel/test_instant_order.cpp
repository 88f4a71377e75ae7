// The model's same-instant order (docs/model.md "Same-instant order"): steps of one date
// are done by (node, engine, scheduling order), whatever order they were scheduled in;
// coroutines wait by steps; messages reach an engine in their sending order.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "engine_in_child.hpp"
#include "nic/instant_order.hpp"
#include "nic/nic_model.hpp"
#include "nic/nic_task.hpp"

using namespace s4bxi::sim;
namespace sg4 = simgrid::s4u;

namespace {

sg4::Host* one_host()
{
    auto* zone = sg4::create_full_zone("zone");
    auto* host = zone->create_host("host", 1e9);
    zone->seal();
    return host;
}

// Keeps the engine running until `until` (a proxy would).
void keep_running_until(sg4::Host* host, double until)
{
    sg4::Actor::create("proxy", host, [until] { sg4::this_actor::sleep_until(until); });
}

std::string joined(const std::vector<std::string>& done)
{
    std::string text;
    for (const auto& d : done) text += d + " ";
    return text;
}

// An engine: takes messages as they are handed over, noting each one's size.
NicTask<> engine_taking(EngineQueue& queue, std::vector<int>& taken)
{
    while (true) {
        Message* m = co_await queue.pop();
        taken.push_back(static_cast<int>(m->size));
        delete m;
    }
}

NicTask<> two_delays(std::vector<std::string>& done, std::string name, double first, double second)
{
    co_await delay(first);
    done.push_back(name + "@" + std::to_string(static_cast<int>(sg4::Engine::get_clock() * 1e9 + 0.5)));
    co_await delay(second);
    done.push_back(name + "@" + std::to_string(static_cast<int>(sg4::Engine::get_clock() * 1e9 + 0.5)));
}

}  // namespace

TEST_CASE("steps of one date are done by node, engine and scheduling order")
{
    CHECK(in_child([] {
        sg4::Host* host = one_host();
        InstantOrder& order = instant_order();
        order.reset();
        static std::vector<std::string> done;
        // Scheduled from maestro-less start, in an order the rule must not follow.
        order.at(2e-6, StepOwner::of(1, NicEngine::Rx, 1), [] { done.push_back("n1 rx1"); });
        order.at(2e-6, StepOwner::of(0, NicEngine::Rx, 0), [] { done.push_back("n0 rx0 first"); });
        order.at(1e-6, StepOwner::of(1, NicEngine::Tx, 0), [] { done.push_back("earlier date"); });
        order.at(2e-6, StepOwner::of(0, NicEngine::Tx, 3), [] {
            done.push_back("n0 tx3");
            // Scheduled for the date being done: done in the same pass, by the rule.
            instant_order().at(sg4::Engine::get_clock(), StepOwner::of(0, NicEngine::Tx, 1),
                               [] { done.push_back("n0 tx1 (scheduled at the date)"); });
        });
        order.at(2e-6, StepOwner::of(0, NicEngine::Rx, 0), [] { done.push_back("n0 rx0 second"); });
        order.at(2e-6, StepOwner::of(0, NicEngine::AckLane, 3), [] { done.push_back("n0 ack3"); });
        keep_running_until(host, 1e-5);
        sg4::Engine::get_instance()->run();
        std::vector<std::string> expected = {"earlier date", "n0 tx3", "n0 tx1 (scheduled at the date)", "n0 ack3",
                                             "n0 rx0 first", "n0 rx0 second", "n1 rx1"};
        expect(done == expected, "order: " + joined(done));
    }));
}

TEST_CASE("a coroutine waits by steps; in an actor the same code blocks the actor")
{
    CHECK(in_child([] {
        sg4::Host* host = one_host();
        instant_order().reset();
        static std::vector<std::string> done;
        // Spawned outside any actor: each delay is a step.
        instant_order().at(0, StepOwner::of(0, NicEngine::Tx), [] { spawn(two_delays(done, "step", 3e-9, 4e-9)); });
        sg4::Actor::create("proxy", host, [] {
            sg4::this_actor::sleep_for(1e-6);
            two_delays(done, "actor", 5e-9, 6e-9).run_in_actor();  // sleeps, in the actor
            done.push_back("actor returned@" + std::to_string(static_cast<int>(sg4::Engine::get_clock() * 1e9 + 0.5)));
        });
        sg4::Engine::get_instance()->run();
        std::vector<std::string> expected = {"step@3", "step@7", "actor@1005", "actor@1011", "actor returned@1011"};
        expect(done == expected, "waits: " + joined(done));
    }));
}

TEST_CASE("messages reach an engine in the order they were sent, whatever order they land in")
{
    CHECK(in_child([] {
        sg4::Host* host = one_host();
        instant_order().reset();
        static EngineQueue queue;
        queue.init(StepOwner::of(0, NicEngine::Rx, 1));
        static std::vector<int> taken;
        static std::vector<std::string> handed;
        spawn(engine_taking(queue, taken));
        instant_order().at(1e-9, StepOwner::of(0, NicEngine::Tx), [] {
            uint64_t first = queue.expect(), second = queue.expect(), third = queue.expect();
            // The third lands first, then the first (the second is still on its way), then
            // the second, lost: the first goes at once, the third after the second.
            queue.landed(third, new Message{MessageType::Put, nullptr, 3}, [] { handed.push_back("third"); });
            queue.landed(first, new Message{MessageType::Put, nullptr, 1}, [] { handed.push_back("first"); });
            expect(handed == std::vector<std::string>{"first"}, "the first is handed over alone");
            queue.landed(second, nullptr, [] { handed.push_back("second (lost)"); });
        });
        keep_running_until(host, 1e-6);
        sg4::Engine::get_instance()->run();
        expect(handed == std::vector<std::string>{"first", "second (lost)", "third"}, "hand-over order");
        expect(taken == std::vector<int>{1, 3}, "taken: " + std::to_string(taken.size()));
    }));
}

TEST_CASE("stamped requests are taken in their source's order; a retransmission passes, a skipped one is not awaited")
{
    CHECK(in_child([] {
        sg4::Host* host = one_host();
        instant_order().reset();
        static EngineQueue queue;
        queue.init(StepOwner::of(0, NicEngine::Rx, 1));
        static std::vector<int> taken;
        spawn(engine_taking(queue, taken));
        // Requests of node 5, numbered by their calls; an ACK is never held.
        static std::vector<TransferPtr> requests;
        for (uint64_t order = 0; order < 5; ++order) {
            auto t = std::make_shared<Transfer>();
            t->ordered = true;
            t->order = order;
            t->initiator_nid = 5;
            requests.push_back(t);
        }
        auto request = [](int i) { return new Message{MessageType::Put, requests[i], static_cast<uint64_t>(10 + i), 5}; };
        instant_order().at(1e-9, StepOwner::of(0, NicEngine::Tx), [request] {
            queue.push(request(2));
            queue.push(request(1));
            queue.push(new Message{MessageType::PtlAck, requests[3], 99, 5});
            queue.push(request(0));  // 0, then 1 and 2 that waited for it
        });
        instant_order().at(2e-9, StepOwner::of(0, NicEngine::Tx), [request] {
            queue.push(request(1));      // a retransmission of one already taken
            queue.skip(*requests[3]);    // lost for good
            queue.push(request(4));      // not held behind the lost one
        });
        keep_running_until(host, 1e-6);
        sg4::Engine::get_instance()->run();
        expect(taken == std::vector<int>{99, 10, 11, 12, 11, 14}, "taken: " + std::to_string(taken.size()));
    }));
}

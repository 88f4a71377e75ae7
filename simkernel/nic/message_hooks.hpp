// What observation/ learns of the data messages: one leaves its initiator (the Portals
// calls, calls/data_calls.cpp), one lands at its target's NIC. The NIC and the calls sit
// below observation/, which reads their messages, and include none of it: the server
// installs the timeline's functions here before the simulation starts (server.cpp); until
// then a hook does nothing.
#pragma once

namespace s4bxi::sim {

struct RankRecord;
struct Transfer;
struct Message;

struct MessageHooks {
    // observe::message_issued: a data operation (Put, Get, Atomic, FetchAtomic, Swap;
    // triggered or not) leaves `rank`.
    void (*issued)(const RankRecord& rank, const Transfer& transfer) = [](const RankRecord&, const Transfer&) {};
    // observe::message_landed: a message reached its target NIC.
    void (*landed)(const Message& message) = [](const Message&) {};
};

inline MessageHooks g_message_hooks;

}  // namespace s4bxi::sim

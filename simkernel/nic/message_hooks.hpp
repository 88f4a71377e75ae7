// What observation/ learns of the data messages: one leaves its initiator (the Portals
// calls, calls/data_calls.cpp), one lands at its target's NIC; and of the network model
// in effect (network_models.cpp). The NIC and the calls sit
// below observation/, which reads their messages, and include none of it: the server
// installs the timeline's functions here before the simulation starts (server.cpp); until
// then a hook does nothing.
#pragma once

#include "s4bxi/network_schedule.hpp"

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
    // observe::network_model_changed: `model` runs from `at` on.
    void (*model_changed)(netmodel::Model model, double at) = [](netmodel::Model, double) {};
};

inline MessageHooks g_message_hooks;

}  // namespace s4bxi::sim

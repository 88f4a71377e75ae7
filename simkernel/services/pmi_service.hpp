// PMI-1 requests of spawn-mode ranks (libinterpose/identity/pmi_api.cpp): the key-value space and
// PMI_Barrier, served by the rank's proxy in simulated time.
#pragma once

#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;

bool is_pmi_request(uint32_t op);

// Serves one PMI request; returns the PMI_* code for the reply. A barrier blocks the
// proxy until every rank of the run has arrived, and ends at the last arrival's simulated
// time at no cost of its own; while it waits, deadlock reports name it "PMI_Barrier".
int serve_pmi(RankRecord& rank, const wire::Request& request, wire::Reply& reply);

}  // namespace s4bxi::sim

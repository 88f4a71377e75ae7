// Which ranks share a node, as PMIx tells a rank's MPI library: the simulated nodes' answer
// (--ppn), not mpirun's. mpirun's PMIx server sees every rank on the one real host, so
// Open MPI would take every rank for a node-local peer: MPI_Comm_split_type(
// MPI_COMM_TYPE_SHARED) would group the whole run and shared-memory components would span
// simulated nodes. Open MPI computes its peers' locality from these keys at MPI_Init
// (orte/mca/ess/pmi), so answering them is enough:
//
//   pmix.lpeers      (string)  the ranks of the caller's simulated node, "4,5,6,7"
//   pmix.local.size  (uint32)  how many they are
//   pmix.lrank       (uint16)  a rank's index on its node
//   pmix.nrank       (uint16)  the same (one job per run)
//   pmix.num.nodes   (uint32)  simulated nodes the run uses
//
// for the rank's own namespace only; every other key, namespace and process goes to
// libpmix. Being preloaded, this PMIx_Get comes before libpmix's and calls it through
// RTLD_NEXT.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "identity/node_layout.hpp"
#include "identity/pmix_abi.hpp"
#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"

#define S4BXI_API extern "C" __attribute__((visibility("default")))

namespace {

using namespace s4bxi::interpose::pmix;
using s4bxi::interpose::NodeLayout;

// pmix_value_t: a 16-bit type, then a union whose largest members (pmix_envar_t, two
// pointers and a char) make it 24 bytes, 8-aligned. Allocated larger: the caller frees
// it with free(), after freeing `string` for PMIX_STRING (PMIX_VALUE_RELEASE).
struct pmix_value_t {
    uint16_t type;
    union {
        char* string;
        uint16_t uint16;
        uint32_t uint32;
        unsigned char bytes[24];
    } data;
};
constexpr size_t kValueBytes = 64;

constexpr uint16_t kPmixString = 3;
constexpr uint16_t kPmixUint16 = 13;
constexpr uint16_t kPmixUint32 = 14;

using GetFunction = pmix_status_t (*)(const pmix_proc_t*, const char*, const pmix_info_t*, size_t, pmix_value_t**);

// The simulated node layout of the run, as the server gave it at registration, when `proc`
// is in the rank's own namespace.
std::optional<NodeLayout> layout_for(const pmix_proc_t* proc)
{
    if (!s4bxi::interpose::is_rank() || !proc) return std::nullopt;
    NodeLayout layout{s4bxi::interpose::world_size(), s4bxi::interpose::ranks_per_node()};
    int me = s4bxi::interpose::rank_id();
    if (!layout.valid() || me < 0 || me >= layout.world) return std::nullopt;
    const char* own = getenv("PMIX_NAMESPACE");  // set by the process manager for its ranks
    if (!own || strncmp(proc->nspace, own, sizeof proc->nspace) != 0) return std::nullopt;
    return layout;
}

pmix_value_t* new_value(uint16_t type)
{
    auto* value = static_cast<pmix_value_t*>(calloc(1, kValueBytes));
    if (value) value->type = type;
    return value;
}

pmix_value_t* uint16_value(uint16_t number)
{
    pmix_value_t* value = new_value(kPmixUint16);
    if (value) value->data.uint16 = number;
    return value;
}

pmix_value_t* uint32_value(uint32_t number)
{
    pmix_value_t* value = new_value(kPmixUint32);
    if (value) value->data.uint32 = number;
    return value;
}

pmix_value_t* string_value(const std::string& text)
{
    pmix_value_t* value = new_value(kPmixString);
    if (value && !(value->data.string = strdup(text.c_str()))) {
        free(value);
        return nullptr;
    }
    return value;
}

// The simulated answer for `key` about `proc`, or null to ask libpmix.
pmix_value_t* simulated_value(const NodeLayout& layout, const pmix_proc_t& proc, const char* key)
{
    bool about_a_rank = proc.rank < kPmixRankValid && static_cast<int64_t>(proc.rank) < layout.world;
    int rank = about_a_rank ? static_cast<int>(proc.rank) : s4bxi::interpose::rank_id();
    int node = layout.node_of(rank);
    if (strcmp(key, "pmix.lpeers") == 0) return string_value(layout.peers(node));
    if (strcmp(key, "pmix.local.size") == 0) return uint32_value(static_cast<uint32_t>(layout.size_of_node(node)));
    if (strcmp(key, "pmix.num.nodes") == 0) return uint32_value(static_cast<uint32_t>(layout.nodes()));
    if ((strcmp(key, "pmix.lrank") == 0 || strcmp(key, "pmix.nrank") == 0) && about_a_rank)
        return uint16_value(static_cast<uint16_t>(layout.local_rank(rank)));
    return nullptr;
}

}  // namespace

S4BXI_API pmix_status_t PMIx_Get(const pmix_proc_t* proc, const char* key, const pmix_info_t* info, size_t ninfo,
                                 pmix_value_t** value)
{
    if (std::optional<NodeLayout> layout = layout_for(proc); layout && key && value)
        if (pmix_value_t* simulated = simulated_value(*layout, *proc, key)) {
            *value = simulated;
            return kPmixSuccess;
        }
    static auto real = reinterpret_cast<GetFunction>(dlsym(RTLD_NEXT, "PMIx_Get"));
    if (!real) return kPmixError;  // no libpmix behind us
    return real(proc, key, info, ninfo, value);
}

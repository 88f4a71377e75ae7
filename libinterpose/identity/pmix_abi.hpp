// The few PMIx client types and constants the interposer looks into, declared with their
// ABI (PMIx 2 to 4) rather than included: libpmix's headers are not a build dependency,
// and everything else passes through untouched.
#pragma once

#include <cstdint>

namespace s4bxi::interpose::pmix {

using pmix_status_t = int;
struct pmix_proc_t {
    char nspace[256];  // PMIX_MAX_NSLEN + 1
    uint32_t rank;
};
struct pmix_info_t;

constexpr pmix_status_t kPmixSuccess = 0;
constexpr pmix_status_t kPmixError = -1;
constexpr uint32_t kPmixRankWildcard = UINT32_MAX - 1;
constexpr uint32_t kPmixRankValid = UINT32_MAX - 50;  // PMIX_RANK_VALID: ranks below it are ranks

}  // namespace s4bxi::interpose::pmix

// Which Portals atomic operations apply to which datatypes, and the datatypes' sizes: the
// server checks them (simkernel/calls/data_calls.cpp) and the rank too, before it posts
// an atomic the server must not refuse (libinterpose/portals/posted_commands.cpp).
#pragma once

#include <portals4.h>

#include <cstddef>
#include <cstdint>

namespace s4bxi {

// 0 for an unknown datatype.
inline size_t datatype_size(uint32_t datatype)
{
    constexpr size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 8, 16, sizeof(long double), 2 * sizeof(long double)};
    static_assert(sizeof sizes / sizeof *sizes == PTL_DATATYPE_LAST);
    return datatype < PTL_DATATYPE_LAST ? sizes[datatype] : 0;
}

inline bool operation_allowed(uint32_t op, uint32_t datatype)
{
    if (op >= PTL_OP_LAST || datatype_size(datatype) == 0) return false;
    bool floating = datatype == PTL_FLOAT || datatype == PTL_DOUBLE || datatype == PTL_LONG_DOUBLE;
    bool complex = datatype == PTL_FLOAT_COMPLEX || datatype == PTL_DOUBLE_COMPLEX || datatype == PTL_LONG_DOUBLE_COMPLEX;
    switch (op) {
    case PTL_LOR:
    case PTL_LAND:
    case PTL_LXOR:
    case PTL_BOR:
    case PTL_BAND:
    case PTL_BXOR:
    case PTL_MSWAP: return !floating && !complex;
    case PTL_MIN:
    case PTL_MAX:
    case PTL_CSWAP_LE:
    case PTL_CSWAP_LT:
    case PTL_CSWAP_GE:
    case PTL_CSWAP_GT: return !complex;
    default: return true;
    }
}

}  // namespace s4bxi

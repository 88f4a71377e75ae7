#include "portals/atomics.hpp"

#include <portals4.h>

#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "services/rank_region.hpp"

namespace s4bxi::sim {
namespace {

template <class T>
constexpr bool is_complex = false;
template <class T>
constexpr bool is_complex<std::complex<T>> = true;

template <class T>
bool apply_one(uint32_t op, T& target, const T& operand, const T* compare)
{
    constexpr bool integral = std::is_integral_v<T>;
    constexpr bool complex = is_complex<T>;
    switch (op) {
    case PTL_SUM: target = target + operand; return true;
    case PTL_PROD: target = target * operand; return true;
    case PTL_SWAP: target = operand; return true;
    case PTL_CSWAP:
        if (compare && target == *compare) target = operand;
        return compare != nullptr;
    case PTL_CSWAP_NE:
        if (compare && !(target == *compare)) target = operand;
        return compare != nullptr;
    default: break;
    }
    if constexpr (!complex) {
        switch (op) {
        case PTL_MIN: target = operand < target ? operand : target; return true;
        case PTL_MAX: target = operand > target ? operand : target; return true;
        case PTL_CSWAP_LE:
            if (compare && *compare <= target) target = operand;
            return compare != nullptr;
        case PTL_CSWAP_LT:
            if (compare && *compare < target) target = operand;
            return compare != nullptr;
        case PTL_CSWAP_GE:
            if (compare && *compare >= target) target = operand;
            return compare != nullptr;
        case PTL_CSWAP_GT:
            if (compare && *compare > target) target = operand;
            return compare != nullptr;
        default: break;
        }
    }
    if constexpr (integral) {
        switch (op) {
        case PTL_LOR: target = (target || operand) ? 1 : 0; return true;
        case PTL_LAND: target = (target && operand) ? 1 : 0; return true;
        case PTL_LXOR: target = ((target != 0) != (operand != 0)) ? 1 : 0; return true;
        case PTL_BOR: target = target | operand; return true;
        case PTL_BAND: target = target & operand; return true;
        case PTL_BXOR: target = target ^ operand; return true;
        case PTL_MSWAP:
            if (!compare) return false;
            target = static_cast<T>((operand & *compare) | (target & ~*compare));
            return true;
        default: break;
        }
    }
    return false;
}

template <class T>
bool apply_all(uint32_t op, unsigned char* target, const unsigned char* operand, const unsigned char* compare,
               size_t length)
{
    if (length % sizeof(T) != 0) return false;
    for (size_t at = 0; at < length; at += sizeof(T)) {
        T value, arg, cmp;
        std::memcpy(&value, target + at, sizeof(T));
        std::memcpy(&arg, operand + at, sizeof(T));
        if (compare) std::memcpy(&cmp, compare + at, sizeof(T));
        if (!apply_one<T>(op, value, arg, compare ? &cmp : nullptr)) return false;
        std::memcpy(target + at, &value, sizeof(T));
    }
    return true;
}

template <class F>
bool with_type(uint32_t datatype, F&& f)
{
    switch (datatype) {
    case PTL_INT8_T: return f(int8_t{});
    case PTL_UINT8_T: return f(uint8_t{});
    case PTL_INT16_T: return f(int16_t{});
    case PTL_UINT16_T: return f(uint16_t{});
    case PTL_INT32_T: return f(int32_t{});
    case PTL_UINT32_T: return f(uint32_t{});
    case PTL_INT64_T: return f(int64_t{});
    case PTL_UINT64_T: return f(uint64_t{});
    case PTL_FLOAT: return f(float{});
    case PTL_DOUBLE: return f(double{});
    case PTL_LONG_DOUBLE: return f((long double){});
    case PTL_FLOAT_COMPLEX: return f(std::complex<float>{});
    case PTL_DOUBLE_COMPLEX: return f(std::complex<double>{});
    case PTL_LONG_DOUBLE_COMPLEX: return f(std::complex<long double>{});
    default: return false;
    }
}

}  // namespace

bool apply_atomic_buffer(uint32_t op, uint32_t datatype, unsigned char* target, const unsigned char* operand,
                         const unsigned char* compare, size_t length)
{
    if (!operation_allowed(op, datatype)) return false;
    return with_type(datatype, [&](auto value) {
        return apply_all<decltype(value)>(op, target, operand, compare, length);
    });
}

bool apply_atomic(uint32_t op, uint32_t datatype, const unsigned char* operand, const RankRegion& target_region,
                  uint64_t target_offset, uint64_t length, const unsigned char* compare, const RankRegion* fetch,
                  uint64_t fetch_offset)
{
    if (length == 0) return true;
    std::vector<unsigned char> target(length);
    if (!read_region(target_region, target_offset, target.data(), length)) return false;
    if (fetch && !write_region(*fetch, fetch_offset, target.data(), length)) return false;
    if (!apply_atomic_buffer(op, datatype, target.data(), operand, compare, length)) return false;
    return write_region(target_region, target_offset, target.data(), length);
}

}  // namespace s4bxi::sim

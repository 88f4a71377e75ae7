#include <catch2/catch.hpp>
#include <portals4.h>

#include <cstring>

#include "portals/atomics.hpp"

using namespace s4bxi::sim;

namespace {

template <class T, size_t N>
void apply(uint32_t op, uint32_t type, T (&target)[N], const T (&operand)[N], const T* compare = nullptr)
{
    REQUIRE(apply_atomic_buffer(op, type, reinterpret_cast<unsigned char*>(target),
                                reinterpret_cast<const unsigned char*>(operand),
                                reinterpret_cast<const unsigned char*>(compare), sizeof target));
}

}  // namespace

TEST_CASE("SUM applies to every element")
{
    int64_t target[3] = {40, 1, -5};
    const int64_t operand[3] = {2, 2, 5};
    apply(PTL_SUM, PTL_INT64_T, target, operand);
    CHECK(target[0] == 42);
    CHECK(target[1] == 3);
    CHECK(target[2] == 0);
}

TEST_CASE("integer operations on several widths")
{
    uint8_t bytes[2] = {0xf0, 0x0f};
    const uint8_t mask[2] = {0x3c, 0x3c};
    apply(PTL_BAND, PTL_UINT8_T, bytes, mask);
    CHECK(bytes[0] == 0x30);
    CHECK(bytes[1] == 0x0c);
    int32_t a[2] = {5, -7};
    const int32_t b[2] = {3, 2};
    apply(PTL_MIN, PTL_INT32_T, a, b);
    CHECK(a[0] == 3);
    CHECK(a[1] == -7);
    uint16_t x[1] = {6};
    const uint16_t y[1] = {7};
    apply(PTL_PROD, PTL_UINT16_T, x, y);
    CHECK(x[0] == 42);
    int32_t l[2] = {0, 3};
    const int32_t r[2] = {0, 9};
    apply(PTL_LXOR, PTL_INT32_T, l, r);
    CHECK(l[0] == 0);
    CHECK(l[1] == 0);
}

TEST_CASE("floating point and complex")
{
    double d[2] = {1.5, 2.0};
    const double e[2] = {2.0, 0.25};
    apply(PTL_PROD, PTL_DOUBLE, d, e);
    CHECK(d[0] == 3.0);
    CHECK(d[1] == 0.5);
    long double ld[1] = {23};
    const long double three[1] = {3};
    apply(PTL_PROD, PTL_LONG_DOUBLE, ld, three);
    CHECK(ld[0] == 69);
}

TEST_CASE("compare-and-swap family compares against the operand given")
{
    int64_t target[1] = {12};
    const int64_t value[1] = {42};
    const int64_t same = 12, other = 13;
    apply(PTL_CSWAP, PTL_INT64_T, target, value, &other);
    CHECK(target[0] == 12);
    apply(PTL_CSWAP, PTL_INT64_T, target, value, &same);
    CHECK(target[0] == 42);
    uint32_t bits[1] = {0xff00ff00u};
    const uint32_t src[1] = {0x12345678u};
    const uint32_t mask = 0x0000ffffu;
    apply(PTL_MSWAP, PTL_UINT32_T, bits, src, &mask);
    CHECK(bits[0] == 0xff005678u);
}

TEST_CASE("operations the specification forbids for a datatype are refused")
{
    CHECK_FALSE(operation_allowed(PTL_BOR, PTL_DOUBLE));
    CHECK_FALSE(operation_allowed(PTL_MIN, PTL_DOUBLE_COMPLEX));
    CHECK(operation_allowed(PTL_SUM, PTL_DOUBLE_COMPLEX));
    CHECK_FALSE(operation_allowed(PTL_OP_LAST, PTL_INT8_T));
    CHECK_FALSE(operation_allowed(PTL_SUM, PTL_DATATYPE_LAST));
    CHECK(datatype_size(PTL_LONG_DOUBLE_COMPLEX) == 2 * sizeof(long double));
    unsigned char buffer[6] = {};
    CHECK_FALSE(apply_atomic_buffer(PTL_SUM, PTL_INT32_T, buffer, buffer, nullptr, sizeof buffer));  // not a multiple
}

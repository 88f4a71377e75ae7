// The numbers below are facts of the Portals 4 reference implementation's
// header (x86_64): binaries built against it pass these values and structure
// layouts to our libportals.so.4, so any difference is an ABI break.
#include <catch2/catch.hpp>

#include <portals4.h>

#include <cstddef>
#include <type_traits>

TEST_CASE("return codes have the reference values", "[header]")
{
    CHECK(PTL_OK == 0);
    CHECK(PTL_ARG_INVALID == 1);
    CHECK(PTL_CT_NONE_REACHED == 2);
    CHECK(PTL_EQ_DROPPED == 3);
    CHECK(PTL_EQ_EMPTY == 4);
    CHECK(PTL_FAIL == 5);
    CHECK(PTL_IGNORED == 6);
    CHECK(PTL_IN_USE == 7);
    CHECK(PTL_INTERRUPTED == 8);
    CHECK(PTL_LIST_TOO_LONG == 9);
    CHECK(PTL_NO_INIT == 10);
    CHECK(PTL_NO_SPACE == 11);
    CHECK(PTL_PID_IN_USE == 12);
    CHECK(PTL_PT_FULL == 13);
    CHECK(PTL_PT_EQ_NEEDED == 14);
    CHECK(PTL_PT_IN_USE == 15);
    CHECK(PTL_STATUS_LAST == 16);
}

TEST_CASE("scalar and handle types have the reference widths", "[header]")
{
    STATIC_REQUIRE(std::is_same<ptl_handle_any_t, uint32_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_handle_ni_t, ptl_handle_any_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_handle_eq_t, ptl_handle_any_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_handle_ct_t, ptl_handle_any_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_handle_md_t, ptl_handle_any_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_handle_le_t, ptl_handle_any_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_handle_me_t, ptl_handle_any_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_size_t, uint64_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_pt_index_t, uint32_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_match_bits_t, uint64_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_hdr_data_t, uint64_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_time_t, unsigned int>::value);
    STATIC_REQUIRE(std::is_same<ptl_interface_t, unsigned int>::value);
    STATIC_REQUIRE(std::is_same<ptl_nid_t, uint32_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_pid_t, uint32_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_rank_t, uint32_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_uid_t, uint32_t>::value);
    STATIC_REQUIRE(std::is_same<ptl_sr_value_t, int>::value);
    // One-byte enumerations (passed as such in registers and in ptl_event_t).
    STATIC_REQUIRE(std::is_same<ptl_ni_fail_t, unsigned char>::value);
    STATIC_REQUIRE(std::is_same<ptl_list_t, unsigned char>::value);
    STATIC_REQUIRE(std::is_same<ptl_search_op_t, unsigned char>::value);
    STATIC_REQUIRE(std::is_same<ptl_ack_req_t, unsigned char>::value);
    STATIC_REQUIRE(std::is_same<ptl_op_t, unsigned char>::value);
    STATIC_REQUIRE(std::is_same<ptl_datatype_t, unsigned char>::value);
    STATIC_REQUIRE(std::is_same<ptl_event_kind_t, unsigned char>::value);
    // Int-sized C enumerations.
    STATIC_REQUIRE(sizeof(ptl_sr_index_t) == 4);
    STATIC_REQUIRE(sizeof(ptl_ct_type_t) == 4);
}

TEST_CASE("special values", "[header]")
{
    CHECK(PTL_EQ_NONE == 0x3fffffffu);
    CHECK(PTL_CT_NONE == 0x5fffffffu);
    CHECK(PTL_INVALID_HANDLE == 0xffffffffu);
    CHECK(PTL_IFACE_DEFAULT == 0xffffffffu);
    CHECK(PTL_PID_ANY == 0xffffu);
    CHECK(PTL_PID_MAX == 1024u);
    CHECK(PTL_NID_ANY == 0xffffu);
    CHECK(PTL_UID_ANY == 0xffffffffu);
    CHECK(PTL_PT_ANY == 0xffffffffu);
    CHECK(PTL_RANK_ANY == 0xffffffffu);
    CHECK(PTL_TIME_FOREVER == 0xffffffffu);
    CHECK(PTL_SIZE_MAX == UINT64_MAX);
    CHECK(PTL_SR_DROP_COUNT == 0);
    CHECK(PTL_SR_PERMISSION_VIOLATIONS == 1);
    CHECK(PTL_SR_OPERATION_VIOLATIONS == 2);
    CHECK(PTL_SR_LAST == 3);
    CHECK(PTL_CT_OPERATION == 0);
    CHECK(PTL_CT_BYTE == 1);
}

TEST_CASE("NI and PT option bits", "[header]")
{
    CHECK(PTL_NI_MATCHING == 0x1);
    CHECK(PTL_NI_NO_MATCHING == 0x2);
    CHECK(PTL_NI_LOGICAL == 0x4);
    CHECK(PTL_NI_PHYSICAL == 0x8);
    CHECK(PTL_NI_INIT_OPTIONS_MASK == 0xf);
    CHECK(PTL_TARGET_BIND_INACCESSIBLE == 0x1);
    CHECK(PTL_TOTAL_DATA_ORDERING == 0x2);
    CHECK(PTL_COHERENT_ATOMICS == 0x4);
    CHECK(PTL_PT_ONLY_USE_ONCE == 0x1);
    CHECK(PTL_PT_FLOWCTRL == 0x2);
    CHECK(PTL_PT_ONLY_TRUNCATE == 0x4);
    CHECK(PTL_PT_MATCH_UNORDERED == 0x8);
    CHECK(PTL_PT_ALLOC_OPTIONS_MASK == 0xf);
}

TEST_CASE("ni_fail, list, search, ack values", "[header]")
{
    CHECK(PTL_NI_OK == 0);
    CHECK(PTL_NI_UNDELIVERABLE == 1);
    CHECK(PTL_NI_DROPPED == 2);
    CHECK(PTL_NI_PT_DISABLED == 3);
    CHECK(PTL_NI_PERM_VIOLATION == 4);
    CHECK(PTL_NI_OP_VIOLATION == 5);
    CHECK(PTL_NI_NO_MATCH == 6);
    CHECK(PTL_NI_SEGV == 7);
    CHECK(PTL_PRIORITY_LIST == 0);
    CHECK(PTL_OVERFLOW_LIST == 1);
    CHECK(PTL_SEARCH_ONLY == 0);
    CHECK(PTL_SEARCH_DELETE == 1);
    CHECK(PTL_NO_ACK_REQ == 0);
    CHECK(PTL_ACK_REQ == 1);
    CHECK(PTL_CT_ACK_REQ == 2);
    CHECK(PTL_OC_ACK_REQ == 3);
}

TEST_CASE("MD option bits", "[header]")
{
    CHECK(PTL_IOVEC == 0x1);
    CHECK(PTL_MD_EVENT_CT_SEND == 0x2);
    CHECK(PTL_MD_EVENT_CT_REPLY == 0x4);
    CHECK(PTL_MD_EVENT_CT_ACK == 0x8);
    CHECK(PTL_MD_UNORDERED == 0x10);
    CHECK(PTL_MD_EVENT_SUCCESS_DISABLE == 0x20);
    CHECK(PTL_MD_VOLATILE == 0x40);
    CHECK(PTL_MD_EVENT_SEND_DISABLE == 0x80);
    CHECK(PTL_MD_EVENT_CT_BYTES == 0x8000);
    CHECK(PTL_MD_OPTIONS_MASK == 0x80ff);
}

TEST_CASE("ME/LE option bits", "[header]")
{
    CHECK(PTL_ME_OP_PUT == 0x2);
    CHECK(PTL_ME_OP_GET == 0x4);
    CHECK(PTL_ME_USE_ONCE == 0x8);
    CHECK(PTL_ME_ACK_DISABLE == 0x10);
    CHECK(PTL_ME_UNEXPECTED_HDR_DISABLE == 0x20);
    CHECK(PTL_ME_IS_ACCESSIBLE == 0x40);
    CHECK(PTL_ME_EVENT_LINK_DISABLE == 0x80);
    CHECK(PTL_ME_EVENT_COMM_DISABLE == 0x100);
    CHECK(PTL_ME_EVENT_FLOWCTRL_DISABLE == 0x200);
    CHECK(PTL_ME_EVENT_SUCCESS_DISABLE == 0x400);
    CHECK(PTL_ME_EVENT_OVER_DISABLE == 0x800);
    CHECK(PTL_ME_EVENT_UNLINK_DISABLE == 0x1000);
    CHECK(PTL_ME_EVENT_CT_COMM == 0x2000);
    CHECK(PTL_ME_EVENT_CT_OVERFLOW == 0x4000);
    CHECK(PTL_ME_EVENT_CT_BYTES == 0x8000);
    CHECK(PTL_ME_MANAGE_LOCAL == 0x10000);
    CHECK(PTL_ME_NO_TRUNCATE == 0x20000);
    CHECK(PTL_ME_MAY_ALIGN == 0x40000);
    CHECK(PTL_ME_APPEND_OPTIONS_MASK == 0x7ffff);

    CHECK(PTL_LE_OP_PUT == PTL_ME_OP_PUT);
    CHECK(PTL_LE_OP_GET == PTL_ME_OP_GET);
    CHECK(PTL_LE_USE_ONCE == PTL_ME_USE_ONCE);
    CHECK(PTL_LE_ACK_DISABLE == PTL_ME_ACK_DISABLE);
    CHECK(PTL_LE_UNEXPECTED_HDR_DISABLE == PTL_ME_UNEXPECTED_HDR_DISABLE);
    CHECK(PTL_LE_IS_ACCESSIBLE == PTL_ME_IS_ACCESSIBLE);
    CHECK(PTL_LE_EVENT_LINK_DISABLE == PTL_ME_EVENT_LINK_DISABLE);
    CHECK(PTL_LE_EVENT_COMM_DISABLE == PTL_ME_EVENT_COMM_DISABLE);
    CHECK(PTL_LE_EVENT_FLOWCTRL_DISABLE == PTL_ME_EVENT_FLOWCTRL_DISABLE);
    CHECK(PTL_LE_EVENT_SUCCESS_DISABLE == PTL_ME_EVENT_SUCCESS_DISABLE);
    CHECK(PTL_LE_EVENT_OVER_DISABLE == PTL_ME_EVENT_OVER_DISABLE);
    CHECK(PTL_LE_EVENT_UNLINK_DISABLE == PTL_ME_EVENT_UNLINK_DISABLE);
    CHECK(PTL_LE_EVENT_CT_COMM == PTL_ME_EVENT_CT_COMM);
    CHECK(PTL_LE_EVENT_CT_OVERFLOW == PTL_ME_EVENT_CT_OVERFLOW);
    CHECK(PTL_LE_EVENT_CT_BYTES == PTL_ME_EVENT_CT_BYTES);
    CHECK(PTL_LE_APPEND_OPTIONS_MASK == 0xffff);
}

TEST_CASE("atomic operations and datatypes", "[header]")
{
    CHECK(PTL_MIN == 0);
    CHECK(PTL_MAX == 1);
    CHECK(PTL_SUM == 2);
    CHECK(PTL_PROD == 3);
    CHECK(PTL_LOR == 4);
    CHECK(PTL_LAND == 5);
    CHECK(PTL_BOR == 6);
    CHECK(PTL_BAND == 7);
    CHECK(PTL_LXOR == 8);
    CHECK(PTL_BXOR == 9);
    CHECK(PTL_SWAP == 10);
    CHECK(PTL_CSWAP == 11);
    CHECK(PTL_CSWAP_NE == 12);
    CHECK(PTL_CSWAP_LE == 13);
    CHECK(PTL_CSWAP_LT == 14);
    CHECK(PTL_CSWAP_GE == 15);
    CHECK(PTL_CSWAP_GT == 16);
    CHECK(PTL_MSWAP == 17);
    CHECK(PTL_OP_LAST == 18);

    CHECK(PTL_INT8_T == 0);
    CHECK(PTL_UINT8_T == 1);
    CHECK(PTL_INT16_T == 2);
    CHECK(PTL_UINT16_T == 3);
    CHECK(PTL_INT32_T == 4);
    CHECK(PTL_UINT32_T == 5);
    CHECK(PTL_FLOAT == 6);
    CHECK(PTL_INT64_T == 7);
    CHECK(PTL_UINT64_T == 8);
    CHECK(PTL_DOUBLE == 9);
    CHECK(PTL_FLOAT_COMPLEX == 10);
    CHECK(PTL_DOUBLE_COMPLEX == 11);
    CHECK(PTL_LONG_DOUBLE == 12);
    CHECK(PTL_LONG_DOUBLE_COMPLEX == 13);
    CHECK(PTL_DATATYPE_LAST == 14);
}

TEST_CASE("event kinds", "[header]")
{
    CHECK(PTL_EVENT_GET == 0);
    CHECK(PTL_EVENT_GET_OVERFLOW == 1);
    CHECK(PTL_EVENT_PUT == 2);
    CHECK(PTL_EVENT_PUT_OVERFLOW == 3);
    CHECK(PTL_EVENT_ATOMIC == 4);
    CHECK(PTL_EVENT_ATOMIC_OVERFLOW == 5);
    CHECK(PTL_EVENT_FETCH_ATOMIC == 6);
    CHECK(PTL_EVENT_FETCH_ATOMIC_OVERFLOW == 7);
    CHECK(PTL_EVENT_REPLY == 8);
    CHECK(PTL_EVENT_SEND == 9);
    CHECK(PTL_EVENT_ACK == 10);
    CHECK(PTL_EVENT_PT_DISABLED == 11);
    CHECK(PTL_EVENT_LINK == 12);
    CHECK(PTL_EVENT_AUTO_UNLINK == 13);
    CHECK(PTL_EVENT_AUTO_FREE == 14);
    CHECK(PTL_EVENT_SEARCH == 15);
}

#if defined(__x86_64__) && defined(__LP64__)
TEST_CASE("structure layouts match the reference on x86_64", "[header][abi]")
{
    STATIC_REQUIRE(sizeof(ptl_process_t) == 8);
    STATIC_REQUIRE(alignof(ptl_process_t) == 4);
    STATIC_REQUIRE(offsetof(ptl_process_t, rank) == 0);
    STATIC_REQUIRE(offsetof(ptl_process_t, phys.nid) == 0);
    STATIC_REQUIRE(offsetof(ptl_process_t, phys.pid) == 4);

    STATIC_REQUIRE(sizeof(ptl_md_t) == 32);
    STATIC_REQUIRE(offsetof(ptl_md_t, start) == 0);
    STATIC_REQUIRE(offsetof(ptl_md_t, length) == 8);
    STATIC_REQUIRE(offsetof(ptl_md_t, options) == 16);
    STATIC_REQUIRE(offsetof(ptl_md_t, eq_handle) == 20);
    STATIC_REQUIRE(offsetof(ptl_md_t, ct_handle) == 24);

    STATIC_REQUIRE(sizeof(ptl_iovec_t) == 16);
    STATIC_REQUIRE(offsetof(ptl_iovec_t, iov_base) == 0);
    STATIC_REQUIRE(offsetof(ptl_iovec_t, iov_len) == 8);

    STATIC_REQUIRE(sizeof(ptl_le_t) == 32);
    STATIC_REQUIRE(offsetof(ptl_le_t, start) == 0);
    STATIC_REQUIRE(offsetof(ptl_le_t, length) == 8);
    STATIC_REQUIRE(offsetof(ptl_le_t, ct_handle) == 16);
    STATIC_REQUIRE(offsetof(ptl_le_t, uid) == 20);
    STATIC_REQUIRE(offsetof(ptl_le_t, options) == 24);

    STATIC_REQUIRE(sizeof(ptl_me_t) == 64);
    STATIC_REQUIRE(offsetof(ptl_me_t, start) == 0);
    STATIC_REQUIRE(offsetof(ptl_me_t, length) == 8);
    STATIC_REQUIRE(offsetof(ptl_me_t, ct_handle) == 16);
    STATIC_REQUIRE(offsetof(ptl_me_t, uid) == 20);
    STATIC_REQUIRE(offsetof(ptl_me_t, options) == 24);
    STATIC_REQUIRE(offsetof(ptl_me_t, match_id) == 28);
    STATIC_REQUIRE(offsetof(ptl_me_t, match_bits) == 40);
    STATIC_REQUIRE(offsetof(ptl_me_t, ignore_bits) == 48);
    STATIC_REQUIRE(offsetof(ptl_me_t, min_free) == 56);

    STATIC_REQUIRE(sizeof(ptl_ct_event_t) == 16);
    STATIC_REQUIRE(offsetof(ptl_ct_event_t, success) == 0);
    STATIC_REQUIRE(offsetof(ptl_ct_event_t, failure) == 8);

    STATIC_REQUIRE(sizeof(ptl_event_t) == 80);
    STATIC_REQUIRE(offsetof(ptl_event_t, start) == 0);
    STATIC_REQUIRE(offsetof(ptl_event_t, user_ptr) == 8);
    STATIC_REQUIRE(offsetof(ptl_event_t, hdr_data) == 16);
    STATIC_REQUIRE(offsetof(ptl_event_t, match_bits) == 24);
    STATIC_REQUIRE(offsetof(ptl_event_t, rlength) == 32);
    STATIC_REQUIRE(offsetof(ptl_event_t, mlength) == 40);
    STATIC_REQUIRE(offsetof(ptl_event_t, remote_offset) == 48);
    STATIC_REQUIRE(offsetof(ptl_event_t, initiator) == 56);
    STATIC_REQUIRE(offsetof(ptl_event_t, uid) == 64);
    STATIC_REQUIRE(offsetof(ptl_event_t, pt_index) == 68);
    STATIC_REQUIRE(offsetof(ptl_event_t, type) == 72);
    STATIC_REQUIRE(offsetof(ptl_event_t, ptl_list) == 73);
    STATIC_REQUIRE(offsetof(ptl_event_t, ni_fail_type) == 74);
    STATIC_REQUIRE(offsetof(ptl_event_t, atomic_operation) == 75);
    STATIC_REQUIRE(offsetof(ptl_event_t, atomic_type) == 76);

    STATIC_REQUIRE(sizeof(ptl_ni_limits_t) == 96);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_entries) == 0);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_unexpected_headers) == 4);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_mds) == 8);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_cts) == 12);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_eqs) == 16);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_pt_index) == 20);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_iovecs) == 24);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_list_size) == 28);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_triggered_ops) == 32);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_msg_size) == 40);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_atomic_size) == 48);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_fetch_atomic_size) == 56);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_waw_ordered_size) == 64);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_war_ordered_size) == 72);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, max_volatile_size) == 80);
    STATIC_REQUIRE(offsetof(ptl_ni_limits_t, features) == 88);
}
#endif

// Prototypes are checked against the reference's parameter lists in an
// unevaluated context: the functions live in libportals, not linked here.
#define CHECK_PROTO(fn, type) STATIC_REQUIRE(std::is_same<decltype(&fn), type>::value)

TEST_CASE("function prototypes", "[header]")
{
    CHECK_PROTO(PtlInit, int (*)(void));
    CHECK_PROTO(PtlFini, void (*)(void));
    CHECK_PROTO(PtlNIInit, int (*)(ptl_interface_t, unsigned int, ptl_pid_t,
                                   const ptl_ni_limits_t *, ptl_ni_limits_t *, ptl_handle_ni_t *));
    CHECK_PROTO(PtlNIStatus, int (*)(ptl_handle_ni_t, ptl_sr_index_t, ptl_sr_value_t *));
    CHECK_PROTO(PtlNIHandle, int (*)(ptl_handle_any_t, ptl_handle_ni_t *));
    CHECK_PROTO(PtlSetMap, int (*)(ptl_handle_ni_t, ptl_size_t, const ptl_process_t *));
    CHECK_PROTO(PtlGetMap, int (*)(ptl_handle_ni_t, ptl_size_t, ptl_process_t *, ptl_size_t *));
    CHECK_PROTO(PtlPTAlloc, int (*)(ptl_handle_ni_t, unsigned int, ptl_handle_eq_t, ptl_pt_index_t,
                                    ptl_pt_index_t *));
    CHECK_PROTO(PtlPTEnable, int (*)(ptl_handle_ni_t, ptl_pt_index_t));
    CHECK_PROTO(PtlGetPhysId, int (*)(ptl_handle_ni_t, ptl_process_t *));
    CHECK_PROTO(PtlMDBind, int (*)(ptl_handle_ni_t, const ptl_md_t *, ptl_handle_md_t *));
    CHECK_PROTO(PtlMEAppend, int (*)(ptl_handle_ni_t, ptl_pt_index_t, const ptl_me_t *, ptl_list_t,
                                     void *, ptl_handle_me_t *));
    CHECK_PROTO(PtlMESearch, int (*)(ptl_handle_ni_t, ptl_pt_index_t, const ptl_me_t *,
                                     ptl_search_op_t, void *));
    CHECK_PROTO(PtlLEAppend, int (*)(ptl_handle_ni_t, ptl_pt_index_t, const ptl_le_t *, ptl_list_t,
                                     void *, ptl_handle_le_t *));
    CHECK_PROTO(PtlCTWait, int (*)(ptl_handle_ct_t, ptl_size_t, ptl_ct_event_t *));
    CHECK_PROTO(PtlCTPoll, int (*)(const ptl_handle_ct_t *, const ptl_size_t *, unsigned int,
                                   ptl_time_t, ptl_ct_event_t *, unsigned int *));
    CHECK_PROTO(PtlCTSet, int (*)(ptl_handle_ct_t, ptl_ct_event_t));
    CHECK_PROTO(PtlCTInc, int (*)(ptl_handle_ct_t, ptl_ct_event_t));
    CHECK_PROTO(PtlEQAlloc, int (*)(ptl_handle_ni_t, ptl_size_t, ptl_handle_eq_t *));
    CHECK_PROTO(PtlEQPoll, int (*)(const ptl_handle_eq_t *, unsigned int, ptl_time_t, ptl_event_t *,
                                   unsigned int *));
    CHECK_PROTO(PtlPut, int (*)(ptl_handle_md_t, ptl_size_t, ptl_size_t, ptl_ack_req_t,
                                ptl_process_t, ptl_pt_index_t, ptl_match_bits_t, ptl_size_t,
                                void *, ptl_hdr_data_t));
    CHECK_PROTO(PtlGet, int (*)(ptl_handle_md_t, ptl_size_t, ptl_size_t, ptl_process_t,
                                ptl_pt_index_t, ptl_match_bits_t, ptl_size_t, void *));
    CHECK_PROTO(PtlAtomic, int (*)(ptl_handle_md_t, ptl_size_t, ptl_size_t, ptl_ack_req_t,
                                   ptl_process_t, ptl_pt_index_t, ptl_match_bits_t, ptl_size_t,
                                   void *, ptl_hdr_data_t, ptl_op_t, ptl_datatype_t));
    CHECK_PROTO(PtlFetchAtomic, int (*)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t, ptl_size_t,
                                        ptl_size_t, ptl_process_t, ptl_pt_index_t,
                                        ptl_match_bits_t, ptl_size_t, void *, ptl_hdr_data_t,
                                        ptl_op_t, ptl_datatype_t));
    CHECK_PROTO(PtlSwap, int (*)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t, ptl_size_t,
                                 ptl_size_t, ptl_process_t, ptl_pt_index_t, ptl_match_bits_t,
                                 ptl_size_t, void *, ptl_hdr_data_t, const void *, ptl_op_t,
                                 ptl_datatype_t));
    CHECK_PROTO(PtlAtomicSync, int (*)(void));
    CHECK_PROTO(PtlTriggeredPut, int (*)(ptl_handle_md_t, ptl_size_t, ptl_size_t, ptl_ack_req_t,
                                         ptl_process_t, ptl_pt_index_t, ptl_match_bits_t,
                                         ptl_size_t, void *, ptl_hdr_data_t, ptl_handle_ct_t,
                                         ptl_size_t));
    CHECK_PROTO(PtlTriggeredFetchAtomic,
                int (*)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t, ptl_size_t, ptl_size_t,
                        ptl_process_t, ptl_pt_index_t, ptl_match_bits_t, ptl_size_t, void *,
                        ptl_hdr_data_t, ptl_op_t, ptl_datatype_t, ptl_handle_ct_t, ptl_size_t));
    CHECK_PROTO(PtlTriggeredCTInc,
                int (*)(ptl_handle_ct_t, ptl_ct_event_t, ptl_handle_ct_t, ptl_size_t));
    CHECK_PROTO(PtlTriggeredMEAppend,
                int (*)(ptl_handle_ni_t, ptl_pt_index_t, ptl_me_t *, ptl_list_t, void *,
                        ptl_handle_me_t *, ptl_handle_ct_t, ptl_size_t));
    CHECK_PROTO(PtlStartBundle, int (*)(ptl_handle_ni_t));
    CHECK_PROTO(PtlHandleIsEqual, int (*)(ptl_handle_any_t, ptl_handle_any_t));
}

/*
 * Portals 4 public API, as implemented by s4bxi's libportals.so.4.
 *
 * Binaries built against the Portals 4 reference implementation's header
 * (github.com/Portals4/portals4, include/portals4.h) run unmodified on top of
 * our library, so every value, type width and structure layout below is a
 * binary contract: change nothing here without re-checking that ABI.
 * The layout checks at the end of the file (and tests/unit/header) pin it.
 */
#ifndef PORTALS4_H
#define PORTALS4_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Return codes.  Consecutive from 0, in the reference's (alphabetical) order. */

enum ptl_retvals {
    PTL_OK = 0,          /* 0 */
    PTL_ARG_INVALID,     /* 1 */
    PTL_CT_NONE_REACHED, /* 2 */
    PTL_EQ_DROPPED,      /* 3 */
    PTL_EQ_EMPTY,        /* 4 */
    PTL_FAIL,            /* 5 */
    PTL_IGNORED,         /* 6 */
    PTL_IN_USE,          /* 7 */
    PTL_INTERRUPTED,     /* 8: dropped by later specs, still used by Open MPI */
    PTL_LIST_TOO_LONG,   /* 9 */
    PTL_NO_INIT,         /* 10 */
    PTL_NO_SPACE,        /* 11 */
    PTL_PID_IN_USE,      /* 12 */
    PTL_PT_FULL,         /* 13 */
    PTL_PT_EQ_NEEDED,    /* 14 */
    PTL_PT_IN_USE        /* 15 */
};
#define PTL_STATUS_LAST (PTL_PT_IN_USE + 1)
/* Later versions of the specification name it PTL_ABORTED: what a wait returns when
 * PtlAbort interrupts it. */
#define PTL_ABORTED PTL_INTERRUPTED

/* ------------------------------------------------------------------------ */
/* Scalar types */

typedef uint64_t ptl_size_t;
typedef uint32_t ptl_pt_index_t;
typedef uint64_t ptl_match_bits_t;
typedef uint64_t ptl_hdr_data_t;
typedef unsigned int ptl_time_t; /* milliseconds */
typedef unsigned int ptl_interface_t;
typedef uint32_t ptl_nid_t;
typedef uint32_t ptl_pid_t;
typedef uint32_t ptl_rank_t;
typedef uint32_t ptl_uid_t;
/* No ptl_jid_t: job IDs were removed from the spec and from the reference. */

/* Status registers (an enum, hence int-sized, like the reference). */
typedef enum {
    PTL_SR_DROP_COUNT,
    PTL_SR_PERMISSION_VIOLATIONS,
    PTL_SR_OPERATION_VIOLATIONS
} ptl_sr_index_t;
#define PTL_SR_LAST (PTL_SR_OPERATION_VIOLATIONS + 1)
typedef int ptl_sr_value_t;

/* ------------------------------------------------------------------------ */
/* Handles: 32-bit opaque values; every kind shares one representation so
 * PtlNIHandle()/PtlHandleIsEqual() can take any of them. */

typedef uint32_t ptl_handle_any_t;
typedef ptl_handle_any_t ptl_handle_ni_t;
typedef ptl_handle_any_t ptl_handle_eq_t;
typedef ptl_handle_any_t ptl_handle_ct_t;
typedef ptl_handle_any_t ptl_handle_md_t;
typedef ptl_handle_any_t ptl_handle_le_t;
typedef ptl_handle_any_t ptl_handle_me_t;

/* ------------------------------------------------------------------------ */
/* Process identifier: logical rank or physical (nid, pid). 8 bytes. */

typedef union ptl_process {
    ptl_rank_t rank;
    struct {
        ptl_nid_t nid;
        ptl_pid_t pid;
    } phys;
} ptl_process_t;

/* ------------------------------------------------------------------------ */
/* Memory descriptor */

typedef struct ptl_md {
    void *start; /* or a ptl_iovec_t array when PTL_IOVEC is set */
    ptl_size_t length;
    unsigned int options;
    ptl_handle_eq_t eq_handle;
    ptl_handle_ct_t ct_handle;
} ptl_md_t;

typedef struct ptl_iovec {
    void *iov_base;
    ptl_size_t iov_len;
} ptl_iovec_t;

/* ------------------------------------------------------------------------ */
/* List entry (non-matching NI) */

typedef struct ptl_le {
    void *start;
    ptl_size_t length;
    ptl_handle_ct_t ct_handle;
    ptl_uid_t uid;
    unsigned int options;
} ptl_le_t;

/* Shared by MD, LE and ME options: bit 0. */
#define PTL_IOVEC (1)

/* ------------------------------------------------------------------------ */
/* Special values.  Note PTL_PID_ANY and PTL_NID_ANY are 16-bit wide in the
 * reference even though the types are 32-bit; binaries carry these numbers. */

#define PTL_EQ_NONE        ((ptl_handle_eq_t)0x3fffffff)
#define PTL_CT_NONE        ((ptl_handle_ct_t)0x5fffffff)
#define PTL_INVALID_HANDLE ((ptl_handle_any_t)0xffffffff)
#define PTL_IFACE_DEFAULT  ((ptl_interface_t)0xffffffff)
#define PTL_PID_ANY        ((ptl_pid_t)0xffff)
#define PTL_PID_MAX        ((ptl_pid_t)1024)
#define PTL_NID_ANY        ((ptl_nid_t)0xffff)
#define PTL_UID_ANY        ((ptl_uid_t)0xffffffff)
#define PTL_PT_ANY         ((ptl_pt_index_t)0xffffffff)
#define PTL_RANK_ANY       ((ptl_rank_t)0xffffffff)
#define PTL_TIME_FOREVER   ((ptl_time_t)0xffffffff)
#define PTL_SIZE_MAX       ((ptl_size_t)0xffffffffffffffffULL)

/* ------------------------------------------------------------------------ */
/* Initialization */

int PtlInit(void);
void PtlFini(void);
/* Interrupts the blocking waits in progress in the process (PtlEQWait, PtlEQPoll,
 * PtlCTWait, PtlCTPoll): they return PTL_ABORTED. Later specifications; not in the
 * reference implementation's header. Safe from another thread or a signal handler. */
void PtlAbort(void);

/* ------------------------------------------------------------------------ */
/* Network interfaces */

/* PtlNIInit options */
#define PTL_NI_MATCHING          (1 << 0)
#define PTL_NI_NO_MATCHING       (1 << 1)
#define PTL_NI_LOGICAL           (1 << 2)
#define PTL_NI_PHYSICAL          (1 << 3)
#define PTL_NI_INIT_OPTIONS_MASK ((1 << 4) - 1)

/* Failure type carried by full events: one byte. */
typedef unsigned char ptl_ni_fail_t;
#define PTL_NI_OK             0
#define PTL_NI_UNDELIVERABLE  1
#define PTL_NI_DROPPED        2
#define PTL_NI_PT_DISABLED    3
#define PTL_NI_PERM_VIOLATION 4
#define PTL_NI_OP_VIOLATION   5
#define PTL_NI_NO_MATCH       6
#define PTL_NI_SEGV           7

/* ptl_ni_limits_t.features bits */
#define PTL_TARGET_BIND_INACCESSIBLE (1 << 0)
#define PTL_TOTAL_DATA_ORDERING      (1 << 1)
#define PTL_COHERENT_ATOMICS         (1 << 2)

typedef struct ptl_ni_limits {
    int max_entries;
    int max_unexpected_headers;
    int max_mds;
    int max_cts;
    int max_eqs;
    int max_pt_index;
    int max_iovecs;
    int max_list_size;
    int max_triggered_ops;
    ptl_size_t max_msg_size;
    ptl_size_t max_atomic_size;
    ptl_size_t max_fetch_atomic_size;
    ptl_size_t max_waw_ordered_size;
    ptl_size_t max_war_ordered_size;
    ptl_size_t max_volatile_size;
    unsigned int features;
} ptl_ni_limits_t;

int PtlNIInit(ptl_interface_t iface,
              unsigned int options,
              ptl_pid_t pid,
              const ptl_ni_limits_t *desired,
              ptl_ni_limits_t *actual,
              ptl_handle_ni_t *ni_handle);
int PtlNIFini(ptl_handle_ni_t ni_handle);
int PtlNIStatus(ptl_handle_ni_t ni_handle,
                ptl_sr_index_t status_register,
                ptl_sr_value_t *status);
int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle);
int PtlSetMap(ptl_handle_ni_t ni_handle,
              ptl_size_t map_size,
              const ptl_process_t *mapping);
int PtlGetMap(ptl_handle_ni_t ni_handle,
              ptl_size_t map_size,
              ptl_process_t *mapping,
              ptl_size_t *actual_map_size);

/* ------------------------------------------------------------------------ */
/* Portal table */

#define PTL_PT_ONLY_USE_ONCE      (1 << 0)
#define PTL_PT_FLOWCTRL           (1 << 1)
#define PTL_PT_ONLY_TRUNCATE      (1 << 2)
#define PTL_PT_MATCH_UNORDERED    (1 << 3) /* reference extension */
#define PTL_PT_ALLOC_OPTIONS_MASK ((1 << 4) - 1)

int PtlPTAlloc(ptl_handle_ni_t ni_handle,
               unsigned int options,
               ptl_handle_eq_t eq_handle,
               ptl_pt_index_t pt_index_req,
               ptl_pt_index_t *pt_index);
int PtlPTFree(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);
int PtlPTDisable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);
int PtlPTEnable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);

/* ------------------------------------------------------------------------ */
/* Identification */

int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid);
int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_t *id);
int PtlGetPhysId(ptl_handle_ni_t ni_handle, ptl_process_t *id);

/* ------------------------------------------------------------------------ */
/* Memory descriptor options.  Bit 0 is PTL_IOVEC. */

#define PTL_MD_EVENT_CT_SEND         (1 << 1)
#define PTL_MD_EVENT_CT_REPLY        (1 << 2)
#define PTL_MD_EVENT_CT_ACK          (1 << 3)
#define PTL_MD_UNORDERED             (1 << 4)
#define PTL_MD_EVENT_SUCCESS_DISABLE (1 << 5)
#define PTL_MD_VOLATILE              (1 << 6)
#define PTL_MD_EVENT_SEND_DISABLE    (1 << 7)
/* Same bit as PTL_ME_EVENT_CT_BYTES, as in the reference. */
#define PTL_MD_EVENT_CT_BYTES        (1 << 15)
#define PTL_MD_OPTIONS_MASK          (((1 << 8) - 1) | PTL_MD_EVENT_CT_BYTES)

int PtlMDBind(ptl_handle_ni_t ni_handle,
              const ptl_md_t *md,
              ptl_handle_md_t *md_handle);
int PtlMDRelease(ptl_handle_md_t md_handle);

/* ------------------------------------------------------------------------ */
/* Lists and searches: one-byte types in the reference. */

typedef unsigned char ptl_list_t;
#define PTL_PRIORITY_LIST 0
#define PTL_OVERFLOW_LIST 1

typedef unsigned char ptl_search_op_t;
#define PTL_SEARCH_ONLY   0
#define PTL_SEARCH_DELETE 1

/* ------------------------------------------------------------------------ */
/* ME/LE options.  LE bits are the ME bits 0..15; bits 16..18 are ME-only. */

#define PTL_ME_OP_PUT                 (1 << 1)
#define PTL_ME_OP_GET                 (1 << 2)
#define PTL_ME_USE_ONCE               (1 << 3)
#define PTL_ME_ACK_DISABLE            (1 << 4)
#define PTL_ME_UNEXPECTED_HDR_DISABLE (1 << 5)
#define PTL_ME_IS_ACCESSIBLE          (1 << 6)
#define PTL_ME_EVENT_LINK_DISABLE     (1 << 7)
#define PTL_ME_EVENT_COMM_DISABLE     (1 << 8)
#define PTL_ME_EVENT_FLOWCTRL_DISABLE (1 << 9)
#define PTL_ME_EVENT_SUCCESS_DISABLE  (1 << 10)
#define PTL_ME_EVENT_OVER_DISABLE     (1 << 11)
#define PTL_ME_EVENT_UNLINK_DISABLE   (1 << 12)
#define PTL_ME_EVENT_CT_COMM          (1 << 13)
#define PTL_ME_EVENT_CT_OVERFLOW      (1 << 14)
#define PTL_ME_EVENT_CT_BYTES         (1 << 15)
#define PTL_ME_MANAGE_LOCAL           (1 << 16)
#define PTL_ME_NO_TRUNCATE            (1 << 17)
#define PTL_ME_MAY_ALIGN              (1 << 18)
#define PTL_ME_APPEND_OPTIONS_MASK    ((1 << 19) - 1)

#define PTL_LE_OP_PUT                 PTL_ME_OP_PUT
#define PTL_LE_OP_GET                 PTL_ME_OP_GET
#define PTL_LE_USE_ONCE               PTL_ME_USE_ONCE
#define PTL_LE_ACK_DISABLE            PTL_ME_ACK_DISABLE
#define PTL_LE_UNEXPECTED_HDR_DISABLE PTL_ME_UNEXPECTED_HDR_DISABLE
#define PTL_LE_IS_ACCESSIBLE          PTL_ME_IS_ACCESSIBLE
#define PTL_LE_EVENT_LINK_DISABLE     PTL_ME_EVENT_LINK_DISABLE
#define PTL_LE_EVENT_COMM_DISABLE     PTL_ME_EVENT_COMM_DISABLE
#define PTL_LE_EVENT_FLOWCTRL_DISABLE PTL_ME_EVENT_FLOWCTRL_DISABLE
#define PTL_LE_EVENT_SUCCESS_DISABLE  PTL_ME_EVENT_SUCCESS_DISABLE
#define PTL_LE_EVENT_OVER_DISABLE     PTL_ME_EVENT_OVER_DISABLE
#define PTL_LE_EVENT_UNLINK_DISABLE   PTL_ME_EVENT_UNLINK_DISABLE
#define PTL_LE_EVENT_CT_COMM          PTL_ME_EVENT_CT_COMM
#define PTL_LE_EVENT_CT_OVERFLOW      PTL_ME_EVENT_CT_OVERFLOW
#define PTL_LE_EVENT_CT_BYTES         PTL_ME_EVENT_CT_BYTES
#define PTL_LE_APPEND_OPTIONS_MASK    ((1 << 16) - 1)

int PtlLEAppend(ptl_handle_ni_t ni_handle,
                ptl_pt_index_t pt_index,
                const ptl_le_t *le,
                ptl_list_t ptl_list,
                void *user_ptr,
                ptl_handle_le_t *le_handle);
int PtlLEUnlink(ptl_handle_le_t le_handle);
int PtlLESearch(ptl_handle_ni_t ni_handle,
                ptl_pt_index_t pt_index,
                const ptl_le_t *le,
                ptl_search_op_t ptl_search_op,
                void *user_ptr);

/* ------------------------------------------------------------------------ */
/* Matching list entry.  The first five members mirror ptl_le_t. */

typedef struct ptl_me {
    void *start;
    ptl_size_t length;
    ptl_handle_ct_t ct_handle;
    ptl_uid_t uid;
    unsigned int options;
    ptl_process_t match_id; /* at offset 28: 4-byte aligned, no padding */
    ptl_match_bits_t match_bits;
    ptl_match_bits_t ignore_bits;
    ptl_size_t min_free;
} ptl_me_t;

int PtlMEAppend(ptl_handle_ni_t ni_handle,
                ptl_pt_index_t pt_index,
                const ptl_me_t *me,
                ptl_list_t ptl_list,
                void *user_ptr,
                ptl_handle_me_t *me_handle);
int PtlMEUnlink(ptl_handle_me_t me_handle);
int PtlMESearch(ptl_handle_ni_t ni_handle,
                ptl_pt_index_t pt_index,
                const ptl_me_t *me,
                ptl_search_op_t ptl_search_op,
                void *user_ptr);

/* ------------------------------------------------------------------------ */
/* Counting events */

typedef struct ptl_ct_event {
    ptl_size_t success;
    ptl_size_t failure;
} ptl_ct_event_t;

typedef enum {
    PTL_CT_OPERATION,
    PTL_CT_BYTE
} ptl_ct_type_t;

int PtlCTAlloc(ptl_handle_ni_t ni_handle, ptl_handle_ct_t *ct_handle);
int PtlCTFree(ptl_handle_ct_t ct_handle);
int PtlCTCancelTriggered(ptl_handle_ct_t ct_handle);
int PtlCTGet(ptl_handle_ct_t ct_handle, ptl_ct_event_t *event);
int PtlCTWait(ptl_handle_ct_t ct_handle,
              ptl_size_t test,
              ptl_ct_event_t *event);
int PtlCTPoll(const ptl_handle_ct_t *ct_handles,
              const ptl_size_t *tests,
              unsigned int size,
              ptl_time_t timeout,
              ptl_ct_event_t *event,
              unsigned int *which);
/* ptl_ct_event_t is passed by value (16 bytes, two INTEGER registers). */
int PtlCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct);
int PtlCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment);

/* ------------------------------------------------------------------------ */
/* Data movement */

typedef unsigned char ptl_ack_req_t;
#define PTL_NO_ACK_REQ 0
#define PTL_ACK_REQ    1
#define PTL_CT_ACK_REQ 2
#define PTL_OC_ACK_REQ 3

/* ptl_process_t is passed by value (8 bytes, one INTEGER register). */
int PtlPut(ptl_handle_md_t md_handle,
           ptl_size_t local_offset,
           ptl_size_t length,
           ptl_ack_req_t ack_req,
           ptl_process_t target_id,
           ptl_pt_index_t pt_index,
           ptl_match_bits_t match_bits,
           ptl_size_t remote_offset,
           void *user_ptr,
           ptl_hdr_data_t hdr_data);
int PtlGet(ptl_handle_md_t md_handle,
           ptl_size_t local_offset,
           ptl_size_t length,
           ptl_process_t target_id,
           ptl_pt_index_t pt_index,
           ptl_match_bits_t match_bits,
           ptl_size_t remote_offset,
           void *user_ptr);

typedef unsigned char ptl_op_t;
#define PTL_MIN      0
#define PTL_MAX      1
#define PTL_SUM      2
#define PTL_PROD     3
#define PTL_LOR      4
#define PTL_LAND     5
#define PTL_BOR      6
#define PTL_BAND     7
#define PTL_LXOR     8
#define PTL_BXOR     9
#define PTL_SWAP     10
#define PTL_CSWAP    11
#define PTL_CSWAP_NE 12
#define PTL_CSWAP_LE 13
#define PTL_CSWAP_LT 14
#define PTL_CSWAP_GE 15
#define PTL_CSWAP_GT 16
#define PTL_MSWAP    17
#define PTL_OP_LAST  18

typedef unsigned char ptl_datatype_t;
#define PTL_INT8_T              0
#define PTL_UINT8_T             1
#define PTL_INT16_T             2
#define PTL_UINT16_T            3
#define PTL_INT32_T             4
#define PTL_UINT32_T            5
#define PTL_FLOAT               6
#define PTL_INT64_T             7
#define PTL_UINT64_T            8
#define PTL_DOUBLE              9
#define PTL_FLOAT_COMPLEX       10
#define PTL_DOUBLE_COMPLEX      11
#define PTL_LONG_DOUBLE         12
#define PTL_LONG_DOUBLE_COMPLEX 13
#define PTL_DATATYPE_LAST       14

int PtlAtomic(ptl_handle_md_t md_handle,
              ptl_size_t local_offset,
              ptl_size_t length,
              ptl_ack_req_t ack_req,
              ptl_process_t target_id,
              ptl_pt_index_t pt_index,
              ptl_match_bits_t match_bits,
              ptl_size_t remote_offset,
              void *user_ptr,
              ptl_hdr_data_t hdr_data,
              ptl_op_t operation,
              ptl_datatype_t datatype);
int PtlFetchAtomic(ptl_handle_md_t get_md_handle,
                   ptl_size_t local_get_offset,
                   ptl_handle_md_t put_md_handle,
                   ptl_size_t local_put_offset,
                   ptl_size_t length,
                   ptl_process_t target_id,
                   ptl_pt_index_t pt_index,
                   ptl_match_bits_t match_bits,
                   ptl_size_t remote_offset,
                   void *user_ptr,
                   ptl_hdr_data_t hdr_data,
                   ptl_op_t operation,
                   ptl_datatype_t datatype);
int PtlSwap(ptl_handle_md_t get_md_handle,
            ptl_size_t local_get_offset,
            ptl_handle_md_t put_md_handle,
            ptl_size_t local_put_offset,
            ptl_size_t length,
            ptl_process_t target_id,
            ptl_pt_index_t pt_index,
            ptl_match_bits_t match_bits,
            ptl_size_t remote_offset,
            void *user_ptr,
            ptl_hdr_data_t hdr_data,
            const void *operand,
            ptl_op_t operation,
            ptl_datatype_t datatype);
int PtlAtomicSync(void);

/* ------------------------------------------------------------------------ */
/* Full events */

typedef unsigned char ptl_event_kind_t;
#define PTL_EVENT_GET                   0
#define PTL_EVENT_GET_OVERFLOW          1
#define PTL_EVENT_PUT                   2
#define PTL_EVENT_PUT_OVERFLOW          3
#define PTL_EVENT_ATOMIC                4
#define PTL_EVENT_ATOMIC_OVERFLOW       5
#define PTL_EVENT_FETCH_ATOMIC          6
#define PTL_EVENT_FETCH_ATOMIC_OVERFLOW 7
#define PTL_EVENT_REPLY                 8
#define PTL_EVENT_SEND                  9
#define PTL_EVENT_ACK                   10
#define PTL_EVENT_PT_DISABLED           11
#define PTL_EVENT_LINK                  12
#define PTL_EVENT_AUTO_UNLINK           13
#define PTL_EVENT_AUTO_FREE             14
#define PTL_EVENT_SEARCH                15

/* 80 bytes on LP64: seven 8-byte words, initiator, uid, pt_index, then five
 * one-byte fields and 3 bytes of tail padding. */
typedef struct ptl_event {
    void *start;
    void *user_ptr;
    ptl_hdr_data_t hdr_data;
    ptl_match_bits_t match_bits;
    ptl_size_t rlength;
    ptl_size_t mlength;
    ptl_size_t remote_offset;
    ptl_process_t initiator;
    ptl_uid_t uid;
    ptl_pt_index_t pt_index;
    ptl_event_kind_t type;
    ptl_list_t ptl_list;
    ptl_ni_fail_t ni_fail_type;
    ptl_op_t atomic_operation;
    ptl_datatype_t atomic_type;
} ptl_event_t;

int PtlEQAlloc(ptl_handle_ni_t ni_handle,
               ptl_size_t count,
               ptl_handle_eq_t *eq_handle);
int PtlEQFree(ptl_handle_eq_t eq_handle);
int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event);
int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event);
int PtlEQPoll(const ptl_handle_eq_t *eq_handles,
              unsigned int size,
              ptl_time_t timeout,
              ptl_event_t *event,
              unsigned int *which);

/* ------------------------------------------------------------------------ */
/* Triggered operations: the untriggered arguments, then (trig_ct, threshold). */

int PtlTriggeredPut(ptl_handle_md_t md_handle,
                    ptl_size_t local_offset,
                    ptl_size_t length,
                    ptl_ack_req_t ack_req,
                    ptl_process_t target_id,
                    ptl_pt_index_t pt_index,
                    ptl_match_bits_t match_bits,
                    ptl_size_t remote_offset,
                    void *user_ptr,
                    ptl_hdr_data_t hdr_data,
                    ptl_handle_ct_t trig_ct_handle,
                    ptl_size_t threshold);
int PtlTriggeredGet(ptl_handle_md_t md_handle,
                    ptl_size_t local_offset,
                    ptl_size_t length,
                    ptl_process_t target_id,
                    ptl_pt_index_t pt_index,
                    ptl_match_bits_t match_bits,
                    ptl_size_t remote_offset,
                    void *user_ptr,
                    ptl_handle_ct_t trig_ct_handle,
                    ptl_size_t threshold);
int PtlTriggeredAtomic(ptl_handle_md_t md_handle,
                       ptl_size_t local_offset,
                       ptl_size_t length,
                       ptl_ack_req_t ack_req,
                       ptl_process_t target_id,
                       ptl_pt_index_t pt_index,
                       ptl_match_bits_t match_bits,
                       ptl_size_t remote_offset,
                       void *user_ptr,
                       ptl_hdr_data_t hdr_data,
                       ptl_op_t operation,
                       ptl_datatype_t datatype,
                       ptl_handle_ct_t trig_ct_handle,
                       ptl_size_t threshold);
int PtlTriggeredFetchAtomic(ptl_handle_md_t get_md_handle,
                            ptl_size_t local_get_offset,
                            ptl_handle_md_t put_md_handle,
                            ptl_size_t local_put_offset,
                            ptl_size_t length,
                            ptl_process_t target_id,
                            ptl_pt_index_t pt_index,
                            ptl_match_bits_t match_bits,
                            ptl_size_t remote_offset,
                            void *user_ptr,
                            ptl_hdr_data_t hdr_data,
                            ptl_op_t operation,
                            ptl_datatype_t datatype,
                            ptl_handle_ct_t trig_ct_handle,
                            ptl_size_t threshold);
int PtlTriggeredSwap(ptl_handle_md_t get_md_handle,
                     ptl_size_t local_get_offset,
                     ptl_handle_md_t put_md_handle,
                     ptl_size_t local_put_offset,
                     ptl_size_t length,
                     ptl_process_t target_id,
                     ptl_pt_index_t pt_index,
                     ptl_match_bits_t match_bits,
                     ptl_size_t remote_offset,
                     void *user_ptr,
                     ptl_hdr_data_t hdr_data,
                     const void *operand,
                     ptl_op_t operation,
                     ptl_datatype_t datatype,
                     ptl_handle_ct_t trig_ct_handle,
                     ptl_size_t threshold);
int PtlTriggeredCTInc(ptl_handle_ct_t ct_handle,
                      ptl_ct_event_t increment,
                      ptl_handle_ct_t trig_ct_handle,
                      ptl_size_t threshold);
int PtlTriggeredCTSet(ptl_handle_ct_t ct_handle,
                      ptl_ct_event_t new_ct,
                      ptl_handle_ct_t trig_ct_handle,
                      ptl_size_t threshold);
/* Experimental in the reference (not in the spec); me_init is non-const there. */
int PtlTriggeredMEAppend(ptl_handle_ni_t ni_handle,
                         ptl_pt_index_t pt_index,
                         ptl_me_t *me_init,
                         ptl_list_t ptl_list,
                         void *user_ptr,
                         ptl_handle_me_t *me_handle_p,
                         ptl_handle_ct_t trig_ct_handle,
                         ptl_size_t threshold);
int PtlTriggeredMEUnlink(ptl_handle_me_t me_handle,
                         ptl_handle_ct_t trig_ct_handle,
                         ptl_size_t threshold);

/* ------------------------------------------------------------------------ */
/* Deferred communication hints */

int PtlStartBundle(ptl_handle_ni_t ni_handle);
int PtlEndBundle(ptl_handle_ni_t ni_handle);

/* ------------------------------------------------------------------------ */
/* Non-zero when both handles are equal, zero otherwise: the reference's
 * convention, which Open MPI relies on (`!PtlHandleIsEqual(h, PTL_INVALID_HANDLE)`).
 * Do not return PTL_OK (0) for equality. */
int PtlHandleIsEqual(ptl_handle_any_t handle1, ptl_handle_any_t handle2);

/* ------------------------------------------------------------------------ */
/* ABI checks: the reference header's layout on LP64 (x86_64). */

#if defined(__cplusplus) && __cplusplus >= 201103L
#define PTL_ABI_ASSERT_(cond, msg) static_assert(cond, msg)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PTL_ABI_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif

#if defined(PTL_ABI_ASSERT_) && defined(__x86_64__) && defined(__LP64__)
PTL_ABI_ASSERT_(sizeof(ptl_handle_any_t) == 4, "ptl_handle_any_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_process_t) == 8, "ptl_process_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_md_t) == 32, "ptl_md_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_md_t, options) == 16, "ptl_md_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_md_t, ct_handle) == 24, "ptl_md_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_iovec_t) == 16, "ptl_iovec_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_le_t) == 32, "ptl_le_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_le_t, options) == 24, "ptl_le_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_me_t) == 64, "ptl_me_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_me_t, match_id) == 28, "ptl_me_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_me_t, match_bits) == 40, "ptl_me_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_me_t, min_free) == 56, "ptl_me_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_ct_event_t) == 16, "ptl_ct_event_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_event_t) == 80, "ptl_event_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_event_t, initiator) == 56, "ptl_event_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_event_t, pt_index) == 68, "ptl_event_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_event_t, type) == 72, "ptl_event_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_event_t, atomic_type) == 76, "ptl_event_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_ni_limits_t) == 96, "ptl_ni_limits_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_ni_limits_t, max_msg_size) == 40, "ptl_ni_limits_t ABI");
PTL_ABI_ASSERT_(offsetof(ptl_ni_limits_t, features) == 88, "ptl_ni_limits_t ABI");
PTL_ABI_ASSERT_(sizeof(ptl_sr_index_t) == 4, "ptl_sr_index_t ABI");
#endif
#undef PTL_ABI_ASSERT_

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PORTALS4_H */

// Portals 4 entry points of libportals.so: marshal the arguments, one round trip to the
// server, unmarshal the results. No Portals semantics live here: the server owns them.
#include <portals4.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "portals/entry_handles.hpp"
#include "portals/mirror_reads.hpp"
#include "portals/posted_commands.hpp"
#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/atomic_rules.hpp"

#define S4BXI_API extern "C" __attribute__((visibility("default")))

namespace wire = s4bxi::wire;
using s4bxi::interpose::call;
using s4bxi::interpose::is_rank;
namespace mirror_reads = s4bxi::interpose::mirror_reads;
namespace posted = s4bxi::interpose::posted;
namespace entry_handles = s4bxi::interpose::entry_handles;

namespace {

template <class T>
const T& result(const wire::Reply& reply)
{
    return wire::args_as<T>(reply.args);
}

int handle_call(wire::Op op, uint32_t handle)
{
    wire::HandleArgs args{handle, 0};
    return call(op, &args, sizeof args).rc;
}

uint64_t raw(ptl_process_t process)
{
    uint64_t bits;
    static_assert(sizeof bits == sizeof process);
    std::memcpy(&bits, &process, sizeof bits);
    return bits;
}

ptl_process_t process_of(uint64_t bits)
{
    ptl_process_t process;
    std::memcpy(&process, &bits, sizeof bits);
    return process;
}

int not_supported(const char* what)
{
    char text[200];
    int n = std::snprintf(text, sizeof text, "s4bxi: rank %d: not supported yet: %s\n", s4bxi::interpose::rank_id(), what);
    if (n > 0) (void)!write(STDERR_FILENO, text, static_cast<size_t>(n));
    return PTL_FAIL;
}

// A Put, Get, Atomic, FetchAtomic or Swap: posted without waiting when the server cannot
// refuse it (posted_commands.hpp), a small payload carried in the command either way.
int data_call(wire::Op op, const wire::FetchArgs& args)
{
    wire::DataCommand command{};
    command.fetch = args;
    posted::carry_payload(op, command);
    if (posted::try_post(op, command)) return PTL_OK;
    int rc = call(op, &command, sizeof command).rc;
    if (rc == PTL_OK) posted::target_reached(args.data.md, args.data.target);
    return rc;
}

int data_call(wire::Op op, const wire::DataArgs& data)
{
    wire::FetchArgs args{};
    args.data = data;
    return data_call(op, args);
}

wire::FetchArgs fetch_of(ptl_handle_md_t get_md, ptl_size_t local_get_offset, ptl_handle_md_t put_md,
                                ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id,
                                ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                                void* user_ptr, ptl_hdr_data_t hdr_data, const unsigned char* operand,
                                ptl_op_t operation, ptl_datatype_t datatype)
{
    wire::FetchArgs args{};
    args.data = wire::DataArgs{put_md, pt_index, local_put_offset, length, raw(target_id), match_bits, remote_offset,
                               reinterpret_cast<uint64_t>(user_ptr), hdr_data, PTL_NO_ACK_REQ, operation, datatype, 0};
    args.get_md = get_md;
    args.local_get_offset = local_get_offset;
    if (operand) std::memcpy(args.operand, operand, sizeof args.operand);
    return args;
}

bool swap_operand(const void* operand, ptl_op_t operation, ptl_datatype_t datatype, unsigned char (&element)[32])
{
    // The operand is one element of the datatype; read no more than that from the caller.
    std::memset(element, 0, sizeof element);
    if (!operand) return operation == PTL_SWAP;
    size_t size = s4bxi::datatype_size(datatype);
    if (size == 0) return false;
    std::memcpy(element, operand, size);
    return true;
}

}  // namespace

#define REQUIRE_RANK()                                     \
    do {                                                   \
        if (!is_rank()) return PTL_NO_INIT;                \
    } while (0)

// PtlInit calls not yet matched by a PtlFini, as the server counts them: PtlAtomicSync,
// which has nothing to ask the server, answers PTL_NO_INIT from it.
std::atomic<int> g_inits{0};

S4BXI_API int PtlInit(void)
{
    REQUIRE_RANK();
    int rc = call(wire::Op::PtlInit, nullptr, 0).rc;
    if (rc == PTL_OK) posted::library_initialized(g_inits.fetch_add(1, std::memory_order_relaxed) + 1);
    return rc;
}

S4BXI_API void PtlFini(void)
{
    if (!is_rank()) return;
    call(wire::Op::PtlFini, nullptr, 0);
    int inits = g_inits.load(std::memory_order_relaxed);
    while (inits > 0 && !g_inits.compare_exchange_weak(inits, inits - 1, std::memory_order_relaxed)) {}
    posted::library_initialized(inits > 0 ? inits - 1 : 0);
}

S4BXI_API int PtlNIInit(ptl_interface_t iface, unsigned int options, ptl_pid_t pid, const ptl_ni_limits_t* desired,
                        ptl_ni_limits_t* actual, ptl_handle_ni_t* ni_handle)
{
    REQUIRE_RANK();
    if (!ni_handle) return PTL_ARG_INVALID;
    wire::NIInitArgs args{};
    args.iface = iface;
    args.options = options;
    args.pid = pid;
    args.has_desired = desired != nullptr;
    if (desired) std::memcpy(args.desired, desired, sizeof *desired);
    const wire::Reply& reply = call(wire::Op::PtlNIInit, &args, sizeof args);
    if (reply.rc == PTL_OK) {
        const auto& out = result<wire::NIInitReply>(reply);
        *ni_handle = out.ni;
        ptl_ni_limits_t limits;
        std::memcpy(&limits, out.actual, sizeof limits);
        posted::ni_initialized(out.ni, options, limits);
        if (actual) *actual = limits;
    }
    return reply.rc;
}

S4BXI_API int PtlNIFini(ptl_handle_ni_t ni_handle)
{
    REQUIRE_RANK();
    int rc = handle_call(wire::Op::PtlNIFini, ni_handle);
    if (rc == PTL_OK) posted::ni_finalized(ni_handle);
    return rc;
}

S4BXI_API int PtlPTAlloc(ptl_handle_ni_t ni_handle, unsigned int options, ptl_handle_eq_t eq_handle,
                         ptl_pt_index_t pt_index_req, ptl_pt_index_t* pt_index)
{
    REQUIRE_RANK();
    if (!pt_index) return PTL_ARG_INVALID;
    wire::PTAllocArgs args{ni_handle, options, eq_handle, pt_index_req};
    const wire::Reply& reply = call(wire::Op::PtlPTAlloc, &args, sizeof args);
    if (reply.rc == PTL_OK) {
        *pt_index = result<wire::HandleReply>(reply).value;
        posted::pt_allocated(ni_handle, *pt_index);
    }
    return reply.rc;
}

static int pt_index_call(wire::Op op, ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
    wire::PTIndexArgs args{ni_handle, pt_index};
    return call(op, &args, sizeof args).rc;
}

S4BXI_API int PtlPTFree(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
    REQUIRE_RANK();
    // Before the call, as for an MD (PtlMDRelease); a table entry with entries stays.
    posted::pt_freed(ni_handle, pt_index);
    int rc = pt_index_call(wire::Op::PtlPTFree, ni_handle, pt_index);
    if (rc == PTL_PT_IN_USE) posted::pt_allocated(ni_handle, pt_index);
    return rc;
}

S4BXI_API int PtlPTEnable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
    REQUIRE_RANK();
    return pt_index_call(wire::Op::PtlPTEnable, ni_handle, pt_index);
}

S4BXI_API int PtlPTDisable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
    REQUIRE_RANK();
    return pt_index_call(wire::Op::PtlPTDisable, ni_handle, pt_index);
}

S4BXI_API int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t* uid)
{
    REQUIRE_RANK();
    if (!uid) return PTL_ARG_INVALID;
    wire::HandleArgs args{ni_handle, 0};
    const wire::Reply& reply = call(wire::Op::PtlGetUid, &args, sizeof args);
    if (reply.rc == PTL_OK) *uid = result<wire::HandleReply>(reply).value;
    return reply.rc;
}

static int get_id(wire::Op op, ptl_handle_ni_t ni_handle, ptl_process_t* id)
{
    if (!id) return PTL_ARG_INVALID;
    wire::HandleArgs args{ni_handle, 0};
    const wire::Reply& reply = call(op, &args, sizeof args);
    if (reply.rc == PTL_OK) *id = process_of(result<wire::HandleReply>(reply).process);
    return reply.rc;
}

S4BXI_API int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_t* id)
{
    REQUIRE_RANK();
    return get_id(wire::Op::PtlGetId, ni_handle, id);
}

S4BXI_API int PtlGetPhysId(ptl_handle_ni_t ni_handle, ptl_process_t* id)
{
    REQUIRE_RANK();
    return get_id(wire::Op::PtlGetPhysId, ni_handle, id);
}

S4BXI_API int PtlMDBind(ptl_handle_ni_t ni_handle, const ptl_md_t* md, ptl_handle_md_t* md_handle)
{
    REQUIRE_RANK();
    if (!md || !md_handle) return PTL_ARG_INVALID;
    wire::MDBindArgs args{ni_handle, md->options, reinterpret_cast<uint64_t>(md->start), md->length, md->eq_handle,
                          md->ct_handle};
    const wire::Reply& reply = call(wire::Op::PtlMDBind, &args, sizeof args);
    if (reply.rc == PTL_OK) {
        *md_handle = result<wire::HandleReply>(reply).handle;
        posted::md_bound(*md_handle, ni_handle, *md);
    }
    return reply.rc;
}

S4BXI_API int PtlMDRelease(ptl_handle_md_t md_handle)
{
    REQUIRE_RANK();
    // Before the call: a Put posted meanwhile on the MD would reach the server after it.
    posted::md_released(md_handle);
    return handle_call(wire::Op::PtlMDRelease, md_handle);
}

static wire::MEAppendArgs entry_args(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t& me,
                                     bool is_le, ptl_list_t list, void* user_ptr)
{
    wire::MEAppendArgs args{};
    args.ni = ni_handle;
    args.pt_index = pt_index;
    args.start = reinterpret_cast<uint64_t>(me.start);
    args.length = me.length;
    args.ct = me.ct_handle;
    args.uid = me.uid;
    args.options = me.options;
    args.list = list;
    args.match_id = raw(me.match_id);
    args.match_bits = me.match_bits;
    args.ignore_bits = me.ignore_bits;
    args.min_free = me.min_free;
    args.user_ptr = reinterpret_cast<uint64_t>(user_ptr);
    args.is_le = is_le;
    return args;
}

// The entry's handle is the rank's choice (entry_handles.hpp): the append is posted
// without waiting when the server cannot refuse it (posted_commands.hpp).
static int append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t& me, bool is_le,
                  ptl_list_t list, void* user_ptr, ptl_handle_me_t* handle)
{
    if (!handle) return PTL_ARG_INVALID;
    wire::MEAppendArgs args = entry_args(ni_handle, pt_index, me, is_le, list, user_ptr);
    args.handle = entry_handles::choose(is_le, ni_handle, pt_index);
    if (posted::try_post_append(args)) {
        *handle = args.handle;
        return PTL_OK;
    }
    const wire::Reply& reply = call(wire::Op::PtlMEAppend, &args, sizeof args);
    if (reply.rc != PTL_OK) {
        entry_handles::give_back(args.handle);
        return reply.rc;
    }
    *handle = result<wire::HandleReply>(reply).handle;
    entry_handles::adopted(args.handle, *handle);
    return PTL_OK;
}

static int search(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t& me, bool is_le,
                  ptl_search_op_t search_op, void* user_ptr)
{
    wire::MEAppendArgs args = entry_args(ni_handle, pt_index, me, is_le, search_op, user_ptr);
    const wire::Reply& reply = call(wire::Op::PtlMESearch, &args, sizeof args);
    if (reply.rc == PTL_OK && result<wire::HandleReply>(reply).value) mirror_reads::search_took_step();
    return reply.rc;
}

static ptl_me_t as_me(const ptl_le_t& le)
{
    ptl_me_t me{};
    me.start = le.start;
    me.length = le.length;
    me.ct_handle = le.ct_handle;
    me.uid = le.uid;
    me.options = le.options;
    return me;
}

S4BXI_API int PtlMESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t* me,
                          ptl_search_op_t ptl_search_op, void* user_ptr)
{
    REQUIRE_RANK();
    if (!me) return PTL_ARG_INVALID;
    return search(ni_handle, pt_index, *me, false, ptl_search_op, user_ptr);
}

S4BXI_API int PtlLESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_le_t* le,
                          ptl_search_op_t ptl_search_op, void* user_ptr)
{
    REQUIRE_RANK();
    if (!le) return PTL_ARG_INVALID;
    return search(ni_handle, pt_index, as_me(*le), true, ptl_search_op, user_ptr);
}

S4BXI_API int PtlMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_me_t* me, ptl_list_t ptl_list,
                          void* user_ptr, ptl_handle_me_t* me_handle)
{
    REQUIRE_RANK();
    if (!me) return PTL_ARG_INVALID;
    return append(ni_handle, pt_index, *me, false, ptl_list, user_ptr, me_handle);
}

S4BXI_API int PtlLEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, const ptl_le_t* le, ptl_list_t ptl_list,
                          void* user_ptr, ptl_handle_le_t* le_handle)
{
    REQUIRE_RANK();
    if (!le) return PTL_ARG_INVALID;
    return append(ni_handle, pt_index, as_me(*le), true, ptl_list, user_ptr, le_handle);
}

S4BXI_API int PtlMEUnlink(ptl_handle_me_t me_handle)
{
    REQUIRE_RANK();
    return handle_call(wire::Op::PtlMEUnlink, me_handle);
}

S4BXI_API int PtlLEUnlink(ptl_handle_le_t le_handle)
{
    REQUIRE_RANK();
    return handle_call(wire::Op::PtlMEUnlink, le_handle);
}

S4BXI_API int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_handle_eq_t* eq_handle)
{
    REQUIRE_RANK();
    if (!eq_handle) return PTL_ARG_INVALID;
    wire::EQAllocArgs args{ni_handle, 0, count};
    const wire::Reply& reply = call(wire::Op::PtlEQAlloc, &args, sizeof args);
    if (reply.rc == PTL_OK) *eq_handle = result<wire::HandleReply>(reply).handle;
    return reply.rc;
}

S4BXI_API int PtlEQFree(ptl_handle_eq_t eq_handle)
{
    REQUIRE_RANK();
    return handle_call(wire::Op::PtlEQFree, eq_handle);
}

static int event_result(const wire::Reply& reply, ptl_event_t* event, unsigned int* which)
{
    if (reply.rc == PTL_OK || reply.rc == PTL_EQ_DROPPED) {
        const auto& out = result<wire::EventReply>(reply);
        ptl_event_t found;
        std::memcpy(&found, out.event, sizeof found);
        mirror_reads::after_event(found);
        if (event) *event = found;
        if (which) *which = out.which;
    }
    return reply.rc;
}

S4BXI_API int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t* event)
{
    REQUIRE_RANK();
    if (!event) return PTL_ARG_INVALID;
    if (int rc; mirror_reads::eq_get(eq_handle, true, event, &rc)) return rc;
    wire::HandleArgs args{eq_handle, 0};
    return event_result(call(wire::Op::PtlEQGet, &args, sizeof args), event, nullptr);
}

S4BXI_API int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t* event)
{
    REQUIRE_RANK();
    if (!event) return PTL_ARG_INVALID;
    if (int rc; mirror_reads::eq_get(eq_handle, false, event, &rc)) return rc;
    wire::HandleArgs args{eq_handle, 0};
    return event_result(call(wire::Op::PtlEQWait, &args, sizeof args), event, nullptr);
}

S4BXI_API int PtlEQPoll(const ptl_handle_eq_t* eq_handles, unsigned int size, ptl_time_t timeout, ptl_event_t* event,
                        unsigned int* which)
{
    REQUIRE_RANK();
    if (!eq_handles || size == 0) return PTL_ARG_INVALID;
    if (size > wire::kMaxPollHandles) return not_supported("PtlEQPoll on more than 64 event queues");
    if (int rc; mirror_reads::eq_poll(eq_handles, size, timeout == 0, event, which, &rc)) return rc;
    wire::EQPollArgs args{};
    args.size = size;
    args.timeout_ms = timeout;
    std::memcpy(args.handles, eq_handles, size * sizeof *eq_handles);
    return event_result(call(wire::Op::PtlEQPoll, &args, sizeof args), event, which);
}

S4BXI_API int PtlCTAlloc(ptl_handle_ni_t ni_handle, ptl_handle_ct_t* ct_handle)
{
    REQUIRE_RANK();
    if (!ct_handle) return PTL_ARG_INVALID;
    wire::HandleArgs args{ni_handle, 0};
    const wire::Reply& reply = call(wire::Op::PtlCTAlloc, &args, sizeof args);
    if (reply.rc == PTL_OK) {
        *ct_handle = result<wire::HandleReply>(reply).handle;
        posted::ct_allocated(*ct_handle, ni_handle);
    }
    return reply.rc;
}

S4BXI_API int PtlCTFree(ptl_handle_ct_t ct_handle)
{
    REQUIRE_RANK();
    posted::ct_freed(ct_handle);  // before the call: an append posted meanwhile would reach the server after it
    return handle_call(wire::Op::PtlCTFree, ct_handle);
}

static int ct_result(const wire::Reply& reply, ptl_ct_event_t* event, unsigned int* which)
{
    if (reply.rc == PTL_OK) {
        const auto& out = result<wire::CTReply>(reply);
        if (event) *event = ptl_ct_event_t{out.success, out.failure};
        if (which) *which = out.which;
    }
    return reply.rc;
}

S4BXI_API int PtlCTGet(ptl_handle_ct_t ct_handle, ptl_ct_event_t* event)
{
    REQUIRE_RANK();
    if (!event) return PTL_ARG_INVALID;
    if (mirror_reads::ct_get(ct_handle, event)) return PTL_OK;
    wire::HandleArgs args{ct_handle, 0};
    return ct_result(call(wire::Op::PtlCTGet, &args, sizeof args), event, nullptr);
}

S4BXI_API int PtlCTWait(ptl_handle_ct_t ct_handle, ptl_size_t test, ptl_ct_event_t* event)
{
    REQUIRE_RANK();
    if (!event) return PTL_ARG_INVALID;
    if (mirror_reads::ct_wait(ct_handle, test, event)) return PTL_OK;
    wire::CTArgs args{ct_handle, 0, test, 0};
    return ct_result(call(wire::Op::PtlCTWait, &args, sizeof args), event, nullptr);
}

S4BXI_API int PtlCTPoll(const ptl_handle_ct_t* ct_handles, const ptl_size_t* tests, unsigned int size,
                        ptl_time_t timeout, ptl_ct_event_t* event, unsigned int* which)
{
    REQUIRE_RANK();
    if (!ct_handles || !tests || size == 0 || !event || !which) return PTL_ARG_INVALID;
    if (size > wire::kMaxPollHandles) return not_supported("PtlCTPoll on more than 64 counters");
    if (mirror_reads::ct_poll(ct_handles, tests, size, event, which)) return PTL_OK;
    wire::CTPollArgs args{};
    args.size = size;
    args.timeout_ms = timeout;
    std::memcpy(args.handles, ct_handles, size * sizeof *ct_handles);
    std::memcpy(args.tests, tests, size * sizeof *tests);
    return ct_result(call(wire::Op::PtlCTPoll, &args, sizeof args), event, which);
}

S4BXI_API int PtlCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct)
{
    REQUIRE_RANK();
    wire::CTArgs args{ct_handle, 0, new_ct.success, new_ct.failure};
    if (posted::try_post_counter(wire::Op::PtlCTSet, args)) return PTL_OK;
    return call(wire::Op::PtlCTSet, &args, sizeof args).rc;
}

S4BXI_API int PtlCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment)
{
    REQUIRE_RANK();
    wire::CTArgs args{ct_handle, 0, increment.success, increment.failure};
    if (posted::try_post_counter(wire::Op::PtlCTInc, args)) return PTL_OK;
    return call(wire::Op::PtlCTInc, &args, sizeof args).rc;
}

S4BXI_API int PtlPut(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req,
                     ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
                     ptl_size_t remote_offset, void* user_ptr, ptl_hdr_data_t hdr_data)
{
    REQUIRE_RANK();
    wire::DataArgs args{md_handle, pt_index, local_offset, length, raw(target_id), match_bits, remote_offset,
                        reinterpret_cast<uint64_t>(user_ptr), hdr_data, ack_req, 0, 0, 0};
    return data_call(wire::Op::PtlPut, args);
}

S4BXI_API int PtlGet(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_process_t target_id,
                     ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset, void* user_ptr)
{
    REQUIRE_RANK();
    wire::DataArgs args{md_handle, pt_index, local_offset, length, raw(target_id), match_bits, remote_offset,
                        reinterpret_cast<uint64_t>(user_ptr), 0, PTL_NO_ACK_REQ, 0, 0, 0};
    return data_call(wire::Op::PtlGet, args);
}

S4BXI_API int PtlAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req,
                        ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
                        ptl_size_t remote_offset, void* user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation,
                        ptl_datatype_t datatype)
{
    REQUIRE_RANK();
    wire::DataArgs args{md_handle, pt_index, local_offset, length, raw(target_id), match_bits, remote_offset,
                        reinterpret_cast<uint64_t>(user_ptr), hdr_data, ack_req, operation, datatype, 0};
    return data_call(wire::Op::PtlAtomic, args);
}

S4BXI_API int PtlFetchAtomic(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset, ptl_handle_md_t put_md_handle,
                             ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id,
                             ptl_pt_index_t pt_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                             void* user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation, ptl_datatype_t datatype)
{
    REQUIRE_RANK();
    wire::FetchArgs args = fetch_of(get_md_handle, local_get_offset, put_md_handle, local_put_offset, length, target_id,
                                    pt_index, match_bits, remote_offset, user_ptr, hdr_data, nullptr, operation, datatype);
    return data_call(wire::Op::PtlFetchAtomic, args);
}

S4BXI_API int PtlSwap(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset, ptl_handle_md_t put_md_handle,
                      ptl_size_t local_put_offset, ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index,
                      ptl_match_bits_t match_bits, ptl_size_t remote_offset, void* user_ptr, ptl_hdr_data_t hdr_data,
                      const void* operand, ptl_op_t operation, ptl_datatype_t datatype)
{
    REQUIRE_RANK();
    unsigned char element[32];
    if (!swap_operand(operand, operation, datatype, element)) return PTL_ARG_INVALID;
    wire::FetchArgs args = fetch_of(get_md_handle, local_get_offset, put_md_handle, local_put_offset, length, target_id,
                                    pt_index, match_bits, remote_offset, user_ptr, hdr_data, element, operation, datatype);
    return data_call(wire::Op::PtlSwap, args);
}

// ---------------------------------------------------------------------------------------
// Triggered operations: the same arguments, plus the counter and threshold that fire them.

// Posted without waiting when the server cannot refuse it (posted_commands.hpp); counted
// either way against max_triggered_ops.
static int triggered_call(const wire::TriggeredArgs& args, bool data)
{
    if (posted::try_post_triggered(args)) return PTL_OK;
    int rc = call(wire::Op::PtlTriggered, &args, sizeof args).rc;
    if (rc != PTL_OK) return rc;
    posted::triggered_registered(args.trigger_ct);
    if (data) posted::target_reached(args.fetch.data.md, args.fetch.data.target);
    return rc;
}

static int trigger(wire::Op op, const wire::FetchArgs& fetch, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
    wire::TriggeredArgs args{};
    args.op = static_cast<uint32_t>(op);
    args.trigger_ct = trig_ct_handle;
    args.threshold = threshold;
    args.fetch = fetch;
    return triggered_call(args, true);
}

static wire::FetchArgs data_only(const wire::DataArgs& data)
{
    wire::FetchArgs fetch{};
    fetch.data = data;
    return fetch;
}

S4BXI_API int PtlTriggeredPut(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                              ptl_ack_req_t ack_req, ptl_process_t target_id, ptl_pt_index_t pt_index,
                              ptl_match_bits_t match_bits, ptl_size_t remote_offset, void* user_ptr,
                              ptl_hdr_data_t hdr_data, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
    REQUIRE_RANK();
    return trigger(wire::Op::PtlPut,
                   data_only({md_handle, pt_index, local_offset, length, raw(target_id), match_bits, remote_offset,
                              reinterpret_cast<uint64_t>(user_ptr), hdr_data, ack_req, 0, 0, 0}),
                   trig_ct_handle, threshold);
}

S4BXI_API int PtlTriggeredGet(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                              ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
                              ptl_size_t remote_offset, void* user_ptr, ptl_handle_ct_t trig_ct_handle,
                              ptl_size_t threshold)
{
    REQUIRE_RANK();
    return trigger(wire::Op::PtlGet,
                   data_only({md_handle, pt_index, local_offset, length, raw(target_id), match_bits, remote_offset,
                              reinterpret_cast<uint64_t>(user_ptr), 0, PTL_NO_ACK_REQ, 0, 0, 0}),
                   trig_ct_handle, threshold);
}

S4BXI_API int PtlTriggeredAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                                 ptl_ack_req_t ack_req, ptl_process_t target_id, ptl_pt_index_t pt_index,
                                 ptl_match_bits_t match_bits, ptl_size_t remote_offset, void* user_ptr,
                                 ptl_hdr_data_t hdr_data, ptl_op_t operation, ptl_datatype_t datatype,
                                 ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
    REQUIRE_RANK();
    return trigger(wire::Op::PtlAtomic,
                   data_only({md_handle, pt_index, local_offset, length, raw(target_id), match_bits, remote_offset,
                              reinterpret_cast<uint64_t>(user_ptr), hdr_data, ack_req, operation, datatype, 0}),
                   trig_ct_handle, threshold);
}

S4BXI_API int PtlTriggeredFetchAtomic(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
                                      ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset, ptl_size_t length,
                                      ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
                                      ptl_size_t remote_offset, void* user_ptr, ptl_hdr_data_t hdr_data,
                                      ptl_op_t operation, ptl_datatype_t datatype, ptl_handle_ct_t trig_ct_handle,
                                      ptl_size_t threshold)
{
    REQUIRE_RANK();
    return trigger(wire::Op::PtlFetchAtomic,
                   fetch_of(get_md_handle, local_get_offset, put_md_handle, local_put_offset, length, target_id,
                            pt_index, match_bits, remote_offset, user_ptr, hdr_data, nullptr, operation, datatype),
                   trig_ct_handle, threshold);
}

S4BXI_API int PtlTriggeredSwap(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
                               ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset, ptl_size_t length,
                               ptl_process_t target_id, ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
                               ptl_size_t remote_offset, void* user_ptr, ptl_hdr_data_t hdr_data, const void* operand,
                               ptl_op_t operation, ptl_datatype_t datatype, ptl_handle_ct_t trig_ct_handle,
                               ptl_size_t threshold)
{
    REQUIRE_RANK();
    unsigned char element[32];
    if (!swap_operand(operand, operation, datatype, element)) return PTL_ARG_INVALID;
    return trigger(wire::Op::PtlSwap,
                   fetch_of(get_md_handle, local_get_offset, put_md_handle, local_put_offset, length, target_id,
                            pt_index, match_bits, remote_offset, user_ptr, hdr_data, element, operation, datatype),
                   trig_ct_handle, threshold);
}

static int trigger_counter(wire::Op op, ptl_handle_ct_t ct_handle, ptl_ct_event_t value, ptl_handle_ct_t trig_ct_handle,
                           ptl_size_t threshold)
{
    wire::TriggeredArgs args{};
    args.op = static_cast<uint32_t>(op);
    args.trigger_ct = trig_ct_handle;
    args.threshold = threshold;
    args.counter = wire::CTArgs{ct_handle, 0, value.success, value.failure};
    return triggered_call(args, false);
}

S4BXI_API int PtlTriggeredCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment, ptl_handle_ct_t trig_ct_handle,
                                ptl_size_t threshold)
{
    REQUIRE_RANK();
    return trigger_counter(wire::Op::PtlCTInc, ct_handle, increment, trig_ct_handle, threshold);
}

S4BXI_API int PtlTriggeredCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct, ptl_handle_ct_t trig_ct_handle,
                                ptl_size_t threshold)
{
    REQUIRE_RANK();
    return trigger_counter(wire::Op::PtlCTSet, ct_handle, new_ct, trig_ct_handle, threshold);
}

S4BXI_API int PtlCTCancelTriggered(ptl_handle_ct_t ct_handle)
{
    REQUIRE_RANK();
    int rc = handle_call(wire::Op::PtlCTCancelTriggered, ct_handle);
    if (rc == PTL_OK) posted::triggers_cancelled(ct_handle);
    return rc;
}

S4BXI_API void PtlAbort(void)
{
    s4bxi::interpose::request_abort();
}

S4BXI_API int PtlHandleIsEqual(ptl_handle_any_t handle1, ptl_handle_any_t handle2)
{
    return handle1 == handle2;
}

// ---------------------------------------------------------------------------------------
// The rest of portals4.h: atomic ordering, bundles, NI status and handles, maps, and
// the triggered list operations.

S4BXI_API int PtlAtomicSync(void)
{
    REQUIRE_RANK();
    if (g_inits.load(std::memory_order_relaxed) == 0) return PTL_NO_INIT;
    return PTL_OK;  // atomics are applied in order at the target: nothing to wait for
}

namespace {

// Bundles are hints that the calls in between may be deferred and grouped; issuing each
// call at once is a valid implementation of the hint. The server still checks the NI
// (PTL_NO_INIT before PtlInit, PTL_ARG_INVALID for a handle that is no live NI).
int bundle(ptl_handle_ni_t ni_handle)
{
    REQUIRE_RANK();
    wire::HandleArgs args{ni_handle, 0};
    const wire::Reply& reply = call(wire::Op::PtlNIHandle, &args, sizeof args);
    if (reply.rc != PTL_OK) return reply.rc;
    return result<wire::HandleReply>(reply).handle == ni_handle ? PTL_OK : PTL_ARG_INVALID;
}

}  // namespace

S4BXI_API int PtlStartBundle(ptl_handle_ni_t ni_handle)
{
    return bundle(ni_handle);
}
S4BXI_API int PtlEndBundle(ptl_handle_ni_t ni_handle)
{
    return bundle(ni_handle);
}

S4BXI_API int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t status_register, ptl_sr_value_t* status)
{
    REQUIRE_RANK();
    if (!status) return PTL_ARG_INVALID;
    wire::HandleArgs args{ni_handle, static_cast<uint32_t>(status_register)};
    const wire::Reply& reply = call(wire::Op::PtlNIStatus, &args, sizeof args);
    if (reply.rc == PTL_OK) *status = static_cast<ptl_sr_value_t>(result<wire::HandleReply>(reply).value);
    return reply.rc;
}

S4BXI_API int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t* ni_handle)
{
    REQUIRE_RANK();
    if (!ni_handle) return PTL_ARG_INVALID;
    wire::HandleArgs args{handle, 0};
    const wire::Reply& reply = call(wire::Op::PtlNIHandle, &args, sizeof args);
    if (reply.rc == PTL_OK) *ni_handle = result<wire::HandleReply>(reply).handle;
    return reply.rc;
}

S4BXI_API int PtlSetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size, const ptl_process_t* mapping)
{
    REQUIRE_RANK();
    if (!mapping || map_size == 0) return PTL_ARG_INVALID;
    wire::MapArgs args{ni_handle, 0, map_size, reinterpret_cast<uint64_t>(mapping)};
    int rc = call(wire::Op::PtlSetMap, &args, sizeof args).rc;
    if (rc == PTL_OK) posted::map_set(ni_handle, map_size, mapping);
    return rc;
}

S4BXI_API int PtlGetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size, ptl_process_t* mapping,
                        ptl_size_t* actual_map_size)
{
    REQUIRE_RANK();
    if (!actual_map_size || (map_size > 0 && !mapping)) return PTL_ARG_INVALID;
    wire::MapArgs args{ni_handle, 0, map_size, reinterpret_cast<uint64_t>(mapping)};
    const wire::Reply& reply = call(wire::Op::PtlGetMap, &args, sizeof args);
    if (reply.rc == PTL_OK) *actual_map_size = result<wire::HandleReply>(reply).process;
    return reply.rc;
}

// Triggered list operations (the reference's, outside the specification): the entry and
// its handle exist at once, the append or unlink happens when the trigger fires. An entry
// unlinked before its append fires is never linked.
S4BXI_API int PtlTriggeredMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, ptl_me_t* me_init,
                                   ptl_list_t ptl_list, void* user_ptr, ptl_handle_me_t* me_handle_p,
                                   ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
    REQUIRE_RANK();
    if (!me_init || !me_handle_p) return PTL_ARG_INVALID;
    wire::TriggeredArgs args{};
    args.op = static_cast<uint32_t>(wire::Op::PtlMEAppend);
    args.trigger_ct = trig_ct_handle;
    args.threshold = threshold;
    args.entry = entry_args(ni_handle, pt_index, *me_init, false, ptl_list, user_ptr);
    args.entry.handle = entry_handles::choose(false, ni_handle, pt_index);
    const wire::Reply& reply = call(wire::Op::PtlTriggered, &args, sizeof args);
    if (reply.rc != PTL_OK) {
        entry_handles::give_back(args.entry.handle);
        return reply.rc;
    }
    *me_handle_p = result<wire::HandleReply>(reply).handle;
    entry_handles::adopted(args.entry.handle, *me_handle_p);
    posted::triggered_registered(trig_ct_handle);
    return PTL_OK;
}

S4BXI_API int PtlTriggeredMEUnlink(ptl_handle_me_t me_handle, ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
    REQUIRE_RANK();
    wire::TriggeredArgs args{};
    args.op = static_cast<uint32_t>(wire::Op::PtlMEUnlink);
    args.trigger_ct = trig_ct_handle;
    args.threshold = threshold;
    args.entry_handle = me_handle;
    int rc = call(wire::Op::PtlTriggered, &args, sizeof args).rc;
    if (rc == PTL_OK) posted::triggered_registered(trig_ct_handle);
    return rc;
}

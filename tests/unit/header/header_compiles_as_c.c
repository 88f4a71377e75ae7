/* Built as strict C99 with warnings as errors: portals4.h must stay valid C
 * for the applications we run (Open MPI, Sandia OpenSHMEM are C). */
#include <portals4.h>

typedef int (*put_fn)(ptl_handle_md_t, ptl_size_t, ptl_size_t, ptl_ack_req_t, ptl_process_t,
                      ptl_pt_index_t, ptl_match_bits_t, ptl_size_t, void *, ptl_hdr_data_t);

int s4bxi_header_c_check(void);
int s4bxi_header_c_check(void)
{
    ptl_process_t id;
    ptl_me_t me;
    ptl_event_t ev;
    put_fn put;

    id.phys.nid = PTL_NID_ANY;
    id.phys.pid = PTL_PID_ANY;
    me.match_id = id;
    me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_CT_COMM;
    ev.type = PTL_EVENT_PUT;
    ev.ni_fail_type = PTL_NI_OK;
    /* sizeof keeps the assignment unevaluated: prototype type-checked, no
     * reference to the symbol. */
    return (int)sizeof(put = PtlPut) + (int)me.options + ev.type + ev.ni_fail_type +
           PTL_STATUS_LAST;
}

/* Comparing and naming collective calls (call_sig.h). */
#include <stdio.h>

#include "base/call_sig.h"
#include "base/coll_kind.h"
#include "base/elem.h"

/* with_elem: name the op and element kind too (the calls differ in
 * nothing else). */
static void pd_describe_call(const struct pd_call_sig *call, bool with_elem,
                             char *buf, size_t len)
{
    const char *kind = pd_coll_kind_name(call->kind);
    if (call->kind == PD_COLL_BARRIER) {
        snprintf(buf, len, "barrier");
        return;
    }
    char sig[64] = "";
    if (with_elem && call->op != 0)
        snprintf(sig, sizeof(sig), " (%s on %s)", pd_op_id_name(call->op),
                 pd_elem_kind_name(call->elem));
    else if (with_elem)
        snprintf(sig, sizeof(sig), " (of %s elements)",
                 pd_elem_kind_name(call->elem));
    /* Block lengths differ from rank to rank: not part of the call. */
    if (call->kind == PD_COLL_ALLTOALLV || call->kind == PD_COLL_ALLGATHERV)
        snprintf(buf, len, "%s%s", kind, sig);
    else if (call->kind == PD_COLL_GATHERV || call->kind == PD_COLL_SCATTERV)
        snprintf(buf, len, "%s%s with root %d", kind, sig, (int)call->root);
    else if (call->root >= 0)
        snprintf(buf, len, "%s of %llu bytes%s to/from root %d", kind,
                 (unsigned long long)call->bytes, sig, (int)call->root);
    else
        snprintf(buf, len, "%s of %llu bytes%s", kind,
                 (unsigned long long)call->bytes, sig);
}

void pd_call_sig_mismatch(char *buf, size_t len, int rank_a,
                          const struct pd_call_sig *a, int rank_b,
                          const struct pd_call_sig *b)
{
    char x[128], y[128];
    bool only_elem = a->kind == b->kind && a->root == b->root &&
                     a->bytes == b->bytes;
    pd_describe_call(a, only_elem, x, sizeof(x));
    pd_describe_call(b, only_elem, y, sizeof(y));
    snprintf(buf, len,
             "ranks are in different collectives: rank %d is in %s, rank %d "
             "in %s (a rank skipped or added a call, or passed other "
             "arguments)", rank_a, x, rank_b, y);
}

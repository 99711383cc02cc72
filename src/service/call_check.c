/* PDMPI_CHECK: every rank's call compared before it runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/calls.h"
#include "core/runtime.h"
#include "service/call_check.h"
#include "service/progress.h"

/* A call as the ranks exchange it: fixed size, names as text. */
struct pd_call_record {
    char name[24];
    char type[32];
    char op[24];
    int32_t root;
    uint32_t any_bytes;
    uint64_t bytes;
    uint64_t seq;
};

static void pd_record_of(const struct pd_call *call, uint64_t seq,
                         struct pd_call_record *rec)
{
    memset(rec, 0, sizeof(*rec));
    snprintf(rec->name, sizeof(rec->name), "%s", call->name);
    if (call->type != NULL)
        snprintf(rec->type, sizeof(rec->type), "%s", pd_type_name(call->type));
    if (call->op != NULL)
        snprintf(rec->op, sizeof(rec->op), "%s", pd_op_name(call->op));
    rec->root = call->root;
    rec->any_bytes = call->bytes == PD_CALL_ANY_BYTES;
    rec->bytes = rec->any_bytes ? 0 : (uint64_t)call->bytes;
    rec->seq = seq;
}

static bool pd_records_match(const struct pd_call_record *a,
                             const struct pd_call_record *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->type, b->type) == 0 &&
           strcmp(a->op, b->op) == 0 && a->root == b->root &&
           a->any_bytes == b->any_bytes && a->bytes == b->bytes &&
           a->seq == b->seq;
}

static int pd_describe(const struct pd_call_record *r, int rank, char *buf,
                       size_t len)
{
    int n = snprintf(buf, len, "rank %d: %s", rank, r->name);
    if (!r->any_bytes && strcmp(r->name, "MPI_Barrier") != 0 &&
        strcmp(r->name, "MPI_Finalize") != 0)
        n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0,
                      " of %llu bytes", (unsigned long long)r->bytes);
    if (r->type[0] != '\0')
        n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, " %s",
                      r->type);
    if (r->op[0] != '\0')
        n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, " %s",
                      r->op);
    if (r->root >= 0)
        n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0,
                      " root %d", (int)r->root);
    n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0,
                  " (call %llu)", (unsigned long long)r->seq);
    return n;
}

/* Every rank's record, compared with rank 0's; all ranks see the same
 * table, so all fail alike. */
static int pd_cross_check(struct ompi_communicator_t *comm,
                          const struct pd_call_record *mine,
                          struct pd_fail *fail)
{
    struct pd_call_record *all = malloc((size_t)comm->size * sizeof(*all));
    if (all == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory (PDMPI_CHECK)");
        return fail->errclass;
    }
    int rc = pd_progress_allgather(comm, mine, all, sizeof(*mine), fail);
    int differ = 0;
    for (int r = 1; rc == MPI_SUCCESS && r < comm->size; r++)
        differ += !pd_records_match(&all[0], &all[r]);
    if (rc == MPI_SUCCESS && differ > 0) {
        char text[sizeof(fail->msg)];
        size_t n = (size_t)snprintf(text, sizeof(text),
                                    "PDMPI_CHECK: the ranks of %s are in "
                                    "different calls: ",
                                    comm->name[0] ? comm->name : comm->state->id);
        n += (size_t)pd_describe(&all[0], 0, text + n, sizeof(text) - n);
        for (int r = 1; r < comm->size && n < sizeof(text); r++) {
            if (pd_records_match(&all[0], &all[r]))
                continue;
            n += (size_t)snprintf(text + n, sizeof(text) - n, "; ");
            if (n < sizeof(text))
                n += (size_t)pd_describe(&all[r], r, text + n,
                                         sizeof(text) - n);
        }
        pd_fail_set(fail, MPI_ERR_OTHER, "%s", text);
        rc = fail->errclass;
    }
    free(all);
    return rc;
}

int pd_calls_enter(struct ompi_communicator_t *comm,
                   const struct pd_call *call, struct pd_fail *fail)
{
    uint64_t seq = pd_calls_note(comm, call->name);
    if (!pd_rt.config.check || comm->size == 1)
        return MPI_SUCCESS;
    struct pd_call_record mine;
    pd_record_of(call, seq, &mine);
    return pd_cross_check(comm, &mine, fail);
}

/*
 * The one dispatcher: a collective call, described once, goes down the
 * device, staged or host route, decided here once per call. Every failure
 * of a backend, host or device, becomes an MPI error class here too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "coll/devcoll.h"
#include "core/calls.h"
#include "core/runtime.h"
#include "core/type_stage.h"

size_t pd_coll_block_count(const struct pd_coll *c, int r)
{
    return c->counts != NULL ? (size_t)c->counts[r] : c->count;
}

void pd_coll_block_span(const struct pd_coll *c, int r, size_t *from,
                        size_t *total)
{
    *from = *total = 0;
    for (int i = 0; i < c->comm->size; i++) {
        if (i < r)
            *from += pd_coll_block_count(c, i);
        *total += pd_coll_block_count(c, i);
    }
}

/* ---- failures, host and device alike ---------------------------------- */

static void pd_coll_name_gone(struct ompi_communicator_t *comm, char *buf,
                              size_t len)
{
    /* A killed process closes its sockets before it is a zombie, so the
     * reset can come a moment before the process reads as gone: give it
     * up to 100 ms (a failure path only). */
    for (int i = 0; i < 20 && pd_runtime_comm_rank_gone(comm) < 0; i++)
        nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
    size_t n = strlen(buf);
    for (int r = 0; r < comm->size && n < len; r++) {
        int w = pd_comm_world_rank(comm, r);
        if (!pd_runtime_local_rank_gone(w))
            continue;
        n += (size_t)snprintf(buf + n, len - n, "; rank %d (%s, pid %d) is gone",
                              r, pd_rt.host, pd_rt.world.pid_of[w]);
    }
}

int pd_coll_backend_failed(int status, struct ompi_communicator_t *comm,
                           const char *what, const char *detail,
                           struct pd_fail *fail)
{
    int errclass = MPI_ERR_OTHER;
    if (status == PD_BACKEND_ERR_IO)
        pd_runtime_note_peer_lost();
    if (status == PD_BACKEND_ERR_NOMEM)
        errclass = MPI_ERR_NO_MEM;
    else if (status == PD_BACKEND_ERR_UNSUPPORTED)
        errclass = MPI_ERR_UNSUPPORTED_OPERATION;
    else if (status == PD_BACKEND_ERR_INTERNAL)
        errclass = MPI_ERR_INTERN;
    pd_fail_set(fail, errclass, "%s on %s failed%s: %s", what,
                comm->name[0] ? comm->name : comm->state->id,
                status == PD_BACKEND_ERR_TIMEOUT
                    ? " (timed out; PDMPI_TIMEOUT bounds every wait)" : "",
                detail);
    /* A lost connection: name the ranks of this host that are gone. */
    if (status == PD_BACKEND_ERR_IO)
        pd_coll_name_gone(comm, fail->msg, sizeof(fail->msg));
    /* A stall: say what every other rank was last doing. */
    if (status == PD_BACKEND_ERR_TIMEOUT)
        pd_calls_stall_table(comm, fail->msg, sizeof(fail->msg));
    return errclass;
}

struct pd_call_sig pd_coll_sig(const struct pd_coll *c, int reduction_elem)
{
    struct pd_call_sig sig = { .kind = (uint8_t)c->kind, .root = c->root };
    if (reduction_elem >= 0) {
        sig.op = (uint8_t)c->op->id;
        sig.elem = (uint8_t)reduction_elem;
        sig.bytes = c->count * pd_type_packed(c->type);
        return sig;
    }
    sig.elem = c->signature;
    if (c->kind == PD_COLL_BCAST || c->kind == PD_COLL_ALLGATHER) {
        sig.bytes = c->kind == PD_COLL_ALLGATHER
                        ? c->count * (size_t)c->comm->size : c->count;
    }
    return sig;
}

int pd_coll_packed(const struct pd_coll *c, struct pd_coll *whole,
                   struct pd_fail *fail)
{
    *whole = *c;
    whole->stage = whole->send_stage = NULL;
    struct pd_type_stage *st[2] = { c->send_stage, c->stage };
    for (int i = 0; i < 2; i++) {
        if (st[i] == NULL)
            continue;
        if (pd_stage_pack(st[i]) != 0) {
            pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory (a packed copy "
                        "of %zu bytes)", st[i]->bytes);
            return fail->errclass;
        }
        if (i == 0)
            whole->sendbuf = st[i]->packed;
        else
            whole->recvbuf = st[i]->packed;
    }
    return MPI_SUCCESS;
}

void *pd_coll_alloc(size_t bytes, struct pd_fail *fail)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory (%zu bytes)", bytes);
    return p;
}

/* Calls whose count is the same on every rank and that move nothing at 0. */
static bool pd_coll_is_empty(const struct pd_coll *c)
{
    switch (c->kind) {
    case PD_COLL_ALLREDUCE: case PD_COLL_REDUCE: case PD_COLL_BCAST:
    case PD_COLL_ALLGATHER: case PD_COLL_SCAN: case PD_COLL_EXSCAN:
        return c->count == 0;
    default:
        return false;
    }
}

int pd_coll_run(const struct pd_coll *c, struct pd_fail *fail)
{
    if ((c->kind == PD_COLL_SCAN || c->kind == PD_COLL_EXSCAN) &&
        c->op->id == PD_OP_AVG) {
        pd_fail_set(fail, MPI_ERR_OP, "MPIX_OP_AVG is not defined for scans");
        return fail->errclass;
    }
    if (pd_coll_is_empty(c))
        return MPI_SUCCESS;
    /* A stage not packed yet is of host memory (api/stage.c). */
    if (c->stage != NULL || c->send_stage != NULL ||
        !pd_route_memory_aware())
        return pd_coll_host(c, fail);
    char why[256];
    switch (pd_devcoll_route(c, why, sizeof(why))) {
    case PD_ROUTE_DEVICE:
        return pd_devcoll_run(c, fail);
    case PD_ROUTE_STAGE:
        return pd_devcoll_staged(c, fail);
    case PD_ROUTE_REFUSE:
        pd_fail_set(fail, MPI_ERR_OTHER, "%s (PDMPI_DEVICE_FALLBACK=error)",
                    why);
        return fail->errclass;
    default:
        return pd_coll_host(c, fail);
    }
}

/*
 * The one dispatcher: a collective call, described once, goes down the
 * device, staged or host way, decided here once per call.
 */
#include "coll/coll.h"
#include "coll/devcoll.h"

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
    if (!pd_route_memory_aware())
        return pd_coll_host(c, fail);
    char why[256];
    switch (pd_devcoll_way(c, why, sizeof(why))) {
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

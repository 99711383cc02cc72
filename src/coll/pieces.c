/*
 * A call's bytes a piece at a time (coll/pieces.h).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "coll/hier.h"
#include "coll/pieces.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/type_stage.h"

/* Bytes of a segment. Every rank cuts a large call alike, whatever its
 * datatype (the ranks of one call may each have their own layout), so a
 * contiguous one is cut too; calls up to this size run whole as before.
 * Measured 2026-12-04 with PDMPI_SHM=0 at np 4 on the 2-core build
 * machine, osu_allreduce and osu_bcast of plain bytes, two alternating
 * runs of three: 32 and 64 MiB cut in 16 MiB took 0.94-1.02x the time of
 * whole calls in allreduce, 0.91-0.95x in broadcast (16 MiB alone take
 * 10-16 ms there). */
#define PD_SEGMENT ((size_t)16 << 20)

bool pd_pieces_of(const struct pd_coll *c, struct pd_pieces *p)
{
    if (c->stage == NULL && c->send_stage == NULL)
        return false;
    bool in_recv = c->kind == PD_COLL_BCAST || c->sendbuf == NULL;
    *p = (struct pd_pieces){
        .in = in_recv ? c->stage : c->send_stage,
        .plain_in = in_recv ? c->recvbuf : c->sendbuf,
        .out = c->stage, .plain_out = c->recvbuf,
    };
    return true;
}

void pd_pack_piece(void *ctx, size_t from, size_t n, void *to)
{
    const struct pd_pieces *p = ctx;
    if (p->in != NULL)
        pd_stage_pack_piece(p->in, from, n, to);
    else
        memcpy(to, p->plain_in + from, n);
}

void pd_unpack_piece(void *ctx, size_t from, size_t n, const void *data)
{
    struct pd_pieces *p = ctx;
    if (p->out != NULL)
        pd_stage_unpack_piece(p->out, from, n, data);
    else
        memcpy(p->plain_out + from, data, n);
}

/* c's cut: segments of at most *per units of *unit bytes each (bytes
 * of a broadcast; a reduction's predefined elements, whose type the
 * segments take: an item of a derived type may be larger than a
 * segment); false: c is not cut. A user op is given whole items, which
 * need not be alike on every rank, so its calls are never cut. */
static bool pd_segments_cut(const struct pd_coll *c,
                            MPI_Datatype *elements, size_t *unit,
                            size_t *per)
{
    *elements = NULL;
    *unit = 1;
    if (c->kind == PD_COLL_BCAST) {
        *per = PD_SEGMENT;
        return c->count > PD_SEGMENT;
    }
    if (c->kind != PD_COLL_ALLREDUCE && c->kind != PD_COLL_REDUCE)
        return false;
    size_t item = pd_type_packed(c->type);
    if (item == 0 || c->count <= PD_SEGMENT / item ||
        !pd_op_is_predefined(c->op) ||
        (*elements = pd_type_base(c->type)) == NULL)
        return false;
    *unit = pd_type_packed(*elements);
    *per = PD_SEGMENT / *unit;
    return true;
}

bool pd_coll_may_segment(const struct pd_coll *c)
{
    MPI_Datatype elements;
    size_t unit, per;
    return pd_segments_cut(c, &elements, &unit, &per);
}

int pd_coll_segments(const struct pd_coll *c, struct pd_hier *h,
                     struct pd_fail *fail)
{
    MPI_Datatype elements;
    size_t unit, per;
    if ((h != NULL && pd_hier_single_host(h) && pd_hier_segment(h) != NULL) ||
        !pd_segments_cut(c, &elements, &unit, &per))
        return PD_BACKEND_ERR_UNSUPPORTED;
    struct pd_pieces p = { 0 };
    bool staged = pd_pieces_of(c, &p);
    bool root = c->comm->rank == c->root;
    /* Where this rank has a result. */
    bool out = c->kind == PD_COLL_BCAST ? !root
               : c->kind == PD_COLL_ALLREDUCE || root;
    size_t total = c->kind == PD_COLL_BCAST
                       ? c->count : c->count * pd_type_packed(c->type);
    unsigned char *scratch = NULL;
    if (staged && (scratch = pd_coll_alloc(per * unit, fail)) == NULL)
        return fail->errclass;
    int rc = MPI_SUCCESS;
    for (size_t from = 0, bytes; from < total && rc == MPI_SUCCESS;
         from += bytes) {
        bytes = total - from < per * unit ? total - from : per * unit;
        struct pd_coll s = *c;
        s.stage = s.send_stage = NULL;
        s.count = bytes / unit;
        if (elements != NULL)
            s.type = elements;
        if (!staged) {
            /* Plain buffers: the segment where it lies. */
            if (c->sendbuf != NULL)
                s.sendbuf = (const char *)c->sendbuf + from;
            if (c->recvbuf != NULL)
                s.recvbuf = (char *)c->recvbuf + from;
        } else if (c->kind == PD_COLL_BCAST) {
            if (root)
                pd_pack_piece(&p, from, bytes, scratch);
            s.recvbuf = scratch;
        } else {
            /* A reduction's segment runs in place where it has a
             * result. */
            pd_pack_piece(&p, from, bytes, scratch);
            s.sendbuf = out ? NULL : scratch;
            s.recvbuf = out ? scratch : NULL;
        }
        rc = pd_coll_host(&s, fail);
        if (rc == MPI_SUCCESS && staged && out)
            pd_unpack_piece(&p, from, bytes, scratch);
    }
    free(scratch);
    return rc;
}

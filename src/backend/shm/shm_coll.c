/*
 * Collectives over the segment (layout and step protocol: shm_internal.h).
 *
 * Reductions come in two sizes:
 * - small (up to PD_SHM_SMALL_BYTES): one step; every rank puts its input
 *   in its line or slot, and each rank that wants results folds all inputs
 *   itself, in rank order -- one signal, no second round trip;
 * - large: per chunk, every rank copies its input in, reduces its own
 *   1/size share of the chunk across all slots (rank order) into the
 *   result area, then copies out the parts it wants. The chunk (one slot)
 *   is small enough for the working set to stay in cache.
 * Either way every element is folded in rank order by one deterministic
 * loop, so every rank gets the same bits.
 */
#include <stdio.h>
#include <string.h>

#include "backend/shm/shm_internal.h"

/* Up to here every wanting rank folds every input itself. */
#define PD_SHM_SMALL_BYTES 4096

/* A broadcast goes in PD_SHM_BCAST_SPLIT steps, each at least
 * PD_SHM_BCAST_STEP bytes and at most a whole buffer. */
#define PD_SHM_BCAST_SPLIT 8
#define PD_SHM_BCAST_STEP ((size_t)64 << 10)

static size_t pd_min(size_t a, size_t b) { return a < b ? a : b; }
static size_t pd_max(size_t a, size_t b) { return a > b ? a : b; }

/* A piece of this many bytes goes into the segment with non-temporal
 * stores (stream.c). */
static bool pd_streamed(const struct pd_shm_comm *c, size_t bytes)
{
    return c->stream != 0 && bytes >= c->stream;
}

/* Copy n bytes into the segment, non-temporally when they are many. */
static void pd_copy_in(const struct pd_shm_comm *c, void *dst,
                       const void *src, size_t n)
{
    if (pd_streamed(c, n)) {
        pd_shm_stream(dst, src, n);
        pd_shm_stream_done();
    } else {
        memcpy(dst, src, n);
    }
}

/* Where rank r's input of one small step lies. */
static const unsigned char *pd_small_input(struct pd_shm_comm *c, uint32_t j,
                                           int r, size_t bytes)
{
    if (bytes <= PD_SHM_INLINE_BYTES)
        return pd_shm_line(c, r)->arrival[j & 1].data;
    return pd_shm_slot(c, j, r);
}

/* out[0..n) := in_0 op in_1 op ... op in_{size-1}, element offset from. */
static void pd_fold(struct pd_shm_comm *c, unsigned char *out,
                    const unsigned char *const *inputs, size_t from, size_t n,
                    size_t es, pd_reduce_fn fn, const void *ctx)
{
    size_t at = from * es;
    if (c->size == 1) {
        memcpy(out, inputs[0] + at, n * es);
        return;
    }
    fn(out, inputs[0] + at, inputs[1] + at, n, ctx);
    for (int r = 2; r < c->size; r++)
        fn(out, out, inputs[r] + at, n, ctx);
}

/* Ask for every line of the other ranks' inputs at once: the fold walks
 * them one after another, and each is a miss to another core's cache
 * (np 2, 2 KiB: 1.9-2.0 us a call, against 2.1-2.2 without). */
static void pd_prefetch_inputs(struct pd_shm_comm *c,
                               const unsigned char *const *inputs,
                               size_t from, size_t to)
{
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank)
            continue;
        for (size_t at = from; at < to; at += 64)
            __builtin_prefetch(inputs[r] + at);
    }
}

/* pd_fold of a small reduction into a block of its own, then unpacked by
 * mover (out of line: the plain path's frame stays as it was). */
static __attribute__((noinline)) void
pd_fold_to_mover(struct pd_shm_comm *c, const struct pd_shm_mover *mover,
                 const unsigned char *const *inputs, size_t from, size_t n,
                 size_t es, pd_reduce_fn fn, const void *ctx)
{
    unsigned char folded[PD_SHM_SMALL_BYTES] __attribute__((aligned(64)));
    pd_fold(c, folded, inputs, from, n, es, fn, ctx);
    mover->unpack(mover->ctx, 0, n * es, folded);
}

static int pd_reduce_small(struct pd_shm_comm *c, const unsigned char *in,
                           unsigned char *out, const struct pd_shm_mover *mover,
                           size_t count, size_t es, pd_reduce_fn fn,
                           const void *ctx, size_t want_from, size_t want_to,
                           struct pd_backend_error *err)
{
    uint32_t j;
    size_t bytes = count * es;
    int rc = pd_shm_begin_step(c, &j, "reduce", err);
    if (rc != PD_BACKEND_OK)
        return rc;
    void *mine = (void *)pd_small_input(c, j, c->rank, bytes);
    if (mover != NULL)
        mover->pack(mover->ctx, 0, bytes, mine);
    else
        memcpy(mine, in, bytes);
    pd_shm_arrive(c, j);
    if (want_to > want_from) {
        rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "reduce", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        const unsigned char *inputs[c->size];
        for (int r = 0; r < c->size; r++)
            inputs[r] = pd_small_input(c, j, r, bytes);
        if (bytes > PD_SHM_INLINE_BYTES)
            pd_prefetch_inputs(c, inputs, want_from * es, want_to * es);
        if (mover != NULL)
            pd_fold_to_mover(c, mover, inputs, want_from, want_to - want_from,
                             es, fn, ctx);
        else
            pd_fold(c, out, inputs, want_from, want_to - want_from, es, fn,
                    ctx);
    }
    pd_shm_post(c, PD_SHM_DONE, j);
    return PD_BACKEND_OK;
}

/* pd_fold into the segment through a small private block, whose lines
 * then go out with non-temporal stores (stream.c). */
static void pd_fold_streamed(struct pd_shm_comm *c, unsigned char *out,
                             const unsigned char *const *inputs, size_t from,
                             size_t n, size_t es, pd_reduce_fn fn,
                             const void *ctx)
{
    unsigned char block[4096] __attribute__((aligned(64)));
    size_t per = sizeof(block) / es;
    if (per == 0) {
        pd_fold(c, out, inputs, from, n, es, fn, ctx);
        return;
    }
    for (size_t at = 0; at < n; at += per) {
        size_t m = pd_min(per, n - at);
        pd_fold(c, block, inputs, from + at, m, es, fn, ctx);
        pd_shm_stream(out + at * es, block, m * es);
    }
    pd_shm_stream_done();
}

/* One chunk of a large reduction: elements [off, off + n) of the whole. */
static int pd_reduce_chunk(struct pd_shm_comm *c, const unsigned char *in,
                           unsigned char *out, const struct pd_shm_mover *mover,
                           size_t off, size_t n, size_t es, pd_reduce_fn fn,
                           const void *ctx, size_t want_from, size_t want_to,
                           struct pd_backend_error *err)
{
    uint32_t j;
    int rc = pd_shm_begin_step(c, &j, "reduce", err);
    if (rc != PD_BACKEND_OK)
        return rc;
    /* This rank's share of the chunk; it reads its own input for that
     * share directly, so only the rest needs to go through its slot. */
    size_t lo = n * (size_t)c->rank / (size_t)c->size;
    size_t hi = n * (size_t)(c->rank + 1) / (size_t)c->size;
    unsigned char *slot = pd_shm_slot(c, j, c->rank);
    const unsigned char *mine = in + off * es;
    bool stream = pd_streamed(c, n * es);
    if (mover != NULL) {
        /* Packed whole into the slot, and its share read from there. */
        mover->pack(mover->ctx, off * es, n * es, slot);
        mine = slot;
    } else if (stream) {
        pd_shm_stream(slot, mine, lo * es);
        pd_shm_stream(slot + hi * es, mine + hi * es, (n - hi) * es);
        pd_shm_stream_done();
    } else {
        memcpy(slot, mine, lo * es);
        memcpy(slot + hi * es, mine + hi * es, (n - hi) * es);
    }
    pd_shm_arrive(c, j);
    rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "reduce", err);
    if (rc != PD_BACKEND_OK)
        return rc;
    unsigned char *result = pd_shm_slot(c, j, c->size);
    if (hi > lo) {
        const unsigned char *inputs[c->size];
        for (int r = 0; r < c->size; r++)
            inputs[r] = r == c->rank ? mine : pd_shm_slot(c, j, r);
        if (stream)
            pd_fold_streamed(c, result + lo * es, inputs, lo, hi - lo, es,
                             fn, ctx);
        else
            pd_fold(c, result + lo * es, inputs, lo, hi - lo, es, fn, ctx);
    }
    pd_shm_post(c, PD_SHM_REDUCED, j);
    size_t from = pd_max(want_from, off), to = pd_min(want_to, off + n);
    if (to > from) {
        rc = pd_shm_wait(c, PD_SHM_REDUCED, j, -1, "reduce", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        if (mover != NULL)
            mover->unpack(mover->ctx, (from - want_from) * es, (to - from) * es,
                          result + (from - off) * es);
        else
            memcpy(out + (from - want_from) * es, result + (from - off) * es,
                   (to - from) * es);
    }
    pd_shm_post(c, PD_SHM_DONE, j);
    return PD_BACKEND_OK;
}

int pd_shm_reduce(struct pd_shm_comm *c, const void *in, void *out,
                  const struct pd_shm_mover *mover, size_t count, size_t es,
                  pd_reduce_fn fn, const void *ctx, size_t want_from,
                  size_t want_to, struct pd_backend_error *err)
{
    const unsigned char *src = in;
    if (count * es <= PD_SHM_SMALL_BYTES && count * es <= c->chunk)
        return pd_reduce_small(c, src, out, mover, count, es, fn, ctx,
                               want_from, want_to, err);
    size_t per = c->chunk / es;
    if (per == 0) {
        snprintf(err->msg, sizeof(err->msg),
                 "an element of %zu bytes does not fit a %zu-byte chunk", es,
                 c->chunk);
        return PD_BACKEND_ERR_UNSUPPORTED;
    }
    for (size_t off = 0; off < count; off += per) {
        int rc = pd_reduce_chunk(c, src, out, mover, off,
                                 pd_min(per, count - off), es, fn, ctx,
                                 want_from, want_to, err);
        if (rc != PD_BACKEND_OK)
            return rc;
    }
    return PD_BACKEND_OK;
}

int pd_shm_bcast(struct pd_shm_comm *c, void *buf,
                 const struct pd_shm_mover *mover, size_t bytes, int root,
                 bool keep, struct pd_backend_error *err)
{
    /* Only the root writes: a step can use a whole buffer (every slot and
     * the result area are contiguous), or the root's line when tiny. */
    size_t area = bytes <= PD_SHM_INLINE_BYTES ? PD_SHM_INLINE_BYTES
                                               : (size_t)(c->size + 1) * c->chunk;
    /* Pipelined: the readers copy step j out while the root copies step
     * j + 1 in, so they end about one step after the root. Steps of an
     * eighth of the message (at least PD_SHM_BCAST_STEP) keep that lag
     * short without paying a signal per few bytes (1 MiB at np 2: 40-47
     * us, against 57 us in steps of a whole buffer); below 64 KiB a step
     * costs more than it overlaps (256 KiB: 11.0-12.7 us in steps of 64
     * KiB, 13.0-14.2 in eighths of 32 KiB). Not when the host is
     * oversubscribed: there every step waits for ranks to be scheduled
     * (np 4 on 2 cores, 128 KiB: 45 us in eighths, 13 us whole). */
    if (bytes > PD_SHM_INLINE_BYTES && !c->oversubscribed)
        area = pd_min(area, pd_max(PD_SHM_BCAST_STEP,
                                   (bytes / PD_SHM_BCAST_SPLIT + 63) & ~(size_t)63));
    unsigned char *p = buf;
    for (size_t off = 0; off < bytes; off += area) {
        size_t n = pd_min(area, bytes - off);
        uint32_t j;
        int rc = pd_shm_begin_step(c, &j, "broadcast", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        unsigned char *shared = bytes <= PD_SHM_INLINE_BYTES
                                    ? pd_shm_line(c, root)->arrival[j & 1].data
                                    : pd_shm_slot(c, j, 0);
        /* At the first step every rank arrives and waits for all the
         * others, comparing calls: ranks that disagree on the root (each
         * a root of its own, readers of two roots) all fail at once
         * instead of returning different buffers -- a reader that waited
         * for its root alone could return before another root's readers
         * arrived. */
        if (c->rank == root) {
            if (mover != NULL)
                mover->pack(mover->ctx, off, n, shared);
            else
                pd_copy_in(c, shared, p + off, n);
            pd_shm_arrive(c, j);
            if (off == 0 &&
                (rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "broadcast",
                                  err)) != PD_BACKEND_OK)
                return rc;
        } else {
            if (off == 0) {
                pd_shm_arrive(c, j);
                rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "broadcast", err);
                if (rc != PD_BACKEND_OK)
                    return rc;
            }
            if (keep) {
                rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, root, "broadcast",
                                 err);
                if (rc != PD_BACKEND_OK)
                    return rc;
                if (mover != NULL)
                    mover->unpack(mover->ctx, off, n, shared);
                else
                    memcpy(p + off, shared, n);
            }
        }
        pd_shm_post(c, PD_SHM_DONE, j);
    }
    return PD_BACKEND_OK;
}

int pd_shm_allgatherv(struct pd_shm_comm *c, const void *in, void *out,
                      const struct pd_shm_mover *mover, const size_t *offs,
                      const size_t *bytes, struct pd_backend_error *err)
{
    unsigned char *o = out;
    size_t most = 0;
    for (int r = 0; r < c->size; r++)
        most = pd_max(most, bytes[r]);
    const unsigned char *mine = in != NULL ? in : o + offs[c->rank];
    bool tiny = most <= PD_SHM_INLINE_BYTES;
    for (size_t off = 0; off < most; off += c->chunk) {
        uint32_t j;
        int rc = pd_shm_begin_step(c, &j, "allgather", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        unsigned char *slot = tiny ? pd_shm_line(c, c->rank)->arrival[j & 1].data
                                   : pd_shm_slot(c, j, c->rank);
        size_t n = bytes[c->rank] > off
                       ? pd_min(c->chunk, bytes[c->rank] - off) : 0;
        /* This rank's own part, chunk by chunk: the chunk just read is
         * still in cache (1 MiB at np 2: 95 us, against 110-120 us with
         * one copy of the whole part before the loop). A streamed piece
         * goes to the output in the same pass, reading the input once
         * (np 2, 7-9 alternating runs: 256 KiB-16 MiB 0.84-0.93 of the
         * time with a second pass after arriving); a smaller one after
         * arriving, so the others copy from the slot meanwhile. */
        bool own_later = in != NULL && n > 0;
        if (mover != NULL) {
            /* In place, this rank's block is in the output already. */
            if (n > 0)
                mover->pack(mover->ctx, (in != NULL ? 0 : offs[c->rank]) + off,
                            n, slot);
        } else if (own_later && pd_streamed(c, n)) {
            pd_shm_stream_twice(slot, o + offs[c->rank] + off, mine + off, n);
            pd_shm_stream_done();
            own_later = false;
        } else if (n > 0) {
            pd_copy_in(c, slot, mine + off, n);
        }
        pd_shm_arrive(c, j);
        if (own_later && mover != NULL)
            mover->unpack(mover->ctx, offs[c->rank] + off, n, slot);
        else if (own_later)
            memcpy(o + offs[c->rank] + off, mine + off, n);
        rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "allgather", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        for (int r = 0; r < c->size; r++) {
            if (r == c->rank || bytes[r] <= off)
                continue;
            const unsigned char *from = tiny ? pd_shm_line(c, r)->arrival[j & 1].data
                                             : pd_shm_slot(c, j, r);
            size_t m = pd_min(c->chunk, bytes[r] - off);
            if (mover != NULL)
                mover->unpack(mover->ctx, offs[r] + off, m, from);
            else
                memcpy(o + offs[r] + off, from, m);
        }
        pd_shm_post(c, PD_SHM_DONE, j);
    }
    return PD_BACKEND_OK;
}

/*
 * Every rank's slot holds one piece per destination rank: in each step a
 * rank copies the next piece of each of its blocks into its slot, and
 * every rank takes its pieces from all slots. A rank's arrival line says
 * whether any of its blocks goes on after this step, so every rank ends
 * after the same step, though each knows only its own counts. In place
 * works as is: a step reads the rest of each block only after writing
 * the parts before it.
 */
int pd_shm_alltoallv(struct pd_shm_comm *c, const void *in,
                     const size_t *send_offs, const size_t *send_bytes,
                     void *out, const size_t *recv_offs,
                     const size_t *recv_bytes,
                     const struct pd_shm_mover *mover,
                     struct pd_backend_error *err)
{
    size_t piece = (c->chunk / (size_t)c->size) & ~(size_t)63;
    if (piece == 0) {
        snprintf(err->msg, sizeof(err->msg),
                 "a %zu-byte chunk has no 64-byte piece for each of %d ranks",
                 c->chunk, c->size);
        return PD_BACKEND_ERR_UNSUPPORTED;
    }
    const unsigned char *src = in;
    unsigned char *dst = out;
    size_t most = 0;
    for (int d = 0; d < c->size; d++)
        most = pd_max(most, send_bytes[d]);
    for (size_t off = 0;; off += piece) {
        uint32_t j;
        int rc = pd_shm_begin_step(c, &j, "alltoall", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        /* Plain copies: non-temporal ones made np 2 slower here (1 MiB
         * 118 -> 144 us). */
        unsigned char *slot = pd_shm_slot(c, j, c->rank);
        for (int d = 0; d < c->size; d++) {
            if (send_bytes[d] <= off)
                continue;
            size_t m = pd_min(piece, send_bytes[d] - off);
            if (mover != NULL)
                mover->pack(mover->ctx, send_offs[d] + off, m,
                            slot + (size_t)d * piece);
            else
                memcpy(slot + (size_t)d * piece, src + send_offs[d] + off, m);
        }
        struct pd_shm_arrival *mine = &pd_shm_line(c, c->rank)->arrival[j & 1];
        mine->data[0] = most > off + piece;
        pd_shm_arrive(c, j);
        rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "alltoall", err);
        if (rc != PD_BACKEND_OK)
            return rc;
        bool more = false;
        for (int r = 0; r < c->size; r++) {
            const unsigned char *from =
                pd_shm_slot(c, j, r) + (size_t)c->rank * piece;
            size_t m = recv_bytes[r] > off ? pd_min(piece, recv_bytes[r] - off)
                                           : 0;
            if (m > 0 && mover != NULL)
                mover->unpack(mover->ctx, recv_offs[r] + off, m, from);
            else if (m > 0)
                memcpy(dst + recv_offs[r] + off, from, m);
            more = more || pd_shm_line(c, r)->arrival[j & 1].data[0] != 0;
        }
        pd_shm_post(c, PD_SHM_DONE, j);
        if (!more)
            return PD_BACKEND_OK;
    }
}

/* Fan in to rank 0, fan out from it: rank 0 leaves first, so whatever
 * it does next (typically as a root) is under way while the others are
 * still being released -- on an oversubscribed host that saves them a
 * wait for rank 0 to be scheduled again (np 4 on 2 cores: a broadcast
 * after a barrier went from 6-8 us to 0.4 us). Rank 0's reduced counter
 * is the release. */
int pd_shm_barrier(struct pd_shm_comm *c, struct pd_backend_error *err)
{
    uint32_t j;
    int rc = pd_shm_begin_step(c, &j, "barrier", err);
    if (rc != PD_BACKEND_OK)
        return rc;
    pd_shm_arrive(c, j);
    if (c->rank == 0) {
        rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, -1, "barrier", err);
        /* Every rank arrived, even if in another call: release them, so
         * each finds the difference itself rather than waiting here. */
        if (rc == PD_BACKEND_OK || rc == PD_BACKEND_ERR_MISMATCH)
            pd_shm_post(c, PD_SHM_REDUCED, j);
    } else {
        /* Rank 0's arrival first: a rank 0 in another call is reported
         * at once, not when the wait for its release times out. */
        rc = pd_shm_wait(c, PD_SHM_ARRIVED, j, 0, "barrier", err);
        if (rc == PD_BACKEND_OK)
            rc = pd_shm_wait(c, PD_SHM_REDUCED, j, 0, "barrier", err);
        /* Rank 0 released step j after every rank arrived at it. */
        if (rc == PD_BACKEND_OK)
            c->all_arrived = j;
    }
    if (rc == PD_BACKEND_OK)
        pd_shm_post(c, PD_SHM_DONE, j);
    return rc;
}

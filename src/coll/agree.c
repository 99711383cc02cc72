/* Agreement on the call before a host-backend step (agree.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/agree.h"
#include "coll/coll.h"
#include "core/calls.h"
#include "core/runtime.h"

static int pd_agree_rank(const struct pd_agree_ctx *x, int r)
{
    return x->comm_rank_of != NULL ? x->comm_rank_of[r] : r;
}

static int pd_agree_settle_all(const struct pd_agree_ctx *x, uint32_t tag,
                               const char *what, struct pd_fail *fail);

/* Every rank's bytes at mine into all, stride apart, once the answers
 * this rank is owed are taken (they come first on the channel). */
static int pd_agree_trade(const struct pd_agree_ctx *x, uint32_t tag,
                          const void *mine, size_t bytes, void *all,
                          size_t stride, const char *what,
                          struct pd_fail *fail)
{
    int rc = pd_agree_settle_all(x, tag, what, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pd_backend_error e;
    e.msg[0] = '\0';
    e.peer = -1;
    int status = x->ops->agree(x->bc, mine, bytes, all, stride, tag, &e);
    if (status == PD_BACKEND_OK)
        return MPI_SUCCESS;
    return pd_coll_step_failed(x, tag, status, what, &e, fail);
}

/* Ranks of a stalled step time out within moments of each other. */
#define PD_ANSWER_WINDOW_MS 2000

int pd_coll_step_failed(const struct pd_agree_ctx *x, uint32_t tag,
                        int status, const char *what,
                        struct pd_backend_error *e, struct pd_fail *fail)
{
    char where[320];
    size_t n = strlen(e->msg);
    if (e->peer >= 0 && e->peer < x->size) {
        int r = pd_agree_rank(x, e->peer);
        pd_calls_where_rank(x->comm, r, where, sizeof(where));
        snprintf(e->msg + n, sizeof(e->msg) - n,
                 "; it was waiting for rank %d%s", r, where);
    } else if ((status == PD_BACKEND_ERR_TIMEOUT ||
                (status == PD_BACKEND_ERR_IO &&
                 pd_runtime_comm_rank_gone(x->comm) < 0)) &&
               x->size > 1) {
        /* A lost connection with every rank of this host alive is often
         * a peer's own timeout closing its pairs: find who stopped (a rank
         * of this host that is gone is named by pd_coll_backend_failed). */
        int window = pd_rt.config.timeout_ms < PD_ANSWER_WINDOW_MS
                         ? pd_rt.config.timeout_ms : PD_ANSWER_WINDOW_MS;
        int r = pd_calls_silent_rank(x->comm, tag, x->comm_rank_of, x->size,
                                     window);
        if (r >= 0) {
            pd_calls_where_rank(x->comm, r, where, sizeof(where));
            snprintf(e->msg + n, sizeof(e->msg) - n,
                     "; rank %d%s did not answer within %.1f s after this "
                     "failure (it is stopped, or far behind)", r, where,
                     window / 1000.0);
        }
    }
    return pd_coll_backend_failed(status, x->comm, what, e->msg, fail);
}

static int pd_agree_mismatch(const struct pd_agree_ctx *x, const char *what,
                             const char *detail, struct pd_fail *fail)
{
    return pd_coll_backend_failed(PD_BACKEND_ERR_MISMATCH, x->comm, what,
                                  detail, fail);
}

static bool pd_agree_same(const struct pd_agree_rec *a,
                          const struct pd_agree_rec *b)
{
    return pd_call_sig_same(&a->call, &b->call) && a->step == b->step &&
           a->root == b->root && a->bytes == b->bytes;
}

/* The mismatch of mine and theirs (rank other's record), both calls
 * named, then `after`. */
static int pd_agree_differs(const struct pd_agree_ctx *x,
                            const struct pd_agree_rec *mine,
                            const struct pd_agree_rec *theirs, int other,
                            const char *what, const char *after,
                            struct pd_fail *fail)
{
    char msg[480];
    int me = x->comm->rank, them = pd_agree_rank(x, other);
    if (!pd_call_sig_same(&theirs->call, &mine->call))
        pd_call_sig_mismatch(msg, sizeof(msg), me, &mine->call, them,
                             &theirs->call);
    else        /* one call, laid out differently: say what moves */
        snprintf(msg, sizeof(msg),
                 "ranks passed different layouts to one %s: rank %d's "
                 "%s step moves %llu bytes, rank %d's %s step %llu",
                 pd_coll_kind_name(mine->call.kind), me,
                 pd_coll_kind_name(mine->step),
                 (unsigned long long)mine->bytes, them,
                 pd_coll_kind_name(theirs->step),
                 (unsigned long long)theirs->bytes);
    size_t n = strlen(msg);
    snprintf(msg + n, sizeof(msg) - n, "%s", after);
    return pd_agree_mismatch(x, what, msg, fail);
}

/* After a trade: MPI_SUCCESS when every rank's record (at stride in all)
 * equals mine, else the mismatch, both calls named, in fail. */
static int pd_agree_compare(const struct pd_agree_ctx *x,
                            const struct pd_agree_rec *mine,
                            const unsigned char *all, size_t stride,
                            const char *what, struct pd_fail *fail)
{
    struct pd_agree_rec rec;
    for (int r = 0; r < x->size; r++) {
        memcpy(&rec, all + (size_t)r * stride, sizeof(rec));
        if (!pd_agree_same(&rec, mine))
            return pd_agree_differs(x, mine, &rec, r, what, "", fail);
    }
    return MPI_SUCCESS;
}

/* ---- one-way agreements (agree.h) ------------------------------------ */

/* What a broadcast's root is owed: its records of the last
 * PD_AGREE_OWED_MAX broadcasts it led, by number, per rank how many
 * answers it has taken from that rank, and how many are outstanding in
 * all (every agreement looks at this one count, not at every rank). */
struct pd_agree_owed {
    uint32_t led;
    size_t outstanding;
    struct pd_agree_rec rec[PD_AGREE_OWED_MAX];
    uint32_t taken[];
};

void pd_agree_owed_release(struct pd_agree_owed **owed,
                           const struct pd_backend_ops *ops,
                           struct pd_backend_comm *bc, int rank, int size)
{
    struct pd_agree_owed *o = *owed;
    if (o == NULL)
        return;
    bool failed = false;
    for (int r = 0; r < size && !failed; r++) {
        while (r != rank && o->taken[r] != o->led && !failed) {
            struct pd_agree_rec theirs;
            struct pd_backend_error e;
            e.msg[0] = '\0';
            e.peer = -1;
            failed = ops->agree_take(bc, r, &theirs, sizeof(theirs), &e) !=
                     PD_BACKEND_OK;
            o->taken[r]++;
        }
    }
    free(o);
    *owed = NULL;
}

/* Take every answer peer owes this rank, each checked against the
 * broadcast it answers. */
static int pd_agree_settle(const struct pd_agree_ctx *x, uint32_t tag,
                           int peer, const char *what, struct pd_fail *fail)
{
    struct pd_agree_owed *o = x->owed != NULL ? *x->owed : NULL;
    while (o != NULL && o->taken[peer] != o->led) {
        struct pd_agree_rec theirs;
        struct pd_backend_error e;
        e.msg[0] = '\0';
        e.peer = -1;
        int status = x->ops->agree_take(x->bc, peer, &theirs, sizeof(theirs),
                                        &e);
        if (status != PD_BACKEND_OK)
            return pd_coll_step_failed(x, tag, status, what, &e, fail);
        const struct pd_agree_rec *led =
            &o->rec[o->taken[peer] % PD_AGREE_OWED_MAX];
        o->taken[peer]++;
        o->outstanding--;
        if (!pd_agree_same(led, &theirs))
            return pd_agree_differs(x, led, &theirs, peer, what,
                                    "; this rank found it after its "
                                    "broadcast returned (a broadcast's "
                                    "root does not wait for the others)",
                                    fail);
    }
    return MPI_SUCCESS;
}

static int pd_agree_settle_all(const struct pd_agree_ctx *x, uint32_t tag,
                               const char *what, struct pd_fail *fail)
{
    if (x->owed == NULL || *x->owed == NULL || (*x->owed)->outstanding == 0)
        return MPI_SUCCESS;
    for (int r = 0; r < x->size; r++) {
        int rc = r == x->rank ? MPI_SUCCESS
                              : pd_agree_settle(x, tag, r, what, fail);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* The backend's agree_rooted, a failure as an MPI error class. */
static int pd_agree_rooted_call(const struct pd_agree_ctx *x, uint32_t tag,
                                int root, const void *mine, size_t bytes,
                                void *theirs, size_t cap, const char *what,
                                struct pd_fail *fail)
{
    struct pd_backend_error e;
    e.msg[0] = '\0';
    e.peer = -1;
    int status = x->ops->agree_rooted(x->bc, root, mine, bytes, theirs, cap,
                                      tag, &e);
    return status == PD_BACKEND_OK
               ? MPI_SUCCESS
               : pd_coll_step_failed(x, tag, status, what, &e, fail);
}

/* The root's side: msg (its record and data, len bytes) to every rank,
 * remembered until each has answered. */
static int pd_agree_lead(const struct pd_agree_ctx *x, uint32_t tag,
                         const struct pd_agree_rec *mine,
                         const unsigned char *msg, size_t len,
                         const char *what, struct pd_fail *fail)
{
    struct pd_agree_owed *o = *x->owed;
    if (o == NULL) {
        o = pd_coll_alloc(sizeof(*o) + (size_t)x->size * sizeof(uint32_t),
                          fail);
        if (o == NULL)
            return fail->errclass;
        memset(o, 0, sizeof(*o) + (size_t)x->size * sizeof(uint32_t));
        *x->owed = o;
    }
    /* A rank owes PD_AGREE_OWED_MAX answers only if that many are out. */
    for (int r = 0; o->outstanding >= PD_AGREE_OWED_MAX && r < x->size; r++) {
        if (r == x->rank || o->led - o->taken[r] < PD_AGREE_OWED_MAX)
            continue;
        int rc = pd_agree_settle(x, tag, r, what, fail);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    int rc = pd_agree_rooted_call(x, tag, x->rank, msg, len, NULL, 0, what,
                                  fail);
    if (rc != MPI_SUCCESS)
        return rc;
    o->rec[o->led % PD_AGREE_OWED_MAX] = *mine;
    o->led++;
    o->outstanding += (size_t)x->size - 1;
    return MPI_SUCCESS;
}

/* Another rank's side: its record to the root, the root's (len bytes)
 * into msg, compared with its own. */
static int pd_agree_follow(const struct pd_agree_ctx *x, uint32_t tag,
                           const struct pd_agree_rec *mine,
                           unsigned char *msg, size_t len, const char *what,
                           struct pd_fail *fail)
{
    int root = mine->root;
    int rc = pd_agree_settle(x, tag, root, what, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = pd_agree_rooted_call(x, tag, root, mine, sizeof(*mine), msg, len,
                              what, fail);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pd_agree_rec theirs;
    memcpy(&theirs, msg, sizeof(theirs));
    return pd_agree_same(&theirs, mine)
               ? MPI_SUCCESS
               : pd_agree_differs(x, mine, &theirs, root, what, "", fail);
}

int pd_coll_agree_rooted(const struct pd_agree_ctx *x, uint32_t tag,
                         const struct pd_agree_rec *mine, void *buf,
                         size_t bytes, const char *what,
                         struct pd_fail *fail)
{
    int root = mine->root;
    if (x->ops->agree_rooted == NULL || x->ops->agree_take == NULL ||
        x->owed == NULL || x->size < 2) {
        unsigned char *all;
        size_t stride;
        int rc = pd_coll_agree_carrying(x, tag, mine,
                                        x->rank == root ? buf : NULL, bytes,
                                        &all, &stride, what, fail);
        if (rc == MPI_SUCCESS && x->rank != root)
            memcpy(buf, all + (size_t)root * stride + sizeof(*mine), bytes);
        free(all);
        return rc;
    }
    if (!pd_agree_can_carry(x->size, bytes)) {
        pd_fail_set(fail, MPI_ERR_INTERN, "an agreement cannot carry %zu "
                    "bytes", bytes);
        return fail->errclass;
    }
    size_t len = sizeof(*mine) + bytes;
    unsigned char *msg = pd_coll_alloc(len, fail);
    if (msg == NULL)
        return fail->errclass;
    int rc;
    if (x->rank == root) {
        memcpy(msg, mine, sizeof(*mine));
        memcpy(msg + sizeof(*mine), buf, bytes);
        rc = pd_agree_lead(x, tag, mine, msg, len, what, fail);
    } else {
        rc = pd_agree_follow(x, tag, mine, msg, len, what, fail);
        if (rc == MPI_SUCCESS)
            memcpy(buf, msg + sizeof(*mine), bytes);
    }
    free(msg);
    return rc;
}

int pd_coll_agree(const struct pd_agree_ctx *x, uint32_t tag,
                  const struct pd_agree_rec *mine, const char *what,
                  struct pd_fail *fail)
{
    if (x->ops->agree == NULL || x->size < 2)
        return MPI_SUCCESS;
    unsigned char *all;
    size_t stride;
    int rc = pd_coll_agree_carrying(x, tag, mine, NULL, 0, &all, &stride,
                                    what, fail);
    free(all);
    return rc;
}

int pd_coll_agree_carrying(const struct pd_agree_ctx *x, uint32_t tag,
                           const struct pd_agree_rec *mine, const void *data,
                           size_t bytes, unsigned char **out, size_t *stride,
                           const char *what, struct pd_fail *fail)
{
    *out = NULL;
    *stride = sizeof(*mine) + bytes;
    if (bytes > 0 && !pd_agree_can_carry(x->size, bytes)) {
        pd_fail_set(fail, MPI_ERR_INTERN, "an agreement cannot carry %zu "
                    "bytes", bytes);
        return fail->errclass;
    }
    unsigned char *all =
        pd_coll_alloc((size_t)(x->size + 1) * *stride, fail);
    if (all == NULL)
        return fail->errclass;
    unsigned char *own = all + (size_t)x->size * *stride;
    memcpy(own, mine, sizeof(*mine));
    size_t carried = data != NULL ? bytes : 0;
    if (carried > 0)
        memcpy(own + sizeof(*mine), data, carried);
    int rc = pd_agree_trade(x, tag, own, sizeof(*mine) + carried, all,
                            *stride, what, fail);
    if (rc == MPI_SUCCESS)
        rc = pd_agree_compare(x, mine, all, *stride, what, fail);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    *out = all;
    return MPI_SUCCESS;
}

int pd_coll_agree_blocks(const struct pd_agree_ctx *x, uint32_t tag,
                         const struct pd_p2p_op *msgs, size_t n,
                         const char *what, struct pd_fail *fail)
{
    if (x->ops->agree == NULL || x->size < 2)
        return MPI_SUCCESS;
    /* Row r: rank r's bytes to each peer, then from each peer. */
    size_t size = (size_t)x->size, row = 2 * size;
    uint64_t *all = pd_coll_alloc((size + 1) * row * sizeof(uint64_t), fail);
    if (all == NULL)
        return fail->errclass;
    uint64_t *mine = all + size * row;
    memset(mine, 0, row * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++)
        mine[(msgs[i].is_send ? 0 : size) + (size_t)msgs[i].peer] +=
            msgs[i].bytes;
    int rc = pd_agree_trade(x, tag, mine, row * sizeof(uint64_t), all,
                            row * sizeof(uint64_t), what, fail);
    for (size_t s = 0; rc == MPI_SUCCESS && s < size; s++) {
        for (size_t d = 0; d < size; d++) {
            uint64_t sent = all[s * row + d], taken = all[d * row + size + s];
            if (s == d || sent == taken)
                continue;
            char msg[300];
            snprintf(msg, sizeof(msg),
                     "ranks passed counts that do not match: rank %d sends "
                     "%llu bytes to rank %d, which expects %llu",
                     pd_agree_rank(x, (int)s), (unsigned long long)sent,
                     pd_agree_rank(x, (int)d), (unsigned long long)taken);
            rc = pd_agree_mismatch(x, what, msg, fail);
            break;
        }
    }
    free(all);
    return rc;
}

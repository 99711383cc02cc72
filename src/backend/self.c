/*
 * The size-1 backend: every collective on one rank is a copy (or
 * nothing, in place). Used for MPI_COMM_SELF and singleton worlds, so a
 * process started without a launcher needs no network at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

struct pd_backend_comm {
    int unused;
};

static int pd_self_comm_create(const struct pd_backend_comm_init *init,
                               struct pd_backend_comm **out,
                               struct pd_backend_error *err)
{
    (void)init;
    *out = calloc(1, sizeof(**out));
    if (*out == NULL) {
        strcpy(err->msg, "out of memory creating the self backend");
        return PD_BACKEND_ERR_NOMEM;
    }
    return PD_BACKEND_OK;
}

static void pd_self_comm_destroy(struct pd_backend_comm *comm)
{
    free(comm);
}

static int pd_self_copy(struct pd_backend_comm *comm,
                        const struct pd_coll_args *args,
                        struct pd_backend_error *err)
{
    (void)comm;
    (void)err;
    if (args->sendbuf != NULL && args->sendbuf != args->recvbuf &&
        args->count > 0)
        memmove(args->recvbuf, args->sendbuf, args->count * args->elem_size);
    return PD_BACKEND_OK;
}

static int pd_self_bcast(struct pd_backend_comm *comm,
                         const struct pd_coll_args *args,
                         struct pd_backend_error *err)
{
    (void)comm;
    (void)args;
    (void)err;
    return PD_BACKEND_OK;
}

static int pd_self_barrier(struct pd_backend_comm *comm, uint32_t tag,
                           struct pd_backend_error *err)
{
    (void)comm;
    (void)tag;
    (void)err;
    return PD_BACKEND_OK;
}

/* On one rank every message is to itself: pair each send with the next
 * receive, in op order. */
static int pd_self_exchange(struct pd_backend_comm *comm,
                            const struct pd_p2p_op *ops, size_t n,
                            uint32_t tag, struct pd_backend_error *err)
{
    (void)comm;
    (void)tag;
    size_t next_recv = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].is_send)
            continue;
        while (next_recv < n && ops[next_recv].is_send)
            next_recv++;
        if (next_recv == n || ops[next_recv].bytes != ops[i].bytes) {
            snprintf(err->msg, sizeof(err->msg),
                     "self exchange: a send of %zu bytes has no matching receive",
                     ops[i].bytes);
            return PD_BACKEND_ERR_INTERNAL;
        }
        if (ops[i].bytes > 0 && ops[next_recv].buf != ops[i].buf)
            memmove(ops[next_recv].buf, ops[i].buf, ops[i].bytes);
        next_recv++;
    }
    return PD_BACKEND_OK;
}

static void pd_self_describe(struct pd_backend_comm *comm, char *buf,
                             size_t len)
{
    (void)comm;
    strncpy(buf, "self (single process, no transport)", len - 1);
    buf[len - 1] = '\0';
}

const struct pd_backend_ops pd_backend_self = {
    .name = "self",
    .comm_create = pd_self_comm_create,
    .comm_destroy = pd_self_comm_destroy,
    .allreduce = pd_self_copy,
    .reduce = pd_self_copy,
    .bcast = pd_self_bcast,
    .allgather = pd_self_copy,
    .barrier = pd_self_barrier,
    .exchange = pd_self_exchange,
    .describe = pd_self_describe,
};

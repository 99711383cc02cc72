/* Communicator activation and the collective calls on a communicator. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/log.h"
#include "core/runtime.h"
#include "route/route.h"

bool pd_comm_is_usable(const struct ompi_communicator_t *comm)
{
    return comm != NULL && comm->magic == PD_MAGIC_COMM &&
           comm->kind != PD_COMM_NULL && comm->state != NULL;
}

/* Data sockets bind where the rendezvous is reached from, unless the user
 * named an interface: on one host that is loopback, across hosts it is
 * the interface that routes to the master -- never loopback by accident. */
static void pd_choose_bind(const char **iface, const char **host,
                           char *hostbuf, size_t hostlen)
{
    *iface = NULL;
    *host = "127.0.0.1";
    if (pd_rt.config.socket_ifname[0] != '\0') {
        *iface = pd_rt.config.socket_ifname;
        return;
    }
    if (pd_rt.store != NULL && pd_store_local_host(pd_rt.store, hostbuf,
                                                   hostlen) == 0)
        *host = hostbuf;
}

int pd_comm_activate(struct ompi_communicator_t *comm, int rank, int size,
                     unsigned id, struct pd_fail *fail)
{
    struct pd_comm_state *st = calloc(1, sizeof(*st));
    if (st == NULL) {
        fail->errclass = MPI_ERR_NO_MEM;
        snprintf(fail->msg, sizeof(fail->msg), "out of memory");
        return -1;
    }
    pthread_mutex_init(&st->lock, NULL);
    st->id = id;
    char err[512];
    if (pd_route_host_backend(size, &st->host_ops, err, sizeof(err)) != 0) {
        fail->errclass = MPI_ERR_OTHER;
        snprintf(fail->msg, sizeof(fail->msg), "%s", err);
        free(st);
        return -1;
    }

    char prefix[64], hostbuf[256];
    snprintf(prefix, sizeof(prefix), "comm%u", id);
    struct pd_backend_comm_init init = {
        .rank = rank,
        .size = size,
        .store = pd_rt.store,
        .store_prefix = prefix,
        .timeout_ms = pd_rt.config.timeout_ms,
    };
    pd_choose_bind(&init.bind_iface, &init.bind_host, hostbuf,
                   sizeof(hostbuf));
    struct pd_backend_error berr = { .msg = "" };
    if (st->host_ops->comm_create(&init, &st->host_comm, &berr) != 0) {
        fail->errclass = MPI_ERR_OTHER;
        snprintf(fail->msg, sizeof(fail->msg),
                 "cannot connect %s (rank %d of %d) with %s: %s", comm->name,
                 rank, size, st->host_ops->name, berr.msg);
        free(st);
        return -1;
    }
    comm->rank = rank;
    comm->size = size;
    comm->errhandler = (struct ompi_errhandler_t *)MPI_ERRORS_ARE_FATAL;
    comm->state = st;
    return 0;
}

void pd_comm_deactivate(struct ompi_communicator_t *comm)
{
    struct pd_comm_state *st = comm->state;
    if (st == NULL)
        return;
    comm->state = NULL;
    st->host_ops->comm_destroy(st->host_comm);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* Translate a backend failure into an MPI error class and message. */
static int pd_backend_failed(int status, const char *call,
                             const struct ompi_communicator_t *comm,
                             const struct pd_backend_error *berr,
                             struct pd_fail *fail)
{
    if (status == PD_BACKEND_ERR_IO)
        pd_runtime_note_peer_lost();
    switch (status) {
    case PD_BACKEND_ERR_NOMEM: fail->errclass = MPI_ERR_NO_MEM; break;
    case PD_BACKEND_ERR_UNSUPPORTED: fail->errclass = MPI_ERR_UNSUPPORTED_OPERATION; break;
    case PD_BACKEND_ERR_INTERNAL: fail->errclass = MPI_ERR_INTERN; break;
    default: fail->errclass = MPI_ERR_OTHER; break;
    }
    const char *why = status == PD_BACKEND_ERR_TIMEOUT
                          ? " (timed out; PDMPI_TIMEOUT bounds every wait)"
                          : "";
    snprintf(fail->msg, sizeof(fail->msg), "%s failed on %s%s: %s", call,
             comm->name, why, berr->msg);
    return fail->errclass;
}

enum pd_coll_kind {
    PD_COLL_ALLREDUCE,
    PD_COLL_REDUCE,
    PD_COLL_BCAST,
    PD_COLL_ALLGATHER,
    PD_COLL_BARRIER,
};

static const char *const pd_coll_call[] = {
    [PD_COLL_ALLREDUCE] = "MPI_Allreduce",
    [PD_COLL_REDUCE] = "MPI_Reduce",
    [PD_COLL_BCAST] = "MPI_Bcast",
    [PD_COLL_ALLGATHER] = "MPI_Allgather",
    [PD_COLL_BARRIER] = "MPI_Barrier",
};

/* The backend's entry for kind, called; PD_BACKEND_ERR_UNSUPPORTED with a
 * message if the backend leaves it NULL. */
static int pd_dispatch(const struct pd_backend_ops *ops,
                       struct pd_backend_comm *bc, enum pd_coll_kind kind,
                       const struct pd_coll_args *args,
                       struct pd_backend_error *err)
{
    int (*op)(struct pd_backend_comm *, const struct pd_coll_args *,
              struct pd_backend_error *) = NULL;
    switch (kind) {
    case PD_COLL_ALLREDUCE: op = ops->allreduce; break;
    case PD_COLL_REDUCE: op = ops->reduce; break;
    case PD_COLL_BCAST: op = ops->bcast; break;
    case PD_COLL_ALLGATHER: op = ops->allgather; break;
    case PD_COLL_BARRIER:
        if (ops->barrier != NULL)
            return ops->barrier(bc, args->tag, err);
        break;
    }
    if (op != NULL)
        return op(bc, args, err);
    snprintf(err->msg, sizeof(err->msg), "the %s backend has no %s",
             ops->name, pd_coll_call[kind]);
    return PD_BACKEND_ERR_UNSUPPORTED;
}

/* Run one collective under the communicator's lock with the next tag, so
 * that every rank issues the calls on a communicator in one order. */
static int pd_run(struct ompi_communicator_t *comm, enum pd_coll_kind kind,
                  struct pd_coll_args *args, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    struct pd_backend_error berr = { .msg = "" };
    pthread_mutex_lock(&st->lock);
    args->tag = st->next_tag++;
    if (pd_log_enabled(PD_LOG_TRACE))
        pd_log(PD_LOG_TRACE, "%s on %s: %zu x %zu B, root %d, tag %u, via %s",
               pd_coll_call[kind], comm->name, args->count, args->elem_size,
               args->root, args->tag, st->host_ops->name);
    int status = pd_dispatch(st->host_ops, st->host_comm, kind, args, &berr);
    pthread_mutex_unlock(&st->lock);
    if (status != PD_BACKEND_OK)
        return pd_backend_failed(status, pd_coll_call[kind], comm, &berr, fail);
    return MPI_SUCCESS;
}

int pd_coll_allreduce(struct ompi_communicator_t *comm, const void *sendbuf,
                      void *recvbuf, size_t count,
                      const struct ompi_datatype_t *type, pd_reduce_fn fn,
                      struct pd_fail *fail)
{
    struct pd_coll_args args = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
        .elem_size = pd_type_extent(type), .reduce = fn, .root = -1,
    };
    return pd_run(comm, PD_COLL_ALLREDUCE, &args, fail);
}

int pd_coll_reduce(struct ompi_communicator_t *comm, const void *sendbuf,
                   void *recvbuf, size_t count,
                   const struct ompi_datatype_t *type, pd_reduce_fn fn,
                   int root, struct pd_fail *fail)
{
    struct pd_coll_args args = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
        .elem_size = pd_type_extent(type), .reduce = fn, .root = root,
    };
    return pd_run(comm, PD_COLL_REDUCE, &args, fail);
}

int pd_coll_bcast(struct ompi_communicator_t *comm, void *buffer, size_t count,
                  const struct ompi_datatype_t *type, int root,
                  struct pd_fail *fail)
{
    struct pd_coll_args args = {
        .sendbuf = NULL, .recvbuf = buffer, .count = count,
        .elem_size = pd_type_extent(type), .root = root,
    };
    return pd_run(comm, PD_COLL_BCAST, &args, fail);
}

int pd_coll_allgather(struct ompi_communicator_t *comm, const void *sendbuf,
                      void *recvbuf, size_t bytes_per_rank,
                      struct pd_fail *fail)
{
    struct pd_coll_args args = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = bytes_per_rank,
        .elem_size = 1, .root = -1,
    };
    return pd_run(comm, PD_COLL_ALLGATHER, &args, fail);
}

int pd_coll_barrier(struct ompi_communicator_t *comm, struct pd_fail *fail)
{
    struct pd_coll_args args = { .root = -1 };
    return pd_run(comm, PD_COLL_BARRIER, &args, fail);
}

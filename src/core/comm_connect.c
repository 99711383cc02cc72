/* A communicator's host backend context, connected through the store on
 * first use (MPI_COMM_WORLD's at MPI_Init). */
#include <stdio.h>

#include "base/log.h"
#include "core/comm.h"
#include "core/runtime.h"
#include "route/route.h"

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

int pd_comm_store_client(struct pd_store_client **store, const char *what,
                         struct pd_fail *fail)
{
    char err[512];
    *store = NULL;
    if (pd_rt.store == NULL)
        return MPI_SUCCESS;
    if (pd_store_reconnect(pd_rt.world.store_addr, pd_rt.world.job_key,
                           pd_rt.world.rank, pd_rt.config.timeout_ms, store,
                           err, sizeof(err)) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "cannot reach the rendezvous store "
                    "to connect %s: %s", what, err);
        return fail->errclass;
    }
    return MPI_SUCCESS;
}

int pd_comm_connect_host(const char *label, int rank, int size,
                         const char *prefix,
                         const struct pd_backend_ops **ops,
                         struct pd_backend_comm **bc, struct pd_fail *fail)
{
    char err[512], hostbuf[256];
    *bc = NULL;
    if (pd_route_host_backend(size, ops, err, sizeof(err)) != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER, "%s", err);
        return fail->errclass;
    }
    /* Each connection gets a store client of its own: rendezvous waits
     * hold a client, and communicators connecting at once from several
     * threads must not wait behind each other's waits. */
    struct pd_store_client *store = NULL;
    if (size > 1 && pd_comm_store_client(&store, prefix, fail) != MPI_SUCCESS)
        return fail->errclass;
    struct pd_backend_comm_init init = {
        .rank = rank,
        .size = size,
        .store = store,
        .store_prefix = prefix,
        .timeout_ms = pd_rt.config.timeout_ms,
        .p2p_sockets = pd_rt.config.p2p_sockets,
    };
    pd_choose_bind(&init.bind_iface, &init.bind_host, hostbuf,
                   sizeof(hostbuf));
    struct pd_backend_error berr = { .msg = "" };
    int rc = (*ops)->comm_create(&init, bc, &berr);
    if (store != NULL)
        pd_store_close(store);
    if (rc != 0) {
        pd_fail_set(fail, MPI_ERR_OTHER,
                    "cannot connect %s (rank %d of %d) with %s: %s", label,
                    rank, size, (*ops)->name, berr.msg);
        *bc = NULL;
        return fail->errclass;
    }
    pd_log(PD_LOG_TRACE, "connected %s (%d ranks) via %s", label, size,
           (*ops)->name);
    return MPI_SUCCESS;
}

/* Connect comm's backend context; called with the state's lock held. */
int pd_comm_connect(struct ompi_communicator_t *comm, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    return pd_comm_connect_host(comm->name[0] ? comm->name : st->id,
                                comm->rank, comm->size, st->id, &st->host_ops,
                                &st->host_comm, fail) == MPI_SUCCESS ? 0 : -1;
}

int pd_comm_backend(struct ompi_communicator_t *comm,
                    const struct pd_backend_ops **ops,
                    struct pd_backend_comm **bc, struct pd_fail *fail)
{
    struct pd_comm_state *st = comm->state;
    pthread_mutex_lock(&st->lock);
    int rc = st->host_comm != NULL ? 0 : pd_comm_connect(comm, fail);
    *ops = st->host_ops;
    *bc = st->host_comm;
    pthread_mutex_unlock(&st->lock);
    return rc == 0 ? MPI_SUCCESS : fail->errclass;
}


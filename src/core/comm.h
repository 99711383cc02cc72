/* Communicator runtime state and the collective entry points of core. */
#ifndef PD_CORE_COMM_H
#define PD_CORE_COMM_H

#include <pthread.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/objects.h"

struct pd_comm_state {
    /* Serializes calls on this communicator: collectives must run in call
     * order on every rank, and gloo tags must not be reused while a call
     * with the same tag is in flight. */
    pthread_mutex_t lock;
    uint32_t next_tag;
    unsigned id;                            /* store prefix component */
    const struct pd_backend_ops *host_ops;  /* host-memory backend */
    struct pd_backend_comm *host_comm;
};

/* A failure inside core: the MPI error class and a one-line reason. */
struct pd_fail {
    int errclass;
    char msg[640];
};

int pd_comm_activate(struct ompi_communicator_t *comm, int rank, int size,
                     unsigned id, struct pd_fail *fail);
void pd_comm_deactivate(struct ompi_communicator_t *comm);

/* True for a communicator handle usable in a call (not MPI_COMM_NULL). */
bool pd_comm_is_usable(const struct ompi_communicator_t *comm);

/* The collectives. sendbuf NULL means in place. Counts are elements. */
int pd_coll_allreduce(struct ompi_communicator_t *comm, const void *sendbuf,
                      void *recvbuf, size_t count,
                      const struct ompi_datatype_t *type, pd_reduce_fn fn,
                      struct pd_fail *fail);
int pd_coll_reduce(struct ompi_communicator_t *comm, const void *sendbuf,
                   void *recvbuf, size_t count,
                   const struct ompi_datatype_t *type, pd_reduce_fn fn,
                   int root, struct pd_fail *fail);
int pd_coll_bcast(struct ompi_communicator_t *comm, void *buffer, size_t count,
                  const struct ompi_datatype_t *type, int root,
                  struct pd_fail *fail);
int pd_coll_allgather(struct ompi_communicator_t *comm, const void *sendbuf,
                      void *recvbuf, size_t bytes_per_rank,
                      struct pd_fail *fail);
int pd_coll_barrier(struct ompi_communicator_t *comm, struct pd_fail *fail);

#endif

/*
 * The collectives as core runs them: a call is given its tag by the caller
 * (pd_comm_reserve_tags, in call order), then served by the backend's own
 * algorithm where one fits, or composed here from simpler backend steps.
 * sendbuf NULL means in place. Displacements and counts are in elements
 * of the extent given alongside.
 */
#ifndef PD_CORE_COLL_H
#define PD_CORE_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/comm.h"

/* Where rank i's block lies in a buffer: counts[i] elements of extent
 * bytes at displs[i] elements (displs NULL: packed in rank order). */
struct pd_layout {
    const int *counts;
    const int *displs;
    size_t extent;
};

/* Byte offset and length of rank i's block in layout l. */
void pd_layout_block(const struct pd_layout *l, int i, size_t *offset,
                     size_t *bytes);

/* A backend's failure status (PD_BACKEND_ERR_*) and message as an MPI
 * error class in fail, naming the step and the communicator. */
int pd_coll_backend_failed(int status, struct ompi_communicator_t *comm,
                           const char *what, const char *detail,
                           struct pd_fail *fail);

int pd_coll_allreduce(struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, void *recvbuf, size_t count,
                      MPI_Datatype type, MPI_Op op, struct pd_fail *fail);
int pd_coll_reduce(struct ompi_communicator_t *comm, uint32_t tag,
                   const void *sendbuf, void *recvbuf, size_t count,
                   MPI_Datatype type, MPI_Op op, int root,
                   struct pd_fail *fail);
int pd_coll_bcast(struct ompi_communicator_t *comm, uint32_t tag,
                  void *buffer, size_t bytes, int root, struct pd_fail *fail);
int pd_coll_allgather(struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, void *recvbuf, size_t bytes,
                      struct pd_fail *fail);
int pd_coll_allgatherv(struct ompi_communicator_t *comm, uint32_t tag,
                       const void *sendbuf, void *recvbuf,
                       const struct pd_layout *recv, struct pd_fail *fail);
int pd_coll_gatherv(struct ompi_communicator_t *comm, uint32_t tag,
                    const void *sendbuf, size_t send_bytes, void *recvbuf,
                    const struct pd_layout *recv, int root,
                    struct pd_fail *fail);
int pd_coll_scatterv(struct ompi_communicator_t *comm, uint32_t tag,
                     const void *sendbuf, const struct pd_layout *send,
                     void *recvbuf, size_t recv_bytes, int root,
                     struct pd_fail *fail);
int pd_coll_alltoallv(struct ompi_communicator_t *comm, uint32_t tag,
                      const void *sendbuf, const struct pd_layout *send,
                      void *recvbuf, const struct pd_layout *recv,
                      struct pd_fail *fail);
/* Reduce count_total elements, then keep rank r's block of counts[r]
 * elements starting at the sum of the earlier counts. */
int pd_coll_reduce_scatter(struct ompi_communicator_t *comm, uint32_t tag,
                           const void *sendbuf, void *recvbuf,
                           const int *counts, MPI_Datatype type, MPI_Op op,
                           struct pd_fail *fail);
int pd_coll_scan(struct ompi_communicator_t *comm, uint32_t tag,
                 const void *sendbuf, void *recvbuf, size_t count,
                 MPI_Datatype type, MPI_Op op, bool exclusive,
                 struct pd_fail *fail);
int pd_coll_barrier(struct ompi_communicator_t *comm, uint32_t tag,
                    struct pd_fail *fail);

/*
 * How the composed collectives move data: an exchange of messages and a
 * local copy. The host path uses the host backend and memmove; the device
 * path (core/devcoll.c) the device CCL's grouped send/receive and device
 * copies, so one composition serves both memories.
 */
struct pd_path {
    int (*exchange)(struct ompi_communicator_t *comm, uint32_t tag,
                    const struct pd_p2p_op *msgs, size_t n,
                    struct pd_fail *fail);
    int (*copy)(void *dst, const void *src, size_t bytes,
                struct pd_fail *fail);
};

extern const struct pd_path pd_host_path;

/* The v-collectives over a given path (the plain forms pick the path). */
int pd_coll_allgatherv_via(const struct pd_path *path,
                           struct ompi_communicator_t *comm, uint32_t tag,
                           const void *sendbuf, void *recvbuf,
                           const struct pd_layout *recv, struct pd_fail *fail);
int pd_coll_gatherv_via(const struct pd_path *path,
                        struct ompi_communicator_t *comm, uint32_t tag,
                        const void *sendbuf, size_t send_bytes, void *recvbuf,
                        const struct pd_layout *recv, int root,
                        struct pd_fail *fail);
int pd_coll_scatterv_via(const struct pd_path *path,
                         struct ompi_communicator_t *comm, uint32_t tag,
                         const void *sendbuf, const struct pd_layout *send,
                         void *recvbuf, size_t recv_bytes, int root,
                         struct pd_fail *fail);
int pd_coll_alltoallv_via(const struct pd_path *path,
                          struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, const struct pd_layout *send,
                          void *recvbuf, const struct pd_layout *recv,
                          struct pd_fail *fail);

#endif

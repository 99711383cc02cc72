/*
 * Collectives on device memory. Each function returns false when every
 * buffer of the call is host memory (the caller goes on with the host
 * path), else true with the call done -- by the device CCL, or staged
 * through host memory, or refused under PDMPI_DEVICE_FALLBACK=error --
 * and its MPI error class in *rc. Arguments as for the pd_coll_ function
 * of the same name.
 */
#ifndef PD_CORE_DEVCOLL_H
#define PD_CORE_DEVCOLL_H

#include <stdbool.h>

#include "core/coll.h"

bool pd_devcoll_allreduce(struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, void *recvbuf, size_t count,
                          MPI_Datatype type, MPI_Op op, struct pd_fail *fail,
                          int *rc);
bool pd_devcoll_reduce(struct ompi_communicator_t *comm, uint32_t tag,
                       const void *sendbuf, void *recvbuf, size_t count,
                       MPI_Datatype type, MPI_Op op, int root,
                       struct pd_fail *fail, int *rc);
bool pd_devcoll_bcast(struct ompi_communicator_t *comm, uint32_t tag,
                      void *buffer, size_t bytes, int root,
                      struct pd_fail *fail, int *rc);
bool pd_devcoll_allgather(struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, void *recvbuf, size_t bytes,
                          struct pd_fail *fail, int *rc);
bool pd_devcoll_allgatherv(struct ompi_communicator_t *comm, uint32_t tag,
                           const void *sendbuf, void *recvbuf,
                           const struct pd_layout *recv, struct pd_fail *fail,
                           int *rc);
bool pd_devcoll_gatherv(struct ompi_communicator_t *comm, uint32_t tag,
                        const void *sendbuf, size_t send_bytes, void *recvbuf,
                        const struct pd_layout *recv, int root,
                        struct pd_fail *fail, int *rc);
bool pd_devcoll_scatterv(struct ompi_communicator_t *comm, uint32_t tag,
                         const void *sendbuf, const struct pd_layout *send,
                         void *recvbuf, size_t recv_bytes, int root,
                         struct pd_fail *fail, int *rc);
bool pd_devcoll_alltoallv(struct ompi_communicator_t *comm, uint32_t tag,
                          const void *sendbuf, const struct pd_layout *send,
                          void *recvbuf, const struct pd_layout *recv,
                          struct pd_fail *fail, int *rc);
bool pd_devcoll_reduce_scatter(struct ompi_communicator_t *comm, uint32_t tag,
                               const void *sendbuf, void *recvbuf,
                               const int *counts, MPI_Datatype type,
                               MPI_Op op, struct pd_fail *fail, int *rc);
bool pd_devcoll_scan(struct ompi_communicator_t *comm, uint32_t tag,
                     const void *sendbuf, void *recvbuf, size_t count,
                     MPI_Datatype type, MPI_Op op, bool exclusive,
                     struct pd_fail *fail, int *rc);

#endif

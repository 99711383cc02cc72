/*
 * The host path by host: ranks of a communicator that share a host meet
 * in shared memory (backend/shm), one leader per host (its lowest rank)
 * carries the host's part across hosts over the host backend, and the
 * result spreads back through shared memory. A communicator on one host
 * never moves collective data over a socket.
 *
 * Used for host buffers when PDMPI_SHM is on and at least two ranks of the
 * communicator share a host; otherwise pd_hier_get gives NULL and the
 * callers go straight to the host backend.
 */
#ifndef PD_COLL_HIER_H
#define PD_COLL_HIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/shm/shm.h"
#include "coll/coll.h"
#include "core/comm.h"

struct pd_hier;

/* comm's hierarchy, set up on first use (collective: every rank reaches
 * its first host collective on comm in the same call), or *out = NULL. */
int pd_hier_get(struct ompi_communicator_t *comm, struct pd_hier **out,
                struct pd_fail *fail);
void pd_hier_free(struct pd_hier *h);

/* comm's hierarchy where it is set up already, else NULL (never
 * collective: for calls that do not use it themselves). */
struct pd_hier *pd_hier_if_known(struct ompi_communicator_t *comm);

/* The shared-memory segment of this host's ranks of comm, or NULL. */
struct pd_shm_comm *pd_hier_segment(struct pd_hier *h);

/* A call whose data moves elsewhere (the device path), compared with the
 * ranks of this host without waiting for them (backend/shm's noted
 * calls): note it before it starts; compare while it waits and after it
 * ends. PD_BACKEND_ERR_MISMATCH with both calls named in why when a rank
 * of this host noted call n as another call. Nothing with h NULL. */
void pd_hier_note_call(struct pd_hier *h, uint32_t n,
                       const struct pd_call_sig *call);
int pd_hier_compare_call(struct pd_hier *h, uint32_t n,
                         const struct pd_call_sig *call, char *why,
                         size_t len);

/* Every rank of comm on one host. */
bool pd_hier_single_host(const struct pd_hier *h);

/* Whether a reduction's element of elem_size bytes (a user op's: a whole
 * item of its datatype) fits a step of the host's shared memory; else
 * the reductions by host refuse it (PD_BACKEND_ERR_UNSUPPORTED). */
bool pd_hier_element_fits(const struct pd_hier *h, size_t elem_size);

/* The most bytes of a result a reduction by host hands its mover's
 * unpack at once (a step of the shared memory; 0 without one). */
size_t pd_hier_step_bytes(const struct pd_hier *h);

/* A reduction of count elements of elem_size bytes, as in pd_coll_args.
 * Across hosts only commutative ops are served (see coll.c). */
struct pd_hier_reduction {
    size_t count;
    size_t elem_size;
    pd_reduce_fn fn;
    const void *ctx;
    uint8_t op, elem;           /* enum pd_op_id, enum pd_elem_kind: the
                                   ranks compare them, not just bytes */
    /* Not NULL: the input and the result are its bytes, not the
     * buffers' (pd_shm_reduce); one host with shared memory only,
     * PD_BACKEND_ERR_UNSUPPORTED (nothing done) otherwise. */
    const struct pd_shm_mover *mover;
};

int pd_hier_allreduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                      uint32_t tag, const void *sendbuf, void *recvbuf,
                      const struct pd_hier_reduction *red,
                      struct pd_fail *fail);
int pd_hier_reduce(struct ompi_communicator_t *comm, struct pd_hier *h,
                   uint32_t tag, const void *sendbuf, void *recvbuf,
                   const struct pd_hier_reduction *red, int root,
                   struct pd_fail *fail);
/* One host only: this rank keeps elements [from, to) of the reduction. */
int pd_hier_reduce_scatter(struct ompi_communicator_t *comm,
                           struct pd_hier *h, const void *sendbuf,
                           void *recvbuf, size_t from, size_t to,
                           const struct pd_hier_reduction *red,
                           struct pd_fail *fail);
/* mover (not NULL): the bytes are its, not buffer's (pd_shm_bcast); one
 * host only, PD_BACKEND_ERR_UNSUPPORTED (nothing done) otherwise. */
int pd_hier_bcast(struct ompi_communicator_t *comm, struct pd_hier *h,
                  uint32_t tag, void *buffer, const struct pd_shm_mover *mover,
                  size_t bytes, int root, unsigned char signature,
                  struct pd_fail *fail);
/* mover: as for pd_hier_bcast. */
int pd_hier_allgatherv(struct ompi_communicator_t *comm, struct pd_hier *h,
                       uint32_t tag, const void *sendbuf, void *recvbuf,
                       const struct pd_shm_mover *mover,
                       const struct pd_layout *recv, unsigned char signature,
                       struct pd_fail *fail);
/* One host only, in the layouts of pd_coll_alltoallv, pd_coll_gatherv
 * and pd_coll_scatterv: PD_BACKEND_ERR_UNSUPPORTED (nothing done) when
 * the segment's chunk is too small for this many ranks, or with a mover
 * (as for pd_hier_bcast) and no shared memory. */
int pd_hier_alltoallv(struct ompi_communicator_t *comm, struct pd_hier *h,
                      const void *sendbuf, const struct pd_layout *send,
                      void *recvbuf, const struct pd_layout *recv,
                      const struct pd_shm_mover *mover,
                      unsigned char signature, struct pd_fail *fail);
int pd_hier_gatherv(struct ompi_communicator_t *comm, struct pd_hier *h,
                    const void *sendbuf, size_t send_bytes, void *recvbuf,
                    const struct pd_layout *recv, int root,
                    const struct pd_shm_mover *mover,
                    unsigned char signature, struct pd_fail *fail);
int pd_hier_scatterv(struct ompi_communicator_t *comm, struct pd_hier *h,
                     const void *sendbuf, const struct pd_layout *send,
                     void *recvbuf, size_t recv_bytes, int root,
                     const struct pd_shm_mover *mover,
                     unsigned char signature, struct pd_fail *fail);
int pd_hier_barrier(struct ompi_communicator_t *comm, struct pd_hier *h,
                    uint32_t tag, struct pd_fail *fail);

#endif

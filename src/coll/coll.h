/*
 * One collective call, described once: the API fills a struct pd_coll,
 * pd_coll_run decides the memory route (device / staged / host) and, on
 * the host, the algorithm (coll_host.c's table). Nonblocking calls are the
 * same descriptor run later by the progress thread. sendbuf NULL means in
 * place. The tag is given by the caller (pd_comm_reserve_tags, in call
 * order); a call may use PD_TAGS_PER_CALL tags from it.
 */
#ifndef PD_COLL_COLL_H
#define PD_COLL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/call_sig.h"
#include "base/coll_kind.h"
#include "core/comm.h"

/* Where rank i's block lies in a buffer: counts[i] elements of extent
 * bytes at displs[i] elements (displs NULL: packed in rank order; counts
 * NULL: one element each). */
struct pd_layout {
    const int *counts;
    const int *displs;
    size_t extent;
};

/* Byte offset and length of rank i's block in layout l. */
void pd_layout_block(const struct pd_layout *l, int i, size_t *offset,
                     size_t *bytes);
/* Bytes from the start of a buffer to the end of its last block. */
size_t pd_layout_span(const struct pd_layout *l, int size);

struct pd_coll {
    enum pd_coll_kind kind;
    struct ompi_communicator_t *comm;
    uint32_t tag;
    const void *sendbuf;        /* NULL: in place */
    void *recvbuf;              /* bcast: the buffer; NULL where unused */
    /* Reductions: elements of type (reduce_scatter: per rank when counts
     * is NULL). Bcast, allgather: bytes (per rank). Gatherv: bytes this
     * rank sends; scatterv: bytes it receives. */
    size_t count;
    const int *counts;          /* reduce_scatter: elements kept per rank */
    struct pd_layout send;      /* scatterv, alltoallv */
    struct pd_layout recv;      /* allgatherv, gatherv, alltoallv */
    MPI_Datatype type;          /* reductions; NULL otherwise */
    MPI_Op op;                  /* reductions; NULL otherwise */
    /* Moves: pd_type_signature of this rank's datatype, compared between
     * ranks with the rest of the call (PD_EK_NONE: nothing to compare). */
    unsigned char signature;
    int root;                   /* -1: not rooted */
    /* Moves (bcast, allgather(v), gather(v), scatter(v), alltoall(v),
     * alltoallw) and reductions (allreduce, reduce, reduce_scatter) of a
     * non-contiguous type in host memory: the layout of the receive
     * buffer (bcast: the buffer; in place: also the input) and of the
     * send buffer, not packed yet -- recvbuf and sendbuf are the user's
     * buffers then, and nothing takes them as bytes. Shared memory moves
     * them a piece at a time; every other path packs them whole first
     * (pd_coll_packed). */
    struct pd_type_stage *stage, *send_stage;
};

/* c with its stages packed whole into their scratch buffers, which become
 * whole's buffers (the stages are unpacked after the call, as any
 * stage); whole is c where c has no stage. */
int pd_coll_packed(const struct pd_coll *c, struct pd_coll *whole,
                   struct pd_fail *fail);

/* Run c on the calling thread; MPI error class, the reason in fail. */
int pd_coll_run(const struct pd_coll *c, struct pd_fail *fail);

/* The host path alone: c's buffers are host memory (staging). */
int pd_coll_host(const struct pd_coll *c, struct pd_fail *fail);

/* Elements rank r keeps of a reduce_scatter, and the elements before. */
size_t pd_coll_block_count(const struct pd_coll *c, int r);
void pd_coll_block_span(const struct pd_coll *c, int r, size_t *from,
                        size_t *total);

/* A backend's failure status (PD_BACKEND_ERR_*) and message as an MPI
 * error class in fail, naming the step and the communicator. */
int pd_coll_backend_failed(int status, struct ompi_communicator_t *comm,
                           const char *what, const char *detail,
                           struct pd_fail *fail);

/* What ranks compare before they move c's data: its kind, root and the
 * whole call's bytes where those are the same on every rank; a
 * reduction's op and element kind reduction_elem (enum pd_elem_kind), a
 * move's datatype signature (reduction_elem < 0). */
struct pd_call_sig pd_coll_sig(const struct pd_coll *c, int reduction_elem);

/* malloc that names the size in fail when it fails. */
void *pd_coll_alloc(size_t bytes, struct pd_fail *fail);

/*
 * How the composed collectives move data: an exchange of messages and a
 * local copy. The host path uses the host backend and memmove; the device
 * path (coll/devcoll.c) the device CCL's grouped send/receive and device
 * copies, so one composition serves both memories.
 */
struct pd_path {
    /* Every rank of c calls it, n = 0 where it has no message. */
    int (*exchange)(const struct pd_coll *c, const struct pd_p2p_op *msgs,
                    size_t n, struct pd_fail *fail);
    int (*copy)(void *dst, const void *src, size_t bytes,
                struct pd_fail *fail);
};

extern const struct pd_path pd_host_path;

/* Allgatherv, gatherv, scatterv or alltoallv of c as point-to-point
 * messages over path (coll_compose.c). */
int pd_coll_compose(const struct pd_path *path, const struct pd_coll *c,
                    struct pd_fail *fail);

#endif

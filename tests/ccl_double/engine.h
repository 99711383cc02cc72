/*
 * The engine of pdmpi's device-library TEST DOUBLES (libbkcl and libnccl
 * under tests/): ranks in separate processes of one host really exchange
 * data through a POSIX shared-memory segment that a unique id names. The
 * doubles are thin faces over it: they map their library's types, ops and
 * results onto these, check that buffers are their runtime's device
 * memory, and (NCCL) queue the work on streams.
 *
 * A unique id names the segment. Rank 0 creates it; the other ranks
 * attach; once all have, the name is unlinked, so nothing outlives the run
 * even if a rank dies later. The segment holds a header (sizes, a
 * process-shared barrier, each rank's device), one slot of chunk bytes per
 * rank (collectives move data chunk by chunk as "barrier, write own slot,
 * barrier, read the slots") and one single-chunk mailbox per (src, dst)
 * pair for send/recv. Reductions always combine ranks in order 0, 1, 2,
 * ... so every rank gets bitwise-identical results.
 *
 * Environment, read when a communicator is made, named after the face
 * (NAME is "BKCL_DOUBLE" or "NCCL_DOUBLE"):
 *   NAME_TIMEOUT      seconds any wait may take before the call fails
 *                     (default 60, 0 = never)
 *   NAME_CHUNK_BYTES  slot size, read by rank 0 (default 1 MiB)
 */
#ifndef PD_TESTS_CCL_DOUBLE_ENGINE_H
#define PD_TESTS_CCL_DOUBLE_ENGINE_H

#include <stddef.h>

/* Element types every face can map onto. */
enum ccl_type {
    CCL_INT8, CCL_UINT8, CCL_INT32, CCL_UINT32, CCL_INT64, CCL_UINT64,
    CCL_FLOAT16, CCL_BFLOAT16, CCL_FLOAT32, CCL_FLOAT64, CCL_TYPE_COUNT
};

/* Reductions; AVG is the sum divided by the number of ranks. */
enum ccl_op { CCL_SUM, CCL_PROD, CCL_MIN, CCL_MAX, CCL_AVG, CCL_OP_COUNT };

enum ccl_result {
    CCL_OK = 0,
    CCL_INVALID,        /* bad arguments, or ranks that disagree */
    CCL_SYSTEM,         /* a timeout, an abort, shared memory */
};

/* What a face calls itself in messages, the environment and ids. */
struct ccl_face {
    const char *name;       /* "bkcl double": prefix of every message */
    const char *env;        /* "BKCL_DOUBLE": NAME_TIMEOUT, ... */
    const char *id_prefix;  /* "/bkcl_double_": the segment names */
    const char *device;     /* "XPU": in messages about devices */
};

struct ccl_comm;

/* Bytes per element; 0 for a value outside the enum. */
size_t ccl_type_size(int type);

/* One line on stderr, "NAME: rank R: ..." (c may be NULL). */
__attribute__((format(printf, 3, 4)))
void ccl_complain(const struct ccl_face *f, const struct ccl_comm *c,
                  const char *fmt, ...);

/* A fresh unique id into id (len bytes, the rest zeroed): -1 when there
 * is no randomness to be had. */
int ccl_make_id(const struct ccl_face *f, char *id, size_t len);

/* Join communicator id (as made by ccl_make_id) as rank of nranks, on
 * device. Fails when two ranks name the same device, as the real
 * libraries do. fn names the entry point in messages. */
enum ccl_result ccl_init(const struct ccl_face *f, struct ccl_comm **out,
                         int rank, int nranks, const char *id, size_t idlen,
                         int device, const char *fn);
void ccl_destroy(struct ccl_comm *c);
/* Every wait of c, now and later, gives up at once (ncclCommAbort). */
void ccl_abort(struct ccl_comm *c);

int ccl_rank(const struct ccl_comm *c);
int ccl_nranks(const struct ccl_comm *c);
int ccl_device(const struct ccl_comm *c);
const struct ccl_face *ccl_face_of(const struct ccl_comm *c);

/* CCL_OK while c can still be used (no earlier timeout or abort). */
enum ccl_result ccl_usable(const struct ccl_comm *c, const char *fn);

/* Collectives, run at once by the calling thread. Buffers are plain
 * addresses the engine may read and write (a face translates device
 * pointers first); sendbuf == recvbuf works, and so do NCCL's in-place
 * forms of allgather and reduce_scatter. root < 0: allreduce. */
enum ccl_result ccl_reduce(struct ccl_comm *c, const char *fn,
                           const void *sendbuf, void *recvbuf, size_t count,
                           enum ccl_type type, enum ccl_op op, int root);
enum ccl_result ccl_broadcast(struct ccl_comm *c, const char *fn,
                              const void *sendbuf, void *recvbuf,
                              size_t bytes, int root);
enum ccl_result ccl_allgather(struct ccl_comm *c, const char *fn,
                              const void *sendbuf, void *recvbuf,
                              size_t bytes);
enum ccl_result ccl_reduce_scatter(struct ccl_comm *c, const char *fn,
                                   const void *sendbuf, void *recvbuf,
                                   size_t recvcount, enum ccl_type type,
                                   enum ccl_op op);

/* Point to point in groups, per thread as in NCCL: between the outermost
 * ccl_group_start and ccl_group_end, ccl_p2p_add records; the outermost
 * end hands the recorded operations back (NULL: none, or not outermost),
 * to be run, at once or later on another thread, by ccl_ops_run, which
 * frees them. Every send and receive of a set the peers also post
 * completes, whatever the order. */
struct ccl_ops;
void ccl_group_start(void);
/* -1 without a matching start (a message says so). */
int ccl_group_end(const struct ccl_face *f, struct ccl_ops **ops);
enum ccl_result ccl_p2p_add(struct ccl_comm *c, const char *fn, void *buf,
                            size_t bytes, int peer, int is_send);
enum ccl_result ccl_ops_run(struct ccl_ops *ops);
/* The communicator of the first operation (to pick a stream). */
struct ccl_comm *ccl_ops_comm(const struct ccl_ops *ops);
void ccl_ops_free(struct ccl_ops *ops);

#endif

/*
 * The generic device collective-library module (device CCL): NCCL for
 * CUDA memory and BKCL for Kunlun XPU memory share one shape -- a unique
 * id from rank 0, a communicator per rank, collectives launched on a
 * stream -- so one module does everything around them: loading, device
 * choice, lazy communicators with the unique id exchanged through the
 * store, a private stream per communicator, blocking semantics (launch,
 * then wait on that stream while watching for asynchronous errors,
 * bounded by the timeout), staging copies, abort and destroy. Each
 * library is a thin binding: a table of dlopen'ed entry points and its
 * datatype and op maps.
 *
 * Like every backend, this sees buffers, element kinds and op ids, never
 * MPI handles or environment variables.
 */
#ifndef PD_BACKEND_DCCL_DCCL_H
#define PD_BACKEND_DCCL_DCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/elem.h"

#ifdef __cplusplus
extern "C" {
#endif

enum pd_mem_kind {
    PD_MEM_HOST = 0,        /* plain or pinned host memory */
    PD_MEM_DEVICE,          /* memory of one device */
    PD_MEM_MANAGED,         /* CUDA managed memory: host path */
};

/* One library's binding: every entry returns 0 or -1 with a message. */
struct pd_dccl_binding {
    const char *name;               /* "nccl", "bkcl" */
    const char *memory;             /* "CUDA", "XPU": for messages */
    size_t unique_id_bytes;
    /* Load the device runtime (always) and the CCL (with_ccl); a NULL
     * path means the library's usual soname. */
    int (*load)(bool with_ccl, const char *ccl_lib, const char *runtime_lib,
                char *err, size_t errlen);
    int (*device_count)(int *count, char *err, size_t errlen);
    int (*set_device)(int device, char *err, size_t errlen);
    /* Memory kind of ptr; any error of the runtime's query means host. */
    enum pd_mem_kind (*memory_kind)(const void *ptr, int *device);
    int (*copy)(void *dst, const void *src, size_t bytes, char *err,
                size_t errlen);
    /* Page-locked host memory for staging (plain malloc if unavailable). */
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *ptr);
    int (*get_unique_id)(void *id, char *err, size_t errlen);
    int (*comm_init)(void **comm, int nranks, int rank, const void *id,
                     char *err, size_t errlen);
    /* abort = true: the peers may be gone; do not wait for them. */
    void (*comm_destroy)(void *comm, bool abort);
    int (*stream_create)(void **stream, char *err, size_t errlen);
    void (*stream_destroy)(void *stream);
    /* Order stream after the work the program queued on the device's
     * default stream (a copy from pageable memory returns before its DMA
     * is done), without blocking the host; NULL where the library's
     * streams need no such step. -1 with err. */
    int (*stream_follow_default)(void *stream, char *err, size_t errlen);
    /* Wait for the stream's work until deadline_ms, watching comm for
     * asynchronous errors: 0 done, 1 not done by the deadline (err
     * untouched), -1 failed (err says why). */
    int (*stream_wait)(void *comm, void *stream, int64_t deadline_ms,
                       char *err, size_t errlen);
    /* The library's datatype / op for an element kind / op id; -1 when
     * it has none. */
    int (*dtype)(enum pd_elem_kind kind);
    int (*redop)(enum pd_op_id op);
    /* Launch one operation on stream; -1 with err on a launch error. */
    int (*allreduce)(void *comm, const void *sendbuf, void *recvbuf,
                     size_t count, int dtype, int op, void *stream,
                     char *err, size_t errlen);
    int (*broadcast)(void *comm, const void *sendbuf, void *recvbuf,
                     size_t count, int dtype, int root, void *stream,
                     char *err, size_t errlen);
    int (*reduce)(void *comm, const void *sendbuf, void *recvbuf,
                  size_t count, int dtype, int op, int root, void *stream,
                  char *err, size_t errlen);
    int (*allgather)(void *comm, const void *sendbuf, void *recvbuf,
                     size_t sendcount, int dtype, void *stream, char *err,
                     size_t errlen);
    int (*reduce_scatter)(void *comm, const void *sendbuf, void *recvbuf,
                          size_t recvcount, int dtype, int op, void *stream,
                          char *err, size_t errlen);
    int (*send)(void *comm, const void *buf, size_t bytes, int peer,
                void *stream, char *err, size_t errlen);
    int (*recv)(void *comm, void *buf, size_t bytes, int peer, void *stream,
                char *err, size_t errlen);
    int (*group_start)(char *err, size_t errlen);
    int (*group_end)(char *err, size_t errlen);
    /* Library and runtime versions, for PDMPI_DEBUG=info. */
    void (*describe)(char *buf, size_t len);
};

/* For the bindings: look up every named entry point of a dlopen'ed
 * library; -1 with "<libname> lacks <symbol>" at the first missing one. */
struct pd_dccl_symbol {
    const char *name;
    void **slot;
};
int pd_dccl_resolve(void *lib, const char *libname,
                    const struct pd_dccl_symbol *syms, size_t n, char *err,
                    size_t errlen);

extern const struct pd_dccl_binding pd_dccl_bkcl;
#ifdef PD_HAVE_NCCL_BINDING
extern const struct pd_dccl_binding pd_dccl_nccl;
#endif

/* The process's device backend: one binding, one device. */
struct pd_dccl {
    const struct pd_dccl_binding *b;
    int device;                     /* this rank's device */
    int device_count;
    bool ccl;                       /* the CCL is loaded (else staging only) */
};

/*
 * Load binding b (with its CCL when with_ccl) and count devices. The
 * device is chosen later (pd_dccl_select_device). 0, or -1 with the
 * missing piece named in err.
 */
int pd_dccl_open(struct pd_dccl *d, const struct pd_dccl_binding *b,
                 bool with_ccl, const char *ccl_lib, const char *runtime_lib,
                 char *err, size_t errlen);
int pd_dccl_select_device(struct pd_dccl *d, int device, char *err,
                          size_t errlen);

/* One communicator's device context (created on first device call). */
struct pd_dccl_comm;

struct pd_dccl_comm_init {
    int rank;
    int size;
    struct pd_store_client *store;  /* rendezvous; NULL for size 1 */
    const char *store_prefix;       /* unique per communicator and job */
    int timeout_ms;
    /* Asked every PD_DCCL_WATCH_MS while a call waits for its stream:
     * PD_BACKEND_OK to go on waiting, or why the call cannot complete (a
     * rank it needs has ended: PD_BACKEND_ERR_IO; the ranks are in
     * different calls: PD_BACKEND_ERR_MISMATCH), said in why. A device
     * library would wait for either forever. NULL: not watched. */
    int (*watch)(void *ctx, char *why, size_t len);
    void *watch_ctx;
};
#define PD_DCCL_WATCH_MS 100

int pd_dccl_comm_create(struct pd_dccl *d,
                        const struct pd_dccl_comm_init *init,
                        struct pd_dccl_comm **out, char *err, size_t errlen);
void pd_dccl_comm_destroy(struct pd_dccl_comm *c, bool abort);

/* Blocking collectives on device buffers; count in elements of kind.
 * sendbuf NULL = in place. 0, or a PD_BACKEND_ERR_* with err filled. */
int pd_dccl_allreduce(struct pd_dccl_comm *c, const void *sendbuf,
                      void *recvbuf, size_t count, enum pd_elem_kind kind,
                      enum pd_op_id op, char *err, size_t errlen);
int pd_dccl_reduce(struct pd_dccl_comm *c, const void *sendbuf,
                   void *recvbuf, size_t count, enum pd_elem_kind kind,
                   enum pd_op_id op, int root, char *err, size_t errlen);
int pd_dccl_bcast(struct pd_dccl_comm *c, void *buf, size_t bytes, int root,
                  char *err, size_t errlen);
/* recvbuf gets size blocks of bytes each, in rank order. */
int pd_dccl_allgather(struct pd_dccl_comm *c, const void *sendbuf,
                      void *recvbuf, size_t bytes, char *err, size_t errlen);
/* sendbuf holds size blocks of count elements; recvbuf gets block rank. */
int pd_dccl_reduce_scatter(struct pd_dccl_comm *c, const void *sendbuf,
                           void *recvbuf, size_t count,
                           enum pd_elem_kind kind, enum pd_op_id op,
                           char *err, size_t errlen);
/* Every message posted in one group, then waited for. */
int pd_dccl_exchange(struct pd_dccl_comm *c, const struct pd_p2p_op *ops,
                     size_t n, char *err, size_t errlen);
/* A device-to-device (or any-direction) copy on this rank's device. */
int pd_dccl_copy(struct pd_dccl *d, void *dst, const void *src, size_t bytes,
                 char *err, size_t errlen);

/* Whether the library takes this element kind and op directly. */
bool pd_dccl_supports(const struct pd_dccl *d, enum pd_elem_kind kind,
                      enum pd_op_id op);

#ifdef __cplusplus
}
#endif

#endif

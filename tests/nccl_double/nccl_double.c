/*
 * TEST DOUBLE of NCCL (libnccl) for pdmpi's tests. It is not NCCL and
 * drives no hardware; it implements the entry points pdmpi's NCCL binding
 * resolves, with the signatures of the toolkit's nccl.h (included, so the
 * compiler checks them), well enough that ranks in separate processes of
 * one host really communicate.
 *
 * A thin face over the doubles' shared engine (tests/ccl_double/engine.h),
 * which moves the data and reads NCCL_DOUBLE_TIMEOUT and
 * NCCL_DOUBLE_CHUNK_BYTES. As with NCCL, every call only queues its work
 * on the caller's stream (the CUDA runtime double's stream thread runs
 * it, in order) and returns; errors found then are reported by
 * ncclCommGetAsyncError, and ncclCommAbort ends every wait of the
 * communicator. Buffers must be CUDA memory (device or managed) of the
 * communicator's device: the engine reaches device memory through the
 * runtime double's writable view of it, since the address pdmpi holds
 * faults on the host.
 *
 * Send/receive are grouped per thread as in NCCL and run together, on the
 * stream of the first, when the outermost ncclGroupEnd is called.
 * Collectives inside a group are queued at once.
 *
 * For error tests, NCCL_DOUBLE_FAIL=R:N makes rank R's Nth queued
 * operation (counted from 1 in the process) fail asynchronously with
 * ncclRemoteError, as a peer lost on the network would, without running.
 *
 * Extra export for tests: nccl_double_calls(name).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../ccl_double/engine.h"
#include "cudart_double.h"
#include "../ccl_double/counts.h"

long nccl_double_calls(const char *name);

static const struct ccl_face face = {
    .name = "nccl double", .env = "NCCL_DOUBLE",
    .id_prefix = "/nccl_double_", .device = "CUDA",
};

/* ---- call counting ---- */

static const char *const entry_names[] = {
    "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank",
    "ncclCommDestroy", "ncclCommAbort", "ncclCommGetAsyncError",
    "ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather",
    "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclGroupStart",
    "ncclGroupEnd", "ncclGetErrorString", "ncclGetLastError",
};
enum { ENTRY_COUNT = sizeof entry_names / sizeof entry_names[0] };
static _Atomic long entry_calls[ENTRY_COUNT];
static struct ccl_counts counts =
    CCL_COUNTS_INIT("nccl", entry_names, ENTRY_COUNT, entry_calls);

static void count_call(const char *name)
{
    for (int e = 0; e < ENTRY_COUNT; e++)
        if (strcmp(name, entry_names[e]) == 0)
            ccl_count(&counts, e);
}

long nccl_double_calls(const char *name)
{
    return ccl_count_of(&counts, name);
}

#define COUNT() count_call(__func__)

/* ---- communicators ---- */

struct ncclComm {
    struct ccl_comm *engine;
    int device;
    _Atomic int async;              /* ncclResult_t of queued work */
    char async_why[200];            /* written before async is set */
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int inflight;                   /* queued work not finished yet */
};

static ncclResult_t result(enum ccl_result rc)
{
    switch (rc) {
    case CCL_OK: return ncclSuccess;
    case CCL_INVALID: return ncclInvalidUsage;
    default: return ncclSystemError;
    }
}

/* The last error, per thread, for ncclGetLastError. */
static _Thread_local char last_error[400];

static ncclResult_t fail(ncclComm_t comm, ncclResult_t rc, const char *fmt,
                         ...) __attribute__((format(printf, 3, 4)));
static ncclResult_t fail(ncclComm_t comm, ncclResult_t rc, const char *fmt,
                         ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    ccl_complain(&face, comm ? comm->engine : NULL, "%s", last_error);
    return rc;
}

ncclResult_t ncclGetVersion(int *version)
{
    COUNT();
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
    COUNT();
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a "
                                 "network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

/* The communicator's asynchronous error where it has one, else this
 * thread's last failed call. */
const char *ncclGetLastError(ncclComm_t comm)
{
    COUNT();
    if (comm && atomic_load(&comm->async) != ncclSuccess)
        return comm->async_why;
    return last_error;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    COUNT();
    if (!uniqueId)
        return ncclInvalidArgument;
    return ccl_make_id(&face, uniqueId->internal,
                       sizeof uniqueId->internal) == 0
               ? ncclSuccess : ncclSystemError;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
                              ncclUniqueId commId, int rank)
{
    COUNT();
    int device;

    if (!comm)
        return ncclInvalidArgument;
    if (cudaGetDevice(&device) != cudaSuccess)
        return ncclUnhandledCudaError;
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    ncclResult_t rc = result(ccl_init(&face, &c->engine, rank, nranks,
                                      commId.internal,
                                      sizeof commId.internal, device,
                                      "ncclCommInitRank"));
    if (rc != ncclSuccess) {
        free(c);
        return rc == ncclInvalidUsage ? ncclInvalidArgument : rc;
    }
    c->device = device;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->idle, NULL);
    *comm = c;
    return ncclSuccess;
}

/* Until the work queued for comm has run (an abort makes it quick). */
static void wait_idle(ncclComm_t comm)
{
    pthread_mutex_lock(&comm->lock);
    while (comm->inflight > 0)
        pthread_cond_wait(&comm->idle, &comm->lock);
    pthread_mutex_unlock(&comm->lock);
}

static void release(ncclComm_t comm)
{
    wait_idle(comm);
    ccl_destroy(comm->engine);
    pthread_mutex_destroy(&comm->lock);
    pthread_cond_destroy(&comm->idle);
    free(comm);
}

/* Waits for the queued work, as NCCL does. */
ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    COUNT();
    if (!comm)
        return ncclInvalidArgument;
    release(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    COUNT();
    if (!comm)
        return ncclInvalidArgument;
    ccl_abort(comm->engine);
    release(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    COUNT();
    if (!comm || !asyncError)
        return ncclInvalidArgument;
    *asyncError = (ncclResult_t)atomic_load(&comm->async);
    return ncclSuccess;
}

/* ---- queued work ---- */

enum job_kind { J_REDUCE, J_BROADCAST, J_ALLGATHER, J_REDUCE_SCATTER, J_P2P };

struct job {
    enum job_kind kind;
    const char *fn;
    ncclComm_t comm;
    const void *send;               /* views the engine may touch */
    void *recv;
    size_t count;                   /* elements (bytes for moves) */
    enum ccl_type type;
    enum ccl_op op;
    int root;
    struct ccl_ops *ops;            /* J_P2P */
};

/* NCCL_DOUBLE_FAIL=R:N: whether this is rank R's Nth operation. */
static int injected_failure(ncclComm_t c)
{
    static _Atomic long ran;
    const char *spec = getenv("NCCL_DOUBLE_FAIL");
    int r;
    long n;

    long mine = atomic_fetch_add(&ran, 1) + 1;
    return spec && sscanf(spec, "%d:%ld", &r, &n) == 2 &&
           r == ccl_rank(c->engine) && n == mine;
}

static void run_job(void *arg)
{
    struct job *j = arg;
    ncclComm_t c = j->comm;
    enum ccl_result rc = CCL_SYSTEM;

    /* A communicator with an error runs nothing more. */
    if (atomic_load(&c->async) != ncclSuccess) {
        ccl_ops_free(j->ops);
    } else if (injected_failure(c)) {
        ccl_complain(&face, c->engine, "%s: failing as NCCL_DOUBLE_FAIL "
                     "asks", j->fn);
        snprintf(c->async_why, sizeof c->async_why, "%s: injected by "
                 "NCCL_DOUBLE_FAIL: a peer was lost", j->fn);
        atomic_store(&c->async, ncclRemoteError);
        ccl_ops_free(j->ops);
    } else {
        switch (j->kind) {
        case J_REDUCE:
            rc = ccl_reduce(c->engine, j->fn, j->send, j->recv, j->count,
                            j->type, j->op, j->root);
            break;
        case J_BROADCAST:
            rc = ccl_broadcast(c->engine, j->fn, j->send, j->recv, j->count,
                               j->root);
            break;
        case J_ALLGATHER:
            rc = ccl_allgather(c->engine, j->fn, j->send, j->recv, j->count);
            break;
        case J_REDUCE_SCATTER:
            rc = ccl_reduce_scatter(c->engine, j->fn, j->send, j->recv,
                                    j->count, j->type, j->op);
            break;
        case J_P2P:
            rc = ccl_ops_run(j->ops);
            break;
        }
        if (rc != CCL_OK && atomic_load(&c->async) == ncclSuccess) {
            snprintf(c->async_why, sizeof c->async_why, "%s failed on the "
                     "stream (the message above says why)", j->fn);
            atomic_store(&c->async, (int)result(rc));
        }
    }
    free(j);
    pthread_mutex_lock(&c->lock);
    if (--c->inflight == 0)
        pthread_cond_broadcast(&c->idle);
    pthread_mutex_unlock(&c->lock);
}

static ncclResult_t submit(struct job *proto, cudaStream_t stream)
{
    struct job *j = malloc(sizeof *j);
    ncclComm_t c = proto->comm;

    if (!j) {
        ccl_ops_free(proto->ops);
        return ncclSystemError;
    }
    *j = *proto;
    pthread_mutex_lock(&c->lock);
    c->inflight++;
    pthread_mutex_unlock(&c->lock);
    if (cudart_double_enqueue(stream, run_job, j) != 0) {
        free(j);
        ccl_ops_free(proto->ops);
        pthread_mutex_lock(&c->lock);
        if (--c->inflight == 0)
            pthread_cond_broadcast(&c->idle);
        pthread_mutex_unlock(&c->lock);
        return fail(c, ncclUnhandledCudaError, "%s: %p is not a stream of "
                    "the CUDA runtime", proto->fn, (void *)stream);
    }
    return ncclSuccess;
}

/* ---- argument checks, before anything is queued ---- */

static int engine_type(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: return CCL_INT8;
    case ncclUint8: return CCL_UINT8;
    case ncclInt32: return CCL_INT32;
    case ncclUint32: return CCL_UINT32;
    case ncclInt64: return CCL_INT64;
    case ncclUint64: return CCL_UINT64;
    case ncclFloat16: return CCL_FLOAT16;
    case ncclFloat32: return CCL_FLOAT32;
    case ncclFloat64: return CCL_FLOAT64;
    case ncclBfloat16: return CCL_BFLOAT16;
    default: return -1;
    }
}

static int engine_op(ncclRedOp_t op)
{
    switch (op) {
    case ncclSum: return CCL_SUM;
    case ncclProd: return CCL_PROD;
    case ncclMax: return CCL_MAX;
    case ncclMin: return CCL_MIN;
    case ncclAvg: return CCL_AVG;
    default: return -1;
    }
}

static ncclResult_t check_comm(ncclComm_t comm, const char *fn)
{
    if (!comm)
        return fail(NULL, ncclInvalidArgument, "%s: comm is NULL", fn);
    if (atomic_load(&comm->async) != ncclSuccess)
        return fail(comm, ncclInvalidUsage, "%s: the communicator has an "
                    "error from earlier work", fn);
    return result(ccl_usable(comm->engine, fn));
}

/* Element size of t (and op valid where use_op), or 0. */
static size_t check_type(ncclComm_t comm, const char *fn, ncclDataType_t t,
                         ncclRedOp_t op, int use_op)
{
    if (engine_type(t) < 0) {
        fail(comm, ncclInvalidArgument, "%s: unsupported data type %d", fn,
             (int)t);
        return 0;
    }
    if (use_op && engine_op(op) < 0) {
        fail(comm, ncclInvalidArgument, "%s: unsupported reduction op %d",
             fn, (int)op);
        return 0;
    }
    return ccl_type_size(engine_type(t));
}

/* count * blocks elements of es bytes, or -1 on overflow. */
static int total_bytes(size_t count, size_t blocks, size_t es, size_t *out)
{
    if (blocks && count > SIZE_MAX / blocks / es)
        return -1;
    *out = count * blocks * es;
    return 0;
}

/* The view of a buffer, which must be CUDA memory of comm's device: NCCL
 * would fault on anything else. */
static ncclResult_t check_buffer(ncclComm_t comm, const char *fn,
                                 const char *what, const void *p,
                                 size_t bytes, void **view)
{
    int device;

    *view = NULL;
    if (bytes == 0)
        return ncclSuccess;
    if (!p)
        return fail(comm, ncclInvalidArgument, "%s: %s is NULL", fn, what);
    int type = cudart_double_view(p, bytes, &device, view);
    if (type < 0)
        return fail(comm, ncclInvalidArgument, "%s: %s %p: %zu bytes run "
                    "past the end of its allocation", fn, what, p, bytes);
    if (type != cudaMemoryTypeDevice && type != cudaMemoryTypeManaged)
        return fail(comm, ncclInvalidArgument, "%s: %s %p is host memory, "
                    "not CUDA memory", fn, what, p);
    if (device != comm->device)
        return fail(comm, ncclInvalidArgument, "%s: %s %p is on device %d, "
                    "the communicator on device %d", fn, what, p, device,
                    comm->device);
    return ncclSuccess;
}

static int root_valid(ncclComm_t comm, const char *fn, int root)
{
    int n = ccl_nranks(comm->engine);

    if (root >= 0 && root < n)
        return 1;
    fail(comm, ncclInvalidArgument, "%s: root %d outside [0, %d)", fn, root,
         n);
    return 0;
}

/* ---- collectives ---- */

static ncclResult_t reduce(const char *fn, const void *sendbuff,
                           void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    ncclResult_t rc;
    size_t es, bytes;
    void *sv, *rv = NULL;

    if ((rc = check_comm(comm, fn)) != ncclSuccess)
        return rc;
    if ((es = check_type(comm, fn, datatype, op, 1)) == 0 ||
        (root >= 0 && !root_valid(comm, fn, root)) ||
        total_bytes(count, 1, es, &bytes) != 0)
        return ncclInvalidArgument;
    if ((rc = check_buffer(comm, fn, "sendbuff", sendbuff, bytes, &sv)) != 0)
        return rc;
    /* recvbuff matters on the root only. */
    if ((root < 0 || root == ccl_rank(comm->engine)) &&
        (rc = check_buffer(comm, fn, "recvbuff", recvbuff, bytes, &rv)) != 0)
        return rc;
    return submit(&(struct job){
        .kind = J_REDUCE, .fn = fn, .comm = comm, .send = sv, .recv = rv,
        .count = count, .type = (enum ccl_type)engine_type(datatype),
        .op = (enum ccl_op)engine_op(op), .root = root }, stream);
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    COUNT();
    return reduce("ncclAllReduce", sendbuff, recvbuff, count, datatype, op,
                  -1, comm, stream);
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream)
{
    COUNT();
    if (root < 0)               /* reduce()'s -1 means "all" */
        return fail(comm, ncclInvalidArgument, "ncclReduce: root %d", root);
    return reduce("ncclReduce", sendbuff, recvbuff, count, datatype, op,
                  root, comm, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    COUNT();
    const char *fn = "ncclBroadcast";
    ncclResult_t rc;
    size_t es, bytes;
    void *sv = NULL, *rv;

    if ((rc = check_comm(comm, fn)) != ncclSuccess)
        return rc;
    if ((es = check_type(comm, fn, datatype, ncclSum, 0)) == 0 ||
        !root_valid(comm, fn, root) || total_bytes(count, 1, es, &bytes) != 0)
        return ncclInvalidArgument;
    /* sendbuff matters on the root only. */
    if ((root == ccl_rank(comm->engine) &&
         (rc = check_buffer(comm, fn, "sendbuff", sendbuff, bytes, &sv)) !=
             0) ||
        (rc = check_buffer(comm, fn, "recvbuff", recvbuff, bytes, &rv)) != 0)
        return rc;
    return submit(&(struct job){
        .kind = J_BROADCAST, .fn = fn, .comm = comm, .send = sv, .recv = rv,
        .count = bytes, .root = root }, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
    COUNT();
    const char *fn = "ncclAllGather";
    ncclResult_t rc;
    size_t es, bytes, all;
    void *sv, *rv;

    if ((rc = check_comm(comm, fn)) != ncclSuccess)
        return rc;
    if ((es = check_type(comm, fn, datatype, ncclSum, 0)) == 0 ||
        total_bytes(sendcount, 1, es, &bytes) != 0 ||
        total_bytes(sendcount, (size_t)ccl_nranks(comm->engine), es,
                    &all) != 0)
        return ncclInvalidArgument;
    if ((rc = check_buffer(comm, fn, "sendbuff", sendbuff, bytes, &sv)) != 0 ||
        (rc = check_buffer(comm, fn, "recvbuff", recvbuff, all, &rv)) != 0)
        return rc;
    return submit(&(struct job){
        .kind = J_ALLGATHER, .fn = fn, .comm = comm, .send = sv, .recv = rv,
        .count = bytes }, stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
{
    COUNT();
    const char *fn = "ncclReduceScatter";
    ncclResult_t rc;
    size_t es, bytes, all;
    void *sv, *rv;

    if ((rc = check_comm(comm, fn)) != ncclSuccess)
        return rc;
    if ((es = check_type(comm, fn, datatype, op, 1)) == 0 ||
        total_bytes(recvcount, 1, es, &bytes) != 0 ||
        total_bytes(recvcount, (size_t)ccl_nranks(comm->engine), es,
                    &all) != 0)
        return ncclInvalidArgument;
    if ((rc = check_buffer(comm, fn, "sendbuff", sendbuff, all, &sv)) != 0 ||
        (rc = check_buffer(comm, fn, "recvbuff", recvbuff, bytes, &rv)) != 0)
        return rc;
    return submit(&(struct job){
        .kind = J_REDUCE_SCATTER, .fn = fn, .comm = comm, .send = sv,
        .recv = rv, .count = recvcount,
        .type = (enum ccl_type)engine_type(datatype),
        .op = (enum ccl_op)engine_op(op) }, stream);
}

/* ---- point to point ---- */

/* The stream and communicator of this thread's open group's first
 * send or receive: the group runs there. */
static _Thread_local cudaStream_t group_stream;
static _Thread_local ncclComm_t group_comm;

ncclResult_t ncclGroupStart(void)
{
    COUNT();
    ccl_group_start();
    return ncclSuccess;
}

static ncclResult_t group_end(void)
{
    struct ccl_ops *ops;

    if (ccl_group_end(&face, &ops) != 0)
        return ncclInvalidUsage;
    if (!ops)
        return ncclSuccess;
    ncclComm_t comm = group_comm;
    cudaStream_t stream = group_stream;
    group_comm = NULL;
    group_stream = NULL;
    return submit(&(struct job){ .kind = J_P2P, .fn = "ncclGroupEnd",
                                 .comm = comm, .ops = ops }, stream);
}

ncclResult_t ncclGroupEnd(void)
{
    COUNT();
    return group_end();
}

static ncclResult_t p2p(const char *fn, const void *buf, size_t count,
                        ncclDataType_t datatype, int peer, ncclComm_t comm,
                        cudaStream_t stream, int is_send)
{
    ncclResult_t rc;
    size_t es, bytes;
    void *view;

    if ((rc = check_comm(comm, fn)) != ncclSuccess)
        return rc;
    if ((es = check_type(comm, fn, datatype, ncclSum, 0)) == 0 ||
        total_bytes(count, 1, es, &bytes) != 0)
        return ncclInvalidArgument;
    if ((rc = check_buffer(comm, fn, is_send ? "sendbuff" : "recvbuff", buf,
                           bytes, &view)) != 0)
        return rc;
    ccl_group_start();
    if (!group_comm) {
        group_comm = comm;
        group_stream = stream;
    }
    rc = result(ccl_p2p_add(comm->engine, fn, view, bytes, peer, is_send));
    if (rc == ncclInvalidUsage)
        rc = ncclInvalidArgument;
    ncclResult_t end = group_end();
    return rc != ncclSuccess ? rc : end;
}

ncclResult_t ncclSend(const void *sendbuff, size_t count,
                      ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    COUNT();
    return p2p("ncclSend", sendbuff, count, datatype, peer, comm, stream, 1);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                      int peer, ncclComm_t comm, cudaStream_t stream)
{
    COUNT();
    return p2p("ncclRecv", recvbuff, count, datatype, peer, comm, stream, 0);
}

/*
 * NCCL binding of the device-CCL module: CUDA memory. The headers of the
 * CUDA toolkit give the types only; the entry points are dlopen'ed from
 * libnccl.so.2 and the CUDA runtime (libcudart.so.<major>), so pdmpi has
 * no link-time CUDA dependency and loads on machines without a driver.
 * Both libraries carry what they need and open libcuda.so.1 themselves.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "backend/dccl/dccl.h"
#include "base/clock.h"

#define PD_NCCL_LIB "libnccl.so.2"
#define PD_CUDART_LIB "libcudart.so"

/* Pointer types straight from the header prototypes, so they cannot drift
 * from the library pdmpi was built against. */
typedef __typeof__(cudaGetDeviceCount) *pd_cuda_get_device_count_fn;
typedef __typeof__(cudaSetDevice) *pd_cuda_set_device_fn;
typedef __typeof__(cudaPointerGetAttributes) *pd_cuda_pointer_attrs_fn;
typedef __typeof__(cudaMemcpy) *pd_cuda_memcpy_fn;
typedef __typeof__(cudaMallocHost) *pd_cuda_malloc_host_fn;
typedef __typeof__(cudaFreeHost) *pd_cuda_free_host_fn;
typedef __typeof__(cudaStreamCreateWithFlags) *pd_cuda_stream_create_fn;
typedef __typeof__(cudaStreamDestroy) *pd_cuda_stream_destroy_fn;
typedef __typeof__(cudaStreamQuery) *pd_cuda_stream_query_fn;
typedef __typeof__(cudaEventCreateWithFlags) *pd_cuda_event_create_fn;
typedef __typeof__(cudaEventRecord) *pd_cuda_event_record_fn;
typedef __typeof__(cudaStreamWaitEvent) *pd_cuda_stream_wait_event_fn;
typedef __typeof__(cudaGetErrorString) *pd_cuda_error_string_fn;
typedef __typeof__(cudaGetLastError) *pd_cuda_last_error_fn;
typedef __typeof__(cudaRuntimeGetVersion) *pd_cuda_runtime_version_fn;

typedef __typeof__(ncclGetVersion) *pd_nccl_get_version_fn;
typedef __typeof__(ncclGetUniqueId) *pd_nccl_get_unique_id_fn;
typedef __typeof__(ncclCommInitRank) *pd_nccl_comm_init_rank_fn;
typedef __typeof__(ncclCommDestroy) *pd_nccl_comm_destroy_fn;
typedef __typeof__(ncclCommAbort) *pd_nccl_comm_abort_fn;
typedef __typeof__(ncclCommGetAsyncError) *pd_nccl_async_error_fn;
typedef __typeof__(ncclAllReduce) *pd_nccl_allreduce_fn;
typedef __typeof__(ncclBroadcast) *pd_nccl_broadcast_fn;
typedef __typeof__(ncclReduce) *pd_nccl_reduce_fn;
typedef __typeof__(ncclAllGather) *pd_nccl_allgather_fn;
typedef __typeof__(ncclReduceScatter) *pd_nccl_reduce_scatter_fn;
typedef __typeof__(ncclSend) *pd_nccl_send_fn;
typedef __typeof__(ncclRecv) *pd_nccl_recv_fn;
typedef __typeof__(ncclGroupStart) *pd_nccl_group_fn;
typedef __typeof__(ncclGetErrorString) *pd_nccl_error_string_fn;
typedef __typeof__(ncclGetLastError) *pd_nccl_last_error_fn;

static struct {
    void *ccl_lib, *rt_lib;
    pd_cuda_get_device_count_fn get_device_count;
    pd_cuda_set_device_fn set_device;
    pd_cuda_pointer_attrs_fn pointer_get_attributes;
    pd_cuda_memcpy_fn memcpy;
    pd_cuda_malloc_host_fn malloc_host;
    pd_cuda_free_host_fn free_host;
    pd_cuda_stream_create_fn stream_create;
    pd_cuda_stream_destroy_fn stream_destroy;
    pd_cuda_stream_query_fn stream_query;
    pd_cuda_event_create_fn event_create;
    pd_cuda_event_record_fn event_record;
    pd_cuda_stream_wait_event_fn stream_wait_event;
    _Atomic(cudaEvent_t) default_done;  /* recorded on the default stream */
    pd_cuda_error_string_fn cuda_error_string;
    pd_cuda_last_error_fn last_cuda_error;
    pd_cuda_runtime_version_fn runtime_version;
    pd_nccl_get_version_fn get_version;
    pd_nccl_get_unique_id_fn get_unique_id;
    pd_nccl_comm_init_rank_fn comm_init_rank;
    pd_nccl_comm_destroy_fn comm_destroy;
    pd_nccl_comm_abort_fn comm_abort;
    pd_nccl_async_error_fn async_error;
    pd_nccl_allreduce_fn allreduce;
    pd_nccl_broadcast_fn broadcast;
    pd_nccl_reduce_fn reduce;
    pd_nccl_allgather_fn allgather;
    pd_nccl_reduce_scatter_fn reduce_scatter;
    pd_nccl_send_fn send;
    pd_nccl_recv_fn recv;
    pd_nccl_group_fn group_start, group_end;
    pd_nccl_error_string_fn nccl_error_string;
    pd_nccl_last_error_fn last_nccl_error;  /* NULL before NCCL 2.13.4 */
} pd_nccl;

/* err may be NULL (teardown paths that cannot report). The runtime keeps
 * the last error for cudaGetLastError; clear it so that a later, unrelated
 * query does not report this one. */
static int pd_cuda_fail(char *err, size_t errlen, const char *what,
                        cudaError_t rc)
{
    if (err != NULL)
        snprintf(err, errlen, "%s: %s (%d)", what,
                 pd_nccl.cuda_error_string(rc), (int)rc);
    pd_nccl.last_cuda_error();
    return -1;
}

/* ncclGetErrorString only names the class ("unhandled cuda error");
 * ncclGetLastError, where present, says what actually went wrong. */
static int pd_nccl_fail(char *err, size_t errlen, const char *what,
                        ncclResult_t rc, ncclComm_t comm)
{
    if (err == NULL)
        return -1;
    const char *last = pd_nccl.last_nccl_error != NULL
                           ? pd_nccl.last_nccl_error(comm)
                           : NULL;
    if (last != NULL && last[0] != '\0')
        snprintf(err, errlen, "%s failed: %s (%s)", what,
                 pd_nccl.nccl_error_string(rc), last);
    else
        snprintf(err, errlen, "%s failed: %s", what,
                 pd_nccl.nccl_error_string(rc));
    return -1;
}

/* NCCL_VERSION_CODE was X*1000+Y*100+Z up to 2.8 and X*10000+Y*100+Z
 * since 2.9, so codes of the two schemes cannot be compared directly. */
static void pd_nccl_version_parts(int code, int *major, int *minor,
                                  int *patch)
{
    int scale = code >= 10000 ? 10000 : 1000;
    *major = code / scale;
    *minor = code % scale / 100;
    *patch = code % 100;
}

/* The runtime of the CUDA major pdmpi was built against (its ABI), then
 * whatever the unversioned development link points to. */
static void *pd_nccl_open_runtime(const char *runtime_lib, char *name,
                                  size_t namelen, char *err, size_t errlen)
{
    if (runtime_lib != NULL) {
        snprintf(name, namelen, "%s", runtime_lib);
        void *lib = dlopen(runtime_lib, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            snprintf(err, errlen, "the CUDA runtime cannot be loaded: %s",
                     dlerror());
        return lib;
    }
    snprintf(name, namelen, PD_CUDART_LIB ".%d", CUDART_VERSION / 1000);
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != NULL)
        return lib;
    /* Keep the versioned name's failure: it is the one that matters. */
    snprintf(err, errlen, "the CUDA runtime cannot be loaded: %s",
             dlerror());
    snprintf(name, namelen, "%s", PD_CUDART_LIB);
    return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

static int pd_nccl_load_runtime(const char *runtime_lib, char *err,
                                size_t errlen)
{
    char rt_name[512];
    pd_nccl.rt_lib = pd_nccl_open_runtime(runtime_lib, rt_name,
                                          sizeof(rt_name), err, errlen);
    if (pd_nccl.rt_lib == NULL)
        return -1;
    const struct pd_dccl_symbol rt[] = {
        { "cudaGetDeviceCount", (void **)&pd_nccl.get_device_count },
        { "cudaSetDevice", (void **)&pd_nccl.set_device },
        { "cudaPointerGetAttributes",
          (void **)&pd_nccl.pointer_get_attributes },
        { "cudaMemcpy", (void **)&pd_nccl.memcpy },
        { "cudaMallocHost", (void **)&pd_nccl.malloc_host },
        { "cudaFreeHost", (void **)&pd_nccl.free_host },
        { "cudaStreamCreateWithFlags", (void **)&pd_nccl.stream_create },
        { "cudaStreamDestroy", (void **)&pd_nccl.stream_destroy },
        { "cudaStreamQuery", (void **)&pd_nccl.stream_query },
        { "cudaEventCreateWithFlags", (void **)&pd_nccl.event_create },
        { "cudaEventRecord", (void **)&pd_nccl.event_record },
        { "cudaStreamWaitEvent", (void **)&pd_nccl.stream_wait_event },
        { "cudaGetErrorString", (void **)&pd_nccl.cuda_error_string },
        { "cudaGetLastError", (void **)&pd_nccl.last_cuda_error },
        { "cudaRuntimeGetVersion", (void **)&pd_nccl.runtime_version },
    };
    if (pd_dccl_resolve(pd_nccl.rt_lib, rt_name, rt,
                        sizeof(rt) / sizeof(rt[0]), err, errlen) != 0) {
        /* Unusable: a later load must not take it as loaded. */
        dlclose(pd_nccl.rt_lib);
        pd_nccl.rt_lib = NULL;
        return -1;
    }
    return 0;
}

/* The library must be 2.7 or later: pdmpi's exchanges need
 * ncclSend/ncclRecv. */
static int pd_nccl_check_version(char *err, size_t errlen)
{
    int code = 0;
    ncclResult_t rc = pd_nccl.get_version(&code);
    if (rc != ncclSuccess)
        return pd_nccl_fail(err, errlen, "ncclGetVersion", rc, NULL);
    int major, minor, patch;
    pd_nccl_version_parts(code, &major, &minor, &patch);
    if (major < 2 || (major == 2 && minor < 7)) {
        snprintf(err, errlen, "NCCL %d.%d.%d is too old: pdmpi needs NCCL "
                 "2.7 or later (ncclSend/ncclRecv)", major, minor, patch);
        return -1;
    }
    return 0;
}

static int pd_nccl_load(bool with_ccl, const char *ccl_lib,
                        const char *runtime_lib, char *err, size_t errlen)
{
    const char *ccl_name = ccl_lib ? ccl_lib : PD_NCCL_LIB;
    if (pd_nccl.rt_lib == NULL &&
        pd_nccl_load_runtime(runtime_lib, err, errlen) != 0)
        return -1;
    if (!with_ccl || pd_nccl.ccl_lib != NULL)
        return 0;
    pd_nccl.ccl_lib = dlopen(ccl_name, RTLD_NOW | RTLD_LOCAL);
    if (pd_nccl.ccl_lib == NULL) {
        snprintf(err, errlen, "libnccl cannot be loaded: %s", dlerror());
        return -1;
    }
    const struct pd_dccl_symbol ccl[] = {
        { "ncclGetVersion", (void **)&pd_nccl.get_version },
        { "ncclGetUniqueId", (void **)&pd_nccl.get_unique_id },
        { "ncclCommInitRank", (void **)&pd_nccl.comm_init_rank },
        { "ncclCommDestroy", (void **)&pd_nccl.comm_destroy },
        { "ncclCommAbort", (void **)&pd_nccl.comm_abort },
        { "ncclCommGetAsyncError", (void **)&pd_nccl.async_error },
        { "ncclAllReduce", (void **)&pd_nccl.allreduce },
        { "ncclBroadcast", (void **)&pd_nccl.broadcast },
        { "ncclReduce", (void **)&pd_nccl.reduce },
        { "ncclAllGather", (void **)&pd_nccl.allgather },
        { "ncclReduceScatter", (void **)&pd_nccl.reduce_scatter },
        { "ncclSend", (void **)&pd_nccl.send },
        { "ncclRecv", (void **)&pd_nccl.recv },
        { "ncclGroupStart", (void **)&pd_nccl.group_start },
        { "ncclGroupEnd", (void **)&pd_nccl.group_end },
        { "ncclGetErrorString", (void **)&pd_nccl.nccl_error_string },
    };
    if (pd_dccl_resolve(pd_nccl.ccl_lib, ccl_name, ccl,
                        sizeof(ccl) / sizeof(ccl[0]), err, errlen) != 0)
        goto fail;
    /* Optional (2.13.4): only enriches messages. */
    *(void **)&pd_nccl.last_nccl_error =
        dlsym(pd_nccl.ccl_lib, "ncclGetLastError");
    if (pd_nccl_check_version(err, errlen) != 0)
        goto fail;
    return 0;
fail:
    /* Unusable: a later load must not take it as loaded. */
    dlclose(pd_nccl.ccl_lib);
    pd_nccl.ccl_lib = NULL;
    pd_nccl.last_nccl_error = NULL;
    return -1;
}

/* The runtime leaves count alone on error (no driver: 35), hence the 0. */
static int pd_nccl_device_count(int *count, char *err, size_t errlen)
{
    int n = 0;
    cudaError_t rc = pd_nccl.get_device_count(&n);
    if (rc != cudaSuccess)
        return pd_cuda_fail(err, errlen, "cudaGetDeviceCount", rc);
    *count = n;
    return 0;
}

static int pd_nccl_set_device(int device, char *err, size_t errlen)
{
    cudaError_t rc = pd_nccl.set_device(device);
    return rc == cudaSuccess ? 0
                             : pd_cuda_fail(err, errlen, "cudaSetDevice", rc);
}

/* Without a driver the query fails (35, or 34 with the toolkit's
 * link-only libcuda) instead of saying "unregistered", and before CUDA 11
 * plain host memory was cudaErrorInvalidValue: every error means host
 * memory. */
static enum pd_mem_kind pd_nccl_memory_kind(const void *ptr, int *device)
{
    struct cudaPointerAttributes attr;
    memset(&attr, 0, sizeof(attr));
    if (pd_nccl.pointer_get_attributes(&attr, ptr) != cudaSuccess) {
        pd_nccl.last_cuda_error();
        return PD_MEM_HOST;
    }
    switch (attr.type) {
    case cudaMemoryTypeDevice:
        *device = attr.device;
        return PD_MEM_DEVICE;
    case cudaMemoryTypeManaged:
        *device = attr.device;
        return PD_MEM_MANAGED;
    default:
        return PD_MEM_HOST;
    }
}

/* Unified addressing: the runtime works out the direction itself. */
static int pd_nccl_copy(void *dst, const void *src, size_t bytes, char *err,
                        size_t errlen)
{
    cudaError_t rc = pd_nccl.memcpy(dst, src, bytes, cudaMemcpyDefault);
    return rc == cudaSuccess ? 0 : pd_cuda_fail(err, errlen, "cudaMemcpy", rc);
}

/* Which allocator a staging block came from, kept just before the block;
 * the union keeps the block aligned for any type. */
union pd_nccl_host_hdr {
    bool pinned;
    max_align_t align;
};

/* Pinned memory makes staging copies direct DMA; when it cannot be had
 * (no driver, locked-memory limit) plain memory still works, slower. */
static void *pd_nccl_host_alloc(size_t bytes)
{
    size_t hdr = sizeof(union pd_nccl_host_hdr);
    if (bytes > SIZE_MAX - hdr)
        return NULL;
    void *block = NULL;
    bool pinned = pd_nccl.malloc_host(&block, hdr + bytes) == cudaSuccess;
    if (!pinned) {
        pd_nccl.last_cuda_error();
        block = malloc(hdr + bytes);
        if (block == NULL)
            return NULL;
    }
    ((union pd_nccl_host_hdr *)block)->pinned = pinned;
    return (char *)block + hdr;
}

static void pd_nccl_host_free(void *ptr)
{
    if (ptr == NULL)
        return;
    union pd_nccl_host_hdr *block = (union pd_nccl_host_hdr *)ptr - 1;
    if (block->pinned)
        pd_nccl.free_host(block);
    else
        free(block);
}

static int pd_nccl_get_unique_id(void *id, char *err, size_t errlen)
{
    ncclResult_t rc = pd_nccl.get_unique_id((ncclUniqueId *)id);
    return rc == ncclSuccess ? 0
                             : pd_nccl_fail(err, errlen, "ncclGetUniqueId",
                                            rc, NULL);
}

/* Blocking init on the current device (dccl.c has set it); the id comes
 * as bytes from the store, so copy it into the by-value struct. */
static int pd_nccl_comm_init(void **comm, int nranks, int rank,
                             const void *id, char *err, size_t errlen)
{
    ncclUniqueId uid;
    memcpy(&uid, id, sizeof(uid));
    ncclComm_t c = NULL;
    ncclResult_t rc = pd_nccl.comm_init_rank(&c, nranks, uid, rank);
    if (rc != ncclSuccess)
        return pd_nccl_fail(err, errlen, "ncclCommInitRank", rc, NULL);
    *comm = c;
    return 0;
}

/* Destroy waits for the peers and outstanding work; abort does not,
 * which is what a failed or timed-out operation needs. */
static void pd_nccl_comm_destroy(void *comm, bool abort)
{
    if (comm == NULL)
        return;
    if (abort)
        pd_nccl.comm_abort((ncclComm_t)comm);
    else
        pd_nccl.comm_destroy((ncclComm_t)comm);
}

/* Non-blocking: the private stream must not serialise with the user's
 * work on the legacy default stream. */
static int pd_nccl_stream_create(void **stream, char *err, size_t errlen)
{
    cudaStream_t s = NULL;
    cudaError_t rc = pd_nccl.stream_create(&s, cudaStreamNonBlocking);
    if (rc != cudaSuccess)
        return pd_cuda_fail(err, errlen, "cudaStreamCreateWithFlags", rc);
    *stream = s;
    return 0;
}

/* One event per process (one device per rank), made once, at first use,
 * under a lock (two threads racing to make it would leak one); a second
 * thread that records it before the first waits only makes the first
 * wait for more. */
static pthread_mutex_t pd_nccl_event_lock = PTHREAD_MUTEX_INITIALIZER;

static int pd_nccl_stream_follow_default(void *stream, char *err,
                                         size_t errlen)
{
    cudaEvent_t ev = atomic_load(&pd_nccl.default_done);
    cudaError_t rc = cudaSuccess;
    if (ev == NULL) {
        pthread_mutex_lock(&pd_nccl_event_lock);
        ev = atomic_load(&pd_nccl.default_done);
        if (ev == NULL &&
            (rc = pd_nccl.event_create(&ev, cudaEventDisableTiming)) ==
                cudaSuccess)
            atomic_store(&pd_nccl.default_done, ev);
        pthread_mutex_unlock(&pd_nccl_event_lock);
        if (rc != cudaSuccess)
            return pd_cuda_fail(err, errlen, "cudaEventCreateWithFlags", rc);
    }
    if ((rc = pd_nccl.event_record(ev, NULL)) != cudaSuccess)
        return pd_cuda_fail(err, errlen, "cudaEventRecord", rc);
    if ((rc = pd_nccl.stream_wait_event((cudaStream_t)stream, ev, 0)) !=
        cudaSuccess)
        return pd_cuda_fail(err, errlen, "cudaStreamWaitEvent", rc);
    return 0;
}

static void pd_nccl_stream_destroy(void *stream)
{
    if (stream != NULL &&
        pd_nccl.stream_destroy((cudaStream_t)stream) != cudaSuccess)
        pd_nccl.last_cuda_error();
}

/* Polls bounded by the deadline rather than cudaStreamSynchronize, which
 * would hang forever if a peer died mid-collective; NCCL reports such
 * failures only through ncclCommGetAsyncError. Short operations finish
 * within the first busy polls; longer ones yield the core, then sleep. */
static int pd_nccl_stream_wait(void *comm, void *stream, int64_t deadline_ms,
                               char *err, size_t errlen)
{
    for (unsigned long polls = 0;; polls++) {
        cudaError_t crc = pd_nccl.stream_query((cudaStream_t)stream);
        if (crc != cudaSuccess && crc != cudaErrorNotReady)
            return pd_cuda_fail(err, errlen, "cudaStreamQuery", crc);
        /* Asked even when the stream is done: an operation NCCL gave up
         * on (a peer lost) can leave the stream idle with its error. */
        ncclResult_t async = ncclSuccess;
        ncclResult_t rc = pd_nccl.async_error((ncclComm_t)comm, &async);
        if (rc != ncclSuccess)
            return pd_nccl_fail(err, errlen, "ncclCommGetAsyncError", rc,
                                (ncclComm_t)comm);
        if (async != ncclSuccess && async != ncclInProgress)
            return pd_nccl_fail(err, errlen, "the NCCL operation", async,
                                (ncclComm_t)comm);
        if (crc == cudaSuccess)
            return 0;
        if (pd_clock_ms() >= deadline_ms)
            return 1;               /* not yet: the caller decides */
        if (polls < 64) {
            continue;
        } else if (polls < 1024) {
            sched_yield();
        } else {
            struct timespec nap = { 0, 50000 };
            nanosleep(&nap, NULL);
        }
    }
}

/* NCCL has no int16, bool or long double: those take the host path
 * rather than being reinterpreted. */
static int pd_nccl_dtype(enum pd_elem_kind kind)
{
    switch (kind) {
    case PD_EK_I8: return ncclInt8;
    case PD_EK_U8: return ncclUint8;
    case PD_EK_I32: return ncclInt32;
    case PD_EK_U32: return ncclUint32;
    case PD_EK_I64: return ncclInt64;
    case PD_EK_U64: return ncclUint64;
    case PD_EK_F16: return ncclFloat16;
    case PD_EK_F32: return ncclFloat32;
    case PD_EK_F64: return ncclFloat64;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
    case PD_EK_BF16: return ncclBfloat16;
#endif
    default: return -1;
    }
}

/* MPIX_OP_AVG is ncclAvg; logical, bitwise and MAXLOC/MINLOC ops do not
 * exist in NCCL. */
static int pd_nccl_redop(enum pd_op_id op)
{
    switch (op) {
    case PD_OP_SUM: return ncclSum;
    case PD_OP_PROD: return ncclProd;
    case PD_OP_MAX: return ncclMax;
    case PD_OP_MIN: return ncclMin;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
    case PD_OP_AVG: return ncclAvg;
#endif
    default: return -1;
    }
}

static int pd_nccl_check(ncclResult_t rc, const char *what, void *comm,
                         char *err, size_t errlen)
{
    return rc == ncclSuccess
               ? 0
               : pd_nccl_fail(err, errlen, what, rc, (ncclComm_t)comm);
}

static int pd_nccl_allreduce(void *comm, const void *sendbuf, void *recvbuf,
                             size_t count, int dtype, int op, void *stream,
                             char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.allreduce(sendbuf, recvbuf, count,
                                           (ncclDataType_t)dtype,
                                           (ncclRedOp_t)op, (ncclComm_t)comm,
                                           (cudaStream_t)stream),
                         "ncclAllReduce", comm, err, errlen);
}

static int pd_nccl_broadcast(void *comm, const void *sendbuf, void *recvbuf,
                             size_t count, int dtype, int root, void *stream,
                             char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.broadcast(sendbuf, recvbuf, count,
                                           (ncclDataType_t)dtype, root,
                                           (ncclComm_t)comm,
                                           (cudaStream_t)stream),
                         "ncclBroadcast", comm, err, errlen);
}

static int pd_nccl_reduce(void *comm, const void *sendbuf, void *recvbuf,
                          size_t count, int dtype, int op, int root,
                          void *stream, char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.reduce(sendbuf, recvbuf, count,
                                        (ncclDataType_t)dtype,
                                        (ncclRedOp_t)op, root,
                                        (ncclComm_t)comm,
                                        (cudaStream_t)stream),
                         "ncclReduce", comm, err, errlen);
}

static int pd_nccl_allgather(void *comm, const void *sendbuf, void *recvbuf,
                             size_t sendcount, int dtype, void *stream,
                             char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.allgather(sendbuf, recvbuf, sendcount,
                                           (ncclDataType_t)dtype,
                                           (ncclComm_t)comm,
                                           (cudaStream_t)stream),
                         "ncclAllGather", comm, err, errlen);
}

static int pd_nccl_reduce_scatter(void *comm, const void *sendbuf,
                                  void *recvbuf, size_t recvcount, int dtype,
                                  int op, void *stream, char *err,
                                  size_t errlen)
{
    return pd_nccl_check(pd_nccl.reduce_scatter(sendbuf, recvbuf, recvcount,
                                                (ncclDataType_t)dtype,
                                                (ncclRedOp_t)op,
                                                (ncclComm_t)comm,
                                                (cudaStream_t)stream),
                         "ncclReduceScatter", comm, err, errlen);
}

static int pd_nccl_send(void *comm, const void *buf, size_t bytes, int peer,
                        void *stream, char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.send(buf, bytes, ncclUint8, peer,
                                      (ncclComm_t)comm, (cudaStream_t)stream),
                         "ncclSend", comm, err, errlen);
}

static int pd_nccl_recv(void *comm, void *buf, size_t bytes, int peer,
                        void *stream, char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.recv(buf, bytes, ncclUint8, peer,
                                      (ncclComm_t)comm, (cudaStream_t)stream),
                         "ncclRecv", comm, err, errlen);
}

static int pd_nccl_group_start(char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.group_start(), "ncclGroupStart", NULL, err,
                         errlen);
}

static int pd_nccl_group_end(char *err, size_t errlen)
{
    return pd_nccl_check(pd_nccl.group_end(), "ncclGroupEnd", NULL, err,
                         errlen);
}

static void pd_nccl_describe(char *buf, size_t len)
{
    char nccl[64] = "NCCL not loaded";
    int code = 0;
    if (pd_nccl.get_version != NULL &&
        pd_nccl.get_version(&code) == ncclSuccess) {
        int major, minor, patch;
        pd_nccl_version_parts(code, &major, &minor, &patch);
        snprintf(nccl, sizeof(nccl), "NCCL %d.%d.%d", major, minor, patch);
    }
    int rt = 0;
    if (pd_nccl.runtime_version != NULL &&
        pd_nccl.runtime_version(&rt) == cudaSuccess)
        snprintf(buf, len, "%s, CUDA runtime %d.%d", nccl, rt / 1000,
                 rt % 1000 / 10);
    else
        snprintf(buf, len, "%s, CUDA runtime not loaded", nccl);
}

const struct pd_dccl_binding pd_dccl_nccl = {
    .name = "nccl",
    .memory = "CUDA",
    .unique_id_bytes = sizeof(ncclUniqueId),
    .load = pd_nccl_load,
    .device_count = pd_nccl_device_count,
    .set_device = pd_nccl_set_device,
    .memory_kind = pd_nccl_memory_kind,
    .copy = pd_nccl_copy,
    .host_alloc = pd_nccl_host_alloc,
    .host_free = pd_nccl_host_free,
    .get_unique_id = pd_nccl_get_unique_id,
    .comm_init = pd_nccl_comm_init,
    .comm_destroy = pd_nccl_comm_destroy,
    .stream_create = pd_nccl_stream_create,
    .stream_follow_default = pd_nccl_stream_follow_default,
    .stream_destroy = pd_nccl_stream_destroy,
    .stream_wait = pd_nccl_stream_wait,
    .dtype = pd_nccl_dtype,
    .redop = pd_nccl_redop,
    .allreduce = pd_nccl_allreduce,
    .broadcast = pd_nccl_broadcast,
    .reduce = pd_nccl_reduce,
    .allgather = pd_nccl_allgather,
    .reduce_scatter = pd_nccl_reduce_scatter,
    .send = pd_nccl_send,
    .recv = pd_nccl_recv,
    .group_start = pd_nccl_group_start,
    .group_end = pd_nccl_group_end,
    .describe = pd_nccl_describe,
};

/*
 * BKCL binding of the device-CCL module: Kunlun XPU memory. The entry
 * points are dlopen'ed from libbkcl.so and the XPU runtime (libxpurt.so);
 * their shapes are in bkcl_api.h.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dccl/bkcl_api.h"
#include "backend/dccl/dccl.h"

static struct {
    void *ccl_lib, *rt_lib;
    pd_bkcl_get_unique_id_fn get_unique_id;
    pd_bkcl_init_rank_fn init_rank;
    pd_bkcl_destroy_context_fn destroy_context;
    pd_bkcl_all_reduce_fn all_reduce;
    pd_bkcl_broadcast_fn broadcast;
    pd_bkcl_reduce_fn reduce;
    pd_bkcl_all_gather_fn all_gather;
    pd_bkcl_reduce_scatter_fn reduce_scatter;
    pd_bkcl_send_fn send;
    pd_bkcl_recv_fn recv;
    pd_bkcl_group_fn group_start, group_end;
    pd_xpu_device_count_fn device_count;
    pd_xpu_set_device_fn set_device;
    pd_xpu_memcpy_fn memcpy;
    pd_xpu_stream_create_fn stream_create;
    pd_xpu_stream_destroy_fn stream_destroy;
    pd_xpu_wait_fn wait;
    pd_xpu_pointer_get_attrs_fn pointer_get_attrs;
} pd_bkcl;

static const char *pd_bkcl_strerror(BKCLResult_t rc)
{
    switch (rc) {
    case BKCL_SUCCESS: return "success";
    case BKCL_INVALID_ARGUMENT: return "invalid argument";
    case BKCL_RUNTIME_ERROR: return "XPU runtime error";
    case BKCL_SYSTEM_ERROR: return "system error";
    case BKCL_INTERNAL_ERROR: return "internal error";
    }
    return "unknown BKCL error";
}

/* err may be NULL (teardown paths that cannot report). */
static int pd_bkcl_fail(char *err, size_t errlen, const char *what,
                        BKCLResult_t rc)
{
    if (err != NULL)
        snprintf(err, errlen, "%s failed: %s (BKCL %d)", what,
                 pd_bkcl_strerror(rc), (int)rc);
    return -1;
}

static int pd_xpu_fail(char *err, size_t errlen, const char *what, int rc)
{
    if (err != NULL)
        snprintf(err, errlen, "%s failed (XPU runtime error %d)", what, rc);
    return -1;
}

static int pd_bkcl_load(bool with_ccl, const char *ccl_lib,
                        const char *runtime_lib, char *err, size_t errlen)
{
    const char *rt_name = runtime_lib ? runtime_lib : PD_XPURT_LIB;
    const char *ccl_name = ccl_lib ? ccl_lib : PD_BKCL_LIB;
    if (pd_bkcl.rt_lib == NULL) {
        pd_bkcl.rt_lib = dlopen(rt_name, RTLD_NOW | RTLD_LOCAL);
        if (pd_bkcl.rt_lib == NULL) {
            snprintf(err, errlen, "the XPU runtime cannot be loaded: %s",
                     dlerror());
            return -1;
        }
        const struct pd_dccl_symbol rt[] = {
            { "xpu_device_count", (void **)&pd_bkcl.device_count },
            { "xpu_set_device", (void **)&pd_bkcl.set_device },
            { "xpu_memcpy", (void **)&pd_bkcl.memcpy },
            { "xpu_stream_create", (void **)&pd_bkcl.stream_create },
            { "xpu_stream_destroy", (void **)&pd_bkcl.stream_destroy },
            { "xpu_wait", (void **)&pd_bkcl.wait },
            { "xpu_pointer_get_attrs", (void **)&pd_bkcl.pointer_get_attrs },
        };
        if (pd_dccl_resolve(pd_bkcl.rt_lib, rt_name, rt,
                            sizeof(rt) / sizeof(rt[0]), err, errlen) != 0)
            return -1;
    }
    if (!with_ccl || pd_bkcl.ccl_lib != NULL)
        return 0;
    pd_bkcl.ccl_lib = dlopen(ccl_name, RTLD_NOW | RTLD_LOCAL);
    if (pd_bkcl.ccl_lib == NULL) {
        snprintf(err, errlen, "libbkcl cannot be loaded: %s", dlerror());
        return -1;
    }
    const struct pd_dccl_symbol ccl[] = {
        { "bkcl_get_unique_id", (void **)&pd_bkcl.get_unique_id },
        { "bkcl_init_rank", (void **)&pd_bkcl.init_rank },
        { "bkcl_destroy_context", (void **)&pd_bkcl.destroy_context },
        { "bkcl_all_reduce", (void **)&pd_bkcl.all_reduce },
        { "bkcl_broadcast", (void **)&pd_bkcl.broadcast },
        { "bkcl_reduce", (void **)&pd_bkcl.reduce },
        { "bkcl_all_gather", (void **)&pd_bkcl.all_gather },
        { "bkcl_reduce_scatter", (void **)&pd_bkcl.reduce_scatter },
        { "bkcl_send", (void **)&pd_bkcl.send },
        { "bkcl_recv", (void **)&pd_bkcl.recv },
        { "bkcl_group_start", (void **)&pd_bkcl.group_start },
        { "bkcl_group_end", (void **)&pd_bkcl.group_end },
    };
    if (pd_dccl_resolve(pd_bkcl.ccl_lib, ccl_name, ccl,
                        sizeof(ccl) / sizeof(ccl[0]), err, errlen) != 0) {
        dlclose(pd_bkcl.ccl_lib);
        pd_bkcl.ccl_lib = NULL;
        return -1;
    }
    return 0;
}

static int pd_bkcl_device_count(int *count, char *err, size_t errlen)
{
    *count = 0;
    int rc = pd_bkcl.device_count(count);
    return rc == 0 ? 0 : pd_xpu_fail(err, errlen, "xpu_device_count", rc);
}

static int pd_bkcl_set_device(int device, char *err, size_t errlen)
{
    int rc = pd_bkcl.set_device(device);
    return rc == 0 ? 0 : pd_xpu_fail(err, errlen, "xpu_set_device", rc);
}

static enum pd_mem_kind pd_bkcl_memory_kind(const void *ptr, int *device)
{
    pd_xpu_pointer_attrs attrs = { XPU_MEMORY_HOST, -1 };
    if (pd_bkcl.pointer_get_attrs(&attrs, ptr) != 0 ||
        attrs.memory_type != XPU_MEMORY_DEVICE)
        return PD_MEM_HOST;
    *device = attrs.device;
    return PD_MEM_DEVICE;
}

/* xpu_memcpy needs the direction; ask the runtime about both ends. */
static int pd_bkcl_copy(void *dst, const void *src, size_t bytes, char *err,
                        size_t errlen)
{
    int ignored;
    bool to_dev = pd_bkcl_memory_kind(dst, &ignored) == PD_MEM_DEVICE;
    bool from_dev = pd_bkcl_memory_kind(src, &ignored) == PD_MEM_DEVICE;
    if (!to_dev && !from_dev) {
        memmove(dst, src, bytes);
        return 0;
    }
    int kind = to_dev && from_dev ? XPU_DEVICE_TO_DEVICE
               : to_dev           ? XPU_HOST_TO_DEVICE
                                  : XPU_DEVICE_TO_HOST;
    int rc = pd_bkcl.memcpy(dst, src, bytes, kind);
    return rc == 0 ? 0 : pd_xpu_fail(err, errlen, "xpu_memcpy", rc);
}

/* The XPU runtime has no page-locked allocator that pdmpi relies on. */
static void *pd_bkcl_host_alloc(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

static void pd_bkcl_host_free(void *ptr)
{
    free(ptr);
}

static int pd_bkcl_get_unique_id(void *id, char *err, size_t errlen)
{
    BKCLResult_t rc = pd_bkcl.get_unique_id((BKCLUniqueId *)id);
    return rc == BKCL_SUCCESS ? 0
                              : pd_bkcl_fail(err, errlen, "bkcl_get_unique_id",
                                             rc);
}

static int pd_bkcl_comm_init(void **comm, int nranks, int rank,
                             const void *id, char *err, size_t errlen)
{
    BKCLContext_t ctx = NULL;
    BKCLResult_t rc = pd_bkcl.init_rank(&ctx, rank, nranks,
                                        (const BKCLUniqueId *)id);
    if (rc != BKCL_SUCCESS)
        return pd_bkcl_fail(err, errlen, "bkcl_init_rank", rc);
    *comm = ctx;
    return 0;
}

static void pd_bkcl_comm_destroy(void *comm, bool abort)
{
    /* BKCL has no abort that pdmpi relies on: destroy either way. */
    (void)abort;
    if (comm != NULL)
        pd_bkcl.destroy_context((BKCLContext_t)comm);
}

static int pd_bkcl_stream_create(void **stream, char *err, size_t errlen)
{
    XPUStream s = NULL;
    int rc = pd_bkcl.stream_create(&s);
    if (rc != 0)
        return pd_xpu_fail(err, errlen, "xpu_stream_create", rc);
    *stream = s;
    return 0;
}

static void pd_bkcl_stream_destroy(void *stream)
{
    if (stream != NULL)
        pd_bkcl.stream_destroy((XPUStream)stream);
}

/* xpu_wait blocks; BKCL offers no asynchronous error query to poll. */
static int pd_bkcl_stream_wait(void *comm, void *stream, int64_t deadline_ms,
                               char *err, size_t errlen)
{
    (void)comm;
    (void)deadline_ms;
    int rc = pd_bkcl.wait((XPUStream)stream);
    return rc == 0 ? 0 : pd_xpu_fail(err, errlen, "xpu_wait", rc);
}

/* BKCL has no int8/uint32/uint64 or bool: those take the host path
 * rather than being reinterpreted. */
static int pd_bkcl_dtype(enum pd_elem_kind kind)
{
    switch (kind) {
    case PD_EK_F32: return BKCL_FLOAT;
    case PD_EK_F16: return BKCL_FLOAT16;
    case PD_EK_BF16: return BKCL_BFLOAT16;
    case PD_EK_F64: return BKCL_FLOAT64;
    case PD_EK_U8: return BKCL_UINT8;
    case PD_EK_I32: return BKCL_INT32;
    case PD_EK_I64: return BKCL_INT64;
    default: return -1;
    }
}

static int pd_bkcl_redop(enum pd_op_id op)
{
    switch (op) {
    case PD_OP_SUM: return BKCL_ADD;
    case PD_OP_PROD: return BKCL_PRODUCT;
    case PD_OP_MIN: return BKCL_MIN;
    case PD_OP_MAX: return BKCL_MAX;
    default: return -1;
    }
}

static int pd_bkcl_check(BKCLResult_t rc, const char *what, char *err,
                         size_t errlen)
{
    return rc == BKCL_SUCCESS ? 0 : pd_bkcl_fail(err, errlen, what, rc);
}

static int pd_bkcl_allreduce(void *comm, const void *sendbuf, void *recvbuf,
                             size_t count, int dtype, int op, void *stream,
                             char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.all_reduce((BKCLContext_t)comm, sendbuf,
                                            recvbuf, count,
                                            (BKCLDataType)dtype, (BKCLOp)op,
                                            (XPUStream)stream),
                         "bkcl_all_reduce", err, errlen);
}

static int pd_bkcl_broadcast(void *comm, const void *sendbuf, void *recvbuf,
                             size_t count, int dtype, int root, void *stream,
                             char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.broadcast((BKCLContext_t)comm, sendbuf,
                                           recvbuf, count,
                                           (BKCLDataType)dtype, root,
                                           (XPUStream)stream),
                         "bkcl_broadcast", err, errlen);
}

static int pd_bkcl_reduce(void *comm, const void *sendbuf, void *recvbuf,
                          size_t count, int dtype, int op, int root,
                          void *stream, char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.reduce((BKCLContext_t)comm, sendbuf, recvbuf,
                                        count, (BKCLDataType)dtype,
                                        (BKCLOp)op, root, (XPUStream)stream),
                         "bkcl_reduce", err, errlen);
}

static int pd_bkcl_allgather(void *comm, const void *sendbuf, void *recvbuf,
                             size_t sendcount, int dtype, void *stream,
                             char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.all_gather((BKCLContext_t)comm, sendbuf,
                                            sendcount, recvbuf,
                                            (BKCLDataType)dtype,
                                            (XPUStream)stream),
                         "bkcl_all_gather", err, errlen);
}

static int pd_bkcl_reduce_scatter(void *comm, const void *sendbuf,
                                  void *recvbuf, size_t recvcount, int dtype,
                                  int op, void *stream, char *err,
                                  size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.reduce_scatter((BKCLContext_t)comm, sendbuf,
                                                recvbuf, recvcount,
                                                (BKCLDataType)dtype,
                                                (BKCLOp)op, (XPUStream)stream),
                         "bkcl_reduce_scatter", err, errlen);
}

static int pd_bkcl_send(void *comm, const void *buf, size_t bytes, int peer,
                        void *stream, char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.send((BKCLContext_t)comm, buf, bytes, peer,
                                      BKCL_UINT8, (XPUStream)stream),
                         "bkcl_send", err, errlen);
}

static int pd_bkcl_recv(void *comm, void *buf, size_t bytes, int peer,
                        void *stream, char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.recv((BKCLContext_t)comm, buf, bytes, peer,
                                      BKCL_UINT8, (XPUStream)stream),
                         "bkcl_recv", err, errlen);
}

static int pd_bkcl_group_start(char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.group_start(), "bkcl_group_start", err,
                         errlen);
}

static int pd_bkcl_group_end(char *err, size_t errlen)
{
    return pd_bkcl_check(pd_bkcl.group_end(), "bkcl_group_end", err, errlen);
}

static void pd_bkcl_describe(char *buf, size_t len)
{
    Dl_info info;
    const char *path = "libbkcl";
    if (pd_bkcl.get_unique_id != NULL &&
        dladdr((void *)pd_bkcl.get_unique_id, &info) != 0 &&
        info.dli_fname != NULL)
        path = info.dli_fname;
    snprintf(buf, len, "BKCL from %s", path);
}

const struct pd_dccl_binding pd_dccl_bkcl = {
    .name = "bkcl",
    .memory = "XPU",
    .unique_id_bytes = sizeof(BKCLUniqueId),
    .load = pd_bkcl_load,
    .device_count = pd_bkcl_device_count,
    .set_device = pd_bkcl_set_device,
    .memory_kind = pd_bkcl_memory_kind,
    .copy = pd_bkcl_copy,
    .host_alloc = pd_bkcl_host_alloc,
    .host_free = pd_bkcl_host_free,
    .get_unique_id = pd_bkcl_get_unique_id,
    .comm_init = pd_bkcl_comm_init,
    .comm_destroy = pd_bkcl_comm_destroy,
    .stream_create = pd_bkcl_stream_create,
    .stream_destroy = pd_bkcl_stream_destroy,
    .stream_wait = pd_bkcl_stream_wait,
    .dtype = pd_bkcl_dtype,
    .redop = pd_bkcl_redop,
    .allreduce = pd_bkcl_allreduce,
    .broadcast = pd_bkcl_broadcast,
    .reduce = pd_bkcl_reduce,
    .allgather = pd_bkcl_allgather,
    .reduce_scatter = pd_bkcl_reduce_scatter,
    .send = pd_bkcl_send,
    .recv = pd_bkcl_recv,
    .group_start = pd_bkcl_group_start,
    .group_end = pd_bkcl_group_end,
    .describe = pd_bkcl_describe,
};

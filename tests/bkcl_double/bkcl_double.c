/*
 * TEST DOUBLE of BKCL, Kunlun's collective library (libbkcl.so), for
 * pdmpi's tests. It is not BKCL and drives no hardware; it implements the
 * entry points declared in backend/dccl/bkcl_api.h, with exactly those
 * signatures, well enough that ranks in separate processes on one host
 * really communicate, so pdmpi's BKCL binding can be tested without an XPU.
 *
 * A thin face over the doubles' shared engine (tests/ccl_double/engine.h),
 * which moves the data between processes and documents the environment
 * (BKCL_DOUBLE_TIMEOUT, BKCL_DOUBLE_CHUNK_BYTES). Buffers must be "XPU
 * memory" of the rank's device, i.e. come from the xpurt double's
 * xpu_malloc (this library links against it): a host pointer reaching
 * BKCL is a routing bug in the caller. Everything is synchronous.
 *
 * Extra export for tests: bkcl_double_calls(name).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "backend/dccl/bkcl_api.h"
#include "../ccl_double/engine.h"

/* Entry points (the header only has their typedefs). */
BKCLResult_t bkcl_get_unique_id(BKCLUniqueId *id);
BKCLResult_t bkcl_init_rank(BKCLContext_t *comm, int rank, int nranks,
                            const BKCLUniqueId *id);
BKCLResult_t bkcl_destroy_context(BKCLContext_t comm);
BKCLResult_t bkcl_all_reduce(BKCLContext_t comm, const void *sendbuf,
                             void *recvbuf, size_t count, BKCLDataType dtype,
                             BKCLOp op, XPUStream stream);
BKCLResult_t bkcl_broadcast(BKCLContext_t comm, const void *sendbuf,
                            void *recvbuf, size_t count, BKCLDataType dtype,
                            int root, XPUStream stream);
BKCLResult_t bkcl_reduce(BKCLContext_t comm, const void *sendbuf,
                         void *recvbuf, size_t count, BKCLDataType dtype,
                         BKCLOp op, int root, XPUStream stream);
BKCLResult_t bkcl_all_gather(BKCLContext_t comm, const void *sendbuf,
                             size_t sendcount, void *recvbuf,
                             BKCLDataType dtype, XPUStream stream);
BKCLResult_t bkcl_reduce_scatter(BKCLContext_t comm, const void *sendbuf,
                                 void *recvbuf, size_t recvcount,
                                 BKCLDataType dtype, BKCLOp op,
                                 XPUStream stream);
BKCLResult_t bkcl_send(BKCLContext_t comm, const void *buf, size_t count,
                       int peer, BKCLDataType dtype, XPUStream stream);
BKCLResult_t bkcl_recv(BKCLContext_t comm, void *buf, size_t count, int peer,
                       BKCLDataType dtype, XPUStream stream);
BKCLResult_t bkcl_group_start(void);
BKCLResult_t bkcl_group_end(void);
long bkcl_double_calls(const char *name);

/* From the xpurt double (libbkcl.so is linked against libxpurt.so, as the
 * real one is, so both see the same allocation table and device). */
int xpu_current_device(int *device);
int xpu_pointer_get_attrs(pd_xpu_pointer_attrs *attrs, const void *ptr);

/* ---- call counting (the only global state) ---- */

enum entry {
    E_GET_UNIQUE_ID, E_INIT_RANK, E_DESTROY_CONTEXT, E_ALL_REDUCE,
    E_BROADCAST, E_REDUCE, E_ALL_GATHER, E_REDUCE_SCATTER, E_SEND, E_RECV,
    E_GROUP_START, E_GROUP_END, E_COUNT
};

static const char *const entry_names[E_COUNT] = {
    "bkcl_get_unique_id", "bkcl_init_rank", "bkcl_destroy_context",
    "bkcl_all_reduce", "bkcl_broadcast", "bkcl_reduce", "bkcl_all_gather",
    "bkcl_reduce_scatter", "bkcl_send", "bkcl_recv", "bkcl_group_start",
    "bkcl_group_end",
};

static _Atomic long entry_calls[E_COUNT];

static void count_call(enum entry e)
{
    atomic_fetch_add_explicit(&entry_calls[e], 1, memory_order_relaxed);
}

/* How often the named entry point was called in this process; -1 for a
 * name that is not an entry point, so a typo in a test cannot pass. */
long bkcl_double_calls(const char *name)
{
    for (int e = 0; name && e < E_COUNT; e++)
        if (strcmp(name, entry_names[e]) == 0)
            return atomic_load_explicit(&entry_calls[e],
                                        memory_order_relaxed);
    return -1;
}

static const struct ccl_face face = {
    .name = "bkcl double", .env = "BKCL_DOUBLE",
    .id_prefix = "/bkcl_double_", .device = "XPU",
};

/* The engine's result as BKCL's. */
static BKCLResult_t result(enum ccl_result rc)
{
    switch (rc) {
    case CCL_OK: return BKCL_SUCCESS;
    case CCL_INVALID: return BKCL_INVALID_ARGUMENT;
    default: return BKCL_SYSTEM_ERROR;
    }
}

/* ---- communicators ---- */

BKCLResult_t bkcl_get_unique_id(BKCLUniqueId *id)
{
    count_call(E_GET_UNIQUE_ID);
    if (!id)
        return BKCL_INVALID_ARGUMENT;
    return ccl_make_id(&face, id->internal, sizeof id->internal) == 0
               ? BKCL_SUCCESS : BKCL_SYSTEM_ERROR;
}

BKCLResult_t bkcl_init_rank(BKCLContext_t *comm, int rank, int nranks,
                            const BKCLUniqueId *id)
{
    struct ccl_comm *c;
    int device;

    count_call(E_INIT_RANK);
    if (!comm || !id)
        return BKCL_INVALID_ARGUMENT;
    if (xpu_current_device(&device) != 0)
        return BKCL_RUNTIME_ERROR;
    BKCLResult_t rc = result(ccl_init(&face, &c, rank, nranks, id->internal,
                                      sizeof id->internal, device,
                                      "bkcl_init_rank"));
    if (rc == BKCL_SUCCESS)
        *comm = (BKCLContext_t)c;
    return rc;
}

BKCLResult_t bkcl_destroy_context(BKCLContext_t comm)
{
    count_call(E_DESTROY_CONTEXT);
    if (!comm)
        return BKCL_INVALID_ARGUMENT;
    ccl_destroy((struct ccl_comm *)comm);
    return BKCL_SUCCESS;
}

#define ENGINE(comm) ((struct ccl_comm *)(comm))

/* ---- argument checks (all before any barrier, so every rank given the
 * same bad arguments fails alike without waiting on the others) ---- */

/* BKCL's types as the engine's; -1 for an unknown one. */
static int engine_type(BKCLDataType dtype)
{
    switch (dtype) {
    case BKCL_UINT8: return CCL_UINT8;
    case BKCL_FLOAT16: return CCL_FLOAT16;
    case BKCL_BFLOAT16: return CCL_BFLOAT16;
    case BKCL_FLOAT: return CCL_FLOAT32;
    case BKCL_INT32: return CCL_INT32;
    case BKCL_FLOAT64: return CCL_FLOAT64;
    case BKCL_INT64: return CCL_INT64;
    }
    return -1;
}

static int engine_op(BKCLOp op)
{
    switch (op) {
    case BKCL_ADD: return CCL_SUM;
    case BKCL_PRODUCT: return CCL_PROD;
    case BKCL_MIN: return CCL_MIN;
    case BKCL_MAX: return CCL_MAX;
    }
    return -1;
}

static BKCLResult_t check_comm(BKCLContext_t comm, const char *fn)
{
    if (!comm)
        return BKCL_INVALID_ARGUMENT;
    return result(ccl_usable(ENGINE(comm), fn));
}

/* The element size of dtype (and op valid, when use_op), or 0. */
static size_t check_type(BKCLContext_t comm, const char *fn,
                         BKCLDataType dtype, BKCLOp op, int use_op)
{
    if (engine_type(dtype) < 0) {
        ccl_complain(&face, ENGINE(comm), "%s: unknown data type %d", fn,
                     (int)dtype);
        return 0;
    }
    if (use_op && engine_op(op) < 0) {
        ccl_complain(&face, ENGINE(comm), "%s: unknown reduction op %d", fn,
                     (int)op);
        return 0;
    }
    return ccl_type_size(engine_type(dtype));
}

/* count * blocks elements of size es in bytes, or -1 on overflow. */
static int total_bytes(size_t count, size_t blocks, size_t es, size_t *out)
{
    if (blocks && count > SIZE_MAX / blocks / es)
        return -1;
    *out = count * blocks * es;
    return 0;
}

/* A buffer must be XPU memory of the communicator's device: the real
 * library would fault on anything else. */
static BKCLResult_t check_buffer(BKCLContext_t comm, const char *fn,
                                 const char *what, const void *p,
                                 size_t bytes)
{
    struct ccl_comm *c = ENGINE(comm);
    pd_xpu_pointer_attrs attrs;

    if (bytes == 0)
        return BKCL_SUCCESS;
    if (!p) {
        ccl_complain(&face, c, "%s: %s is NULL", fn, what);
        return BKCL_INVALID_ARGUMENT;
    }
    if (xpu_pointer_get_attrs(&attrs, p) != 0)
        return BKCL_RUNTIME_ERROR;
    if (attrs.memory_type != XPU_MEMORY_DEVICE) {
        ccl_complain(&face, c, "%s: %s %p is host memory, not XPU memory",
                     fn, what, p);
        return BKCL_INVALID_ARGUMENT;
    }
    if (attrs.device != ccl_device(c)) {
        ccl_complain(&face, c, "%s: %s %p is on XPU %d, the communicator "
                     "on XPU %d", fn, what, p, attrs.device, ccl_device(c));
        return BKCL_INVALID_ARGUMENT;
    }
    return BKCL_SUCCESS;
}

static int root_valid(BKCLContext_t comm, const char *fn, int root)
{
    int n = ccl_nranks(ENGINE(comm));

    if (root >= 0 && root < n)
        return 1;
    ccl_complain(&face, ENGINE(comm), "%s: root %d outside [0, %d)", fn,
                 root, n);
    return 0;
}

/* ---- collectives ---- */

/* Checks shared by all_reduce (all) and reduce. recvbuf matters on the
 * root only, as in NCCL. */
static BKCLResult_t check_reduce(BKCLContext_t comm, const char *fn,
                                 const void *sendbuf, const void *recvbuf,
                                 size_t count, BKCLDataType dtype, BKCLOp op,
                                 int all, int root)
{
    BKCLResult_t rc;
    size_t bytes, es;

    if ((rc = check_comm(comm, fn)) != BKCL_SUCCESS)
        return rc;
    if ((es = check_type(comm, fn, dtype, op, 1)) == 0)
        return BKCL_INVALID_ARGUMENT;
    if ((!all && !root_valid(comm, fn, root)) ||
        total_bytes(count, 1, es, &bytes) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(comm, fn, "sendbuf", sendbuf, bytes)) != 0)
        return rc;
    if (all || root == ccl_rank(ENGINE(comm)))
        rc = check_buffer(comm, fn, "recvbuf", recvbuf, bytes);
    return rc;
}

BKCLResult_t bkcl_all_reduce(BKCLContext_t comm, const void *sendbuf,
                             void *recvbuf, size_t count, BKCLDataType dtype,
                             BKCLOp op, XPUStream stream)
{
    const char *fn = "bkcl_all_reduce";
    BKCLResult_t rc;

    (void)stream;               /* everything is synchronous */
    count_call(E_ALL_REDUCE);
    rc = check_reduce(comm, fn, sendbuf, recvbuf, count, dtype, op, 1, 0);
    if (rc != BKCL_SUCCESS)
        return rc;
    return result(ccl_reduce(ENGINE(comm), fn, sendbuf, recvbuf, count,
                             (enum ccl_type)engine_type(dtype),
                             (enum ccl_op)engine_op(op), -1));
}

BKCLResult_t bkcl_reduce(BKCLContext_t comm, const void *sendbuf,
                         void *recvbuf, size_t count, BKCLDataType dtype,
                         BKCLOp op, int root, XPUStream stream)
{
    const char *fn = "bkcl_reduce";
    BKCLResult_t rc;

    (void)stream;
    count_call(E_REDUCE);
    rc = check_reduce(comm, fn, sendbuf, recvbuf, count, dtype, op, 0, root);
    if (rc != BKCL_SUCCESS)
        return rc;
    return result(ccl_reduce(ENGINE(comm), fn, sendbuf, recvbuf, count,
                             (enum ccl_type)engine_type(dtype),
                             (enum ccl_op)engine_op(op), root));
}

BKCLResult_t bkcl_broadcast(BKCLContext_t comm, const void *sendbuf,
                            void *recvbuf, size_t count, BKCLDataType dtype,
                            int root, XPUStream stream)
{
    const char *fn = "bkcl_broadcast";
    BKCLResult_t rc;
    size_t es, bytes;

    (void)stream;
    count_call(E_BROADCAST);
    if ((rc = check_comm(comm, fn)) != BKCL_SUCCESS)
        return rc;
    if ((es = check_type(comm, fn, dtype, BKCL_ADD, 0)) == 0 ||
        !root_valid(comm, fn, root) || total_bytes(count, 1, es, &bytes) != 0)
        return BKCL_INVALID_ARGUMENT;
    /* sendbuf matters on the root only. */
    if ((root == ccl_rank(ENGINE(comm)) &&
         (rc = check_buffer(comm, fn, "sendbuf", sendbuf, bytes)) != 0) ||
        (rc = check_buffer(comm, fn, "recvbuf", recvbuf, bytes)) != 0)
        return rc;
    return result(ccl_broadcast(ENGINE(comm), fn, sendbuf, recvbuf, bytes,
                                root));
}

BKCLResult_t bkcl_all_gather(BKCLContext_t comm, const void *sendbuf,
                             size_t sendcount, void *recvbuf,
                             BKCLDataType dtype, XPUStream stream)
{
    const char *fn = "bkcl_all_gather";
    BKCLResult_t rc;
    size_t es, bytes, all;

    (void)stream;
    count_call(E_ALL_GATHER);
    if ((rc = check_comm(comm, fn)) != BKCL_SUCCESS)
        return rc;
    if ((es = check_type(comm, fn, dtype, BKCL_ADD, 0)) == 0 ||
        total_bytes(sendcount, 1, es, &bytes) != 0 ||
        total_bytes(sendcount, (size_t)ccl_nranks(ENGINE(comm)), es,
                    &all) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(comm, fn, "sendbuf", sendbuf, bytes)) != 0 ||
        (rc = check_buffer(comm, fn, "recvbuf", recvbuf, all)) != 0)
        return rc;
    return result(ccl_allgather(ENGINE(comm), fn, sendbuf, recvbuf, bytes));
}

BKCLResult_t bkcl_reduce_scatter(BKCLContext_t comm, const void *sendbuf,
                                 void *recvbuf, size_t recvcount,
                                 BKCLDataType dtype, BKCLOp op,
                                 XPUStream stream)
{
    const char *fn = "bkcl_reduce_scatter";
    BKCLResult_t rc;
    size_t es, bytes, all;

    (void)stream;
    count_call(E_REDUCE_SCATTER);
    if ((rc = check_comm(comm, fn)) != BKCL_SUCCESS)
        return rc;
    if ((es = check_type(comm, fn, dtype, op, 1)) == 0 ||
        total_bytes(recvcount, 1, es, &bytes) != 0 ||
        total_bytes(recvcount, (size_t)ccl_nranks(ENGINE(comm)), es,
                    &all) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(comm, fn, "sendbuf", sendbuf, all)) != 0 ||
        (rc = check_buffer(comm, fn, "recvbuf", recvbuf, bytes)) != 0)
        return rc;
    return result(ccl_reduce_scatter(ENGINE(comm), fn, sendbuf, recvbuf,
                                     recvcount,
                                     (enum ccl_type)engine_type(dtype),
                                     (enum ccl_op)engine_op(op)));
}

/* ---- point to point ---- */

/* Runs what the outermost group end hands back, at once. */
static BKCLResult_t group_end(void)
{
    struct ccl_ops *ops;

    if (ccl_group_end(&face, &ops) != 0)
        return BKCL_INVALID_ARGUMENT;
    return ops ? result(ccl_ops_run(ops)) : BKCL_SUCCESS;
}

/* Records a send or recv; outside a group it runs at once as a group of
 * one. */
static BKCLResult_t p2p_post(BKCLContext_t comm, const char *fn,
                             const void *buf, size_t count, int peer,
                             BKCLDataType dtype, int is_send)
{
    BKCLResult_t rc;
    size_t bytes, es;

    if ((rc = check_comm(comm, fn)) != BKCL_SUCCESS)
        return rc;
    if ((es = check_type(comm, fn, dtype, BKCL_ADD, 0)) == 0 ||
        total_bytes(count, 1, es, &bytes) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(comm, fn, "buf", buf, bytes)) != BKCL_SUCCESS)
        return rc;
    ccl_group_start();
    rc = result(ccl_p2p_add(ENGINE(comm), fn, (void *)(uintptr_t)buf, bytes,
                            peer, is_send));
    BKCLResult_t end = group_end();
    return rc != BKCL_SUCCESS ? rc : end;
}

BKCLResult_t bkcl_send(BKCLContext_t comm, const void *buf, size_t count,
                       int peer, BKCLDataType dtype, XPUStream stream)
{
    (void)stream;
    count_call(E_SEND);
    return p2p_post(comm, "bkcl_send", buf, count, peer, dtype, 1);
}

BKCLResult_t bkcl_recv(BKCLContext_t comm, void *buf, size_t count, int peer,
                       BKCLDataType dtype, XPUStream stream)
{
    (void)stream;
    count_call(E_RECV);
    return p2p_post(comm, "bkcl_recv", buf, count, peer, dtype, 0);
}

BKCLResult_t bkcl_group_start(void)
{
    count_call(E_GROUP_START);
    ccl_group_start();
    return BKCL_SUCCESS;
}

/* Only the outermost group_end runs the recorded sends and recvs.
 * Collectives called inside a group are not deferred: they run at once. */
BKCLResult_t bkcl_group_end(void)
{
    count_call(E_GROUP_END);
    return group_end();
}

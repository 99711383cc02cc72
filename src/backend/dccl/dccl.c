/* The generic device-CCL module (see dccl.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dccl/dccl.h"
#include "base/clock.h"
#include "base/hex.h"
#include "boot/store.h"

struct pd_dccl_comm {
    struct pd_dccl *d;
    void *comm;                     /* the library's communicator */
    void *stream;                   /* private to this communicator */
    int rank;
    int size;
    int timeout_ms;
    int (*watch)(void *ctx, char *why, size_t len);
    void *watch_ctx;
    bool broken;                    /* a wait failed: only abort is left */
};

int pd_dccl_open(struct pd_dccl *d, const struct pd_dccl_binding *b,
                 bool with_ccl, const char *ccl_lib, const char *runtime_lib,
                 char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->b = b;
    d->device = -1;
    /* The runtime first: without a device there is no point in loading
     * the library (libnccl alone is over 200 MB). */
    char why[384];
    if (b->load(false, ccl_lib, runtime_lib, err, errlen) != 0)
        return -1;
    if (b->device_count(&d->device_count, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "no %s device is visible (%s)", b->memory, why);
        return -1;
    }
    if (d->device_count <= 0) {
        snprintf(err, errlen, "no %s device is visible", b->memory);
        return -1;
    }
    if (with_ccl && b->load(true, ccl_lib, runtime_lib, err, errlen) != 0)
        return -1;
    d->ccl = with_ccl;
    return 0;
}

int pd_dccl_select_device(struct pd_dccl *d, int device, char *err,
                          size_t errlen)
{
    if (device < 0 || device >= d->device_count) {
        snprintf(err, errlen, "%s device %d does not exist (%d visible)",
                 d->b->memory, device, d->device_count);
        return -1;
    }
    if (d->b->set_device(device, err, errlen) != 0)
        return -1;
    d->device = device;
    return 0;
}

bool pd_dccl_supports(const struct pd_dccl *d, enum pd_elem_kind kind,
                      enum pd_op_id op)
{
    return d->ccl && d->b->dtype(kind) >= 0 && d->b->redop(op) >= 0;
}

/* Rank 0 makes the unique id and posts it, hex-encoded; the others wait
 * for it (bounded by the timeout). */
static int pd_dccl_share_id(struct pd_dccl *d,
                            const struct pd_dccl_comm_init *init,
                            unsigned char *id, char *err, size_t errlen)
{
    size_t n = d->b->unique_id_bytes;
    char key[512];
    snprintf(key, sizeof(key), "%s/%s-unique-id", init->store_prefix,
             d->b->name);
    if (init->rank == 0) {
        if (d->b->get_unique_id(id, err, errlen) != 0)
            return -1;
        if (init->size == 1)
            return 0;
        char *hex = malloc(2 * n + 1);
        if (hex == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        pd_hex_encode(id, n, hex);
        int rc = pd_store_set(init->store, key, hex, 2 * n, err, errlen);
        free(hex);
        return rc;
    }
    void *value = NULL;
    size_t len = 0;
    if (pd_store_get(init->store, key, &value, &len, init->timeout_ms, err,
                     errlen) != 0)
        return -1;
    int rc = pd_hex_decode(value, len, id, n);
    free(value);
    if (rc != 0)
        snprintf(err, errlen, "malformed %s unique id in the store (%zu "
                 "hex digits, expected %zu)", d->b->name, len, 2 * n);
    return rc;
}

int pd_dccl_comm_create(struct pd_dccl *d,
                        const struct pd_dccl_comm_init *init,
                        struct pd_dccl_comm **out, char *err, size_t errlen)
{
    *out = NULL;
    struct pd_dccl_comm *c = calloc(1, sizeof(*c));
    unsigned char *id = calloc(1, d->b->unique_id_bytes);
    if (c == NULL || id == NULL) {
        free(c);
        free(id);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->d = d;
    c->rank = init->rank;
    c->size = init->size;
    c->timeout_ms = init->timeout_ms;
    c->watch = init->watch;
    c->watch_ctx = init->watch_ctx;
    int rc = d->b->set_device(d->device, err, errlen);
    if (rc == 0)
        rc = pd_dccl_share_id(d, init, id, err, errlen);
    if (rc == 0)
        rc = d->b->comm_init(&c->comm, init->size, init->rank, id, err,
                             errlen);
    if (rc == 0 && d->b->stream_create(&c->stream, err, errlen) != 0) {
        d->b->comm_destroy(c->comm, true);
        rc = -1;
    }
    free(id);
    if (rc != 0) {
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

void pd_dccl_comm_destroy(struct pd_dccl_comm *c, bool abort)
{
    if (c == NULL)
        return;
    c->d->b->set_device(c->d->device, NULL, 0);
    /* The library's communicator first: an abort ends work the stream
     * may still hold for it. */
    if (c->comm != NULL)
        c->d->b->comm_destroy(c->comm, abort || c->broken);
    c->d->b->stream_destroy(c->stream);
    free(c);
}

/* A failed call: abort the library's communicator now, so no rank's
 * stream waits forever for a peer that will not come; the communicator
 * is left for MPI_Comm_free, and every later call on it fails at once. */
static void pd_dccl_break(struct pd_dccl_comm *c)
{
    c->broken = true;
    if (c->comm != NULL)
        c->d->b->comm_destroy(c->comm, true);
    c->comm = NULL;
}

/* Before a launch: this thread on the communicator's device, and the
 * communicator not already broken by an earlier failure. */
static int pd_dccl_begin(struct pd_dccl_comm *c, char *err, size_t errlen)
{
    if (c->broken) {
        snprintf(err, errlen, "the %s communicator failed earlier and was "
                 "aborted", c->d->b->name);
        return PD_BACKEND_ERR_IO;
    }
    if (c->d->b->set_device(c->d->device, err, errlen) != 0)
        return PD_BACKEND_ERR_INTERNAL;
    if (c->d->b->stream_follow_default != NULL &&
        c->d->b->stream_follow_default(c->stream, err, errlen) != 0)
        return PD_BACKEND_ERR_INTERNAL;
    return PD_BACKEND_OK;
}

/* After a launch: block until the stream is done, as CUDA-aware MPIs do
 * for blocking calls. A failure leaves the communicator unusable. */
static int pd_dccl_finish(struct pd_dccl_comm *c, int launched, char *err,
                          size_t errlen)
{
    if (launched != 0) {
        pd_dccl_break(c);
        return PD_BACKEND_ERR_INTERNAL;
    }
    int64_t start = pd_clock_ms(), deadline = start + c->timeout_ms;
    for (;;) {
        int64_t slice = pd_clock_ms() + PD_DCCL_WATCH_MS;
        int rc = c->d->b->stream_wait(c->comm, c->stream,
                                      slice < deadline ? slice : deadline,
                                      err, errlen);
        if (rc == 0)
            return PD_BACKEND_OK;
        if (rc < 0) {
            pd_dccl_break(c);
            return PD_BACKEND_ERR_IO;
        }
        char why[400];
        int status = c->watch != NULL
                         ? c->watch(c->watch_ctx, why, sizeof(why))
                         : PD_BACKEND_OK;
        if (status == PD_BACKEND_ERR_MISMATCH) {
            snprintf(err, errlen, "%s", why);   /* names both calls */
            pd_dccl_break(c);
            return status;
        }
        if (status != PD_BACKEND_OK) {
            snprintf(err, errlen, "the %s operation cannot complete: %s",
                     c->d->b->name, why);
            pd_dccl_break(c);
            return status;
        }
        if (pd_clock_ms() >= deadline) {
            snprintf(err, errlen, "the %s operation did not complete within "
                     "%.3g s", c->d->b->name,
                     (double)(pd_clock_ms() - start) / 1000);
            pd_dccl_break(c);
            return PD_BACKEND_ERR_TIMEOUT;
        }
    }
}

int pd_dccl_allreduce(struct pd_dccl_comm *c, const void *sendbuf,
                      void *recvbuf, size_t count, enum pd_elem_kind kind,
                      enum pd_op_id op, char *err, size_t errlen)
{
    const struct pd_dccl_binding *b = c->d->b;
    int rc = pd_dccl_begin(c, err, errlen);
    if (rc != PD_BACKEND_OK)
        return rc;
    return pd_dccl_finish(
        c, b->allreduce(c->comm, sendbuf ? sendbuf : recvbuf, recvbuf, count,
                        b->dtype(kind), b->redop(op), c->stream, err, errlen),
        err, errlen);
}

int pd_dccl_reduce(struct pd_dccl_comm *c, const void *sendbuf,
                   void *recvbuf, size_t count, enum pd_elem_kind kind,
                   enum pd_op_id op, int root, char *err, size_t errlen)
{
    const struct pd_dccl_binding *b = c->d->b;
    int rc = pd_dccl_begin(c, err, errlen);
    if (rc != PD_BACKEND_OK)
        return rc;
    return pd_dccl_finish(
        c, b->reduce(c->comm, sendbuf ? sendbuf : recvbuf, recvbuf, count,
                     b->dtype(kind), b->redop(op), root, c->stream, err,
                     errlen),
        err, errlen);
}

int pd_dccl_bcast(struct pd_dccl_comm *c, void *buf, size_t bytes, int root,
                  char *err, size_t errlen)
{
    const struct pd_dccl_binding *b = c->d->b;
    int rc = pd_dccl_begin(c, err, errlen);
    if (rc != PD_BACKEND_OK)
        return rc;
    return pd_dccl_finish(c, b->broadcast(c->comm, buf, buf, bytes,
                                          b->dtype(PD_EK_U8), root,
                                          c->stream, err, errlen),
                          err, errlen);
}

int pd_dccl_allgather(struct pd_dccl_comm *c, const void *sendbuf,
                      void *recvbuf, size_t bytes, char *err, size_t errlen)
{
    const struct pd_dccl_binding *b = c->d->b;
    int rc = pd_dccl_begin(c, err, errlen);
    if (rc != PD_BACKEND_OK)
        return rc;
    /* In place: this rank's block is already in recvbuf. */
    const void *in = sendbuf ? sendbuf
                             : (const char *)recvbuf + (size_t)c->rank * bytes;
    return pd_dccl_finish(c, b->allgather(c->comm, in, recvbuf, bytes,
                                          b->dtype(PD_EK_U8), c->stream, err,
                                          errlen),
                          err, errlen);
}

int pd_dccl_reduce_scatter(struct pd_dccl_comm *c, const void *sendbuf,
                           void *recvbuf, size_t count,
                           enum pd_elem_kind kind, enum pd_op_id op,
                           char *err, size_t errlen)
{
    const struct pd_dccl_binding *b = c->d->b;
    int rc = pd_dccl_begin(c, err, errlen);
    if (rc != PD_BACKEND_OK)
        return rc;
    return pd_dccl_finish(
        c, b->reduce_scatter(c->comm, sendbuf, recvbuf, count,
                             b->dtype(kind), b->redop(op), c->stream, err,
                             errlen),
        err, errlen);
}

int pd_dccl_exchange(struct pd_dccl_comm *c, const struct pd_p2p_op *ops,
                     size_t n, char *err, size_t errlen)
{
    const struct pd_dccl_binding *b = c->d->b;
    int rc = pd_dccl_begin(c, err, errlen);
    if (rc != PD_BACKEND_OK)
        return rc;
    /* One group: the library progresses every send and receive together,
     * so an all-to-all pattern cannot deadlock. */
    int launched = b->group_start(err, errlen);
    for (size_t i = 0; launched == 0 && i < n; i++) {
        launched = ops[i].is_send
                       ? b->send(c->comm, ops[i].buf, ops[i].bytes,
                                 ops[i].peer, c->stream, err, errlen)
                       : b->recv(c->comm, ops[i].buf, ops[i].bytes,
                                 ops[i].peer, c->stream, err, errlen);
    }
    char end_err[256];
    int ended = b->group_end(end_err, sizeof(end_err));
    if (launched == 0 && ended != 0) {
        snprintf(err, errlen, "%s", end_err);
        launched = ended;
    }
    return pd_dccl_finish(c, launched, err, errlen);
}

int pd_dccl_copy(struct pd_dccl *d, void *dst, const void *src, size_t bytes,
                 char *err, size_t errlen)
{
    if (bytes == 0 || dst == src)
        return 0;
    return d->b->copy(dst, src, bytes, err, errlen);
}

int pd_dccl_resolve(void *lib, const char *libname,
                    const struct pd_dccl_symbol *syms, size_t n, char *err,
                    size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (*syms[i].slot == NULL) {
            snprintf(err, errlen, "%s lacks %s", libname, syms[i].name);
            return -1;
        }
    }
    return 0;
}

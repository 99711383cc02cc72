/*
 * TEST DOUBLE of the CUDA runtime (libcudart) for pdmpi's tests. It is not
 * CUDA and drives no hardware; it implements the entry points pdmpi's NCCL
 * binding resolves, and those its tests use, with the signatures of the
 * toolkit's own header (cuda_runtime_api.h is included, so the compiler
 * checks them), and the real runtime's answers where this double can give
 * them.
 *
 * Device memory the host cannot touch. cudaMalloc maps each allocation
 * twice: the address handed out is PROT_NONE, so code that reads or
 * writes "device memory" on the host faults at once, as it would on a
 * GPU; the double itself (and the NCCL double, through
 * cudart_double_view) works through a second, writable mapping of the
 * same pages. cudaMallocManaged memory is host-accessible, like the real
 * kind; cudaMallocHost memory is pinned host memory.
 *
 * Streams run their work on a thread of their own, in order: work queued
 * on a stream completes later, and cudaStreamQuery says cudaErrorNotReady
 * until it has. The legacy default stream (0) runs work at once.
 *
 * Devices: CUDA_VISIBLE_DEVICES (comma list; set but blank = none), else
 * CUDA_DOUBLE_DEVICES (an integer), else 8. The current device is per
 * thread, starting at 0.
 *
 * Extra exports for the NCCL double and the tests: cudart_double_view,
 * cudart_double_enqueue, cudart_double_live_allocations,
 * cudart_double_calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cudart_double.h"
#include "../ccl_double/counts.h"
#include "../ccl_double/devices.h"

#define DEFAULT_DEVICES 8
#define MAX_DEVICES 4096
#define STREAM_MAGIC 0x43554453u    /* "CUDS" */

/* ---- call counting ---- */

static const char *const entry_names[] = {
    "cudaGetDeviceCount", "cudaSetDevice", "cudaGetDevice", "cudaMalloc",
    "cudaFree", "cudaMallocManaged", "cudaMallocHost", "cudaFreeHost",
    "cudaPointerGetAttributes", "cudaMemcpy", "cudaMemcpyAsync",
    "cudaMemset", "cudaStreamCreate", "cudaStreamCreateWithFlags",
    "cudaStreamDestroy", "cudaStreamQuery", "cudaStreamSynchronize",
    "cudaDeviceSynchronize", "cudaGetErrorString", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaRuntimeGetVersion",
    "cudaEventCreateWithFlags", "cudaEventRecord", "cudaStreamWaitEvent",
};
enum { ENTRY_COUNT = sizeof entry_names / sizeof entry_names[0] };
static _Atomic long entry_calls[ENTRY_COUNT];
static struct ccl_counts counts =
    CCL_COUNTS_INIT("cudart", entry_names, ENTRY_COUNT, entry_calls);

static void count_call(const char *name)
{
    for (int e = 0; e < ENTRY_COUNT; e++)
        if (strcmp(name, entry_names[e]) == 0)
            ccl_count(&counts, e);
}

long cudart_double_calls(const char *name)
{
    return ccl_count_of(&counts, name);
}

#define COUNT() count_call(__func__)

/* ---- errors ---- */

/* As in the real runtime: per thread, kept until cudaGetLastError. */
static _Thread_local cudaError_t last_error = cudaSuccess;

static cudaError_t fail(cudaError_t rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static cudaError_t fail(cudaError_t rc, const char *fmt, ...)
{
    char line[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cudart double: %s\n", line);
    last_error = rc;
    return rc;
}

const char *cudaGetErrorString(cudaError_t error)
{
    COUNT();
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection:
        return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    default: return "unrecognized error code";
    }
}

cudaError_t cudaGetLastError(void)
{
    COUNT();
    cudaError_t rc = last_error;
    last_error = cudaSuccess;
    return rc;
}

cudaError_t cudaPeekAtLastError(void)
{
    COUNT();
    return last_error;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    COUNT();
    if (!runtimeVersion)
        return fail(cudaErrorInvalidValue, "cudaRuntimeGetVersion: NULL");
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

/* ---- devices ---- */

static _Thread_local int current_device;

/* Re-read on every call so tests can change it between calls. */
static int visible_devices(void)
{
    return ccl_visible_devices("CUDA_VISIBLE_DEVICES", "CUDA_DOUBLE_DEVICES",
                               DEFAULT_DEVICES, MAX_DEVICES, "cudart double");
}

cudaError_t cudaGetDeviceCount(int *count)
{
    COUNT();
    if (!count)
        return fail(cudaErrorInvalidValue, "cudaGetDeviceCount: NULL");
    *count = visible_devices();
    if (*count == 0) {
        last_error = cudaErrorNoDevice;
        return cudaErrorNoDevice;
    }
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    COUNT();
    int count = visible_devices();

    if (device < 0 || device >= count)
        return fail(cudaErrorInvalidDevice, "cudaSetDevice(%d): no such "
                    "device (%d visible)", device, count);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    COUNT();
    if (!device)
        return fail(cudaErrorInvalidValue, "cudaGetDevice: NULL");
    *device = current_device;
    return cudaSuccess;
}

/* ---- allocations ---- */

struct allocation {
    uintptr_t base;             /* the address handed out */
    unsigned char *view;        /* where the double reads and writes it */
    size_t size;                /* bytes asked for */
    size_t mapped;              /* bytes of each mapping */
    int device;
    enum cudaMemoryType type;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct allocation *table;
static size_t table_len, table_cap;

static int table_add(const struct allocation *a)
{
    if (table_len == table_cap) {
        size_t cap = table_cap ? 2 * table_cap : 64;
        struct allocation *grown = realloc(table, cap * sizeof *grown);

        if (!grown)
            return -1;
        table = grown;
        table_cap = cap;
    }
    table[table_len++] = *a;
    return 0;
}

/* The allocation containing addr, or -1; caller holds the lock. A
 * zero-byte allocation still owns its first byte. */
static long table_find(uintptr_t addr)
{
    for (size_t i = 0; i < table_len; i++) {
        size_t extent = table[i].size ? table[i].size : 1;

        if (addr >= table[i].base && addr - table[i].base < extent)
            return (long)i;
    }
    return -1;
}

static size_t page_round(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return n == 0 ? page : (n + page - 1) / page * page;
}

/* Device memory: the same pages twice, the handed-out address PROT_NONE. */
static cudaError_t map_device(size_t bytes, struct allocation *a)
{
    size_t len = page_round(bytes);
    int fd = memfd_create("cudart-double", MFD_CLOEXEC);

    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
        if (fd >= 0)
            close(fd);
        return cudaErrorMemoryAllocation;
    }
    void *hidden = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0);
    void *view = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (hidden == MAP_FAILED || view == MAP_FAILED) {
        if (hidden != MAP_FAILED)
            munmap(hidden, len);
        if (view != MAP_FAILED)
            munmap(view, len);
        return cudaErrorMemoryAllocation;
    }
    a->base = (uintptr_t)hidden;
    a->view = view;
    a->mapped = len;
    return cudaSuccess;
}

static cudaError_t allocate(const char *fn, void **ptr, size_t bytes,
                            enum cudaMemoryType type)
{
    struct allocation a = { .size = bytes, .device = current_device,
                            .type = type };
    cudaError_t rc = cudaSuccess;

    if (!ptr)
        return fail(cudaErrorInvalidValue, "%s: NULL result pointer", fn);
    if (type != cudaMemoryTypeHost && current_device >= visible_devices())
        return fail(cudaErrorNoDevice, "%s: device %d is not visible", fn,
                    current_device);
    if (type == cudaMemoryTypeDevice) {
        rc = map_device(bytes, &a);
    } else {
        /* Managed and pinned host memory: the host may use it directly. */
        void *p = NULL;

        if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0)
            rc = cudaErrorMemoryAllocation;
        a.base = (uintptr_t)p;
        a.view = p;
    }
    if (rc != cudaSuccess)
        return fail(rc, "%s(%zu): out of memory", fn, bytes);
    pthread_mutex_lock(&table_lock);
    int added = table_add(&a);
    pthread_mutex_unlock(&table_lock);
    if (added != 0) {
        if (type == cudaMemoryTypeDevice) {
            munmap((void *)a.base, a.mapped);
            munmap(a.view, a.mapped);
        } else {
            free(a.view);
        }
        return fail(cudaErrorMemoryAllocation, "%s: out of memory", fn);
    }
    *ptr = (void *)a.base;
    return cudaSuccess;
}

static cudaError_t release(const char *fn, void *ptr, int host)
{
    struct allocation a;
    long i;

    if (!ptr)
        return cudaSuccess;
    pthread_mutex_lock(&table_lock);
    i = table_find((uintptr_t)ptr);
    if (i >= 0 && table[i].base == (uintptr_t)ptr &&
        (table[i].type == cudaMemoryTypeHost) == host) {
        a = table[i];
        table[i] = table[--table_len];
    } else {
        i = -1;
    }
    if (table_len == 0) {
        free(table);            /* a clean exit for leak checkers */
        table = NULL;
        table_cap = 0;
    }
    pthread_mutex_unlock(&table_lock);
    if (i < 0)
        return fail(cudaErrorInvalidValue, "%s(%p): not the start of an "
                    "allocation of this kind", fn, ptr);
    if (a.type == cudaMemoryTypeDevice) {
        munmap((void *)a.base, a.mapped);
        munmap(a.view, a.mapped);
    } else {
        free(a.view);
    }
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    COUNT();
    return allocate("cudaMalloc", devPtr, size, cudaMemoryTypeDevice);
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    COUNT();
    (void)flags;
    return allocate("cudaMallocManaged", devPtr, size,
                    cudaMemoryTypeManaged);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    COUNT();
    return allocate("cudaMallocHost", ptr, size, cudaMemoryTypeHost);
}

cudaError_t cudaFree(void *devPtr)
{
    COUNT();
    return release("cudaFree", devPtr, 0);
}

cudaError_t cudaFreeHost(void *ptr)
{
    COUNT();
    return release("cudaFreeHost", ptr, 1);
}

long cudart_double_live_allocations(void)
{
    pthread_mutex_lock(&table_lock);
    long n = (long)table_len;
    pthread_mutex_unlock(&table_lock);
    return n;
}

int cudart_double_view(const void *ptr, size_t bytes, int *device,
                       void **view)
{
    int type = cudaMemoryTypeUnregistered;

    pthread_mutex_lock(&table_lock);
    long i = table_find((uintptr_t)ptr);
    if (i >= 0) {
        size_t off = (uintptr_t)ptr - table[i].base;

        if (bytes <= table[i].size - off) {
            type = table[i].type;
            *device = table[i].device;
            *view = table[i].view + off;
        } else {
            type = -1;          /* runs past the end of its allocation */
        }
    }
    pthread_mutex_unlock(&table_lock);
    if (type == cudaMemoryTypeUnregistered) {
        *device = -1;
        *view = (void *)(uintptr_t)ptr;
    }
    return type;
}

/* The real runtime's answers (CUDA 11 on): unregistered host memory is
 * success with type cudaMemoryTypeUnregistered and no pointers. */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                     const void *ptr)
{
    COUNT();
    if (!attributes)
        return fail(cudaErrorInvalidValue, "cudaPointerGetAttributes: NULL");
    memset(attributes, 0, sizeof *attributes);
    pthread_mutex_lock(&table_lock);
    long i = table_find((uintptr_t)ptr);
    if (i >= 0) {
        attributes->type = table[i].type;
        attributes->device = table[i].device;
        attributes->devicePointer = (void *)(uintptr_t)ptr;
        attributes->hostPointer = table[i].type == cudaMemoryTypeDevice
                                      ? NULL : (void *)(uintptr_t)ptr;
    } else {
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = -2;
    }
    pthread_mutex_unlock(&table_lock);
    return cudaSuccess;
}

/* ---- copies ---- */

/* dst and src as the double may touch them, after checking the kind. */
static cudaError_t resolve_copy(const char *fn, void *dst, const void *src,
                                size_t count, enum cudaMemcpyKind kind,
                                void **to, const void **from)
{
    int dd, sd;
    void *sv;
    int dt = cudart_double_view(dst, count, &dd, to);
    int st = cudart_double_view(src, count, &sd, &sv);

    *from = sv;
    if (dt < 0 || st < 0)
        return fail(cudaErrorInvalidValue, "%s: %zu bytes run past the end "
                    "of the %s allocation", fn, count,
                    dt < 0 ? "destination's" : "source's");
    /* Host side: plain or pinned host memory; device side: device or
     * managed memory (managed memory is both). */
    int dst_host = dt != cudaMemoryTypeDevice;
    int src_host = st != cudaMemoryTypeDevice;
    int dst_dev = dt == cudaMemoryTypeDevice || dt == cudaMemoryTypeManaged;
    int src_dev = st == cudaMemoryTypeDevice || st == cudaMemoryTypeManaged;
    int ok;
    switch (kind) {
    case cudaMemcpyHostToHost: ok = dst_host && src_host; break;
    case cudaMemcpyHostToDevice: ok = dst_dev && src_host; break;
    case cudaMemcpyDeviceToHost: ok = dst_host && src_dev; break;
    case cudaMemcpyDeviceToDevice: ok = dst_dev && src_dev; break;
    case cudaMemcpyDefault: ok = 1; break;
    default:
        return fail(cudaErrorInvalidMemcpyDirection, "%s: kind %d", fn,
                    (int)kind);
    }
    if (!ok)
        return fail(cudaErrorInvalidValue, "%s: copy kind %d does not match "
                    "the pointers (%p <- %p)", fn, (int)kind, dst, src);
    if (count && (!dst || !src))
        return fail(cudaErrorInvalidValue, "%s: NULL pointer", fn);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind)
{
    COUNT();
    void *to;
    const void *from;
    cudaError_t rc = resolve_copy("cudaMemcpy", dst, src, count, kind, &to,
                                  &from);

    if (rc == cudaSuccess && count)
        memmove(to, from, count);
    return rc;
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    COUNT();
    int device;
    void *view;
    int type = cudart_double_view(devPtr, count, &device, &view);

    if (type != cudaMemoryTypeDevice && type != cudaMemoryTypeManaged)
        return fail(cudaErrorInvalidValue, "cudaMemset(%p): not device "
                    "memory", devPtr);
    memset(view, value, count);
    return cudaSuccess;
}

/* ---- streams ---- */

struct work {
    void (*fn)(void *);
    void *arg;
    struct work *next;
};

struct CUstream_st {
    unsigned magic;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct work *head, *tail;
    int running;                /* the thread is inside an item */
    int stopping;
};

static void *stream_main(void *arg)
{
    struct CUstream_st *s = arg;

    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->changed, &s->lock);
        if (!s->head)
            break;              /* stopping, and nothing left */
        struct work *w = s->head;
        s->head = w->next;
        if (!s->head)
            s->tail = NULL;
        s->running = 1;
        pthread_mutex_unlock(&s->lock);
        w->fn(w->arg);
        free(w);
        pthread_mutex_lock(&s->lock);
        s->running = 0;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static int stream_valid(cudaStream_t s)
{
    return s && s->magic == STREAM_MAGIC;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                      unsigned int flags)
{
    COUNT();
    (void)flags;
    if (!pStream)
        return fail(cudaErrorInvalidValue, "cudaStreamCreateWithFlags: NULL");
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return fail(cudaErrorMemoryAllocation, "cudaStreamCreate: no memory");
    s->magic = STREAM_MAGIC;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        free(s);
        return fail(cudaErrorMemoryAllocation, "cudaStreamCreate: no thread");
    }
    *pStream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    COUNT();
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

/* Like the real runtime, destroying a stream with work queued lets that
 * work finish first. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    COUNT();
    if (!stream_valid(stream))
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy(%p): "
                    "not a stream of this runtime", (void *)stream);
    pthread_mutex_lock(&stream->lock);
    stream->stopping = 1;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    pthread_join(stream->thread, NULL);
    stream->magic = 0;
    pthread_mutex_destroy(&stream->lock);
    pthread_cond_destroy(&stream->changed);
    free(stream);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    COUNT();
    if (!stream)
        return cudaSuccess;     /* the default stream: nothing queued */
    if (!stream_valid(stream))
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamQuery(%p): "
                    "not a stream of this runtime", (void *)stream);
    pthread_mutex_lock(&stream->lock);
    int busy = stream->head != NULL || stream->running;
    pthread_mutex_unlock(&stream->lock);
    return busy ? cudaErrorNotReady : cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    COUNT();
    if (!stream)
        return cudaSuccess;
    if (!stream_valid(stream))
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize"
                    "(%p): not a stream of this runtime", (void *)stream);
    pthread_mutex_lock(&stream->lock);
    while (stream->head || stream->running)
        pthread_cond_wait(&stream->changed, &stream->lock);
    pthread_mutex_unlock(&stream->lock);
    return cudaSuccess;
}

/* Events mark only the legacy default stream's work, which runs at once:
 * one recorded there is complete when recorded, and a stream made to
 * wait for it has nothing to wait for. */
struct CUevent_st {
    unsigned magic;
};

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    COUNT();
    (void)flags;
    if (!event)
        return fail(cudaErrorInvalidValue, "cudaEventCreateWithFlags: NULL");
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e)
        return fail(cudaErrorMemoryAllocation, "cudaEventCreateWithFlags: "
                    "out of memory");
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    COUNT();
    if (!event)
        return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: NULL");
    if (stream)
        return fail(cudaErrorNotSupported, "cudaEventRecord: only on the "
                    "default stream in this double");
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags)
{
    COUNT();
    (void)flags;
    if (!event)
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: "
                    "NULL event");
    if (stream && !stream_valid(stream))
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent"
                    "(%p): not a stream of this runtime", (void *)stream);
    return cudaSuccess;
}

/* Streams are not listed anywhere: a test synchronizes its own. */
cudaError_t cudaDeviceSynchronize(void)
{
    COUNT();
    return cudaSuccess;
}

int cudart_double_enqueue(cudaStream_t stream, void (*fn)(void *), void *arg)
{
    if (!stream) {
        fn(arg);                /* the legacy default stream: at once */
        return 0;
    }
    if (!stream_valid(stream))
        return -1;
    struct work *w = malloc(sizeof *w);
    if (!w)
        return -1;
    *w = (struct work){ fn, arg, NULL };
    pthread_mutex_lock(&stream->lock);
    if (stream->tail)
        stream->tail->next = w;
    else
        stream->head = w;
    stream->tail = w;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    return 0;
}

struct copy_job {
    void *to;
    const void *from;
    size_t count;
};

static void run_copy(void *arg)
{
    struct copy_job *j = arg;

    memmove(j->to, j->from, j->count);
    free(j);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    COUNT();
    void *to;
    const void *from;
    cudaError_t rc = resolve_copy("cudaMemcpyAsync", dst, src, count, kind,
                                  &to, &from);
    if (rc != cudaSuccess || count == 0)
        return rc;
    struct copy_job *j = malloc(sizeof *j);
    if (!j)
        return fail(cudaErrorMemoryAllocation, "cudaMemcpyAsync: no memory");
    *j = (struct copy_job){ to, from, count };
    if (cudart_double_enqueue(stream, run_copy, j) != 0) {
        free(j);
        return fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync: %p is "
                    "not a stream of this runtime", (void *)stream);
    }
    return cudaSuccess;
}

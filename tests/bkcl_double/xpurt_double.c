/*
 * TEST DOUBLE of the Kunlun XPU runtime (libxpurt.so) for pdmpi's tests.
 * It is not the real runtime and drives no hardware: "device memory" is
 * host memory handed out by xpu_malloc and remembered in a process-local
 * table, so xpu_pointer_get_attrs can tell pdmpi's device-memory routing
 * which pointers are "on the XPU". Streams are dummies and every copy is
 * synchronous. Only the entry points declared in backend/dccl/bkcl_api.h
 * exist, with exactly those signatures (0 = success).
 *
 * Device count: XPU_VISIBLE_DEVICES (comma list; set but blank = no
 * devices), else XPU_DOUBLE_DEVICES (an integer), else 8. The current
 * device is per thread and starts at 0, like the real runtime.
 *
 * Extra export for tests: xpurt_double_live_allocations().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dccl/bkcl_api.h"
#include "../ccl_double/devices.h"

#define DEFAULT_DEVICES 8
#define MAX_DEVICES 4096        /* sanity bound for XPU_DOUBLE_DEVICES */
#define ALLOC_ALIGN 256         /* real device allocations are aligned too */
#define STREAM_MAGIC 0x58505553u /* "XPUS": tells a stream of ours apart */

/* Prototypes of the runtime entry points (the header only has typedefs). */
int xpu_device_count(int *count);
int xpu_set_device(int device);
int xpu_current_device(int *device);
int xpu_malloc(void **ptr, uint64_t bytes);
int xpu_free(void *ptr);
int xpu_memcpy(void *dst, const void *src, uint64_t bytes, int kind);
int xpu_stream_create(XPUStream *stream);
int xpu_stream_destroy(XPUStream stream);
int xpu_wait(XPUStream stream);
int xpu_pointer_get_attrs(pd_xpu_pointer_attrs *attrs, const void *ptr);
long xpurt_double_live_allocations(void);

/* One xpu_malloc allocation. */
struct allocation {
    uintptr_t base;
    size_t size;                /* bytes asked for (0 is kept as 0) */
    int device;
};

/* The allocation table: the only shared state, so one mutex guards it. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct allocation *table;
static size_t table_len, table_cap;

/* Like the real runtime, each thread has its own current device. */
static _Thread_local int current_device;

struct stream {
    unsigned magic;
};

/* Device count from the environment, re-read on every call so tests can
 * change it between calls. */
static int visible_devices(void)
{
    return ccl_visible_devices("XPU_VISIBLE_DEVICES", "XPU_DOUBLE_DEVICES",
                               DEFAULT_DEVICES, MAX_DEVICES, "xpurt double");
}

int xpu_device_count(int *count)
{
    if (!count)
        return EINVAL;
    *count = visible_devices();
    return 0;
}

int xpu_set_device(int device)
{
    int count = visible_devices();

    if (device < 0 || device >= count) {
        fprintf(stderr, "xpurt double: xpu_set_device(%d): no such device "
                "(%d visible)\n", device, count);
        return EINVAL;
    }
    current_device = device;
    return 0;
}

int xpu_current_device(int *device)
{
    if (!device)
        return EINVAL;
    *device = current_device;
    return 0;
}

/* Appends to the table; caller holds table_lock. */
static int table_add(uintptr_t base, size_t size, int device)
{
    if (table_len == table_cap) {
        size_t cap = table_cap ? 2 * table_cap : 64;
        struct allocation *grown = realloc(table, cap * sizeof *grown);

        if (!grown)
            return ENOMEM;
        table = grown;
        table_cap = cap;
    }
    table[table_len++] = (struct allocation){base, size, device};
    return 0;
}

/* Index of the allocation containing addr, or -1; caller holds the lock.
 * A zero-byte allocation still owns its first byte, so it can be found. */
static long table_find(uintptr_t addr)
{
    for (size_t i = 0; i < table_len; i++) {
        size_t extent = table[i].size ? table[i].size : 1;

        if (addr >= table[i].base && addr - table[i].base < extent)
            return (long)i;
    }
    return -1;
}

int xpu_malloc(void **ptr, uint64_t bytes)
{
    int count = visible_devices();
    void *mem = NULL;
    int rc;

    if (!ptr)
        return EINVAL;
    if (current_device >= count) {
        fprintf(stderr, "xpurt double: xpu_malloc: current device %d is not "
                "visible (%d devices)\n", current_device, count);
        return EINVAL;
    }
    if (bytes > SIZE_MAX - ALLOC_ALIGN)
        return ENOMEM;
    /* Left uninitialized on purpose, like real device memory, so valgrind
     * flags code that reads device memory it never wrote. */
    if (posix_memalign(&mem, ALLOC_ALIGN, bytes ? (size_t)bytes : 1) != 0)
        return ENOMEM;
    pthread_mutex_lock(&table_lock);
    rc = table_add((uintptr_t)mem, (size_t)bytes, current_device);
    pthread_mutex_unlock(&table_lock);
    if (rc) {
        free(mem);
        return rc;
    }
    *ptr = mem;
    return 0;
}

int xpu_free(void *ptr)
{
    long i;

    if (!ptr)
        return 0;
    pthread_mutex_lock(&table_lock);
    i = table_find((uintptr_t)ptr);
    if (i >= 0 && table[i].base == (uintptr_t)ptr)
        table[i] = table[--table_len];
    else
        i = -1;
    if (table_len == 0) {
        /* Release the table itself so leak checkers see a clean exit. */
        free(table);
        table = NULL;
        table_cap = 0;
    }
    pthread_mutex_unlock(&table_lock);
    if (i < 0) {
        fprintf(stderr, "xpurt double: xpu_free(%p): not the start of an "
                "xpu_malloc allocation\n", ptr);
        return EINVAL;
    }
    free(ptr);
    return 0;
}

int xpu_memcpy(void *dst, const void *src, uint64_t bytes, int kind)
{
    if (kind != XPU_HOST_TO_DEVICE && kind != XPU_DEVICE_TO_HOST &&
        kind != XPU_DEVICE_TO_DEVICE) {
        fprintf(stderr, "xpurt double: xpu_memcpy: unknown kind %d\n", kind);
        return EINVAL;
    }
    if (bytes == 0)
        return 0;
    if (!dst || !src) {
        fprintf(stderr, "xpurt double: xpu_memcpy: NULL %s\n",
                dst ? "src" : "dst");
        return EINVAL;
    }
    /* All "device" memory is host memory, so every kind is a plain copy. */
    memmove(dst, src, (size_t)bytes);
    return 0;
}

int xpu_stream_create(XPUStream *stream)
{
    struct stream *s;

    if (!stream)
        return EINVAL;
    /* Heap-allocated so a leaked stream shows up under valgrind. */
    s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    s->magic = STREAM_MAGIC;
    *stream = s;
    return 0;
}

int xpu_stream_destroy(XPUStream stream)
{
    struct stream *s = stream;

    if (!s || s->magic != STREAM_MAGIC) {
        fprintf(stderr, "xpurt double: xpu_stream_destroy(%p): not a "
                "stream from xpu_stream_create\n", stream);
        return EINVAL;
    }
    s->magic = 0;
    free(s);
    return 0;
}

int xpu_wait(XPUStream stream)
{
    /* Every operation of the double completes before it returns. */
    (void)stream;
    return 0;
}

int xpu_pointer_get_attrs(pd_xpu_pointer_attrs *attrs, const void *ptr)
{
    long i;

    if (!attrs)
        return EINVAL;
    pthread_mutex_lock(&table_lock);
    i = table_find((uintptr_t)ptr);
    if (i >= 0) {
        attrs->memory_type = XPU_MEMORY_DEVICE;
        attrs->device = table[i].device;
    } else {
        attrs->memory_type = XPU_MEMORY_HOST;
        attrs->device = -1;
    }
    pthread_mutex_unlock(&table_lock);
    return 0;
}

long xpurt_double_live_allocations(void)
{
    long n;

    pthread_mutex_lock(&table_lock);
    n = (long)table_len;
    pthread_mutex_unlock(&table_lock);
    return n;
}

/*
 * The segment's life: local rank 0 creates it under a fresh name, passes
 * the name through the store, every rank maps it and says so, and rank 0
 * removes the name once all have: from then on the memory lives exactly as
 * long as the mappings, whatever happens to the processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backend/shm/shm_internal.h"
#include "base/hash.h"
#include "boot/net.h"
#include "boot/shm_name.h"
#include "boot/store.h"

size_t pd_shm_segment_bytes(int size, size_t chunk)
{
    size_t lines = (size_t)size * PD_SHM_LINE_BYTES;
    size_t first = (PD_SHM_HEADER_BYTES + lines + 4095) & ~(size_t)4095;
    return first + 2 * (size_t)(size + 1) * chunk;
}

/* The job key and the communicator folded into a short name. */
static void pd_segment_name(const struct pd_shm_init *init, char *name,
                            size_t len)
{
    const char *key = init->job_key, *prefix = init->store_prefix;
    pd_shm_name_make(pd_fnv1a64_more(pd_fnv1a64(key, strlen(key)), prefix,
                                     strlen(prefix)),
                     name, len);
}

__attribute__((format(printf, 3, 4)))
static int segment_error(struct pd_backend_error *err, int status, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return status;
}

/*
 * Reserve the segment's memory now: a full /dev/shm fails here with a
 * message, not later with SIGBUS. When it has no room for the chunk the
 * communicator asks for and that chunk is not fixed, halve the chunk
 * until the segment fits: a container's /dev/shm is often 64 MiB, a
 * segment of 8 ranks 4.5 MiB with the default chunk, and every
 * communicator that runs a host collective has one.
 */
static int pd_reserve(struct pd_shm_comm *c, int fd, bool fixed,
                      struct pd_backend_error *err)
{
    for (;;) {
        c->bytes = pd_shm_extra_offset(c->size, c->chunk) + c->extra;
        int rc = posix_fallocate(fd, 0, (off_t)c->bytes);
        if (rc == 0)
            return PD_BACKEND_OK;
        /* What a failed attempt reserved goes back before the next;
         * ENOMEM: a memory limit (cgroup) counts the segment too. */
        if (ftruncate(fd, 0) != 0)
            rc = errno;
        /* The caller's area goes before the collectives' smallest
         * chunk does: it can do without. */
        if ((rc == ENOSPC || rc == ENOMEM) && c->extra > 0 &&
            (fixed || c->chunk <= PD_SHM_MIN_CHUNK)) {
            c->extra = 0;
            continue;
        }
        if ((rc != ENOSPC && rc != ENOMEM) || fixed ||
            c->chunk <= PD_SHM_MIN_CHUNK) {
            struct statvfs vfs;
            unsigned long long free_bytes =
                fstatvfs(fd, &vfs) == 0
                    ? (unsigned long long)vfs.f_bavail * vfs.f_frsize : 0;
            return segment_error(err, PD_BACKEND_ERR_NOMEM,
                           "cannot reserve %zu bytes of shared memory in "
                           "/dev/shm (%llu free) for %zu-byte chunks%s: %s; "
                           "give /dev/shm more room (a container's "
                           "--shm-size)%s or set PDMPI_SHM=0", c->bytes,
                           free_bytes, c->chunk,
                           fixed ? " as PDMPI_SHM_CHUNK asks" : "",
                           strerror(rc),
                           fixed ? ", ask for a smaller PDMPI_SHM_CHUNK," : "");
        }
        c->chunk = c->chunk / 2 < PD_SHM_MIN_CHUNK
                       ? PD_SHM_MIN_CHUNK : (c->chunk / 2) & ~(size_t)63;
    }
}

/* Local rank 0: a new segment, its memory reserved now. */
static int pd_segment_create(struct pd_shm_comm *c, const char *name,
                             bool fixed, struct pd_backend_error *err)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Left by a killed process that had our pid: not ours to keep. */
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        return segment_error(err, PD_BACKEND_ERR_IO, "shm_open(%s): %s", name,
                       strerror(errno));
    int rc = pd_reserve(c, fd, fixed, err);
    if (rc != PD_BACKEND_OK) {
        close(fd);
        shm_unlink(name);
        return rc;
    }
    c->base = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->base == MAP_FAILED) {
        c->base = NULL;
        shm_unlink(name);
        return segment_error(err, PD_BACKEND_ERR_NOMEM, "mmap(%s): %s", name,
                       strerror(errno));
    }
    c->header = (struct pd_shm_header *)c->base;
    c->header->size = (uint32_t)c->size;
    c->header->chunk = c->chunk;
    c->header->bytes = c->bytes;
    c->header->extra = c->extra;
    for (int r = 0; r < c->size; r++)
        pd_shm_line(c, r)->pid = (int32_t)c->pids[r];
    atomic_thread_fence(memory_order_release);
    c->header->magic = PD_SHM_MAGIC;
    return PD_BACKEND_OK;
}

/* The other local ranks: map rank 0's segment and check it is the one
 * this communicator expects. */
static int pd_segment_attach(struct pd_shm_comm *c, const char *name,
                             bool fixed, struct pd_backend_error *err)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return segment_error(err, PD_BACKEND_ERR_IO, "shm_open(%s): %s", name,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 ||
        (size_t)st.st_size < pd_shm_segment_bytes(c->size, PD_SHM_MIN_CHUNK)) {
        close(fd);
        return segment_error(err, PD_BACKEND_ERR_INTERNAL,
                       "shared memory segment %s is too small for %d ranks",
                       name, c->size);
    }
    c->bytes = (size_t)st.st_size;
    c->base = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->base == MAP_FAILED) {
        c->base = NULL;
        return segment_error(err, PD_BACKEND_ERR_NOMEM, "mmap(%s): %s", name,
                       strerror(errno));
    }
    c->header = (struct pd_shm_header *)c->base;
    if (c->header->magic != PD_SHM_MAGIC || c->header->size != (uint32_t)c->size ||
        c->header->bytes != c->bytes ||
        pd_shm_extra_offset(c->size, c->header->chunk) + c->header->extra !=
            c->bytes)
        return segment_error(err, PD_BACKEND_ERR_INTERNAL,
                       "shared memory segment %s does not match this "
                       "communicator", name);
    /* Local rank 0 may have made the chunk smaller to fit /dev/shm; one
     * that was asked for must be the same on every rank. */
    if (fixed && c->header->chunk != c->chunk)
        return segment_error(err, PD_BACKEND_ERR_INTERNAL,
                       "ranks on this host disagree on PDMPI_SHM_CHUNK "
                       "(%zu here, %llu at local rank 0)", c->chunk,
                       (unsigned long long)c->header->chunk);
    c->chunk = (size_t)c->header->chunk;
    c->extra = (size_t)c->header->extra;    /* 0 where /dev/shm had no room */
    return PD_BACKEND_OK;
}

/* Rank 0: wait until every rank has mapped the segment -- bounded by the
 * timeout, and cut short if a rank that has not is gone. */
static int pd_wait_mapped(struct pd_shm_comm *c, const char *name,
                          struct pd_backend_error *err)
{
    int64_t deadline = pd_net_now_ms() + c->timeout_ms;
    int64_t next_check = 0;
    /* Polls back off: hundreds of set-ups waiting at once must leave the
     * processors to the ranks (and the store) they wait for. */
    useconds_t pause = 100;
    for (int r = 0; r < c->size;) {
        if (atomic_load(&pd_shm_line(c, r)->mapped)) {
            r++;
            continue;
        }
        int64_t now = pd_net_now_ms();
        if (now >= next_check) {
            if (pd_process_gone((pid_t)c->pids[r])) {
                snprintf(err->msg, sizeof(err->msg),
                         "rank %d (pid %d, this host) is gone before mapping "
                         "shared memory segment %s", c->comm_ranks[r],
                         c->pids[r], name);
                return PD_BACKEND_ERR_IO;
            }
            next_check = now + 100;
        }
        if (now >= deadline)
            return segment_error(err, PD_BACKEND_ERR_TIMEOUT,
                           "not every rank on this host mapped shared memory "
                           "segment %s within PDMPI_TIMEOUT", name);
        usleep(pause);
        if (pause < 5000)
            pause *= 2;
    }
    return PD_BACKEND_OK;
}

/* The other ranks: local rank 0's segment name from the store, asking in
 * short waits so that a rank 0 that died is noticed at once. */
static int pd_get_name(struct pd_shm_comm *c, struct pd_store_client *store,
                       const char *key, void **value, size_t *len,
                       struct pd_backend_error *err)
{
    char serr[320];
    int64_t deadline = pd_net_now_ms() + c->timeout_ms;
    for (;;) {
        int64_t left = deadline - pd_net_now_ms();
        int wait = left < 200 ? (int)(left > 0 ? left : 0) : 200;
        if (pd_store_get(store, key, value, len, wait, serr,
                         sizeof(serr)) == 0)
            return PD_BACKEND_OK;
        if (pd_process_gone((pid_t)c->pids[0])) {
            snprintf(err->msg, sizeof(err->msg),
                     "rank %d (pid %d, this host) is gone before creating "
                     "the shared memory segment", c->comm_ranks[0],
                     c->pids[0]);
            return PD_BACKEND_ERR_IO;
        }
        if (wait < 200)
            return segment_error(err, PD_BACKEND_ERR_TIMEOUT,
                           "local rank 0 did not publish its shared memory "
                           "segment within PDMPI_TIMEOUT: %s", serr);
    }
}

/*
 * Microseconds a waiting rank polls before it starts yielding, at most
 * (sync.c adapts the budget between a floor and this). When every rank
 * has a processor, a long spin is what keeps a job going beside busy
 * processes: a yield hands the processor to them for a whole time slice,
 * and the two ranks then rarely run at the same moment. Measured at np 2
 * on this project's 2-core test machine beside two busy loops, 1 MiB
 * allreduce: 15-24 ms with a 20 us spin that could fall to 0, 0.14-5 ms
 * with 1 ms and a floor of 50 us (Open MPI, which never yields there:
 * 0.4-3.3 ms); 16 MiB: 210-350 ms in three runs of four, 48-90 ms (Open
 * MPI 11-14 ms).
 */
static long pd_default_spin(bool oversubscribed)
{
    /* Oversubscribed: the rank being waited for may need this processor,
     * so give it up at once. */
    return oversubscribed ? 0 : 1000;
}

/* The least the spin budget adapts down to. With a processor per rank a
 * spin that fails was most often a peer descheduled for a while: the
 * next wait should still spin (sync.c drops the floor while the rank
 * waited for is seen on this processor). Oversubscribed, spinning only
 * delays the rank that needs this processor. */
static int64_t pd_spin_floor_ns(bool oversubscribed, long spin)
{
    if (oversubscribed)
        return 0;
    return (int64_t)(spin < PD_SHM_SPIN_FLOOR_US ? spin
                                                 : PD_SHM_SPIN_FLOOR_US) *
           1000;
}

int pd_shm_comm_create(const struct pd_shm_init *init,
                       struct pd_shm_comm **out, struct pd_backend_error *err)
{
    *out = NULL;
    struct pd_shm_comm *c = calloc(1, sizeof(*c));
    int *ranks = malloc(2 * (size_t)init->size * sizeof(int));
    if (c == NULL || ranks == NULL) {
        free(c);
        free(ranks);
        return segment_error(err, PD_BACKEND_ERR_NOMEM, "out of memory");
    }
    memcpy(ranks, init->comm_ranks, (size_t)init->size * sizeof(int));
    memcpy(ranks + init->size, init->pids, (size_t)init->size * sizeof(int));
    c->rank = init->rank;
    c->size = init->size;
    c->comm_ranks = ranks;
    c->pids = ranks + init->size;
    c->chunk = init->chunk;
    c->processors = pd_shm_processors(init->size, c->pids);
    c->oversubscribed = init->size > c->processors;
    /* Not when ranks share processors: a rank that reads what another
     * wrote on its own core finds it in that core's cache (stream.c). */
    c->stream = c->oversubscribed ? 0 : init->stream;
    c->spin = init->spin >= 0 ? init->spin : pd_default_spin(c->oversubscribed);
    c->spin_ns = (int64_t)c->spin * 1000;
    c->spin_floor_ns = pd_spin_floor_ns(c->oversubscribed, c->spin);
    c->timeout_ms = init->timeout_ms;
    c->extra = (init->extra + 4095) & ~(size_t)4095;

    char key[256], name[128], serr[320];

    snprintf(key, sizeof(key), "%s/shm", init->store_prefix);
    int rc;
    if (c->rank == 0) {
        /* What ranks killed before their segment was mapped left. */
        pd_shm_name_sweep(NULL, 0);
        pd_segment_name(init, name, sizeof(name));
        rc = pd_segment_create(c, name, init->chunk_fixed, err);
        if (rc == PD_BACKEND_OK &&
            pd_store_set(init->store, key, name, strlen(name) + 1, serr,
                         sizeof(serr)) != 0)
            rc = segment_error(err, PD_BACKEND_ERR_IO,
                         "cannot publish the shared memory segment: %s",
                         serr);
    } else {
        void *value = NULL;
        size_t len = 0;
        rc = pd_get_name(c, init->store, key, &value, &len, err);
        if (rc != PD_BACKEND_OK) {
            /* err says why */
        } else if (len == 0 || len > sizeof(name) ||
                   ((char *)value)[len - 1] != '\0') {
            rc = segment_error(err, PD_BACKEND_ERR_INTERNAL,
                         "malformed shared memory segment name in the store "
                         "at %s", key);
        } else {
            memcpy(name, value, len);
            rc = pd_segment_attach(c, name, init->chunk_fixed, err);
        }
        free(value);
    }
    if (rc == PD_BACKEND_OK) {
        atomic_store(&pd_shm_line(c, c->rank)->cpu, -1);   /* not known */
        atomic_store(&pd_shm_line(c, c->rank)->mapped, 1);
        /* The last rank to map the segment removes its name: nothing is
         * left in /dev/shm even if local rank 0 is killed now. */
        if (atomic_fetch_add(&c->header->mapped_ranks, 1) + 1 ==
            (uint32_t)c->size)
            shm_unlink(name);
        if (c->rank == 0) {
            rc = pd_wait_mapped(c, name, err);
            shm_unlink(name);
        }
    } else if (c->rank == 0 && c->base != NULL) {
        shm_unlink(name);
    }
    if (rc != PD_BACKEND_OK) {
        pd_shm_comm_destroy(c);
        return rc;
    }
    *out = c;
    return PD_BACKEND_OK;
}

size_t pd_shm_extra_offset(int size, size_t chunk)
{
    return (pd_shm_segment_bytes(size, chunk) + 4095) & ~(size_t)4095;
}

void *pd_shm_extra(struct pd_shm_comm *c)
{
    return c->extra > 0 ? c->base + pd_shm_extra_offset(c->size, c->chunk)
                        : NULL;
}

size_t pd_shm_chunk(const struct pd_shm_comm *c)
{
    return c->chunk;
}

void pd_shm_comm_destroy(struct pd_shm_comm *c)
{
    if (c == NULL)
        return;
    if (c->base != NULL)
        munmap(c->base, c->bytes);
    free(c->comm_ranks);
    free(c);
}

/*
 * TEST DOUBLE of BKCL, Kunlun's collective library (libbkcl.so), for
 * pdmpi's tests. It is not BKCL and drives no hardware; it implements the
 * entry points declared in backend/dccl/bkcl_api.h, with exactly those
 * signatures, well enough that ranks in separate processes on one host
 * really communicate, so pdmpi's BKCL binding can be tested without an XPU.
 *
 * How it works. A unique id names a POSIX shared-memory segment. Rank 0
 * creates it; the other ranks attach; once all have, the name is unlinked,
 * so nothing outlives the run even if a rank dies later. The segment holds
 *   - a header: sizes, a process-shared barrier, each rank's device;
 *   - one slot of chunk_bytes per rank: collectives move data chunk by
 *     chunk as "barrier, write own slot, barrier, read the slots";
 *   - one single-chunk mailbox per (src, dst) pair for send/recv.
 * Reductions always combine ranks in order 0, 1, 2, ... so every rank gets
 * bitwise-identical results. Buffers must be "XPU memory" of the rank's
 * device, i.e. come from the xpurt double's xpu_malloc (this library links
 * against it): a host pointer reaching BKCL is a routing bug in the caller.
 *
 * Environment (read at bkcl_init_rank):
 *   BKCL_DOUBLE_TIMEOUT      seconds any wait may take before the call fails
 *                            with BKCL_SYSTEM_ERROR (default 60, 0 = never)
 *   BKCL_DOUBLE_CHUNK_BYTES  slot size, read by rank 0 (default 1 MiB)
 *
 * Extra export for tests: bkcl_double_calls(name).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/dccl/bkcl_api.h"

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

/* Process-shared atomics must not hide a lock inside the process. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "int atomics must be lock-free");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics lock-free");

#define ID_PREFIX "/bkcl_double_"
#define ID_RANDOM_BYTES 16
#define SEGMENT_MAGIC 0x424b434c44424c31ULL /* "BKCLDBL1" */
#define DEFAULT_CHUNK_BYTES (1UL << 20)
#define MIN_CHUNK_BYTES 64UL
#define MAX_CHUNK_BYTES (1UL << 30)
#define MAX_RANKS 1024
#define DEFAULT_TIMEOUT_S 60
#define CACHE_LINE 64UL
#define SPIN_PAUSES 64          /* busy polls before yielding the CPU */
#define YIELD_PAUSES 256        /* yields before sleeping between polls */
#define SLEEP_NS 50000L         /* sleep between polls once idle for long */

/* ---- call counting (the only global state besides the group state) ---- */

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

/* ---- shared segment layout ---- */

struct rank_entry {
    _Atomic int claimed;        /* a process has joined as this rank */
    int device;                 /* its current device at bkcl_init_rank */
};

struct shared_header {
    uint64_t magic;
    uint64_t total_bytes;
    uint64_t chunk_bytes;       /* size of each rank's slot */
    uint64_t mailbox_bytes;     /* payload of each mailbox */
    uint64_t slots_offset;
    uint64_t mailboxes_offset;
    uint64_t mailbox_stride;
    int nranks;
    _Atomic int ready;          /* rank 0 has filled in the header */
    _Atomic int attached;       /* ranks that have joined */
    _Atomic unsigned barrier_arrived;
    _Atomic unsigned barrier_generation;
    struct rank_entry ranks[];
};

/* One direction between two ranks: a single chunk in flight. Only the
 * sender writes `posted`, only the receiver writes `taken`, so the box is
 * free when they are equal and holds a chunk when posted is ahead. */
struct mailbox {
    _Atomic uint64_t posted;
    _Atomic uint64_t taken;
    uint64_t msg_bytes;         /* size of the message this chunk is from */
    uint64_t offset;            /* where the chunk sits in that message */
    uint64_t len;               /* bytes in this chunk */
};
_Static_assert(sizeof(struct mailbox) <= CACHE_LINE, "mailbox header");

struct BKCLContext {
    struct shared_header *hdr;
    size_t map_bytes;
    unsigned char *slots;
    unsigned char *mailboxes;
    size_t chunk_bytes;
    size_t mailbox_bytes;
    size_t mailbox_stride;
    int rank;
    int nranks;
    int device;
    int timeout_s;
    int broken;                 /* a wait timed out: shared state is unknown */
};

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static unsigned char *slot(const struct BKCLContext *c, int rank)
{
    return c->slots + (size_t)rank * c->chunk_bytes;
}

static struct mailbox *mailbox(const struct BKCLContext *c, int src, int dst)
{
    size_t index = (size_t)src * (size_t)c->nranks + (size_t)dst;

    return (struct mailbox *)(c->mailboxes + index * c->mailbox_stride);
}

static unsigned char *mailbox_data(struct mailbox *m)
{
    return (unsigned char *)m + CACHE_LINE;
}

/* ---- messages ---- */

/* One line per message, written at once so ranks' lines do not mix. */
static void complain(const struct BKCLContext *c, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (c)
        fprintf(stderr, "bkcl double: rank %d: %s\n", c->rank, line);
    else
        fprintf(stderr, "bkcl double: %s\n", line);
}

/* ---- waiting ---- */

/* Polls spin briefly, then yield, then sleep, so ranks oversubscribing the
 * cores still make progress; a deadline turns a hang into an error. */
struct waiter {
    unsigned pauses;
    int timeout_s;              /* 0: no deadline */
    struct timespec deadline;
};

static void waiter_start(struct waiter *w, int timeout_s)
{
    w->pauses = 0;
    w->timeout_s = timeout_s;
    clock_gettime(CLOCK_MONOTONIC, &w->deadline);
    w->deadline.tv_sec += timeout_s;
}

/* Returns -1 once the deadline has passed. */
static int waiter_pause(struct waiter *w)
{
    struct timespec now;

    if (w->pauses < SPIN_PAUSES) {
        w->pauses++;
        return 0;
    }
    if (w->pauses < SPIN_PAUSES + YIELD_PAUSES) {
        w->pauses++;
        sched_yield();
    } else {
        struct timespec nap = {0, SLEEP_NS};

        nanosleep(&nap, NULL);
    }
    if (w->timeout_s == 0)
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > w->deadline.tv_sec ||
        (now.tv_sec == w->deadline.tv_sec &&
         now.tv_nsec >= w->deadline.tv_nsec))
        return -1;
    return 0;
}

/* Sense-free generation barrier over the shared header. The generation is
 * read before arriving, so it cannot move until this rank has arrived. */
static BKCLResult_t comm_barrier(struct BKCLContext *c, const char *fn)
{
    struct shared_header *h = c->hdr;
    unsigned gen = atomic_load(&h->barrier_generation);
    struct waiter w;

    if (atomic_fetch_add(&h->barrier_arrived, 1) + 1 == (unsigned)c->nranks) {
        atomic_store(&h->barrier_arrived, 0);
        atomic_fetch_add(&h->barrier_generation, 1);
        return BKCL_SUCCESS;
    }
    waiter_start(&w, c->timeout_s);
    while (atomic_load(&h->barrier_generation) == gen) {
        if (waiter_pause(&w) < 0) {
            complain(c, "%s: timed out after %d s waiting for the other "
                     "ranks (BKCL_DOUBLE_TIMEOUT); communicator is now "
                     "unusable", fn, c->timeout_s);
            c->broken = 1;
            return BKCL_SYSTEM_ERROR;
        }
    }
    return BKCL_SUCCESS;
}

/* ---- environment ---- */

static long env_long(const char *name, long dflt, long min, long max)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max) {
        complain(NULL, "ignoring %s=\"%s\" (want an integer in [%ld, %ld]); "
                 "using %ld", name, s, min, max, dflt);
        return dflt;
    }
    return v;
}

/* ---- unique id ---- */

BKCLResult_t bkcl_get_unique_id(BKCLUniqueId *id)
{
    unsigned char rnd[ID_RANDOM_BYTES];
    size_t got = 0;
    int fd;

    count_call(E_GET_UNIQUE_ID);
    if (!id)
        return BKCL_INVALID_ARGUMENT;
    fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && got < sizeof rnd) {
        ssize_t n = read(fd, rnd + got, sizeof rnd - got);

        if (n <= 0 && !(n < 0 && errno == EINTR))
            break;
        if (n > 0)
            got += (size_t)n;
    }
    if (fd >= 0)
        close(fd);
    if (got < sizeof rnd) {
        complain(NULL, "bkcl_get_unique_id: cannot read /dev/urandom");
        return BKCL_SYSTEM_ERROR;
    }
    /* Zeros after the name: the whole id is defined bytes, so sending it
     * through a socket or store never ships uninitialized memory. */
    memset(id->internal, 0, sizeof id->internal);
    memcpy(id->internal, ID_PREFIX, strlen(ID_PREFIX));
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(id->internal + strlen(ID_PREFIX) + 2 * i, 3, "%02x", rnd[i]);
    return BKCL_SUCCESS;
}

/* Copies the segment name out of an id; -1 if the id is not one of ours. */
static int id_name(const BKCLUniqueId *id, char *name, size_t size)
{
    size_t want = strlen(ID_PREFIX) + 2 * ID_RANDOM_BYTES;

    if (memcmp(id->internal, ID_PREFIX, strlen(ID_PREFIX)) != 0 ||
        strnlen(id->internal, sizeof id->internal) != want || want >= size)
        return -1;
    memcpy(name, id->internal, want + 1);
    return 0;
}

/* ---- communicator setup ---- */

/* Sizes of the segment's parts. Mailboxes shrink as ranks grow (there are
 * nranks^2 of them) so the segment stays about 3 * nranks * chunk bytes. */
static void plan_layout(struct shared_header *h, int nranks, size_t chunk)
{
    size_t n = (size_t)nranks;
    size_t mail = 2 * chunk / n;

    /* reduce_scatter stages one element per rank per slot at least. */
    chunk = round_up(chunk < 8 * n ? 8 * n : chunk, CACHE_LINE);
    if (mail > chunk / 4)
        mail = chunk / 4;
    mail = mail / CACHE_LINE * CACHE_LINE;
    if (mail < CACHE_LINE)
        mail = CACHE_LINE;
    h->nranks = nranks;
    h->chunk_bytes = chunk;
    h->mailbox_bytes = mail;
    h->mailbox_stride = CACHE_LINE + mail;
    h->slots_offset = round_up(sizeof *h + n * sizeof h->ranks[0], CACHE_LINE);
    h->mailboxes_offset = h->slots_offset + n * chunk;
    h->total_bytes = h->mailboxes_offset + n * n * h->mailbox_stride;
}

static void attach_views(struct BKCLContext *c, void *map, size_t bytes)
{
    struct shared_header *h = map;

    c->hdr = h;
    c->map_bytes = bytes;
    c->slots = (unsigned char *)map + h->slots_offset;
    c->mailboxes = (unsigned char *)map + h->mailboxes_offset;
    c->chunk_bytes = h->chunk_bytes;
    c->mailbox_bytes = h->mailbox_bytes;
    c->mailbox_stride = h->mailbox_stride;
}

/* Rank 0: create, size and initialize the segment, then mark it ready. */
static BKCLResult_t segment_create(struct BKCLContext *c, const char *name)
{
    size_t chunk = (size_t)env_long("BKCL_DOUBLE_CHUNK_BYTES",
                                    (long)DEFAULT_CHUNK_BYTES,
                                    (long)MIN_CHUNK_BYTES,
                                    (long)MAX_CHUNK_BYTES);
    struct shared_header plan;
    void *map;
    int fd, err;

    memset(&plan, 0, sizeof plan);
    plan_layout(&plan, c->nranks, chunk);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        complain(c, "bkcl_init_rank: shm_open(%s): %s (unique id reused?)",
                 name, strerror(errno));
        return BKCL_SYSTEM_ERROR;
    }
    /* Reserve the memory now: a full /dev/shm then fails here, cleanly,
     * instead of as SIGBUS in the middle of a collective. */
    if (ftruncate(fd, (off_t)plan.total_bytes) != 0)
        err = errno;
    else
        err = posix_fallocate(fd, 0, (off_t)plan.total_bytes);
    map = err ? MAP_FAILED : mmap(NULL, plan.total_bytes,
                                  PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!err && map == MAP_FAILED)
        err = errno;
    close(fd);
    if (err) {
        complain(c, "bkcl_init_rank: cannot set up %zu bytes of shared "
                 "memory %s: %s", (size_t)plan.total_bytes, name,
                 strerror(err));
        shm_unlink(name);
        return BKCL_SYSTEM_ERROR;
    }
    /* The fresh segment is zero-filled: counters and flags start at 0. */
    memcpy(map, &plan, sizeof plan);
    ((struct shared_header *)map)->magic = SEGMENT_MAGIC;
    attach_views(c, map, plan.total_bytes);
    atomic_store(&c->hdr->ready, 1);
    return BKCL_SUCCESS;
}

/* Opens the segment, retrying until rank 0 has created and sized it. */
static int open_sized(struct BKCLContext *c, const char *name,
                      struct waiter *w, size_t *bytes)
{
    struct stat st;
    int fd;

    while ((fd = shm_open(name, O_RDWR | O_CLOEXEC, 0)) < 0) {
        if (errno != ENOENT) {
            complain(c, "bkcl_init_rank: shm_open(%s): %s", name,
                     strerror(errno));
            return -1;
        }
        if (waiter_pause(w) < 0)
            return -2;
    }
    /* Rank 0 sizes the segment with one ftruncate, so non-zero is final. */
    while (fstat(fd, &st) == 0 && st.st_size == 0) {
        if (waiter_pause(w) < 0) {
            close(fd);
            return -2;
        }
    }
    *bytes = (size_t)st.st_size;
    return fd;
}

/* Ranks other than 0: attach to the segment rank 0 creates. */
static BKCLResult_t segment_attach(struct BKCLContext *c, const char *name)
{
    struct shared_header *h;
    struct waiter w;
    size_t bytes = 0;
    void *map;
    int fd;

    waiter_start(&w, c->timeout_s);
    fd = open_sized(c, name, &w, &bytes);
    if (fd < 0)
        goto fail;
    map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        complain(c, "bkcl_init_rank: mmap(%s): %s", name, strerror(errno));
        return BKCL_SYSTEM_ERROR;
    }
    h = map;
    while (!atomic_load(&h->ready)) {
        if (waiter_pause(&w) < 0) {
            munmap(map, bytes);
            fd = -2;
            goto fail;
        }
    }
    if (h->magic != SEGMENT_MAGIC || h->total_bytes != bytes ||
        h->nranks != c->nranks) {
        complain(c, "bkcl_init_rank: rank 0 created the communicator for %d "
                 "ranks, this rank asked for %d", h->nranks, c->nranks);
        munmap(map, bytes);
        return BKCL_INVALID_ARGUMENT;
    }
    attach_views(c, map, bytes);
    return BKCL_SUCCESS;
fail:
    if (fd == -2)
        complain(c, "bkcl_init_rank: timed out after %d s waiting for rank 0 "
                 "to create the communicator (BKCL_DOUBLE_TIMEOUT)",
                 c->timeout_s);
    return BKCL_SYSTEM_ERROR;
}

/* After everyone joined: real BKCL/NCCL refuse two ranks on one device.
 * Every rank sees the same table, so all of them fail together. */
static BKCLResult_t check_devices(struct BKCLContext *c)
{
    const struct rank_entry *r = c->hdr->ranks;

    for (int a = 0; a < c->nranks; a++) {
        for (int b = a + 1; b < c->nranks; b++) {
            if (r[a].device == r[b].device) {
                complain(c, "bkcl_init_rank: ranks %d and %d of one "
                         "communicator are both on XPU device %d; each rank "
                         "needs its own device", a, b, r[a].device);
                return BKCL_INVALID_ARGUMENT;
            }
        }
    }
    return BKCL_SUCCESS;
}

/* Claim this rank's entry, record the device, wait for all ranks. The last
 * rank to join unlinks the name: from then on only the mappings keep the
 * memory, and the kernel frees it when the last rank exits. */
static BKCLResult_t join(struct BKCLContext *c, const char *name)
{
    struct shared_header *h = c->hdr;
    struct waiter w;

    if (atomic_exchange(&h->ranks[c->rank].claimed, 1)) {
        complain(c, "bkcl_init_rank: two processes joined the communicator "
                 "as rank %d", c->rank);
        return BKCL_INVALID_ARGUMENT;
    }
    h->ranks[c->rank].device = c->device;
    if (atomic_fetch_add(&h->attached, 1) + 1 == c->nranks)
        shm_unlink(name);
    waiter_start(&w, c->timeout_s);
    while (atomic_load(&h->attached) < c->nranks) {
        if (waiter_pause(&w) < 0) {
            complain(c, "bkcl_init_rank: timed out after %d s: %d of %d ranks "
                     "joined (BKCL_DOUBLE_TIMEOUT)", c->timeout_s,
                     atomic_load(&h->attached), c->nranks);
            shm_unlink(name);   /* the segment is dead; do not leave it */
            return BKCL_SYSTEM_ERROR;
        }
    }
    return check_devices(c);
}

BKCLResult_t bkcl_init_rank(BKCLContext_t *comm, int rank, int nranks,
                            const BKCLUniqueId *id)
{
    char name[sizeof id->internal];
    struct BKCLContext *c;
    BKCLResult_t rc;
    int device;

    count_call(E_INIT_RANK);
    if (!comm || !id || nranks < 1 || nranks > MAX_RANKS || rank < 0 ||
        rank >= nranks)
        return BKCL_INVALID_ARGUMENT;
    if (id_name(id, name, sizeof name) != 0) {
        complain(NULL, "bkcl_init_rank: the unique id is not one from "
                 "bkcl_get_unique_id");
        return BKCL_INVALID_ARGUMENT;
    }
    if (xpu_current_device(&device) != 0)
        return BKCL_RUNTIME_ERROR;
    c = calloc(1, sizeof *c);
    if (!c)
        return BKCL_SYSTEM_ERROR;
    c->rank = rank;
    c->nranks = nranks;
    c->device = device;
    c->timeout_s = (int)env_long("BKCL_DOUBLE_TIMEOUT", DEFAULT_TIMEOUT_S, 0,
                                 INT_MAX / 2);
    rc = rank == 0 ? segment_create(c, name) : segment_attach(c, name);
    if (rc == BKCL_SUCCESS) {
        rc = join(c, name);
        if (rc != BKCL_SUCCESS)
            munmap(c->hdr, c->map_bytes);
    }
    if (rc != BKCL_SUCCESS) {
        free(c);
        return rc;
    }
    *comm = c;
    return BKCL_SUCCESS;
}

BKCLResult_t bkcl_destroy_context(BKCLContext_t comm)
{
    count_call(E_DESTROY_CONTEXT);
    if (!comm)
        return BKCL_INVALID_ARGUMENT;
    munmap(comm->hdr, comm->map_bytes);
    free(comm);
    return BKCL_SUCCESS;
}

/* ---- data types and reductions ---- */

static size_t dtype_size(BKCLDataType dtype)
{
    switch (dtype) {
    case BKCL_UINT8: return 1;
    case BKCL_FLOAT16: case BKCL_BFLOAT16: return 2;
    case BKCL_FLOAT: case BKCL_INT32: return 4;
    case BKCL_FLOAT64: case BKCL_INT64: return 8;
    }
    return 0;
}

static int op_valid(BKCLOp op)
{
    return op == BKCL_ADD || op == BKCL_PRODUCT || op == BKCL_MIN ||
           op == BKCL_MAX;
}

static float bits_to_float(uint32_t u)
{
    float f;

    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return u;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;

    if (exp == 0x1f)            /* inf / nan */
        return bits_to_float(sign | 0x7f800000 | man << 13);
    if (exp == 0) {             /* zero / subnormal: man * 2^-24, exact */
        float f = (float)man * (1.0f / 16777216.0f);

        return sign ? -f : f;
    }
    return bits_to_float(sign | (exp + 112) << 23 | man << 13);
}

/* Round-to-nearest-even of mantissa `man` shifted right by `shift`. */
static uint32_t shift_rne(uint32_t man, unsigned shift)
{
    uint32_t q = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);

    return q + (rem > half || (rem == half && (q & 1)));
}

/* IEEE binary16 from float, round to nearest even, with subnormals. */
static uint16_t float_to_half(float f)
{
    uint32_t x = float_to_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t a = x & 0x7fffffff;

    if (a > 0x7f800000)         /* nan: keep it quiet and signed */
        return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff));
    if (a >= 0x47800000)        /* >= 65536, or inf: overflow */
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x38800000) {       /* below 2^-14: subnormal or zero */
        unsigned shift = 126 - (a >> 23);

        if (shift > 24)         /* below 2^-25: rounds to zero */
            return (uint16_t)sign;
        return (uint16_t)(sign | shift_rne((a & 0x7fffff) | 0x800000,
                                           shift));
    }
    /* Rebias the exponent; a mantissa carry correctly rounds up into the
     * exponent, and to inf from 65520 on. */
    return (uint16_t)(sign | shift_rne(a - 0x38000000, 13));
}

static float bf16_to_float(uint16_t h)
{
    return bits_to_float((uint32_t)h << 16);
}

/* bfloat16 is the upper half of a float; round to nearest even. */
static uint16_t float_to_bf16(float f)
{
    uint32_t x = float_to_bits(f);

    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* dst[i] = dst[i] OP src[i] for n elements of T; memcpy tolerates
 * unaligned buffers and is compiled into plain loads. */
#define COMBINE(T, EXPR)                                                   \
    for (size_t i = 0; i < n; i++) {                                       \
        T a, b;                                                            \
        memcpy(&a, d + i * sizeof(T), sizeof(T));                          \
        memcpy(&b, s + i * sizeof(T), sizeof(T));                          \
        a = (T)(EXPR);                                                     \
        memcpy(d + i * sizeof(T), &a, sizeof(T));                          \
    }

/* Integers: ADD and PRODUCT in the unsigned type wrap instead of being
 * undefined; MIN and MAX compare in the signed type. */
#define COMBINE_INT(U, S)                                                  \
    switch (op) {                                                          \
    case BKCL_ADD: COMBINE(U, a + b); break;                               \
    case BKCL_PRODUCT: COMBINE(U, a * b); break;                           \
    case BKCL_MIN: COMBINE(S, b < a ? b : a); break;                       \
    case BKCL_MAX: COMBINE(S, b > a ? b : a); break;                       \
    }

#define COMBINE_FLOAT(T)                                                   \
    switch (op) {                                                          \
    case BKCL_ADD: COMBINE(T, a + b); break;                               \
    case BKCL_PRODUCT: COMBINE(T, a * b); break;                           \
    case BKCL_MIN: COMBINE(T, b < a ? b : a); break;                       \
    case BKCL_MAX: COMBINE(T, b > a ? b : a); break;                       \
    }

/* 16-bit floats: each step is computed in float and rounded once, which
 * is the correctly rounded 16-bit result (float has >= 2p+2 bits). */
static void combine_16(unsigned char *d, const unsigned char *s, size_t n,
                       BKCLOp op, float (*load)(uint16_t),
                       uint16_t (*store)(float))
{
    for (size_t i = 0; i < n; i++) {
        uint16_t ha, hb;
        float a, b;

        memcpy(&ha, d + 2 * i, 2);
        memcpy(&hb, s + 2 * i, 2);
        a = load(ha);
        b = load(hb);
        switch (op) {
        case BKCL_ADD: ha = store(a + b); break;
        case BKCL_PRODUCT: ha = store(a * b); break;
        case BKCL_MIN: if (b < a) ha = hb; break; /* keep the bits */
        case BKCL_MAX: if (b > a) ha = hb; break;
        }
        memcpy(d + 2 * i, &ha, 2);
    }
}

static void combine(void *dst, const void *src, size_t n, BKCLDataType dtype,
                    BKCLOp op)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    switch (dtype) {
    case BKCL_FLOAT: COMBINE_FLOAT(float); break;
    case BKCL_FLOAT64: COMBINE_FLOAT(double); break;
    case BKCL_FLOAT16: combine_16(d, s, n, op, half_to_float, float_to_half);
        break;
    case BKCL_BFLOAT16: combine_16(d, s, n, op, bf16_to_float, float_to_bf16);
        break;
    case BKCL_UINT8: COMBINE_INT(uint8_t, uint8_t); break;
    case BKCL_INT32: COMBINE_INT(uint32_t, int32_t); break;
    case BKCL_INT64: COMBINE_INT(uint64_t, int64_t); break;
    }
}

/* dst = block 0 op block 1 op ... in rank order; block r starts at
 * slot(r) + offset. Rank order makes the result identical on every rank. */
static void reduce_slots(const struct BKCLContext *c, void *dst,
                         size_t offset, size_t n, BKCLDataType dtype,
                         BKCLOp op)
{
    size_t bytes = n * dtype_size(dtype);

    memcpy(dst, slot(c, 0) + offset, bytes);
    for (int r = 1; r < c->nranks; r++)
        combine(dst, slot(c, r) + offset, n, dtype, op);
}

/* ---- argument checks (all before any barrier, so every rank given the
 * same bad arguments fails alike without waiting on the others) ---- */

static BKCLResult_t check_comm(const struct BKCLContext *c, const char *fn)
{
    if (!c)
        return BKCL_INVALID_ARGUMENT;
    if (c->broken) {
        complain(c, "%s: communicator unusable after an earlier timeout", fn);
        return BKCL_SYSTEM_ERROR;
    }
    return BKCL_SUCCESS;
}

static BKCLResult_t check_type(const struct BKCLContext *c, const char *fn,
                               BKCLDataType dtype, BKCLOp op, int use_op)
{
    if (dtype_size(dtype) == 0) {
        complain(c, "%s: unknown data type %d", fn, (int)dtype);
        return BKCL_INVALID_ARGUMENT;
    }
    if (use_op && !op_valid(op)) {
        complain(c, "%s: unknown reduction op %d", fn, (int)op);
        return BKCL_INVALID_ARGUMENT;
    }
    return BKCL_SUCCESS;
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
static BKCLResult_t check_buffer(const struct BKCLContext *c, const char *fn,
                                 const char *what, const void *p,
                                 size_t bytes)
{
    pd_xpu_pointer_attrs attrs;

    if (bytes == 0)
        return BKCL_SUCCESS;
    if (!p) {
        complain(c, "%s: %s is NULL", fn, what);
        return BKCL_INVALID_ARGUMENT;
    }
    if (xpu_pointer_get_attrs(&attrs, p) != 0)
        return BKCL_RUNTIME_ERROR;
    if (attrs.memory_type != XPU_MEMORY_DEVICE) {
        complain(c, "%s: %s %p is host memory, not XPU memory", fn, what, p);
        return BKCL_INVALID_ARGUMENT;
    }
    if (attrs.device != c->device) {
        complain(c, "%s: %s %p is on XPU %d, the communicator on XPU %d", fn,
                 what, p, attrs.device, c->device);
        return BKCL_INVALID_ARGUMENT;
    }
    return BKCL_SUCCESS;
}

static int root_valid(const struct BKCLContext *c, const char *fn, int root)
{
    if (root >= 0 && root < c->nranks)
        return 1;
    complain(c, "%s: root %d outside [0, %d)", fn, root, c->nranks);
    return 0;
}

/* ---- collectives ---- */

/* Shared by all_reduce (root < 0: everyone gets the result) and reduce.
 * Each chunk of sendbuf is staged in the slot before recvbuf is written,
 * which is what makes sendbuf == recvbuf safe. */
static BKCLResult_t reduce_common(struct BKCLContext *c, const char *fn,
                                  const void *sendbuf, void *recvbuf,
                                  size_t count, BKCLDataType dtype,
                                  BKCLOp op, int root)
{
    size_t es = dtype_size(dtype);
    size_t per = c->chunk_bytes / es;
    BKCLResult_t rc;

    for (size_t off = 0; off < count; off += per) {
        size_t n = count - off < per ? count - off : per;

        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        memcpy(slot(c, c->rank), (const unsigned char *)sendbuf + off * es,
               n * es);
        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        if (root < 0 || root == c->rank)
            reduce_slots(c, (unsigned char *)recvbuf + off * es, 0, n, dtype,
                         op);
    }
    return BKCL_SUCCESS;
}

/* Checks shared by all_reduce (all) and reduce. recvbuf matters on the
 * root only, as in NCCL. */
static BKCLResult_t check_reduce(struct BKCLContext *c, const char *fn,
                                 const void *sendbuf, const void *recvbuf,
                                 size_t count, BKCLDataType dtype, BKCLOp op,
                                 int all, int root)
{
    BKCLResult_t rc;
    size_t bytes;

    if ((rc = check_comm(c, fn)) != BKCL_SUCCESS ||
        (rc = check_type(c, fn, dtype, op, 1)) != BKCL_SUCCESS)
        return rc;
    if ((!all && !root_valid(c, fn, root)) ||
        total_bytes(count, 1, dtype_size(dtype), &bytes) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(c, fn, "sendbuf", sendbuf, bytes)) != BKCL_SUCCESS)
        return rc;
    if (all || root == c->rank)
        rc = check_buffer(c, fn, "recvbuf", recvbuf, bytes);
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
    return reduce_common(comm, fn, sendbuf, recvbuf, count, dtype, op, -1);
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
    return reduce_common(comm, fn, sendbuf, recvbuf, count, dtype, op, root);
}

BKCLResult_t bkcl_broadcast(BKCLContext_t comm, const void *sendbuf,
                            void *recvbuf, size_t count, BKCLDataType dtype,
                            int root, XPUStream stream)
{
    const char *fn = "bkcl_broadcast";
    struct BKCLContext *c = comm;
    BKCLResult_t rc;
    size_t es, per, bytes;

    (void)stream;
    count_call(E_BROADCAST);
    if ((rc = check_comm(c, fn)) != BKCL_SUCCESS ||
        (rc = check_type(c, fn, dtype, BKCL_ADD, 0)) != BKCL_SUCCESS)
        return rc;
    es = dtype_size(dtype);
    if (!root_valid(c, fn, root) || total_bytes(count, 1, es, &bytes) != 0)
        return BKCL_INVALID_ARGUMENT;
    /* sendbuf matters on the root only. */
    if ((root == c->rank &&
         (rc = check_buffer(c, fn, "sendbuf", sendbuf, bytes)) != 0) ||
        (rc = check_buffer(c, fn, "recvbuf", recvbuf, bytes)) != 0)
        return rc;
    per = c->chunk_bytes / es;
    for (size_t off = 0; off < count; off += per) {
        size_t n = count - off < per ? count - off : per;
        unsigned char *dst = (unsigned char *)recvbuf + off * es;

        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        if (c->rank == root)
            memcpy(slot(c, root), (const unsigned char *)sendbuf + off * es,
                   n * es);
        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        if (c->rank != root || recvbuf != sendbuf)
            memcpy(dst, slot(c, root), n * es);
    }
    return BKCL_SUCCESS;
}

BKCLResult_t bkcl_all_gather(BKCLContext_t comm, const void *sendbuf,
                             size_t sendcount, void *recvbuf,
                             BKCLDataType dtype, XPUStream stream)
{
    const char *fn = "bkcl_all_gather";
    struct BKCLContext *c = comm;
    BKCLResult_t rc;
    size_t es, per, bytes, all;

    (void)stream;
    count_call(E_ALL_GATHER);
    if ((rc = check_comm(c, fn)) != BKCL_SUCCESS ||
        (rc = check_type(c, fn, dtype, BKCL_ADD, 0)) != BKCL_SUCCESS)
        return rc;
    es = dtype_size(dtype);
    if (total_bytes(sendcount, 1, es, &bytes) != 0 ||
        total_bytes(sendcount, (size_t)c->nranks, es, &all) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(c, fn, "sendbuf", sendbuf, bytes)) != 0 ||
        (rc = check_buffer(c, fn, "recvbuf", recvbuf, all)) != 0)
        return rc;
    /* Chunk k of every block is written only after chunk k of sendbuf is
     * staged, so both in-place forms work: sendbuf == recvbuf and NCCL's
     * sendbuf == recvbuf + rank * sendcount. */
    per = c->chunk_bytes / es;
    for (size_t off = 0; off < sendcount; off += per) {
        size_t n = sendcount - off < per ? sendcount - off : per;

        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        memcpy(slot(c, c->rank), (const unsigned char *)sendbuf + off * es,
               n * es);
        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        for (int r = 0; r < c->nranks; r++)
            memcpy((unsigned char *)recvbuf + ((size_t)r * sendcount + off) *
                   es, slot(c, r), n * es);
    }
    return BKCL_SUCCESS;
}

BKCLResult_t bkcl_reduce_scatter(BKCLContext_t comm, const void *sendbuf,
                                 void *recvbuf, size_t recvcount,
                                 BKCLDataType dtype, BKCLOp op,
                                 XPUStream stream)
{
    const char *fn = "bkcl_reduce_scatter";
    struct BKCLContext *c = comm;
    BKCLResult_t rc;
    size_t es, per, bytes, all;

    (void)stream;
    count_call(E_REDUCE_SCATTER);
    if ((rc = check_comm(c, fn)) != BKCL_SUCCESS ||
        (rc = check_type(c, fn, dtype, op, 1)) != BKCL_SUCCESS)
        return rc;
    es = dtype_size(dtype);
    if (total_bytes(recvcount, 1, es, &bytes) != 0 ||
        total_bytes(recvcount, (size_t)c->nranks, es, &all) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(c, fn, "sendbuf", sendbuf, all)) != 0 ||
        (rc = check_buffer(c, fn, "recvbuf", recvbuf, bytes)) != 0)
        return rc;
    /* A slot holds chunk k of all nranks blocks; rank r reduces block r.
     * As in all_gather, staging first makes both in-place forms safe. */
    per = c->chunk_bytes / es / (size_t)c->nranks;
    for (size_t off = 0; off < recvcount; off += per) {
        size_t n = recvcount - off < per ? recvcount - off : per;

        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        for (int b = 0; b < c->nranks; b++)
            memcpy(slot(c, c->rank) + (size_t)b * n * es,
                   (const unsigned char *)sendbuf +
                   ((size_t)b * recvcount + off) * es, n * es);
        if ((rc = comm_barrier(c, fn)) != BKCL_SUCCESS)
            return rc;
        reduce_slots(c, (unsigned char *)recvbuf + off * es,
                     (size_t)c->rank * n * es, n, dtype, op);
    }
    return BKCL_SUCCESS;
}

/* ---- point to point ---- */

/* A send or recv recorded in the calling thread's group. */
struct p2p_op {
    struct BKCLContext *comm;
    unsigned char *buf;         /* const for a send; never written then */
    size_t bytes;
    size_t moved;               /* bytes posted (send) or received (recv) */
    size_t msg_bytes;           /* recv: size of the matched send */
    long after;                 /* earlier op on the same pair and direction */
    int peer;
    int is_send;
    int started;                /* a chunk has been posted or taken */
    int done;
};

/* Group state is per thread, as in NCCL: nesting depth and recorded ops. */
static _Thread_local int group_depth;
static _Thread_local struct p2p_op *group_ops;
static _Thread_local size_t group_len, group_cap;

/* Posts the next chunk if the mailbox is free. Returns 1 on progress. */
static int send_step(struct p2p_op *op)
{
    struct BKCLContext *c = op->comm;
    struct mailbox *m = mailbox(c, c->rank, op->peer);
    uint64_t posted = atomic_load_explicit(&m->posted, memory_order_relaxed);
    size_t n = op->bytes - op->moved;

    if (atomic_load_explicit(&m->taken, memory_order_acquire) != posted)
        return 0;
    if (n > c->mailbox_bytes)
        n = c->mailbox_bytes;
    if (n)                      /* buf may be NULL for a 0-byte send */
        memcpy(mailbox_data(m), op->buf + op->moved, n);
    m->msg_bytes = op->bytes;
    m->offset = op->moved;
    m->len = n;
    atomic_store_explicit(&m->posted, posted + 1, memory_order_release);
    op->moved += n;
    op->started = 1;
    /* A zero-byte message is still one (empty) chunk, so sends and recvs
     * stay paired one to one. */
    op->done = op->moved == op->bytes;
    return 1;
}

/* Takes the next chunk if one is there. Returns 1 on progress. A sender's
 * message larger than the receive buffer is consumed whole (so the pair
 * stays in step) and reported when the recv completes. */
static int recv_step(struct p2p_op *op)
{
    struct BKCLContext *c = op->comm;
    struct mailbox *m = mailbox(c, op->peer, c->rank);
    uint64_t taken = atomic_load_explicit(&m->taken, memory_order_relaxed);

    if (atomic_load_explicit(&m->posted, memory_order_acquire) == taken)
        return 0;
    if (!op->started)
        op->msg_bytes = m->msg_bytes;
    op->started = 1;
    if (m->offset < op->bytes)
        memcpy(op->buf + m->offset, mailbox_data(m),
               m->len < op->bytes - m->offset ? m->len
                                              : op->bytes - m->offset);
    op->moved += m->len;
    atomic_store_explicit(&m->taken, taken + 1, memory_order_release);
    op->done = op->moved >= op->msg_bytes;
    return 1;
}

/* Messages between one pair, one direction, must go in posting order. */
static void order_ops(struct p2p_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ops[i].after = -1;
        for (size_t j = i; j-- > 0;) {
            if (ops[j].comm == ops[i].comm && ops[j].peer == ops[i].peer &&
                ops[j].is_send == ops[i].is_send) {
                ops[i].after = (long)j;
                break;
            }
        }
    }
}

/* Smallest timeout of the communicators involved; 0 only if all are 0. */
static int ops_timeout(const struct p2p_op *ops, size_t n)
{
    int t = 0;

    for (size_t i = 0; i < n; i++)
        if (ops[i].comm->timeout_s &&
            (t == 0 || ops[i].comm->timeout_s < t))
            t = ops[i].comm->timeout_s;
    return t;
}

static BKCLResult_t p2p_timed_out(struct p2p_op *ops, size_t n, int timeout)
{
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].done)
            complain(ops[i].comm, "bkcl_group_end: %s rank %d (%zu of "
                     "%zu bytes) timed out after %d s (BKCL_DOUBLE_TIMEOUT); "
                     "communicator is now unusable",
                     ops[i].is_send ? "send to" : "recv from", ops[i].peer,
                     ops[i].moved,
                     ops[i].bytes, timeout);
        ops[i].comm->broken |= !ops[i].done;
    }
    return BKCL_SYSTEM_ERROR;
}

/* Progresses all ops together, never blocking on one of them, so any set
 * of sends and recvs that the peers also post completes. */
static BKCLResult_t progress_ops(struct p2p_op *ops, size_t n)
{
    int timeout = ops_timeout(ops, n);
    BKCLResult_t rc = BKCL_SUCCESS;
    size_t left = n;
    struct waiter w;

    order_ops(ops, n);
    waiter_start(&w, timeout);
    while (left) {
        int progressed = 0;

        for (size_t i = 0; i < n; i++) {
            struct p2p_op *op = &ops[i];

            if (op->done || (op->after >= 0 && !ops[op->after].done))
                continue;
            while (!op->done && (op->is_send ? send_step(op)
                                             : recv_step(op)))
                progressed = 1;
            left -= op->done;
        }
        if (progressed)
            waiter_start(&w, timeout);
        else if (waiter_pause(&w) < 0)
            return p2p_timed_out(ops, n, timeout);
    }
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].is_send && ops[i].msg_bytes != ops[i].bytes) {
            complain(ops[i].comm, "bkcl_recv of %zu bytes from rank %d "
                     "matched a bkcl_send of %zu bytes", ops[i].bytes,
                     ops[i].peer, ops[i].msg_bytes);
            rc = BKCL_INVALID_ARGUMENT;
        }
    }
    return rc;
}

/* Runs and forgets everything recorded in this thread's group. */
static BKCLResult_t group_flush(void)
{
    BKCLResult_t rc = group_len ? progress_ops(group_ops, group_len)
                                : BKCL_SUCCESS;

    free(group_ops);
    group_ops = NULL;
    group_len = group_cap = 0;
    return rc;
}

/* Records a send or recv; outside a group it runs at once as a group of
 * one. */
static BKCLResult_t p2p_post(struct BKCLContext *c, const char *fn,
                             const void *buf, size_t count, int peer,
                             BKCLDataType dtype, int is_send)
{
    BKCLResult_t rc;
    size_t bytes;

    if ((rc = check_comm(c, fn)) != BKCL_SUCCESS ||
        (rc = check_type(c, fn, dtype, BKCL_ADD, 0)) != BKCL_SUCCESS)
        return rc;
    if (peer < 0 || peer >= c->nranks) {
        complain(c, "%s: peer %d outside [0, %d)", fn, peer, c->nranks);
        return BKCL_INVALID_ARGUMENT;
    }
    if (total_bytes(count, 1, dtype_size(dtype), &bytes) != 0)
        return BKCL_INVALID_ARGUMENT;
    if ((rc = check_buffer(c, fn, "buf", buf, bytes)) != BKCL_SUCCESS)
        return rc;
    if (group_len == group_cap) {
        size_t cap = group_cap ? 2 * group_cap : 16;
        struct p2p_op *grown = realloc(group_ops, cap * sizeof *grown);

        if (!grown)
            return BKCL_SYSTEM_ERROR;
        group_ops = grown;
        group_cap = cap;
    }
    group_ops[group_len++] = (struct p2p_op){
        .comm = c, .buf = (unsigned char *)(uintptr_t)buf, .bytes = bytes,
        .peer = peer, .is_send = is_send, .after = -1,
    };
    return group_depth ? BKCL_SUCCESS : group_flush();
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
    group_depth++;
    return BKCL_SUCCESS;
}

/* Only the outermost group_end runs the recorded sends and recvs.
 * Collectives called inside a group are not deferred: they run at once. */
BKCLResult_t bkcl_group_end(void)
{
    count_call(E_GROUP_END);
    if (group_depth == 0) {
        complain(NULL, "bkcl_group_end without bkcl_group_start");
        return BKCL_INVALID_ARGUMENT;
    }
    if (--group_depth > 0)
        return BKCL_SUCCESS;
    return group_flush();
}

/*
 * The engine of the device-library test doubles (engine.h). Not a real
 * collective library: it drives no hardware, it moves bytes between the
 * processes of one host through shared memory.
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

#include "engine.h"

/* Process-shared atomics must not hide a lock inside the process. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "int atomics must be lock-free");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics lock-free");

#define ID_RANDOM_BYTES 16
#define SEGMENT_MAGIC 0x43434c44424c3031ULL /* "CCLDBL01" */
#define DEFAULT_CHUNK_BYTES (1UL << 20)
#define MIN_CHUNK_BYTES 64UL
#define MAX_CHUNK_BYTES (1UL << 30)
#define MAX_RANKS 1024
#define DEFAULT_TIMEOUT_S 60
#define CACHE_LINE 64UL
#define SPIN_PAUSES 64          /* busy polls before yielding the CPU */
#define YIELD_PAUSES 256        /* yields before sleeping between polls */
#define SLEEP_NS 50000L         /* sleep between polls once idle for long */

/* ---- shared segment layout ---- */

struct rank_entry {
    _Atomic int claimed;        /* a process has joined as this rank */
    int device;                 /* its device when it joined */
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

struct ccl_comm {
    const struct ccl_face *face;
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
    _Atomic int broken;         /* a wait timed out: shared state unknown */
    _Atomic int aborted;        /* ccl_abort: every wait gives up */
};

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static unsigned char *slot(const struct ccl_comm *c, int rank)
{
    return c->slots + (size_t)rank * c->chunk_bytes;
}

static struct mailbox *mailbox(const struct ccl_comm *c, int src, int dst)
{
    size_t index = (size_t)src * (size_t)c->nranks + (size_t)dst;

    return (struct mailbox *)(c->mailboxes + index * c->mailbox_stride);
}

static unsigned char *mailbox_data(struct mailbox *m)
{
    return (unsigned char *)m + CACHE_LINE;
}

int ccl_rank(const struct ccl_comm *c) { return c->rank; }
int ccl_nranks(const struct ccl_comm *c) { return c->nranks; }
int ccl_device(const struct ccl_comm *c) { return c->device; }
const struct ccl_face *ccl_face_of(const struct ccl_comm *c)
{
    return c->face;
}

/* ---- messages ---- */

/* One line per message, written at once so ranks' lines do not mix. */
void ccl_complain(const struct ccl_face *f, const struct ccl_comm *c,
                  const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (c)
        fprintf(stderr, "%s: rank %d: %s\n", f->name, c->rank, line);
    else
        fprintf(stderr, "%s: %s\n", f->name, line);
}

#define SAY(c, ...) ccl_complain((c)->face, (c), __VA_ARGS__)

/* ---- waiting ---- */

/* Polls spin briefly, then yield, then sleep, so ranks oversubscribing the
 * cores still make progress; a deadline turns a hang into an error, and
 * an abort of the communicator ends the wait at once. */
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

/* A wait on c that ends: timed out or aborted. */
static enum ccl_result gave_up(struct ccl_comm *c, const char *fn,
                               const char *waiting_for)
{
    if (atomic_load(&c->aborted)) {
        SAY(c, "%s: aborted while waiting for %s", fn, waiting_for);
    } else {
        SAY(c, "%s: timed out after %d s waiting for %s (%s_TIMEOUT); "
            "communicator is now unusable", fn, c->timeout_s, waiting_for,
            c->face->env);
    }
    atomic_store(&c->broken, 1);
    return CCL_SYSTEM;
}

/* Sense-free generation barrier over the shared header. The generation is
 * read before arriving, so it cannot move until this rank has arrived. */
static enum ccl_result comm_barrier(struct ccl_comm *c, const char *fn)
{
    struct shared_header *h = c->hdr;
    unsigned gen = atomic_load(&h->barrier_generation);
    struct waiter w;

    if (atomic_fetch_add(&h->barrier_arrived, 1) + 1 == (unsigned)c->nranks) {
        atomic_store(&h->barrier_arrived, 0);
        atomic_fetch_add(&h->barrier_generation, 1);
        return CCL_OK;
    }
    waiter_start(&w, c->timeout_s);
    while (atomic_load(&h->barrier_generation) == gen) {
        if (atomic_load(&c->aborted) || waiter_pause(&w) < 0)
            return gave_up(c, fn, "the other ranks");
    }
    return CCL_OK;
}

/* ---- environment ---- */

static long env_long(const struct ccl_face *f, const char *what, long dflt,
                     long min, long max)
{
    char name[96];
    const char *s;
    char *end;
    long v;

    snprintf(name, sizeof name, "%s_%s", f->env, what);
    s = getenv(name);
    if (!s || !*s)
        return dflt;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max) {
        ccl_complain(f, NULL, "ignoring %s=\"%s\" (want an integer in "
                     "[%ld, %ld]); using %ld", name, s, min, max, dflt);
        return dflt;
    }
    return v;
}

/* ---- unique id ---- */

int ccl_make_id(const struct ccl_face *f, char *id, size_t len)
{
    unsigned char rnd[ID_RANDOM_BYTES];
    size_t got = 0, plen = strlen(f->id_prefix);
    int fd;

    if (len < plen + 2 * sizeof rnd + 1)
        return -1;
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
        ccl_complain(f, NULL, "cannot read /dev/urandom for a unique id");
        return -1;
    }
    /* Zeros after the name: the whole id is defined bytes, so sending it
     * through a socket or store never ships uninitialized memory. */
    memset(id, 0, len);
    memcpy(id, f->id_prefix, plen);
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(id + plen + 2 * i, 3, "%02x", rnd[i]);
    return 0;
}

/* Copies the segment name out of an id; -1 if the id is not one of ours. */
static int id_name(const struct ccl_face *f, const char *id, size_t idlen,
                   char *name, size_t size)
{
    size_t plen = strlen(f->id_prefix);
    size_t want = plen + 2 * ID_RANDOM_BYTES;

    if (idlen < plen || memcmp(id, f->id_prefix, plen) != 0 ||
        strnlen(id, idlen) != want || want >= size)
        return -1;
    memcpy(name, id, want + 1);
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

static void attach_views(struct ccl_comm *c, void *map, size_t bytes)
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
static enum ccl_result segment_create(struct ccl_comm *c, const char *name,
                                      const char *fn)
{
    size_t chunk = (size_t)env_long(c->face, "CHUNK_BYTES",
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
        SAY(c, "%s: shm_open(%s): %s (unique id reused?)", fn, name,
            strerror(errno));
        return CCL_SYSTEM;
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
        SAY(c, "%s: cannot set up %zu bytes of shared memory %s: %s", fn,
            (size_t)plan.total_bytes, name, strerror(err));
        shm_unlink(name);
        return CCL_SYSTEM;
    }
    /* The fresh segment is zero-filled: counters and flags start at 0. */
    memcpy(map, &plan, sizeof plan);
    ((struct shared_header *)map)->magic = SEGMENT_MAGIC;
    attach_views(c, map, plan.total_bytes);
    atomic_store(&c->hdr->ready, 1);
    return CCL_OK;
}

/* Opens the segment, retrying until rank 0 has created and sized it. */
static int open_sized(struct ccl_comm *c, const char *name, const char *fn,
                      struct waiter *w, size_t *bytes)
{
    struct stat st;
    int fd;

    while ((fd = shm_open(name, O_RDWR | O_CLOEXEC, 0)) < 0) {
        if (errno != ENOENT) {
            SAY(c, "%s: shm_open(%s): %s", fn, name, strerror(errno));
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
static enum ccl_result segment_attach(struct ccl_comm *c, const char *name,
                                      const char *fn)
{
    struct shared_header *h;
    struct waiter w;
    size_t bytes = 0;
    void *map;
    int fd;

    waiter_start(&w, c->timeout_s);
    fd = open_sized(c, name, fn, &w, &bytes);
    if (fd < 0)
        goto fail;
    map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        SAY(c, "%s: mmap(%s): %s", fn, name, strerror(errno));
        return CCL_SYSTEM;
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
        SAY(c, "%s: rank 0 created the communicator for %d ranks, this "
            "rank asked for %d", fn, h->nranks, c->nranks);
        munmap(map, bytes);
        return CCL_INVALID;
    }
    attach_views(c, map, bytes);
    return CCL_OK;
fail:
    if (fd == -2)
        SAY(c, "%s: timed out after %d s waiting for rank 0 to create the "
            "communicator (%s_TIMEOUT)", fn, c->timeout_s, c->face->env);
    return CCL_SYSTEM;
}

/* After everyone joined: the real libraries refuse two ranks on one
 * device. Every rank sees the same table, so all of them fail together. */
static enum ccl_result check_devices(struct ccl_comm *c, const char *fn)
{
    const struct rank_entry *r = c->hdr->ranks;

    for (int a = 0; a < c->nranks; a++) {
        for (int b = a + 1; b < c->nranks; b++) {
            if (r[a].device == r[b].device) {
                SAY(c, "%s: ranks %d and %d of one communicator are both on "
                    "%s device %d; each rank needs its own device", fn, a, b,
                    c->face->device, r[a].device);
                return CCL_INVALID;
            }
        }
    }
    return CCL_OK;
}

/* Claim this rank's entry, record the device, wait for all ranks. The last
 * rank to join unlinks the name: from then on only the mappings keep the
 * memory, and the kernel frees it when the last rank exits. */
static enum ccl_result join(struct ccl_comm *c, const char *name,
                            const char *fn)
{
    struct shared_header *h = c->hdr;
    struct waiter w;

    if (atomic_exchange(&h->ranks[c->rank].claimed, 1)) {
        SAY(c, "%s: two processes joined the communicator as rank %d", fn,
            c->rank);
        return CCL_INVALID;
    }
    h->ranks[c->rank].device = c->device;
    if (atomic_fetch_add(&h->attached, 1) + 1 == c->nranks)
        shm_unlink(name);
    waiter_start(&w, c->timeout_s);
    while (atomic_load(&h->attached) < c->nranks) {
        if (waiter_pause(&w) < 0) {
            SAY(c, "%s: timed out after %d s: %d of %d ranks joined "
                "(%s_TIMEOUT)", fn, c->timeout_s, atomic_load(&h->attached),
                c->nranks, c->face->env);
            shm_unlink(name);   /* the segment is dead; do not leave it */
            return CCL_SYSTEM;
        }
    }
    return check_devices(c, fn);
}

enum ccl_result ccl_init(const struct ccl_face *f, struct ccl_comm **out,
                         int rank, int nranks, const char *id, size_t idlen,
                         int device, const char *fn)
{
    char name[256];
    struct ccl_comm *c;
    enum ccl_result rc;

    if (!out || !id || nranks < 1 || nranks > MAX_RANKS || rank < 0 ||
        rank >= nranks) {
        ccl_complain(f, NULL, "%s: rank %d of %d ranks is not a rank of a "
                     "communicator (at most %d ranks)", fn, rank, nranks,
                     MAX_RANKS);
        return CCL_INVALID;
    }
    if (id_name(f, id, idlen, name, sizeof name) != 0) {
        ccl_complain(f, NULL, "%s: the unique id is not one this library "
                     "made", fn);
        return CCL_INVALID;
    }
    c = calloc(1, sizeof *c);
    if (!c)
        return CCL_SYSTEM;
    c->face = f;
    c->rank = rank;
    c->nranks = nranks;
    c->device = device;
    c->timeout_s = (int)env_long(f, "TIMEOUT", DEFAULT_TIMEOUT_S, 0,
                                 INT_MAX / 2);
    rc = rank == 0 ? segment_create(c, name, fn)
                   : segment_attach(c, name, fn);
    if (rc == CCL_OK) {
        rc = join(c, name, fn);
        if (rc != CCL_OK)
            munmap(c->hdr, c->map_bytes);
    }
    if (rc != CCL_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return CCL_OK;
}

void ccl_destroy(struct ccl_comm *c)
{
    if (!c)
        return;
    munmap(c->hdr, c->map_bytes);
    free(c);
}

void ccl_abort(struct ccl_comm *c)
{
    atomic_store(&c->aborted, 1);
}

enum ccl_result ccl_usable(const struct ccl_comm *c, const char *fn)
{
    if (atomic_load(&c->aborted)) {
        SAY(c, "%s: communicator aborted", fn);
        return CCL_SYSTEM;
    }
    if (atomic_load(&c->broken)) {
        SAY(c, "%s: communicator unusable after an earlier timeout", fn);
        return CCL_SYSTEM;
    }
    return CCL_OK;
}

/* ---- element types and reductions ---- */

size_t ccl_type_size(int type)
{
    switch (type) {
    case CCL_INT8: case CCL_UINT8: return 1;
    case CCL_FLOAT16: case CCL_BFLOAT16: return 2;
    case CCL_INT32: case CCL_UINT32: case CCL_FLOAT32: return 4;
    case CCL_INT64: case CCL_UINT64: case CCL_FLOAT64: return 8;
    }
    return 0;
}

/* IEEE binary16 and bfloat16 <-> float, for reductions on them. */
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

/* Integers: SUM and PROD in the unsigned type wrap instead of being
 * undefined; MIN and MAX compare in the type itself. AVG sums here and is
 * divided once every rank is in (average_in_place). */
#define COMBINE_INT(U, T)                                                  \
    switch (op) {                                                          \
    case CCL_SUM: case CCL_AVG: COMBINE(U, a + b); break;                  \
    case CCL_PROD: COMBINE(U, a * b); break;                               \
    case CCL_MIN: COMBINE(T, b < a ? b : a); break;                        \
    case CCL_MAX: COMBINE(T, b > a ? b : a); break;                        \
    default: break;                                                        \
    }

#define COMBINE_FLOAT(T)                                                   \
    switch (op) {                                                          \
    case CCL_SUM: case CCL_AVG: COMBINE(T, a + b); break;                  \
    case CCL_PROD: COMBINE(T, a * b); break;                               \
    case CCL_MIN: COMBINE(T, b < a ? b : a); break;                        \
    case CCL_MAX: COMBINE(T, b > a ? b : a); break;                        \
    default: break;                                                        \
    }

/* 16-bit floats: each step is computed in float and rounded once, which
 * is the correctly rounded 16-bit result (float has >= 2p+2 bits). */
static void combine_16(unsigned char *d, const unsigned char *s, size_t n,
                       enum ccl_op op, float (*load)(uint16_t),
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
        case CCL_SUM: case CCL_AVG: ha = store(a + b); break;
        case CCL_PROD: ha = store(a * b); break;
        case CCL_MIN: if (b < a) ha = hb; break; /* keep the bits */
        case CCL_MAX: if (b > a) ha = hb; break;
        default: break;
        }
        memcpy(d + 2 * i, &ha, 2);
    }
}

static void combine(void *dst, const void *src, size_t n, enum ccl_type type,
                    enum ccl_op op)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    switch (type) {
    case CCL_FLOAT32: COMBINE_FLOAT(float); break;
    case CCL_FLOAT64: COMBINE_FLOAT(double); break;
    case CCL_FLOAT16: combine_16(d, s, n, op, half_to_float, float_to_half);
        break;
    case CCL_BFLOAT16: combine_16(d, s, n, op, bf16_to_float, float_to_bf16);
        break;
    case CCL_INT8: COMBINE_INT(uint8_t, int8_t); break;
    case CCL_UINT8: COMBINE_INT(uint8_t, uint8_t); break;
    case CCL_INT32: COMBINE_INT(uint32_t, int32_t); break;
    case CCL_UINT32: COMBINE_INT(uint32_t, uint32_t); break;
    case CCL_INT64: COMBINE_INT(uint64_t, int64_t); break;
    case CCL_UINT64: COMBINE_INT(uint64_t, uint64_t); break;
    default: break;
    }
}

/* d[i] /= k: AVG's last step. Integers divide toward zero, as C does;
 * 16-bit floats divide in float and round once. */
#define DIVIDE(T)                                                          \
    for (size_t i = 0; i < n; i++) {                                       \
        T a;                                                               \
        memcpy(&a, d + i * sizeof(T), sizeof(T));                          \
        a = (T)(a / (T)k);                                                 \
        memcpy(d + i * sizeof(T), &a, sizeof(T));                          \
    }

static void divide_16(unsigned char *d, size_t n, int k,
                      float (*load)(uint16_t), uint16_t (*store)(float))
{
    for (size_t i = 0; i < n; i++) {
        uint16_t h;

        memcpy(&h, d + 2 * i, 2);
        h = store(load(h) / (float)k);
        memcpy(d + 2 * i, &h, 2);
    }
}

static void average_in_place(void *dst, size_t n, enum ccl_type type, int k)
{
    unsigned char *d = dst;

    switch (type) {
    case CCL_FLOAT32: DIVIDE(float); break;
    case CCL_FLOAT64: DIVIDE(double); break;
    case CCL_FLOAT16: divide_16(d, n, k, half_to_float, float_to_half); break;
    case CCL_BFLOAT16: divide_16(d, n, k, bf16_to_float, float_to_bf16);
        break;
    case CCL_INT8: DIVIDE(int8_t); break;
    case CCL_UINT8: DIVIDE(uint8_t); break;
    case CCL_INT32: DIVIDE(int32_t); break;
    case CCL_UINT32: DIVIDE(uint32_t); break;
    case CCL_INT64: DIVIDE(int64_t); break;
    case CCL_UINT64: DIVIDE(uint64_t); break;
    default: break;
    }
}

/* dst = block 0 op block 1 op ... in rank order; block r starts at
 * slot(r) + offset. Rank order makes the result identical on every rank. */
static void reduce_slots(const struct ccl_comm *c, void *dst, size_t offset,
                         size_t n, enum ccl_type type, enum ccl_op op)
{
    memcpy(dst, slot(c, 0) + offset, n * ccl_type_size(type));
    for (int r = 1; r < c->nranks; r++)
        combine(dst, slot(c, r) + offset, n, type, op);
    if (op == CCL_AVG)
        average_in_place(dst, n, type, c->nranks);
}

/* ---- collectives ---- */

static enum ccl_result check_type_op(struct ccl_comm *c, const char *fn,
                                     enum ccl_type type, enum ccl_op op)
{
    if (ccl_type_size(type) == 0) {
        SAY(c, "%s: unknown data type %d", fn, (int)type);
        return CCL_INVALID;
    }
    if ((int)op < 0 || op >= CCL_OP_COUNT) {
        SAY(c, "%s: unknown reduction op %d", fn, (int)op);
        return CCL_INVALID;
    }
    return CCL_OK;
}

/* Each chunk of sendbuf is staged in the slot before recvbuf is written,
 * which is what makes sendbuf == recvbuf safe. */
enum ccl_result ccl_reduce(struct ccl_comm *c, const char *fn,
                           const void *sendbuf, void *recvbuf, size_t count,
                           enum ccl_type type, enum ccl_op op, int root)
{
    enum ccl_result rc;

    if ((rc = ccl_usable(c, fn)) != CCL_OK ||
        (rc = check_type_op(c, fn, type, op)) != CCL_OK)
        return rc;
    size_t es = ccl_type_size(type);
    size_t per = c->chunk_bytes / es;
    for (size_t off = 0; off < count; off += per) {
        size_t n = count - off < per ? count - off : per;

        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        memcpy(slot(c, c->rank), (const unsigned char *)sendbuf + off * es,
               n * es);
        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        if (root < 0 || root == c->rank)
            reduce_slots(c, (unsigned char *)recvbuf + off * es, 0, n, type,
                         op);
    }
    return CCL_OK;
}

enum ccl_result ccl_broadcast(struct ccl_comm *c, const char *fn,
                              const void *sendbuf, void *recvbuf,
                              size_t bytes, int root)
{
    enum ccl_result rc;

    if ((rc = ccl_usable(c, fn)) != CCL_OK)
        return rc;
    size_t per = c->chunk_bytes;
    for (size_t off = 0; off < bytes; off += per) {
        size_t n = bytes - off < per ? bytes - off : per;

        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        if (c->rank == root)
            memcpy(slot(c, root), (const unsigned char *)sendbuf + off, n);
        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        if (c->rank != root || recvbuf != sendbuf)
            memcpy((unsigned char *)recvbuf + off, slot(c, root), n);
    }
    return CCL_OK;
}

/* Chunk k of every block is written only after chunk k of sendbuf is
 * staged, so both in-place forms work: sendbuf == recvbuf and NCCL's
 * sendbuf == recvbuf + rank * bytes. */
enum ccl_result ccl_allgather(struct ccl_comm *c, const char *fn,
                              const void *sendbuf, void *recvbuf,
                              size_t bytes)
{
    enum ccl_result rc;

    if ((rc = ccl_usable(c, fn)) != CCL_OK)
        return rc;
    size_t per = c->chunk_bytes;
    for (size_t off = 0; off < bytes; off += per) {
        size_t n = bytes - off < per ? bytes - off : per;

        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        memcpy(slot(c, c->rank), (const unsigned char *)sendbuf + off, n);
        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        for (int r = 0; r < c->nranks; r++)
            memcpy((unsigned char *)recvbuf + (size_t)r * bytes + off,
                   slot(c, r), n);
    }
    return CCL_OK;
}

/* A slot holds chunk k of all nranks blocks; rank r reduces block r. As
 * in allgather, staging first makes both in-place forms safe. */
enum ccl_result ccl_reduce_scatter(struct ccl_comm *c, const char *fn,
                                   const void *sendbuf, void *recvbuf,
                                   size_t recvcount, enum ccl_type type,
                                   enum ccl_op op)
{
    enum ccl_result rc;

    if ((rc = ccl_usable(c, fn)) != CCL_OK ||
        (rc = check_type_op(c, fn, type, op)) != CCL_OK)
        return rc;
    size_t es = ccl_type_size(type);
    size_t per = c->chunk_bytes / es / (size_t)c->nranks;
    for (size_t off = 0; off < recvcount; off += per) {
        size_t n = recvcount - off < per ? recvcount - off : per;

        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        for (int b = 0; b < c->nranks; b++)
            memcpy(slot(c, c->rank) + (size_t)b * n * es,
                   (const unsigned char *)sendbuf +
                   ((size_t)b * recvcount + off) * es, n * es);
        if ((rc = comm_barrier(c, fn)) != CCL_OK)
            return rc;
        reduce_slots(c, (unsigned char *)recvbuf + off * es,
                     (size_t)c->rank * n * es, n, type, op);
    }
    return CCL_OK;
}

/* ---- point to point ---- */

/* A send or recv recorded in a group. */
struct p2p_op {
    struct ccl_comm *comm;
    const char *fn;
    unsigned char *buf;         /* never written for a send */
    size_t bytes;
    size_t moved;               /* bytes posted (send) or received (recv) */
    size_t msg_bytes;           /* recv: size of the matched send */
    long after;                 /* earlier op on the same pair and direction */
    int peer;
    int is_send;
    int started;                /* a chunk has been posted or taken */
    int done;
};

struct ccl_ops {
    struct p2p_op *op;
    size_t n, cap;
};

/* Group state is per thread, as in NCCL: nesting depth and recorded ops. */
static _Thread_local int group_depth;
static _Thread_local struct ccl_ops *group;

/* Posts the next chunk if the mailbox is free. Returns 1 on progress. */
static int send_step(struct p2p_op *op)
{
    struct ccl_comm *c = op->comm;
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
    struct ccl_comm *c = op->comm;
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

static int ops_aborted(const struct p2p_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&ops[i].comm->aborted))
            return 1;
    return 0;
}

static enum ccl_result p2p_gave_up(struct p2p_op *ops, size_t n)
{
    char what[96];

    for (size_t i = 0; i < n; i++) {
        if (ops[i].done)
            continue;
        snprintf(what, sizeof what, "%s rank %d (%zu of %zu bytes moved)",
                 ops[i].is_send ? "a send to" : "a receive from",
                 ops[i].peer, ops[i].moved, ops[i].bytes);
        gave_up(ops[i].comm, ops[i].fn, what);
    }
    return CCL_SYSTEM;
}

/* Progresses all ops together, never blocking on one of them, so any set
 * of sends and recvs that the peers also post completes. */
static enum ccl_result progress_ops(struct p2p_op *ops, size_t n)
{
    int timeout = ops_timeout(ops, n);
    enum ccl_result rc = CCL_OK;
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
        else if (ops_aborted(ops, n) || waiter_pause(&w) < 0)
            return p2p_gave_up(ops, n);
    }
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].is_send && ops[i].msg_bytes != ops[i].bytes) {
            SAY(ops[i].comm, "%s of %zu bytes from rank %d matched a send "
                "of %zu bytes", ops[i].fn, ops[i].bytes, ops[i].peer,
                ops[i].msg_bytes);
            rc = CCL_INVALID;
        }
    }
    return rc;
}

void ccl_group_start(void)
{
    group_depth++;
}

int ccl_group_end(const struct ccl_face *f, struct ccl_ops **ops)
{
    *ops = NULL;
    if (group_depth == 0) {
        ccl_complain(f, NULL, "group end without a group start");
        return -1;
    }
    if (--group_depth == 0) {
        *ops = group;
        group = NULL;
    }
    return 0;
}

enum ccl_result ccl_p2p_add(struct ccl_comm *c, const char *fn, void *buf,
                            size_t bytes, int peer, int is_send)
{
    enum ccl_result rc;

    if ((rc = ccl_usable(c, fn)) != CCL_OK)
        return rc;
    if (peer < 0 || peer >= c->nranks) {
        SAY(c, "%s: peer %d outside [0, %d)", fn, peer, c->nranks);
        return CCL_INVALID;
    }
    if (group == NULL && (group = calloc(1, sizeof *group)) == NULL)
        return CCL_SYSTEM;
    if (group->n == group->cap) {
        size_t cap = group->cap ? 2 * group->cap : 16;
        struct p2p_op *grown = realloc(group->op, cap * sizeof *grown);

        if (!grown)
            return CCL_SYSTEM;
        group->op = grown;
        group->cap = cap;
    }
    group->op[group->n++] = (struct p2p_op){
        .comm = c, .fn = fn, .buf = buf, .bytes = bytes, .peer = peer,
        .is_send = is_send, .after = -1,
    };
    return CCL_OK;
}

struct ccl_comm *ccl_ops_comm(const struct ccl_ops *ops)
{
    return ops->n ? ops->op[0].comm : NULL;
}

enum ccl_result ccl_ops_run(struct ccl_ops *ops)
{
    enum ccl_result rc = ops->n ? progress_ops(ops->op, ops->n) : CCL_OK;

    ccl_ops_free(ops);
    return rc;
}

void ccl_ops_free(struct ccl_ops *ops)
{
    if (!ops)
        return;
    free(ops->op);
    free(ops);
}

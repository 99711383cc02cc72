/*
 * The shared-memory segment's layout and the signalling between the ranks
 * that map it (segment.c, sync.c), where those ranks run (placement.c),
 * used by the collectives (shm_coll.c).
 *
 *   header            one page: identity, attach count, the futex doorbell
 *   lines[size]       one per rank, 256 bytes (whole cache lines, so the
 *                     adjacent-line prefetcher does not make neighbours
 *                     share): per step parity an arrival line (counter,
 *                     call, small data), then the other counters and pid
 *   buffers[2]        each: size slots of chunk bytes, then a result area
 *                     of chunk bytes; step j uses buffer j % 2
 *
 * Steps. Every collective is a sequence of steps numbered by a counter
 * that every rank advances identically (the same calls in the same order
 * on one communicator). In step j a rank publishes its counters:
 *   arrived = j   its input for step j is in its slot (or inline); kept
 *                 per parity, with the call and small data beside it
 *   reduced = j   its share of the reduction of step j is in the result
 *   done = j      it has finished reading buffer j % 2 for step j
 * Before writing into buffer j % 2 a rank waits until every rank is done
 * with step j - 2, the last one that used that buffer.
 */
#ifndef PD_BACKEND_SHM_INTERNAL_H
#define PD_BACKEND_SHM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/shm/shm.h"
#include "base/clock.h"

#define PD_SHM_MAGIC 0x50445348u        /* "PDSH" */
#define PD_SHM_HEADER_BYTES 4096
#define PD_SHM_LINE_BYTES 256
#define PD_SHM_INLINE_BYTES 40          /* data carried in the arrival line */
#define PD_SHM_SPIN_FLOOR_US 50         /* see pd_spin_floor_ns (segment.c) */

struct pd_shm_header {
    uint32_t magic;
    uint32_t size;
    uint64_t chunk;
    uint64_t bytes;
    uint64_t extra;                     /* bytes of the caller's area */
    _Atomic uint32_t doorbell;          /* futex word: bumped to wake */
    _Atomic uint32_t sleepers;          /* ranks asleep on the doorbell */
    _Atomic uint32_t mapped_ranks;      /* the last to map removes the name */
};

/* What a rank publishes for one step parity, in one cache line: a reader
 * gets the signal, the call and small data in a single transfer. */
struct pd_shm_arrival {
    _Atomic uint32_t step;              /* the last step of this parity */
    struct pd_call_sig call;            /* the call that step serves */
    unsigned char data[PD_SHM_INLINE_BYTES];
} __attribute__((aligned(64)));

/* A call that moves data outside the segment (a device collective),
 * numbered by the communicator's call order: peers compare it without
 * waiting for each other. seq is the number plus one, 0 while the entry
 * is being rewritten (a sequence lock). */
struct pd_shm_noted_call {
    _Atomic uint32_t seq;
    uint32_t unused;
    struct pd_call_sig call;
};
#define PD_SHM_NOTED_CALLS 4

struct pd_shm_line {
    struct pd_shm_arrival arrival[2];   /* step j in arrival[j % 2] */
    _Atomic uint32_t reduced;
    _Atomic uint32_t done;
    int32_t pid;                        /* set by rank 0 at creation */
    _Atomic uint32_t mapped;            /* set by the rank once mapped */
    _Atomic int32_t cpu;                /* where the rank last waited long
                                           (pd_shm_note_cpu) */
    /* call n in noted[n % PD_SHM_NOTED_CALLS] (pd_shm_note_call) */
    struct pd_shm_noted_call noted[PD_SHM_NOTED_CALLS];
};

_Static_assert(sizeof(struct pd_shm_arrival) == 64,
               "an arrival is one cache line");
_Static_assert(sizeof(struct pd_shm_line) <= PD_SHM_LINE_BYTES,
               "line fits its bytes");

enum pd_shm_counter {
    PD_SHM_ARRIVED,
    PD_SHM_REDUCED,
    PD_SHM_DONE,
};

struct pd_shm_comm {
    int rank;
    int size;
    int *comm_ranks;
    int *pids;                      /* allocated with comm_ranks */
    size_t chunk;
    int processors;                 /* the ranks may run on together */
    bool oversubscribed;            /* more ranks than processors */
    long spin;                      /* most microseconds of polling */
    int64_t spin_ns;                /* this wait's budget (adapts) */
    int64_t spin_floor_ns;          /* ... never below this */
    unsigned spin_skipped;          /* waits since the budget ran out */
    int timeout_ms;
    uint32_t step;                  /* the last step this rank began */
    struct pd_call_sig call;        /* the call the steps serve */
    uint32_t all_arrived;           /* last step this rank saw every
                                       rank arrive at */
    int64_t moved_ns;               /* when pd_shm_leave_cpu last ran */
    size_t stream;                  /* pieces of at least this many bytes
                                       go in with non-temporal stores
                                       (stream.c); 0: never */
    unsigned char *base;            /* the mapping */
    size_t bytes;
    size_t extra;                   /* the caller's area at the end */
    struct pd_shm_header *header;
};

/* A polling loop's pause: lets the sibling hyperthread run. */
static inline void pd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Where the caller's area (pd_shm_init.extra) starts in the segment. */
size_t pd_shm_extra_offset(int size, size_t chunk);

static inline struct pd_shm_line *pd_shm_line(struct pd_shm_comm *c, int r)
{
    return (struct pd_shm_line *)(c->base + PD_SHM_HEADER_BYTES +
                                  (size_t)r * PD_SHM_LINE_BYTES);
}

/* Buffer b's slot of rank r; r == size is the result area. */
static inline unsigned char *pd_shm_slot(struct pd_shm_comm *c, uint32_t b,
                                         int r)
{
    size_t lines = (size_t)c->size * PD_SHM_LINE_BYTES;
    size_t first = (PD_SHM_HEADER_BYTES + lines + 4095) & ~(size_t)4095;
    return c->base + first +
           ((size_t)(b & 1) * (size_t)(c->size + 1) + (size_t)r) * c->chunk;
}

/* Copy n bytes to dst in the segment with non-temporal stores (a plain
 * copy where the processor has none). Call pd_shm_stream_done before
 * publishing what was copied: those stores are not ordered with the
 * ones that follow. */
void pd_shm_stream(void *dst, const void *src, size_t n);
void pd_shm_stream_done(void);

/* pd_shm_stream to dst, and an ordinary copy of the same bytes to also,
 * reading src once. */
void pd_shm_stream_twice(void *dst, void *also, const void *src, size_t n);

/* Processors the ranks (processes pids) may run on together. */
int pd_shm_processors(int size, const int *pids);

/* Note in this rank's line the processor it runs on now, and return it
 * (-1 when unknown): the others read it to tell whether they share it. */
int pd_shm_note_cpu(struct pd_shm_comm *c);

/* Move this rank off the processor it runs on when a lower rank runs
 * there too and it may run elsewhere (at most once in a while). */
void pd_shm_leave_cpu(struct pd_shm_comm *c);

/* Publish counter = step for this rank, waking sleepers. */
void pd_shm_post(struct pd_shm_comm *c, enum pd_shm_counter which,
                 uint32_t step);

/* Publish this rank's input for step (and the call it serves). */
void pd_shm_arrive(struct pd_shm_comm *c, uint32_t step);

/* Wait until counter >= step on rank only (or on every rank, only < 0).
 * Fails with a message when a rank it waits for has died or the timeout
 * passes, or -- waiting for arrivals -- is in another call. */
int pd_shm_wait(struct pd_shm_comm *c, enum pd_shm_counter which,
                uint32_t step, int only, const char *what,
                struct pd_backend_error *err);

/* Begin the next step (*step): wait until every rank is done with the
 * step that last used the same buffer. */
int pd_shm_begin_step(struct pd_shm_comm *c, uint32_t *step, const char *what,
                      struct pd_backend_error *err);

#endif

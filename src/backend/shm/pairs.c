/*
 * Point-to-point queues between the ranks of one host (see pairs.h).
 *
 *   ranks[size]        per rank: its doorbell, whether it sleeps on it,
 *                      where others may test reading its memory
 *   readable[size^2]   readable[r * size + o]: rank r may read o's memory
 *   queues[size^2]     per ordered pair (from, to): the producer's tail
 *                      and the consumer's head on lines of their own, the
 *                      acknowledgement words the consumer writes
 *   rings[size^2-size] ring_bytes each, one per ordered pair of two ranks
 *
 * A ring holds records of whole cache lines. One that would not fit
 * before the ring's end goes at its start, after a WRAP record. The
 * consumer polls the stamp of the record at its head, not the producer's
 * tail: the line it waits on is the one that brings the message, and the
 * producer never writes a line the consumer polls except to publish.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "backend/shm/pairs.h"
#include "backend/shm/shm_internal.h"
#include "base/clock.h"
#include "boot/shm_name.h"

/* Acknowledgement words per pair; an RTS beyond them is acknowledged in
 * the sender's memory (a system call more). */
#define PD_PAIRS_SLOTS 64
#define PD_PAIR_NO_SLOT UINT32_MAX

struct pd_pair_rank {
    _Atomic uint32_t bell;
    _Atomic uint32_t sleeping;
    uint64_t probe_addr;            /* a word of this process others read */
} __attribute__((aligned(64)));

/*
 * A shared copy. The receiver of a large message from memory offers its
 * sender, which most often only waits for the acknowledgement, a share
 * of the copy: both take pieces of PD_PAIRS_HELP_PIECE bytes, one at a
 * time, the receiver reading with process_vm_readv and the sender
 * writing with process_vm_writev, so two processors copy at once (on the
 * 2-core test machine one copier moves 7.7 GB/s, two 6.9 each). A
 * sender that is busy elsewhere takes no piece and the receiver copies
 * them all, as without the offer. The receiver acknowledges once every
 * piece taken is copied.
 *
 * Measured at np 2 (osu_bw, osu_latency, two runs each, against the
 * receiver copying alone): from 512 KiB, in pieces of 256 KiB, osu_bw
 * 13-21 GB/s where it was 6-17, and 1 MiB takes 65-69 us one way where
 * it took 97-110. Below that the message is in the caches of one copier
 * and two copiers slow each other down (pieces of 32 KiB from 64 KiB:
 * 128-512 KiB at 12-13 GB/s against 14-16 alone), as smaller pieces do
 * larger messages (32 KiB: 10-14 GB/s at 1-8 MiB, 256 KiB: 12-21).
 */
#define PD_PAIRS_HELP_MIN ((size_t)512 << 10)
#define PD_PAIRS_HELP_PIECE ((size_t)256 << 10)
#define PD_PAIRS_LIVENESS_NS 100000000  /* a helping sender still there? */

struct pd_pair_help {
    _Atomic uint64_t claim;         /* gen << 32 | pieces taken; the gen
                                       of the RTS offered, 0: none */
    _Atomic uint64_t done;          /* bytes copied, by either */
    _Atomic uint64_t dst;           /* the receive buffer, in the receiver */
    _Atomic uint64_t bytes;         /* how many bytes to copy there */
    _Atomic uint32_t busy;          /* a receiving thread holds the offer */
    _Atomic uint32_t broken;        /* a piece the sender could not write */
} __attribute__((aligned(64)));

/*
 * A message packed as it moves (pd_shm_pairs_stream_open). Piece k of
 * PD_PAIRS_STREAM_PIECE bytes goes into the sender's buffer k % 2 once
 * the receiver has read piece k - 2; the receiver reads piece k once
 * packed covers it. Each side's word counts for its gen only: a stale
 * one from the pair's previous stream reads as nothing done.
 *
 * Measured at np 2, a ping-pong of every other double from one such
 * vector into another (the receiver unpacks each piece as it lands),
 * medians of six alternating runs against packing whole
 * (bench/results/summary.md): in pieces of 128 KiB, 4 MiB 725 against
 * 763 us, 8 MiB 1.82 against 2.19 ms, 16 MiB 4.16 against 4.53 ms; 2
 * MiB was slower (356 against 313 us), and so was every size without
 * the receiver's unpacking piece by piece (2 MiB 421, 8 MiB 2.02 ms).
 */
#define PD_PAIRS_STREAM_PIECE ((size_t)128 << 10)
#define PD_PAIRS_STREAM_MIN ((size_t)4 << 20)

struct pd_pair_stream {
    _Atomic uint64_t packed;        /* sender: bytes of stream gen packed */
    _Atomic uint32_t gen;
    char pad[52];
    _Atomic uint64_t taken;         /* receiver: bytes of taken_gen read */
    _Atomic uint32_t taken_gen;
} __attribute__((aligned(64)));

struct pd_pair_queue {
    _Atomic uint64_t tail;          /* bytes ever pushed (producer) */
    char pad1[56];
    _Atomic uint64_t head;          /* bytes ever popped (consumer) */
    char pad2[56];
    _Atomic uint32_t ack[PD_PAIRS_SLOTS];   /* written by the consumer */
    struct pd_pair_help help;       /* offered by the consumer */
    struct pd_pair_stream stream;   /* producer to consumer */
} __attribute__((aligned(64)));

/* This rank's stream to one destination. */
struct pd_stream_out {
    _Atomic bool open;
    _Atomic bool busy;              /* a thread packs it now */
    uint32_t gen;
    size_t total, packed;
    pd_pair_pack_fn pack;
    void *ctx;
    unsigned char *bounce;          /* two pieces, kept for the next */
};

struct pd_shm_pairs {
    struct pd_shm_comm *seg;
    int rank, size;
    size_t ring_bytes, eager;
    struct pd_pair_rank *ranks;
    unsigned char *readable;
    struct pd_pair_queue *queues;
    unsigned char *rings;
    int64_t spin_ns;                /* polling before yielding */
    uint64_t *heads_seen;           /* per destination: its head when last
                                       read (a ring with room by that
                                       needs no look at the receiver's) */
    _Atomic uint64_t *slots_used;   /* per destination: words in use */
    uint32_t *gens;                 /* per destination: the last written */
    struct pd_stream_out *out;      /* per destination */
    _Atomic int streams_open;
    /* Where a stream's pieces land on the receiver's side: one piece,
     * kept for the next stream; a thread that finds it taken (another
     * stream in at once) allocates its own. */
    _Atomic(unsigned char *) landing;
};

/* What a rank that tests reading this process's memory should find. */
static const uint64_t pd_probe_word = 0x5044504149525321ull;

#define PD_LINE 64

static size_t pd_round_line(size_t n)
{
    return (n + PD_LINE - 1) & ~(size_t)(PD_LINE - 1);
}

/* Where a record's payload starts, and the record's whole length. */
static size_t pd_payload_offset(const struct pd_pair_msg *m)
{
    return m->kind == PD_PAIR_EAGER ? PD_PAIR_INLINE_OFFSET
                                    : sizeof(struct pd_pair_msg);
}

static size_t pd_record_len(const struct pd_pair_msg *m)
{
    if (m->kind == PD_PAIR_WRAP)
        return m->payload;
    return pd_round_line(pd_payload_offset(m) + m->payload);
}

/* Ring bytes per pair: 16 MiB for the whole host, each ring a power of
 * two (a position in it is a mask, not a division, on every message)
 * between 8 KiB (a 2 KiB message eager) and 256 KiB. */
static size_t pd_ring_bytes(int size)
{
    size_t pairs = size > 1 ? (size_t)size * (size_t)(size - 1) : 1;
    size_t r = (size_t)256 << 10;
    while (r > ((size_t)8 << 10) && r * pairs > ((size_t)16 << 20))
        r /= 2;
    return r;
}

static size_t pd_ranks_bytes(int size)
{
    return (size_t)size * sizeof(struct pd_pair_rank);
}

static size_t pd_readable_bytes(int size)
{
    return pd_round_line((size_t)size * (size_t)size);
}

static size_t pd_queues_bytes(int size)
{
    return (size_t)size * (size_t)size * sizeof(struct pd_pair_queue);
}

size_t pd_shm_pairs_bytes(int size)
{
    size_t before = pd_ranks_bytes(size) + pd_readable_bytes(size) +
                    pd_queues_bytes(size);
    before = (before + 4095) & ~(size_t)4095;
    return before +
           (size_t)size * (size_t)(size - 1) * pd_ring_bytes(size);
}

static struct pd_pair_queue *pd_queue(struct pd_shm_pairs *p, int from,
                                      int to)
{
    return &p->queues[(size_t)from * (size_t)p->size + (size_t)to];
}

static unsigned char *pd_ring(struct pd_shm_pairs *p, int from, int to)
{
    size_t pair = (size_t)from * (size_t)(p->size - 1) +
                  (size_t)(to < from ? to : to - 1);
    return p->rings + pair * p->ring_bytes;
}

/* Whether this process may read 8 bytes at addr in process pid. */
static bool pd_can_read(pid_t pid, uint64_t addr)
{
    uint64_t word = 0;
    struct iovec local = { &word, sizeof(word) };
    struct iovec remote = { (void *)(uintptr_t)addr, sizeof(word) };
    return addr != 0 &&
           process_vm_readv(pid, &local, 1, &remote, 1, 0) ==
               (ssize_t)sizeof(word) &&
           word == pd_probe_word;
}

int pd_shm_pairs_open(struct pd_shm_comm *seg, bool cma,
                      struct pd_shm_pairs **out, struct pd_backend_error *err)
{
    *out = NULL;
    unsigned char *area = pd_shm_extra(seg);
    if (area == NULL || seg->extra < pd_shm_pairs_bytes(seg->size)) {
        snprintf(err->msg, sizeof(err->msg), "the shared memory segment "
                 "has no room for point-to-point queues");
        return PD_BACKEND_ERR_INTERNAL;
    }
    struct pd_shm_pairs *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return PD_BACKEND_ERR_NOMEM;
    }
    p->seg = seg;
    p->rank = seg->rank;
    p->size = seg->size;
    p->ring_bytes = pd_ring_bytes(seg->size);
    /* A quarter of a ring: a few messages in flight before a sender
     * waits for its receiver. */
    p->eager = p->ring_bytes / 4 - sizeof(struct pd_pair_msg);
    if (p->eager > ((size_t)16 << 10))
        p->eager = (size_t)16 << 10;
    p->ranks = (struct pd_pair_rank *)area;
    p->readable = area + pd_ranks_bytes(p->size);
    p->queues = (struct pd_pair_queue *)(p->readable +
                                         pd_readable_bytes(p->size));
    size_t before = pd_ranks_bytes(p->size) + pd_readable_bytes(p->size) +
                    pd_queues_bytes(p->size);
    p->rings = area + ((before + 4095) & ~(size_t)4095);
    p->spin_ns = seg->oversubscribed ? 0 : 50000;
    p->heads_seen = calloc((size_t)p->size, sizeof(*p->heads_seen));
    p->slots_used = calloc((size_t)p->size, sizeof(*p->slots_used));
    p->gens = calloc((size_t)p->size, sizeof(*p->gens));
    p->out = calloc((size_t)p->size, sizeof(*p->out));
    if (p->heads_seen == NULL || p->slots_used == NULL || p->gens == NULL ||
        p->out == NULL) {
        pd_shm_pairs_close(p);
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return PD_BACKEND_ERR_NOMEM;
    }

    /* Which ranks may read which: each publishes a word, the others try
     * it, and nobody sends before every answer is in. */
    struct pd_call_sig barrier = { .kind = PD_COLL_BARRIER, .root = -1 };
    pd_shm_set_call(seg, &barrier);
    p->ranks[p->rank].probe_addr = cma ? (uint64_t)(uintptr_t)&pd_probe_word
                                       : 0;
    int rc = pd_shm_barrier(seg, err);
    for (int o = 0; rc == PD_BACKEND_OK && o < p->size; o++)
        if (o != p->rank)
            p->readable[(size_t)p->rank * (size_t)p->size + (size_t)o] =
                cma && pd_can_read((pid_t)seg->pids[o],
                                   p->ranks[o].probe_addr);
    if (rc == PD_BACKEND_OK)
        rc = pd_shm_barrier(seg, err);
    if (rc != PD_BACKEND_OK) {
        pd_shm_pairs_close(p);
        return rc;
    }
    *out = p;
    return PD_BACKEND_OK;
}

void pd_shm_pairs_close(struct pd_shm_pairs *p)
{
    if (p != NULL) {
        free(p->heads_seen);
        free((void *)p->slots_used);
        free(p->gens);
        for (int d = 0; p->out != NULL && d < p->size; d++)
            free(p->out[d].bounce);
        free(p->out);
        free(atomic_load(&p->landing));
    }
    free(p);
}

int pd_shm_pairs_rank(const struct pd_shm_pairs *p)
{
    return p->rank;
}

int pd_shm_pairs_size(const struct pd_shm_pairs *p)
{
    return p->size;
}

size_t pd_shm_pairs_eager(const struct pd_shm_pairs *p)
{
    return p->eager;
}

bool pd_shm_pairs_cma(const struct pd_shm_pairs *p, int dst)
{
    return p->readable[(size_t)dst * (size_t)p->size + (size_t)p->rank] != 0;
}

/* A free acknowledgement word of the pair to dst for RTS m, if any. */
static void pd_take_slot(struct pd_shm_pairs *p, int dst,
                         struct pd_pair_msg *m)
{
    _Atomic uint64_t *used = &p->slots_used[dst];
    uint64_t cur = atomic_load(used);
    m->slot = PD_PAIR_NO_SLOT;
    while (~cur != 0) {
        int slot = __builtin_ctzll(~cur);
        if (atomic_compare_exchange_weak(used, &cur, cur | (1ull << slot))) {
            m->slot = (uint32_t)slot;
            if (++p->gens[dst] == 0)    /* 0 is what a fresh word holds */
                ++p->gens[dst];
            m->gen = p->gens[dst];
            return;
        }
    }
}

bool pd_shm_pairs_acked(struct pd_shm_pairs *p, int dst,
                        const struct pd_pair_msg *m,
                        const _Atomic uint32_t *word)
{
    if (m->slot == PD_PAIR_NO_SLOT)
        return atomic_load_explicit(word, memory_order_acquire) != 0;
    if (atomic_load_explicit(&pd_queue(p, p->rank, dst)->ack[m->slot],
                             memory_order_acquire) != m->gen)
        return false;
    atomic_fetch_and(&p->slots_used[dst], ~(1ull << m->slot));
    return true;
}

/* Wake local rank r if a thread of it sleeps on its doorbell. */
static void pd_wake_sleeper(struct pd_shm_pairs *p, int r)
{
    struct pd_pair_rank *pr = &p->ranks[r];
    if (atomic_load_explicit(&pr->sleeping, memory_order_relaxed) != 0) {
        atomic_fetch_add(&pr->bell, 1);
        syscall(SYS_futex, &pr->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

bool pd_shm_pairs_push(struct pd_shm_pairs *p, int dst,
                       struct pd_pair_msg *m, const void *payload)
{
    struct pd_pair_queue *q = pd_queue(p, p->rank, dst);
    unsigned char *ring = pd_ring(p, p->rank, dst);
    size_t R = p->ring_bytes;
    size_t need = pd_record_len(m);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    size_t pos = (size_t)tail & (R - 1), skip = pos + need > R ? R - pos : 0;
    /* A line to spare: where the next record will start is free. */
    size_t want = skip + need + PD_LINE;
    if (want > R)
        return false;
    if (tail + want - p->heads_seen[dst] > R) {
        p->heads_seen[dst] = atomic_load_explicit(&q->head,
                                                  memory_order_acquire);
        if (tail + want - p->heads_seen[dst] > R)
            return false;
    }
    if (m->kind == PD_PAIR_RTS && m->pull == PD_PULL_CMA)
        pd_take_slot(p, dst, m);
    struct pd_pair_msg *w = (struct pd_pair_msg *)(ring + pos);
    uint64_t start = tail + skip;
    size_t at = skip > 0 ? 0 : pos;
    struct pd_pair_msg *r = (struct pd_pair_msg *)(ring + at);
    size_t off = pd_payload_offset(m);
    /* Sizes the compiler knows: moves, not calls. */
    if (off == PD_PAIR_INLINE_OFFSET)
        memcpy((unsigned char *)r + sizeof(r->stamp),
               (const unsigned char *)m + sizeof(m->stamp),
               PD_PAIR_INLINE_OFFSET - sizeof(m->stamp));
    else
        memcpy((unsigned char *)r + sizeof(r->stamp),
               (const unsigned char *)m + sizeof(m->stamp),
               sizeof(*m) - sizeof(m->stamp));
    if (m->payload > 0)
        memcpy((unsigned char *)r + off, payload, m->payload);
    /* Where the next record goes may hold an old payload's bytes where
     * its stamp will be: clear them before this record is seen. */
    struct pd_pair_msg *next =
        (struct pd_pair_msg *)(ring + ((at + need) & (R - 1)));
    __atomic_store_n(&next->stamp, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->stamp, start + 1, __ATOMIC_RELEASE);
    if (skip > 0) {
        /* The consumer reads the wrap first: it goes out last. */
        w->payload = (uint32_t)skip;
        w->kind = PD_PAIR_WRAP;
        __atomic_store_n(&w->stamp, tail + 1, __ATOMIC_RELEASE);
    }
    atomic_store_explicit(&q->tail, start + need, memory_order_relaxed);
    /* Only a receiver that sleeps needs its doorbell. No fence between
     * the tail and this look (it would make every push wait for the
     * tail's cache line): a receiver that says it sleeps just after this
     * look may miss the push until its nap ends, 1 ms at most, and it
     * naps only after a millisecond of waiting. */
    pd_wake_sleeper(p, dst);
    return true;
}

const struct pd_pair_msg *pd_shm_pairs_peek(struct pd_shm_pairs *p, int src)
{
    struct pd_pair_queue *q = pd_queue(p, src, p->rank);
    unsigned char *ring = pd_ring(p, src, p->rank);
    for (;;) {
        uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
        const struct pd_pair_msg *m = (const struct pd_pair_msg *)(
            ring + (head & (p->ring_bytes - 1)));
        if (__atomic_load_n(&m->stamp, __ATOMIC_ACQUIRE) != head + 1)
            return NULL;
        if (m->kind != PD_PAIR_WRAP)
            return m;
        atomic_store_explicit(&q->head, head + pd_record_len(m),
                              memory_order_release);
    }
}

const struct pd_pair_msg *pd_shm_pairs_peek_polling(struct pd_shm_pairs *p,
                                                    int src)
{
    const struct pd_pair_msg *m = pd_shm_pairs_peek(p, src);
    if (m != NULL || p->spin_ns == 0)
        return m;
    int64_t start = pd_clock_ns();
    for (unsigned i = 1;; i++) {
        pd_cpu_relax();
        if ((m = pd_shm_pairs_peek(p, src)) != NULL)
            return m;
        if (i % 64 == 0 && pd_clock_ns() - start >= p->spin_ns)
            return NULL;
    }
}

void pd_shm_pairs_pop(struct pd_shm_pairs *p, int src,
                      const struct pd_pair_msg *m)
{
    struct pd_pair_queue *q = pd_queue(p, src, p->rank);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    atomic_store_explicit(&q->head, head + pd_record_len(m),
                          memory_order_release);
}

/* n bytes at addr in process pid to dst. -1 with why. */
static int pd_read_from(pid_t pid, void *dst, uint64_t addr, size_t n,
                        char *why, size_t len)
{
    size_t done = 0;
    while (done < n) {
        struct iovec local = { (char *)dst + done, n - done };
        struct iovec remote = { (void *)(uintptr_t)(addr + done), n - done };
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got < 0 && errno == ESRCH) {
            /* A sender that died is a zombie without memory, or no more. */
            snprintf(why, len, "the sender (pid %d) is gone: reading %zu "
                     "bytes from it found no such process", (int)pid, n);
            return -1;
        }
        if (got <= 0) {
            snprintf(why, len, "reading %zu bytes from the sender (pid %d) "
                     "failed: %s", n, (int)pid,
                     got < 0 ? strerror(errno) : "nothing read");
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

/* A receiver waiting for its sender: since when, and when it next looks
 * whether the sender is still there. */
struct pd_sender_wait {
    int64_t start, next_check;
};

/* One turn of waiting for the sender pid (w zeroed before the first):
 * poll, then yield. -1 with why once the sender is gone or has not
 * finished what it was doing (doing: "copying its share of") within
 * PDMPI_TIMEOUT. */
static int pd_sender_wait(struct pd_shm_pairs *p, pid_t pid,
                          struct pd_sender_wait *w, const char *doing,
                          char *why, size_t len)
{
    int64_t now = pd_clock_ns();
    if (w->start == 0) {
        w->start = now;
        w->next_check = PD_PAIRS_LIVENESS_NS;
    }
    int64_t waited = now - w->start;
    if (waited < p->spin_ns)
        pd_cpu_relax();
    else
        sched_yield();
    if (waited < w->next_check)
        return 0;
    w->next_check += PD_PAIRS_LIVENESS_NS;
    if (pd_process_gone(pid)) {
        snprintf(why, len, "the sender (pid %d) is gone while %s the "
                 "message", (int)pid, doing);
        return -1;
    }
    if (p->seg->timeout_ms > 0 &&
        waited / 1000000 >= (int64_t)p->seg->timeout_ms) {
        snprintf(why, len, "the sender (pid %d) did not finish %s the "
                 "message within PDMPI_TIMEOUT (%d s)", (int)pid, doing,
                 p->seg->timeout_ms / 1000);
        return -1;
    }
    return 0;
}

/* The next piece of offer gen in h: its length (0: none left, or the
 * offer is gone) and its offset at *off. */
static size_t pd_help_take(struct pd_pair_help *h, uint32_t gen, size_t *off)
{
    uint64_t c = atomic_load_explicit(&h->claim, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(c >> 32) != gen)
            return 0;
        size_t bytes = (size_t)atomic_load_explicit(&h->bytes,
                                                    memory_order_relaxed);
        *off = (size_t)(c & UINT32_MAX) * PD_PAIRS_HELP_PIECE;
        if (*off >= bytes)
            return 0;
        /* Taken only if the offer is still this one: the fields just
         * read were its own. */
        if (atomic_compare_exchange_weak_explicit(&h->claim, &c, c + 1,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire))
            return bytes - *off < PD_PAIRS_HELP_PIECE ? bytes - *off
                                                      : PD_PAIRS_HELP_PIECE;
    }
}

/* The receiver's side of a shared copy (h held). Every piece the sender
 * took is waited for, even after a failed read here: the receive buffer
 * goes back to the program only when nobody writes it any more -- unless
 * the sender is gone, or stopped past PDMPI_TIMEOUT (then the receive
 * fails, and the offer is withdrawn so that it takes no further piece). */
static int pd_pull_shared(struct pd_shm_pairs *p, int src,
                          const struct pd_pair_msg *rts,
                          struct pd_pair_help *h, void *dst, size_t n,
                          char *why, size_t len)
{
    pid_t pid = (pid_t)p->seg->pids[src];
    atomic_store_explicit(&h->dst, (uint64_t)(uintptr_t)dst,
                          memory_order_relaxed);
    atomic_store_explicit(&h->bytes, n, memory_order_relaxed);
    atomic_store_explicit(&h->done, 0, memory_order_relaxed);
    atomic_store_explicit(&h->broken, 0, memory_order_relaxed);
    atomic_store_explicit(&h->claim, (uint64_t)rts->gen << 32,
                          memory_order_release);
    pd_wake_sleeper(p, src);
    int rc = 0;
    size_t off, piece;
    while ((piece = pd_help_take(h, rts->gen, &off)) > 0) {
        if (rc == 0 && pd_read_from(pid, (char *)dst + off, rts->addr + off,
                                    piece, why, len) != 0)
            rc = -1;
        atomic_fetch_add_explicit(&h->done, piece, memory_order_release);
    }
    struct pd_sender_wait w = { 0, 0 };
    while (atomic_load_explicit(&h->done, memory_order_acquire) < n) {
        if (pd_sender_wait(p, pid, &w, "copying its share of", why, len) !=
            0) {
            rc = -1;
            break;
        }
    }
    atomic_store_explicit(&h->claim, 0, memory_order_relaxed);
    if (rc == 0 && atomic_load_explicit(&h->broken, memory_order_relaxed))
        rc = pd_read_from(pid, dst, rts->addr, n, why, len);
    return rc;
}

bool pd_shm_pairs_offered(struct pd_shm_pairs *p, int dst,
                          const struct pd_pair_msg *m)
{
    return m->slot != PD_PAIR_NO_SLOT &&
           (uint32_t)(atomic_load_explicit(&pd_queue(p, p->rank, dst)
                                                ->help.claim,
                                           memory_order_relaxed) >> 32) ==
               m->gen;
}

bool pd_shm_pairs_help(struct pd_shm_pairs *p, int dst,
                       const struct pd_pair_msg *m)
{
    struct pd_pair_help *h = &pd_queue(p, p->rank, dst)->help;
    pid_t pid = (pid_t)p->seg->pids[dst];
    bool helped = false;
    size_t off, piece;
    while ((piece = pd_help_take(h, m->gen, &off)) > 0) {
        uint64_t to = atomic_load_explicit(&h->dst, memory_order_relaxed);
        size_t put = 0;
        while (put < piece) {
            struct iovec local = { (void *)(uintptr_t)(m->addr + off + put),
                                   piece - put };
            struct iovec remote = { (void *)(uintptr_t)(to + off + put),
                                    piece - put };
            ssize_t got = process_vm_writev(pid, &local, 1, &remote, 1, 0);
            if (got <= 0)
                break;
            put += (size_t)got;
        }
        /* A piece that did not go through: the receiver copies the whole
         * message again itself (a receiver gone waits for nothing). */
        if (put < piece)
            atomic_store_explicit(&h->broken, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&h->done, piece, memory_order_release);
        helped = true;
    }
    return helped;
}

size_t pd_shm_pairs_stream_min(void)
{
    return PD_PAIRS_STREAM_MIN;
}

bool pd_shm_pairs_stream_open(struct pd_shm_pairs *p, int dst,
                              struct pd_pair_msg *m, size_t total,
                              pd_pair_pack_fn pack, void *ctx)
{
    struct pd_stream_out *o = &p->out[dst];
    bool closed = false;
    /* The receiver reads the pieces, and acknowledges in this rank's
     * memory. */
    if (!pd_shm_pairs_cma(p, dst) ||
        !atomic_compare_exchange_strong(&o->open, &closed, true))
        return false;
    if (o->bounce == NULL &&
        (o->bounce = malloc(2 * PD_PAIRS_STREAM_PIECE)) == NULL) {
        atomic_store(&o->open, false);
        return false;
    }
    if (++o->gen == 0)
        ++o->gen;
    o->total = total;
    o->packed = 0;
    o->pack = pack;
    o->ctx = ctx;
    struct pd_pair_stream *sh = &pd_queue(p, p->rank, dst)->stream;
    atomic_store_explicit(&sh->packed, 0, memory_order_relaxed);
    atomic_store_explicit(&sh->gen, o->gen, memory_order_release);
    m->kind = PD_PAIR_RTS;
    m->pull = PD_PULL_STREAM;
    m->bytes = total;
    m->addr = (uint64_t)(uintptr_t)o->bounce;
    m->slot = PD_PAIR_NO_SLOT;
    m->gen = o->gen;
    atomic_fetch_add(&p->streams_open, 1);
    return true;
}

/* Pack the pieces of o (busy taken) that its receiver has room for. */
static bool pd_stream_fill(struct pd_shm_pairs *p, int dst,
                           struct pd_stream_out *o)
{
    struct pd_pair_stream *sh = &pd_queue(p, p->rank, dst)->stream;
    bool moved = false;
    while (o->packed < o->total) {
        size_t k = o->packed / PD_PAIRS_STREAM_PIECE;
        if (k >= 2) {
            /* Piece k - 2, in the buffer piece k goes to, must be read. */
            if (atomic_load_explicit(&sh->taken_gen, memory_order_acquire) !=
                    o->gen ||
                atomic_load_explicit(&sh->taken, memory_order_acquire) <
                    (k - 1) * PD_PAIRS_STREAM_PIECE)
                break;
        }
        size_t n = o->total - o->packed < PD_PAIRS_STREAM_PIECE
                       ? o->total - o->packed : PD_PAIRS_STREAM_PIECE;
        o->pack(o->ctx, o->packed, n,
                o->bounce + (k % 2) * PD_PAIRS_STREAM_PIECE);
        o->packed += n;
        atomic_store_explicit(&sh->packed, o->packed, memory_order_release);
        moved = true;
    }
    return moved;
}

bool pd_shm_pairs_streaming(struct pd_shm_pairs *p)
{
    return atomic_load_explicit(&p->streams_open, memory_order_relaxed) > 0;
}

bool pd_shm_pairs_stream_advance(struct pd_shm_pairs *p)
{
    if (atomic_load_explicit(&p->streams_open, memory_order_relaxed) == 0)
        return false;
    bool moved = false;
    for (int d = 0; d < p->size; d++) {
        struct pd_stream_out *o = &p->out[d];
        if (!atomic_load_explicit(&o->open, memory_order_acquire) ||
            atomic_exchange_explicit(&o->busy, true, memory_order_acquire))
            continue;
        if (atomic_load_explicit(&o->open, memory_order_relaxed))
            moved |= pd_stream_fill(p, d, o);
        atomic_store_explicit(&o->busy, false, memory_order_release);
    }
    return moved;
}

void pd_shm_pairs_stream_close(struct pd_shm_pairs *p, int dst)
{
    struct pd_stream_out *o = &p->out[dst];
    /* Not while another thread packs: what it packs from may go away
     * once this returns. */
    while (atomic_exchange_explicit(&o->busy, true, memory_order_acquire))
        sched_yield();
    if (atomic_exchange(&o->open, false))
        atomic_fetch_sub(&p->streams_open, 1);
    atomic_store_explicit(&o->busy, false, memory_order_release);
}

/* The receiver's side of a stream: n of its bytes (fewer than it holds
 * where the receive is shorter), a piece at a time as the sender packs
 * them, each marked read for the sender to reuse its buffer. With got_fn,
 * each piece lands in a buffer of one piece and goes to got_fn from
 * there, so dst is never written: a non-contiguous receive unpacks from
 * it and holds one piece, not a packed copy of the message. While it
 * waits, this rank's own streams move on: a sender that waits here for a
 * rank that waits for it still packs. */
static int pd_pull_stream(struct pd_shm_pairs *p, int src,
                          const struct pd_pair_msg *rts, void *dst, size_t n,
                          pd_pair_got_fn got_fn, void *got_ctx, char *why,
                          size_t len)
{
    unsigned char *landing = NULL;
    if (got_fn != NULL &&
        (landing = atomic_exchange(&p->landing, NULL)) == NULL &&
        (landing = malloc(PD_PAIRS_STREAM_PIECE)) == NULL) {
        snprintf(why, len, "out of memory (a piece of %zu bytes)",
                 PD_PAIRS_STREAM_PIECE);
        return -1;
    }
    pid_t pid = (pid_t)p->seg->pids[src];
    struct pd_pair_stream *sh = &pd_queue(p, src, p->rank)->stream;
    atomic_store_explicit(&sh->taken, 0, memory_order_relaxed);
    atomic_store_explicit(&sh->taken_gen, rts->gen, memory_order_release);
    size_t got = 0, total = (size_t)rts->bytes;
    int rc = 0;
    while (rc == 0 && got < n) {
        size_t k = got / PD_PAIRS_STREAM_PIECE;
        size_t end = (k + 1) * PD_PAIRS_STREAM_PIECE;
        if (end > total)
            end = total;
        struct pd_sender_wait w = { 0, 0 };
        while (rc == 0 &&
               (atomic_load_explicit(&sh->gen, memory_order_acquire) !=
                    rts->gen ||
                atomic_load_explicit(&sh->packed, memory_order_acquire) <
                    end)) {
            if (!pd_shm_pairs_stream_advance(p))
                rc = pd_sender_wait(p, pid, &w, "packing", why, len);
        }
        size_t want = (end < n ? end : n) - got;
        char *into = landing != NULL ? (char *)landing : (char *)dst + got;
        if (rc != 0 ||
            (rc = pd_read_from(pid, into,
                               rts->addr + (k % 2) * PD_PAIRS_STREAM_PIECE,
                               want, why, len)) != 0)
            break;
        /* The sender may fill its buffer again while this one is used. */
        atomic_store_explicit(&sh->taken, end, memory_order_release);
        /* A sender asleep in its wait packs the next piece only awake. */
        pd_wake_sleeper(p, src);
        if (got_fn != NULL)
            got_fn(got_ctx, got, want, into);
        got += want;
    }
    if (landing != NULL) {
        unsigned char *none = NULL;
        if (!atomic_compare_exchange_strong(&p->landing, &none, landing))
            free(landing);
    }
    return rc;
}

int pd_shm_pairs_pull(struct pd_shm_pairs *p, int src,
                      const struct pd_pair_msg *rts, const char *name,
                      void *dst, size_t n, pd_pair_got_fn got, void *got_ctx,
                      char *why, size_t len)
{
    if (n == 0)
        return 0;
    if (rts->pull == PD_PULL_FILE) {
        int fd = shm_open(name, O_RDONLY, 0);
        if (fd < 0) {
            snprintf(why, len, "shm_open(%s): %s", name, strerror(errno));
            return -1;
        }
        void *data = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (data == MAP_FAILED) {
            snprintf(why, len, "mmap(%s): %s", name, strerror(errno));
            return -1;
        }
        memcpy(dst, data, n);
        munmap(data, n);
        return 0;
    }
    if (rts->pull == PD_PULL_STREAM)
        return pd_pull_stream(p, src, rts, dst, n, got, got_ctx, why, len);
    pid_t pid = (pid_t)p->seg->pids[src];
    struct pd_pair_help *h = &pd_queue(p, src, p->rank)->help;
    /* One offer per pair at a time: another thread of this rank pulling
     * from the same sender copies alone. */
    if (n >= PD_PAIRS_HELP_MIN && rts->slot != PD_PAIR_NO_SLOT &&
        pd_shm_pairs_cma(p, src) &&
        atomic_exchange_explicit(&h->busy, 1, memory_order_acquire) == 0) {
        int rc = pd_pull_shared(p, src, rts, h, dst, n, why, len);
        atomic_store_explicit(&h->busy, 0, memory_order_release);
        return rc;
    }
    return pd_read_from(pid, dst, rts->addr, n, why, len);
}

void pd_shm_pairs_done(struct pd_shm_pairs *p, int src,
                       const struct pd_pair_msg *rts, const char *name)
{
    if (rts->pull == PD_PULL_FILE) {
        shm_unlink(name);
        return;
    }
    if (rts->slot != PD_PAIR_NO_SLOT) {
        atomic_store_explicit(&pd_queue(p, src, p->rank)->ack[rts->slot],
                              rts->gen, memory_order_release);
        /* As for a push: a sender that starts to sleep just now naps
         * 1 ms at most. */
        pd_wake_sleeper(p, src);
        return;
    }
    uint32_t one = 1;
    struct iovec local = { &one, sizeof(one) };
    struct iovec remote = { (void *)(uintptr_t)rts->ack, sizeof(one) };
    /* Fails only where the sender is gone: nobody waits then. */
    (void)process_vm_writev((pid_t)p->seg->pids[src], &local, 1, &remote, 1,
                            0);
    pd_wake_sleeper(p, src);
}

int pd_shm_pairs_file(const void *buf, size_t bytes, uint64_t key_hash,
                      char *name, size_t len, char *why, size_t whylen)
{
    pd_shm_name_make(key_hash, name, len);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    int rc = posix_fallocate(fd, 0, (off_t)bytes);
    void *data = rc == 0 ? mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                                MAP_SHARED, fd, 0)
                         : MAP_FAILED;
    close(fd);
    if (data == MAP_FAILED) {
        snprintf(why, whylen, "cannot place %zu bytes in shared memory "
                 "file %s: %s", bytes, name,
                 strerror(rc != 0 ? rc : errno));
        shm_unlink(name);
        return -1;
    }
    memcpy(data, buf, bytes);
    munmap(data, bytes);
    return 0;
}

bool pd_shm_pairs_arrived(struct pd_shm_pairs *p)
{
    for (int r = 0; r < p->size; r++) {
        if (r == p->rank)
            continue;
        struct pd_pair_queue *q = pd_queue(p, r, p->rank);
        uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
        const struct pd_pair_msg *m = (const struct pd_pair_msg *)(
            pd_ring(p, r, p->rank) + (head & (p->ring_bytes - 1)));
        if (__atomic_load_n(&m->stamp, __ATOMIC_ACQUIRE) == head + 1)
            return true;
    }
    return false;
}

uint32_t pd_shm_pairs_bell(struct pd_shm_pairs *p)
{
    return atomic_load(&p->ranks[p->rank].bell);
}

void pd_shm_pairs_wake_self(struct pd_shm_pairs *p)
{
    /* Only a thread of this rank asleep needs it: the caller's own
     * polls look again anyway. */
    pd_wake_sleeper(p, p->rank);
}

void pd_shm_pairs_idle(struct pd_shm_pairs *p, uint32_t bell,
                       int64_t waited_ns)
{
    struct pd_pair_rank *me = &p->ranks[p->rank];
    if (waited_ns == 0)
        return;
    if (waited_ns < p->spin_ns) {
        pd_cpu_relax();
        return;
    }
    if (waited_ns < 1000000) {
        sched_yield();
        return;
    }
    atomic_fetch_add(&me->sleeping, 1);     /* threads of this rank */
    /* After saying it sleeps, a full fence before the last look: a
     * sender either sees the sleeper or its record is seen here. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&me->bell) == bell && !pd_shm_pairs_arrived(p)) {
        struct timespec nap = { 0, 1000000 };
        syscall(SYS_futex, &me->bell, FUTEX_WAIT, bell, &nap, NULL, 0);
    }
    atomic_fetch_sub(&me->sleeping, 1);
}

/*
 * Point-to-point between the ranks of one host through shared memory
 * (backend/shm/pairs.h): no socket and no thread in between. A sender
 * appends to the ring of its receiver; the receiver's waiting thread --
 * any thread of it in a wait, test or probe -- drains its rings in order
 * into the matching of the communicator the message names, so two
 * messages of one pair never overtake each other. A large message
 * leaves only an RTS in the ring; the receive that matches it fetches
 * the data itself and acknowledges, and the sender's request completes
 * when it sees that.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/clock.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/spin_lock.h"
#include "coll/hier.h"
#include "core/runtime.h"
#include "core/type_stage.h"
#include "service/p2p_internal.h"

/* A send through the queues: pending (not in the ring yet, in order per
 * destination), then -- an RTS of memory -- awaiting its acknowledgement,
 * which the receiver writes into acked. */
struct pd_pair_send {
    struct pd_pair_msg m;
    const void *payload;            /* eager: the data; file RTS: name */
    char name[96];
    int to;                         /* local rank */
    int dst;                        /* comm rank, for messages */
    bool awaits;                    /* done when acknowledged */
    _Atomic uint32_t acked;
    _Atomic bool done;
    struct pd_request_state *req;   /* an Isend's; NULL: a blocking send */
    struct pd_pair_send *next;
};

/* A receive to fetch from the sender's memory (pd_p2p_shm_fetch_later). */
struct pd_fetch {
    struct pd_posted *posted;
    int src, tag;
    struct pd_rts *rts;
    struct pd_fetch *next;
};

/* A message for a communicator this process has not used yet. */
struct pd_orphan {
    uint64_t cid;
    struct pd_message *m;
    struct pd_orphan *next;
};

static struct {
    struct pd_shm_pairs *pairs;
    int me, size;
    int *local_of_world;            /* world rank -> local rank, or -1 */
    uint64_t key_hash;
    pd_spin_lock drain_lock;        /* one thread drains at a time */
    pthread_mutex_t known_lock;     /* known, orphans */
    struct pd_p2p *known;
    struct pd_orphan *orphans, **orphans_tail;
    pd_spin_lock *send_lock;        /* per destination: pending */
    struct pd_pair_send **pending;
    pthread_mutex_t awaiting_lock;  /* awaiting, given_up */
    struct pd_pair_send *awaiting;
    /* Sends given up while awaiting: the receiver may still write their
     * word, so they are freed only at the end. */
    struct pd_pair_send *given_up;
    /* A thread that pushes what waits while the sender is elsewhere (in
     * a collective, computing): started by the first such send. */
    pthread_mutex_t helper_lock;
    pthread_cond_t helper_cond;
    pthread_t helper;
    bool helper_started, helper_stop;
    _Atomic bool helper_running;    /* started and not stopped */
    _Atomic bool helper_asleep;     /* waits on helper_cond */
    /* Polls by the program's threads (in waits, tests, probes): while it
     * grows, they do the helper's work themselves, and the helper stays
     * out of their way. */
    _Atomic uint64_t polls;
    /* Receives matched, their data not fetched yet: in the order they
     * matched. */
    pthread_mutex_t fetch_lock;
    struct pd_fetch *fetches, **fetches_tail;
} pd_q = {
    .fetch_lock = PTHREAD_MUTEX_INITIALIZER,
    .fetches_tail = &pd_q.fetches,
    .drain_lock = PD_SPIN_LOCK_INIT,
    .known_lock = PTHREAD_MUTEX_INITIALIZER,
    .awaiting_lock = PTHREAD_MUTEX_INITIALIZER,
    .helper_lock = PTHREAD_MUTEX_INITIALIZER,
    .helper_cond = PTHREAD_COND_INITIALIZER,
};

bool pd_p2p_shm_active(void)
{
    return pd_q.pairs != NULL;
}

int pd_p2p_shm_local(struct ompi_communicator_t *comm, int r)
{
    if (pd_q.pairs == NULL || r == comm->rank)
        return -1;
    return pd_q.local_of_world[pd_comm_world_rank(comm, r)];
}

/* ---- the sending side ---------------------------------------------------- */

/* The thread that took s off its list owns it: complete it. */
static void pd_send_done(struct pd_pair_send *s)
{
    if (s->req != NULL) {
        pd_request_complete(s->req);
        free(s);
    } else {
        atomic_store_explicit(&s->done, true, memory_order_release);
    }
}

/* Push what waits for destination to (its lock held), in order. */
static bool pd_flush(int to)
{
    bool moved = false;
    struct pd_pair_send *s;
    while ((s = pd_q.pending[to]) != NULL) {
        if (!pd_shm_pairs_push(pd_q.pairs, to, &s->m, s->payload))
            break;
        pd_q.pending[to] = s->next;
        moved = true;
        if (!s->awaits) {
            pd_send_done(s);
            continue;
        }
        pthread_mutex_lock(&pd_q.awaiting_lock);
        s->next = pd_q.awaiting;
        pd_q.awaiting = s;
        pthread_mutex_unlock(&pd_q.awaiting_lock);
    }
    return moved;
}

/* Sends whose RTS was acknowledged are done. */
static bool pd_collect_acks(void)
{
    if (__atomic_load_n(&pd_q.awaiting, __ATOMIC_RELAXED) == NULL)
        return false;
    struct pd_pair_send *done = NULL;
    /* A receiver that offers a share of its copy: taken after the lock,
     * from a copy of the RTS (the send cannot complete while a piece it
     * took is unwritten, and nothing is taken once it may). */
    struct pd_pair_msg offer;
    int offer_to = -1;
    pthread_mutex_lock(&pd_q.awaiting_lock);
    for (struct pd_pair_send **a = &pd_q.awaiting; *a != NULL;) {
        struct pd_pair_send *s = *a;
        if (!pd_shm_pairs_acked(pd_q.pairs, s->to, &s->m, &s->acked)) {
            if (offer_to < 0 &&
                pd_shm_pairs_offered(pd_q.pairs, s->to, &s->m)) {
                offer = s->m;
                offer_to = s->to;
            }
            a = &s->next;
            continue;
        }
        *a = s->next;
        s->next = done;
        done = s;
    }
    pthread_mutex_unlock(&pd_q.awaiting_lock);
    bool moved = done != NULL;
    if (offer_to >= 0)
        moved |= pd_shm_pairs_help(pd_q.pairs, offer_to, &offer);
    while (done != NULL) {
        struct pd_pair_send *s = done;
        done = s->next;
        if (s->m.pull == PD_PULL_STREAM)
            pd_shm_pairs_stream_close(pd_q.pairs, s->to);
        pd_send_done(s);
    }
    return moved;
}

/* A send that failed or was given up: off its list, if it is still on
 * one (else another thread took it and completes it). Whether it was;
 * the caller frees it then, unless *keep: an RTS in the ring, whose
 * receiver may still write its word (it stays with given_up). */
static bool pd_withdraw(struct pd_pair_send *s, int to, bool *keep)
{
    bool found = false;
    *keep = false;
    pd_spin_lock_take(&pd_q.send_lock[to]);
    for (struct pd_pair_send **q = &pd_q.pending[to]; *q != NULL;
         q = &(*q)->next) {
        if (*q == s) {
            *q = s->next;
            found = true;
            break;
        }
    }
    pd_spin_unlock(&pd_q.send_lock[to]);
    pthread_mutex_lock(&pd_q.awaiting_lock);
    for (struct pd_pair_send **a = &pd_q.awaiting; !found && *a != NULL;
         a = &(*a)->next) {
        if (*a == s) {
            *a = s->next;
            s->next = pd_q.given_up;
            pd_q.given_up = s;
            found = *keep = true;
            break;
        }
    }
    pthread_mutex_unlock(&pd_q.awaiting_lock);
    if (found && !*keep && s->m.pull == PD_PULL_FILE && s->name[0] != '\0')
        shm_unlink(s->name);        /* never pushed: nobody reads it */
    if (found && s->m.kind == PD_PAIR_RTS && s->m.pull == PD_PULL_STREAM)
        pd_shm_pairs_stream_close(pd_q.pairs, to);
    return found;
}

/* An Isend's watch (request.h): the same verdict, once in a while. */
static void pd_watch_send(struct ompi_request_t *req, int64_t since)
{
    struct pd_request_state *st = req->state;
    char why[400];
    pd_p2p_hopeless(st->comm, st->queued_dst, st->queued_tag, true, since,
                    why, sizeof(why));
    struct pd_pair_send *s = st->queued;
    bool keep;
    if (why[0] == '\0' || !pd_withdraw(s, st->queued_to, &keep))
        return;
    pd_fail_set(&st->fail, MPI_ERR_OTHER, "%s", why);
    pd_request_complete(st);
    if (!keep)
        free(s);
}

/* The helper, for MPI's progress rule: while sends wait for room in a
 * ring, it pushes them on, so that a sender in a collective or computing
 * does not hold up a receiver that waits for them; it packs the pieces
 * of nonblocking sends that stream, for the same reason; and while receives
 * are posted, it takes what arrives for them, so that a synchronous send
 * to a rank that posted its receive and went on to a collective gets its
 * receipt. It sleeps when neither waits. */
static bool pd_sends_pending(void)
{
    for (int to = 0; to < pd_q.size; to++)
        if (__atomic_load_n(&pd_q.pending[to], __ATOMIC_RELAXED) != NULL)
            return true;
    return false;
}

static bool pd_receives_posted(void)
{
    bool posted = false;
    if (!pd_spin_trylock(&pd_q.drain_lock))
        return true;                /* someone drains: look again later */
    for (struct pd_p2p *p = pd_q.known; p != NULL && !posted;
         p = p->next_known)
        posted = __atomic_load_n(&p->posted, __ATOMIC_RELAXED) != NULL;
    pd_spin_unlock(&pd_q.drain_lock);
    return posted;
}

static bool pd_fetches_pending(void)
{
    return __atomic_load_n(&pd_q.fetches, __ATOMIC_RELAXED) != NULL;
}

static bool pd_anything_pending(void)
{
    return pd_sends_pending() || pd_receives_posted() ||
           pd_fetches_pending() || pd_shm_pairs_streaming(pd_q.pairs);
}

static bool pd_run_fetches(void);

static bool pd_drain(void);

static void *pd_helper_main(void *arg)
{
    (void)arg;
    long nap_ns = 50000;
    uint64_t seen_polls = 0;
    pthread_mutex_lock(&pd_q.helper_lock);
    while (!pd_q.helper_stop) {
        /* Says it sleeps, then looks again: a kick either sees that or
         * made the work this look finds (pd_helper_kick). */
        atomic_store(&pd_q.helper_asleep, true);
        atomic_thread_fence(memory_order_seq_cst);
        if (!pd_anything_pending()) {
            pthread_cond_wait(&pd_q.helper_cond, &pd_q.helper_lock);
            atomic_store(&pd_q.helper_asleep, false);
            continue;
        }
        atomic_store(&pd_q.helper_asleep, false);
        pthread_mutex_unlock(&pd_q.helper_lock);
        /* A program thread that polls does all this, and a drain here
         * would hold it up (it copies what the program's thread would
         * copy, on another processor than the ranks' own). */
        uint64_t polls = atomic_load_explicit(&pd_q.polls,
                                              memory_order_relaxed);
        if (polls != seen_polls) {
            seen_polls = polls;
            if (nap_ns < 1000000)
                nap_ns *= 2;
            struct timespec nap = { 0, nap_ns };
            nanosleep(&nap, NULL);
            pthread_mutex_lock(&pd_q.helper_lock);
            continue;
        }
        for (int to = 0; to < pd_q.size; to++) {
            if (pd_q.pending[to] == NULL)
                continue;
            pd_spin_lock_take(&pd_q.send_lock[to]);
            pd_flush(to);
            pd_spin_unlock(&pd_q.send_lock[to]);
        }
        /* Naps grow while nothing arrives: a receive posted long before
         * its message costs little. */
        bool fetched = pd_run_fetches();
        fetched |= pd_shm_pairs_stream_advance(pd_q.pairs);
        if (pd_drain() || fetched)
            nap_ns = 50000;
        else if (nap_ns < 1000000)
            nap_ns *= 2;
        pd_p2p_send_receipts();
        struct timespec nap = { 0, nap_ns };
        nanosleep(&nap, NULL);
        pthread_mutex_lock(&pd_q.helper_lock);
    }
    pthread_mutex_unlock(&pd_q.helper_lock);
    return NULL;
}

static void pd_helper_kick(void)
{
    /* Running and awake, the helper finds the new work itself: no lock
     * and no signal on every MPI_Irecv. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&pd_q.helper_running, memory_order_acquire) &&
        !atomic_load(&pd_q.helper_asleep))
        return;
    pthread_mutex_lock(&pd_q.helper_lock);
    if (!pd_q.helper_started && !pd_q.helper_stop) {
        pd_q.helper_started =
            pthread_create(&pd_q.helper, NULL, pd_helper_main, NULL) == 0;
        atomic_store_explicit(&pd_q.helper_running, pd_q.helper_started,
                              memory_order_release);
    }
    pthread_cond_signal(&pd_q.helper_cond);
    pthread_mutex_unlock(&pd_q.helper_lock);
}

/* An eager message written into the ring to local rank `to` now, its
 * header on the stack, no record to keep: false where an earlier send to
 * that rank waits for room (order), or the ring has none. */
static bool pd_push_eager(uint64_t cid, int src, const void *buf,
                          size_t bytes, int to, int tag)
{
    struct pd_pair_msg m = { .payload = (uint32_t)bytes,
                             .kind = PD_PAIR_EAGER, .cid = cid, .src = src,
                             .tag = tag };
    pd_spin_lock_take(&pd_q.send_lock[to]);
    bool pushed = pd_q.pending[to] == NULL &&
                  pd_shm_pairs_push(pd_q.pairs, to, &m, buf);
    pd_spin_unlock(&pd_q.send_lock[to]);
    return pushed;
}

/* s is the send of request st (before it is queued: its watch and the
 * polls of other threads may look at it from then on). */
static void pd_send_request(struct pd_pair_send *s,
                            struct pd_request_state *st, int to, int dst,
                            int tag)
{
    s->req = st;
    st->queued = s;
    st->queued_to = to;
    st->queued_dst = dst;
    st->queued_tag = tag;
    st->watch = pd_watch_send;
}

static bool pd_enqueue(struct pd_pair_send *s, int to);
static int pd_wait_sent(struct ompi_communicator_t *comm,
                        struct pd_pair_send *s, bool on_stack, int dst,
                        int to, int tag, struct pd_fail *fail);

bool pd_p2p_shm_send_now(struct ompi_communicator_t *comm, uint64_t cid,
                         const void *buf, size_t bytes, int dst, int tag)
{
    int to = pd_p2p_shm_local(comm, dst);
    return to >= 0 && bytes <= pd_shm_pairs_eager(pd_q.pairs) &&
           pd_push_eager(cid, comm->rank, buf, bytes, to, tag);
}

int pd_p2p_shm_send(struct ompi_communicator_t *comm, uint64_t cid,
                    const void *buf, size_t bytes, int dst, int to, int tag,
                    MPI_Request *request, const char *call,
                    struct pd_fail *fail)
{
    /* On the stack only where nothing may write to it after this
     * returns: a blocking send that does not wait for an acknowledgement. */
    bool eager = bytes <= pd_shm_pairs_eager(pd_q.pairs);
    if (eager) {
        /* Nothing queued to this rank before it: straight into the ring
         * (an Isend's request is born complete, made first so that a
         * message sent is never reported lost for want of memory). */
        struct ompi_request_t *done = NULL;
        if (request != NULL &&
            (done = pd_request_new_done(comm, call)) == NULL) {
            pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
            return fail->errclass;
        }
        if (pd_push_eager(cid, comm->rank, buf, bytes, to, tag)) {
            if (request != NULL)
                *request = done;
            return MPI_SUCCESS;
        }
        if (done != NULL)
            pd_request_release(&done);
    }
    bool by_file = !eager && (pd_rt.config.shm_p2p == PD_SHM_P2P_COPY ||
                              !pd_shm_pairs_cma(pd_q.pairs, to));
    struct pd_pair_send local, *s = &local;
    if ((request != NULL || (!eager && !by_file)) &&
        (s = malloc(sizeof(*s))) == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    memset(s, 0, sizeof(*s));
    s->to = to;
    s->dst = dst;
    s->m.cid = cid;
    s->m.src = comm->rank;
    s->m.tag = tag;
    if (eager) {
        s->m.kind = PD_PAIR_EAGER;
        s->m.payload = (uint32_t)bytes;
        s->payload = buf;
    } else {
        s->m.kind = PD_PAIR_RTS;
        s->m.bytes = bytes;
        if (by_file) {
            char why[300];
            if (pd_shm_pairs_file(buf, bytes, pd_q.key_hash, s->name,
                                  sizeof(s->name), why, sizeof(why)) != 0) {
                if (s != &local)
                    free(s);
                pd_fail_set(fail, MPI_ERR_OTHER, "sending %zu bytes to rank "
                            "%d: %s", bytes, dst, why);
                return fail->errclass;
            }
            s->m.pull = PD_PULL_FILE;
            s->m.payload = (uint32_t)strlen(s->name) + 1;
            s->payload = s->name;
        } else {
            s->m.pull = PD_PULL_CMA;
            s->m.addr = (uint64_t)(uintptr_t)buf;
            s->m.ack = (uint64_t)(uintptr_t)&s->acked;
            s->awaits = true;
        }
    }
    if (request != NULL) {
        *request = pd_request_new(comm, call);
        if (*request == NULL) {
            if (by_file)
                shm_unlink(s->name);
            free(s);
            pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
            return fail->errclass;
        }
        pd_send_request(s, (*request)->state, to, dst, tag);
    }
    bool behind = pd_enqueue(s, to);
    if (request != NULL) {
        if (behind)
            pd_helper_kick();
        return MPI_SUCCESS;
    }
    return pd_wait_sent(comm, s, s == &local, dst, to, tag, fail);
}

/* s behind what waits for local rank `to`, pushed if it can be now;
 * whether it still waits. */
static bool pd_enqueue(struct pd_pair_send *s, int to)
{
    pd_spin_lock_take(&pd_q.send_lock[to]);
    struct pd_pair_send **q = &pd_q.pending[to];
    while (*q != NULL)
        q = &(*q)->next;
    *q = s;
    pd_flush(to);
    bool behind = pd_q.pending[to] != NULL;
    pd_spin_unlock(&pd_q.send_lock[to]);
    return behind;
}

/* A blocking send's wait: poll (which also drains what comes in, so two
 * ranks sending to each other at once both get through) until it is in
 * the ring, or fetched; s freed unless on_stack, or kept for a receiver
 * that may still write its word. */
static int pd_wait_sent(struct ompi_communicator_t *comm,
                        struct pd_pair_send *s, bool on_stack, int dst,
                        int to, int tag, struct pd_fail *fail)
{
    int64_t since = 0, start = 0, next_watch = 0;
    if (!atomic_load_explicit(&s->done, memory_order_acquire)) {
        since = pd_clock_ms();
        start = pd_clock_ns();
        next_watch = start + (int64_t)PD_REQUEST_WATCH_MS * 1000000;
    }
    while (!atomic_load_explicit(&s->done, memory_order_acquire)) {
        uint32_t bell = pd_request_poll();
        if (atomic_load_explicit(&s->done, memory_order_acquire))
            break;
        int64_t now = pd_clock_ns();
        if (now >= next_watch) {
            next_watch = now + (int64_t)PD_REQUEST_WATCH_MS * 1000000;
            char why[400];
            bool keep;
            pd_p2p_hopeless(comm, dst, tag, true, since, why, sizeof(why));
            if (why[0] != '\0' && pd_withdraw(s, to, &keep)) {
                if (!keep && !on_stack)
                    free(s);
                pd_fail_set(fail, MPI_ERR_OTHER, "%s", why);
                return fail->errclass;
            }
            continue;
        }
        pd_request_pause(bell, now - start);
    }
    if (!on_stack)
        free(s);
    return MPI_SUCCESS;
}

int pd_p2p_shm_send_stream(struct ompi_communicator_t *comm, uint64_t cid,
                           struct pd_type_stage *stage, size_t bytes, int dst,
                           int to, int tag, MPI_Request *request,
                           const char *call, bool *streamed,
                           struct pd_fail *fail)
{
    *streamed = false;
    /* On the heap: a send given up may have to outlive this call. */
    struct pd_pair_send *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return MPI_SUCCESS;         /* packed whole, with its own checks */
    if (!pd_shm_pairs_stream_open(pd_q.pairs, to, &s->m, bytes,
                                  pd_stage_packer, stage)) {
        free(s);
        return MPI_SUCCESS;
    }
    if (request != NULL && (*request = pd_request_new(comm, call)) == NULL) {
        pd_shm_pairs_stream_close(pd_q.pairs, to);
        free(s);
        return MPI_SUCCESS;
    }
    *streamed = true;
    s->to = to;
    s->dst = dst;
    s->m.cid = cid;
    s->m.src = comm->rank;
    s->m.tag = tag;
    s->m.ack = (uint64_t)(uintptr_t)&s->acked;
    s->awaits = true;
    if (request != NULL) {
        (*request)->state->type_stages = stage;
        pd_send_request(s, (*request)->state, to, dst, tag);
    }
    /* Its first pieces are packed before the receiver asks. */
    pd_shm_pairs_stream_advance(pd_q.pairs);
    pd_enqueue(s, to);
    if (request != NULL) {
        /* The helper packs while the program is elsewhere. */
        pd_helper_kick();
        return MPI_SUCCESS;
    }
    return pd_wait_sent(comm, s, false, dst, to, tag, fail);
}

/* ---- the receiving side -------------------------------------------------- */

static struct pd_p2p *pd_known(uint64_t cid)
{
    for (struct pd_p2p *p = pd_q.known; p != NULL; p = p->next_known)
        if (p->cid == cid)
            return p;
    return NULL;
}

/* A piece of a stream: into the user's buffer at once, while it is in
 * the cache (the receive's scratch buffer is never touched). */
static void pd_unpack_piece(void *stage, size_t from, size_t n,
                            const void *data)
{
    pd_stage_unpack_piece(stage, from, n, data);
}

void pd_p2p_shm_fetch(struct pd_posted *posted, int src, int tag,
                      struct pd_rts *rts)
{
    size_t bytes = (size_t)rts->m.bytes;
    size_t n = bytes <= posted->capacity ? bytes : posted->capacity;
    struct pd_type_stage *stage =
        posted->st != NULL ? posted->st->type_stages : NULL;
    bool pieces = pd_stage_by_pieces(stage);
    char why[400];
    if (pd_shm_pairs_pull(pd_q.pairs, rts->from, &rts->m, rts->name,
                          posted->buf, n, pieces ? pd_unpack_piece : NULL,
                          stage, why, sizeof(why)) != 0) {
        pd_shm_pairs_done(pd_q.pairs, rts->from, &rts->m, rts->name);
        char msg[520];
        snprintf(msg, sizeof(msg), "receiving %zu bytes from rank %d (tag "
                 "%d): %s", bytes, src, tag, why);
        pd_p2p_fail_posted(posted, msg);
        return;
    }
    pd_shm_pairs_done(pd_q.pairs, rts->from, &rts->m, rts->name);
    pd_p2p_fill(posted, src, tag, NULL, bytes);   /* in place already */
}

/*
 * Why later: a program that posts its receives and then its sends (a
 * window of MPI_Irecv, then of MPI_Isend, as in a halo exchange) would
 * otherwise copy every message its peer sent early inside MPI_Irecv,
 * while the peer waits for the sends that come only after that -- the two
 * ranks' copies would take turns instead of running side by side.
 */
void pd_p2p_shm_fetch_later(struct pd_posted *posted, int src, int tag,
                            struct pd_rts *rts)
{
    struct pd_fetch *f = malloc(sizeof(*f));
    if (f == NULL) {
        pd_p2p_shm_fetch(posted, src, tag, rts);
        free(rts);
        return;
    }
    *f = (struct pd_fetch){ posted, src, tag, rts, NULL };
    pthread_mutex_lock(&pd_q.fetch_lock);
    *pd_q.fetches_tail = f;
    pd_q.fetches_tail = &f->next;
    pthread_mutex_unlock(&pd_q.fetch_lock);
    pd_helper_kick();               /* the program may not poll soon */
}

/* The fetches waiting, oldest first. Whether there were any. */
static bool pd_run_fetches(void)
{
    if (!pd_fetches_pending())
        return false;
    pthread_mutex_lock(&pd_q.fetch_lock);
    struct pd_fetch *f = pd_q.fetches;
    pd_q.fetches = NULL;
    pd_q.fetches_tail = &pd_q.fetches;
    pthread_mutex_unlock(&pd_q.fetch_lock);
    bool any = f != NULL;
    while (f != NULL) {
        struct pd_fetch *next = f->next;
        pd_p2p_shm_fetch(f->posted, f->src, f->tag, f->rts);
        free(f->rts);
        free(f);
        f = next;
    }
    return any;
}

void pd_p2p_shm_drop(struct pd_rts *rts)
{
    pd_shm_pairs_done(pd_q.pairs, rts->from, &rts->m, rts->name);
    free(rts);
}

/* Where RTS m from local rank from has its data. */
static void pd_rts_of(struct pd_rts *rts, int from,
                      const struct pd_pair_msg *m)
{
    rts->from = from;
    rts->m = *m;
    rts->name[0] = '\0';
    if (m->pull == PD_PULL_FILE)
        snprintf(rts->name, sizeof(rts->name), "%s",
                 (const char *)pd_pair_payload(m));
}

/* m from local rank from, as a message to queue (copied out of the
 * ring); NULL when out of memory. */
static struct pd_message *pd_copy_out(int from, const struct pd_pair_msg *m)
{
    struct pd_message *msg = calloc(1, sizeof(*msg));
    if (msg == NULL)
        return NULL;
    msg->src = m->src;
    msg->tag = m->tag;
    msg->bytes = (size_t)pd_pair_bytes(m);
    const unsigned char *payload = pd_pair_payload(m);
    if (m->kind == PD_PAIR_RTS) {
        msg->rts = malloc(sizeof(*msg->rts));
        if (msg->rts == NULL) {
            free(msg);
            return NULL;
        }
        pd_rts_of(msg->rts, from, m);
        return msg;
    }
    msg->data = malloc(msg->bytes ? msg->bytes : 1);
    if (msg->data == NULL) {
        free(msg);
        return NULL;
    }
    memcpy(msg->data, payload, msg->bytes);
    return msg;
}

/* One record from local rank from into the matching. */
static void pd_take(int from, const struct pd_pair_msg *m)
{
    /* The drain lock held: the list of known communicators stays put
     * (they change under it too). */
    struct pd_p2p *p = pd_known(m->cid);
    if (p == NULL) {
        pthread_mutex_lock(&pd_q.known_lock);
        struct pd_orphan *o = malloc(sizeof(*o));
        struct pd_message *msg = pd_copy_out(from, m);
        if (o == NULL || msg == NULL)
            abort(); /* nobody to report to; the message cannot be lost */
        *o = (struct pd_orphan){ m->cid, msg, NULL };
        *pd_q.orphans_tail = o;
        pd_q.orphans_tail = &o->next;
        pthread_mutex_unlock(&pd_q.known_lock);
        return;
    }
    pthread_mutex_lock(&p->lock);
    struct pd_posted *posted = pd_p2p_take_posted(p, m->src, m->tag);
    if (posted != NULL && m->kind == PD_PAIR_EAGER) {
        pd_p2p_fill(posted, m->src, m->tag, pd_pair_payload(m),
                    (size_t)pd_pair_bytes(m));
    } else if (posted != NULL) {
        struct pd_rts rts;
        pd_rts_of(&rts, from, m);
        pd_p2p_shm_fetch(posted, m->src, m->tag, &rts);
    } else {
        struct pd_message *msg = pd_copy_out(from, m);
        if (msg == NULL)
            abort();
        pd_p2p_queue_unexpected(p, msg);
    }
    pthread_mutex_unlock(&p->lock);
}

static bool pd_drain(void)
{
    if (!pd_shm_pairs_arrived(pd_q.pairs) ||
        !pd_spin_trylock(&pd_q.drain_lock))
        return false;
    bool moved = false;
    for (int r = 0; r < pd_q.size; r++) {
        if (r == pd_q.me)
            continue;
        const struct pd_pair_msg *m;
        while ((m = pd_shm_pairs_peek(pd_q.pairs, r)) != NULL) {
            pd_take(r, m);
            pd_shm_pairs_pop(pd_q.pairs, r, m);
            moved = true;
        }
    }
    pd_spin_unlock(&pd_q.drain_lock);
    return moved;
}

/* Whether p has a receive posted or a message queued (the drain lock
 * held: no message from a rank of this host joins the queue meanwhile;
 * one from another host would not come before the head of a ring). */
static bool pd_p2p_busy(struct pd_p2p *p)
{
    pthread_mutex_lock(&p->lock);
    bool busy = p->posted != NULL || p->unexpected != NULL || p->broken;
    pthread_mutex_unlock(&p->lock);
    return busy;
}

/*
 * Why a path of its own: an 8-byte MPI_Recv that posts an entry, waits
 * for the drain to match it and completes a request ran about twice the
 * instructions of the send that fed it (callgrind). With nothing posted
 * or queued on the communicator no receive can be owed this message
 * first, and the drain lock, held throughout, keeps every other reader
 * of the ring away: the head of the sender's ring is the next message
 * from it, and taking it here keeps MPI's order.
 */
bool pd_p2p_shm_recv_now(struct pd_p2p *p, int src, int from, int tag,
                         void *buf, size_t capacity, int *got_tag,
                         size_t *got_bytes)
{
    if (!pd_spin_trylock(&pd_q.drain_lock))
        return false;
    bool taken = false;
    const struct pd_pair_msg *m;
    if (!pd_p2p_busy(p) &&
        (m = pd_shm_pairs_peek_polling(pd_q.pairs, from)) != NULL &&
        /* A synchronous message's tag has PD_TAG_SYNC, a receipt's is
         * negative: neither is taken here. */
        m->kind == PD_PAIR_EAGER && m->cid == p->cid && m->src == src &&
        m->tag >= 0 && m->tag <= PD_TAG_UB &&
        (tag == MPI_ANY_TAG || m->tag == tag) && m->payload <= capacity) {
        if (m->payload > 0)
            memcpy(buf, pd_pair_payload(m), m->payload);
        *got_tag = m->tag;
        *got_bytes = m->payload;
        pd_shm_pairs_pop(pd_q.pairs, from, m);
        taken = true;
    }
    pd_spin_unlock(&pd_q.drain_lock);
    return taken;
}

static bool pd_poll(void)
{
    /* A count the helper reads now and then: no atomic increment. */
    atomic_store_explicit(&pd_q.polls,
                          atomic_load_explicit(&pd_q.polls,
                                               memory_order_relaxed) + 1,
                          memory_order_relaxed);
    bool moved = pd_run_fetches();
    moved |= pd_drain();
    pd_p2p_send_receipts();     /* for what the drain matched */
    for (int to = 0; to < pd_q.size; to++) {
        if (pd_q.pending[to] == NULL ||
            !pd_spin_trylock(&pd_q.send_lock[to]))
            continue;
        moved |= pd_flush(to);
        pd_spin_unlock(&pd_q.send_lock[to]);
    }
    moved |= pd_shm_pairs_stream_advance(pd_q.pairs);
    moved |= pd_collect_acks();
    return moved;
}

static uint32_t pd_bell(void)
{
    return pd_shm_pairs_bell(pd_q.pairs);
}

static void pd_idle(uint32_t bell, int64_t waited_ns)
{
    pd_shm_pairs_idle(pd_q.pairs, bell, waited_ns);
}

static void pd_wake(void)
{
    pd_shm_pairs_wake_self(pd_q.pairs);
}

void pd_p2p_shm_receive_posted(void)
{
    if (pd_q.pairs != NULL)
        pd_helper_kick();
}

void pd_p2p_shm_register(struct pd_p2p *p)
{
    if (pd_q.pairs == NULL)
        return;
    /* No drain runs meanwhile: what arrived before stays ahead of what
     * arrives after. */
    pd_spin_lock_take(&pd_q.drain_lock);
    pthread_mutex_lock(&pd_q.known_lock);
    pthread_mutex_lock(&p->lock);
    for (struct pd_orphan **o = &pd_q.orphans; *o != NULL;) {
        struct pd_orphan *x = *o;
        if (x->cid != p->cid) {
            o = &x->next;
            continue;
        }
        *o = x->next;
        if (*o == NULL)
            pd_q.orphans_tail = o;
        pd_p2p_queue_unexpected(p, x->m);
        free(x);
    }
    pthread_mutex_unlock(&p->lock);
    p->next_known = pd_q.known;
    pd_q.known = p;
    pthread_mutex_unlock(&pd_q.known_lock);
    pd_spin_unlock(&pd_q.drain_lock);
}

void pd_p2p_shm_unregister(struct pd_p2p *p)
{
    if (pd_q.pairs == NULL)
        return;
    pd_spin_lock_take(&pd_q.drain_lock);
    pthread_mutex_lock(&pd_q.known_lock);
    for (struct pd_p2p **k = &pd_q.known; *k != NULL; k = &(*k)->next_known) {
        if (*k == p) {
            *k = p->next_known;
            break;
        }
    }
    pthread_mutex_unlock(&pd_q.known_lock);
    pd_spin_unlock(&pd_q.drain_lock);
}

int pd_p2p_shm_open(struct pd_fail *fail)
{
    struct ompi_communicator_t *world =
        (struct ompi_communicator_t *)MPI_COMM_WORLD;
    if (pd_rt.config.shm_p2p == PD_SHM_P2P_OFF || !pd_rt.config.shm ||
        world->size < 2 || pd_rt.world.node_of == NULL)
        return MPI_SUCCESS;
    struct pd_hier *h = NULL;
    if (pd_hier_get(world, &h, fail) != MPI_SUCCESS)
        return fail->errclass;
    struct pd_shm_comm *seg = pd_hier_segment(h);
    if (seg == NULL)
        return MPI_SUCCESS;         /* alone on this host */
    if (pd_shm_extra(seg) == NULL) {
        /* Said once per host, by its first rank. */
        int node = pd_rt.world.node_of[pd_rt.world.rank], first = 0;
        while (pd_rt.world.node_of[first] != node)
            first++;
        if (first == pd_rt.world.rank)
            pd_log(PD_LOG_WARN, "point-to-point between the ranks of this "
                   "host goes over gloo: /dev/shm has no room for its "
                   "shared-memory queues");
        return MPI_SUCCESS;
    }
    struct pd_backend_error err;
    err.msg[0] = '\0';
    int rc = pd_shm_pairs_open(seg, pd_rt.config.shm_p2p == PD_SHM_P2P_ON,
                               &pd_q.pairs, &err);
    if (rc != PD_BACKEND_OK)
        return pd_coll_backend_failed(rc, world, "point-to-point queue "
                                      "set-up", err.msg, fail);
    int n = pd_shm_pairs_size(pd_q.pairs), size = pd_rt.world.size;
    pd_q.me = pd_shm_pairs_rank(pd_q.pairs);
    pd_q.size = n;
    pd_q.local_of_world = malloc((size_t)size * sizeof(int));
    pd_q.send_lock = calloc((size_t)n, sizeof(*pd_q.send_lock));
    pd_q.pending = calloc((size_t)n, sizeof(*pd_q.pending));
    if (pd_q.local_of_world == NULL || pd_q.send_lock == NULL ||
        pd_q.pending == NULL) {
        pd_p2p_shm_close();
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return fail->errclass;
    }
    /* Local ranks in world order: the segment's order (coll/hier.c). */
    int local = 0, node = pd_rt.world.node_of[pd_rt.world.rank];
    for (int w = 0; w < size; w++)
        pd_q.local_of_world[w] =
            pd_rt.world.node_of[w] == node ? local++ : -1;
    pd_q.local_of_world[pd_rt.world.rank] = -1;    /* sends to self: not here */
    pd_q.orphans_tail = &pd_q.orphans;
    const char *key = pd_rt.world.job_key;
    pd_q.key_hash = pd_fnv1a64(key, strlen(key));
    static const struct pd_request_progress hooks = { pd_poll, pd_bell,
                                                      pd_idle, pd_wake };
    pd_request_set_progress(&hooks);
    pd_log(PD_LOG_INFO, "point-to-point among the %d ranks of this host "
           "through shared memory (eager up to %zu bytes, larger %s)", n,
           pd_shm_pairs_eager(pd_q.pairs),
           pd_rt.config.shm_p2p == PD_SHM_P2P_COPY
               ? "through shared files (PDMPI_SHM_P2P=copy)"
               : "read from the sender where permitted");
    return MPI_SUCCESS;
}

void pd_p2p_shm_close(void)
{
    if (pd_q.pairs != NULL) {
        pd_run_fetches();           /* their senders wait for them */
        pd_request_set_progress(NULL);
    }
    pthread_mutex_lock(&pd_q.helper_lock);
    pd_q.helper_stop = true;
    atomic_store(&pd_q.helper_running, false);
    bool joined = pd_q.helper_started;
    pthread_cond_signal(&pd_q.helper_cond);
    pthread_mutex_unlock(&pd_q.helper_lock);
    if (joined)
        pthread_join(pd_q.helper, NULL);
    pd_q.helper_started = false;
    while (pd_q.given_up != NULL) {
        struct pd_pair_send *s = pd_q.given_up;
        pd_q.given_up = s->next;
        free(s);
    }
    pd_shm_pairs_close(pd_q.pairs);
    pd_q.pairs = NULL;
    free(pd_q.local_of_world);
    free(pd_q.send_lock);
    free(pd_q.pending);
    pd_q.local_of_world = NULL;
    pd_q.send_lock = NULL;
    pd_q.pending = NULL;
    while (pd_q.orphans != NULL) {
        struct pd_orphan *o = pd_q.orphans;
        pd_q.orphans = o->next;
        free(o->m->data);
        free(o->m->rts);
        free(o->m);
        free(o);
    }
}

/*
 * Signalling between the ranks of one segment: post a counter, wait for
 * counters.
 *
 * A waiter polls for up to c->spin microseconds (the answer usually comes
 * within a microsecond when every rank has a core; the budget halves
 * after a spin nobody answered, down to c->spin_floor_ns, and doubles
 * after one that was answered), then yields the processor a few times (an
 * oversubscribed host: the rank it waits for may need this very core),
 * then sleeps on the segment's futex doorbell. A poster rings
 * the doorbell only when someone sleeps, so the fast path is one store.
 *
 * Sleeping waiters wake at least every PD_SHM_NAP_MS to check the
 * deadline and whether the ranks they wait for are still alive, so a
 * rank killed on this host is reported within a fraction of a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend/shm/shm_internal.h"
#include "boot/net.h"
#include "boot/shm_name.h"

#define PD_SHM_YIELDS 20
#define PD_SHM_NAP_MS 20
#define PD_SHM_LIVENESS_MS 100
#define PD_SHM_SPIN_MIN_NS 500      /* a shorter spin is not worth it */
#define PD_SHM_SPIN_RETRY 64        /* waits between retries of a spin */
#define PD_SHM_CROWDED_NS 5000      /* a bare sched_yield: about 1 us */

static _Atomic uint32_t *pd_counter(struct pd_shm_line *l,
                                    enum pd_shm_counter which, uint32_t step)
{
    switch (which) {
    case PD_SHM_ARRIVED: return &l->arrival[step & 1].step;
    case PD_SHM_REDUCED: return &l->reduced;
    default: return &l->done;
    }
}

/* a >= b on counters that wrap around. */
static bool pd_reached(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) >= 0;
}

void pd_shm_post(struct pd_shm_comm *c, enum pd_shm_counter which,
                 uint32_t step)
{
    atomic_store_explicit(pd_counter(pd_shm_line(c, c->rank), which, step),
                          step, memory_order_release);
    /* Order the store before reading sleepers (a waiter increments
     * sleepers, then re-checks the counters): one of the two sees the
     * other, so no wake-up is lost. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&c->header->sleepers, memory_order_relaxed) != 0) {
        atomic_fetch_add(&c->header->doorbell, 1);
        syscall(SYS_futex, &c->header->doorbell, FUTEX_WAKE, INT_MAX, NULL,
                NULL, 0);
    }
}

void pd_shm_set_call(struct pd_shm_comm *c, const struct pd_call_sig *call)
{
    c->call = *call;
}

void pd_shm_arrive(struct pd_shm_comm *c, uint32_t step)
{
    pd_shm_line(c, c->rank)->arrival[step & 1].call = c->call;
    pd_shm_post(c, PD_SHM_ARRIVED, step);
}

void pd_shm_note_call(struct pd_shm_comm *c, uint32_t n,
                      const struct pd_call_sig *call)
{
    struct pd_shm_noted_call *e =
        &pd_shm_line(c, c->rank)->noted[n % PD_SHM_NOTED_CALLS];
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    e->call = *call;
    atomic_store_explicit(&e->seq, n + 1, memory_order_release);
}

int pd_shm_compare_call(struct pd_shm_comm *c, uint32_t n,
                        const struct pd_call_sig *call,
                        struct pd_backend_error *err)
{
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank)
            continue;
        struct pd_shm_noted_call *e =
            &pd_shm_line(c, r)->noted[n % PD_SHM_NOTED_CALLS];
        if (atomic_load_explicit(&e->seq, memory_order_acquire) != n + 1)
            continue;
        struct pd_call_sig theirs = e->call;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&e->seq, memory_order_relaxed) != n + 1 ||
            pd_call_sig_same(&theirs, call))
            continue;
        pd_call_sig_mismatch(err->msg, sizeof(err->msg),
                             c->comm_ranks[c->rank], call, c->comm_ranks[r],
                             &theirs);
        return PD_BACKEND_ERR_MISMATCH;
    }
    return PD_BACKEND_OK;
}

/* After an arrival wait: the ranks waited for serve the same call. (Their
 * call for step stays put until this rank is done with step.) */
static int pd_check_calls(struct pd_shm_comm *c, uint32_t step, int only,
                          struct pd_backend_error *err)
{
    const struct pd_call_sig *mine = &c->call;
    int from = only >= 0 ? only : 0, to = only >= 0 ? only + 1 : c->size;
    for (int r = from; r < to; r++) {
        const struct pd_call_sig *theirs =
            &pd_shm_line(c, r)->arrival[step & 1].call;
        if (pd_call_sig_same(theirs, mine))
            continue;
        pd_call_sig_mismatch(err->msg, sizeof(err->msg), c->comm_ranks[c->rank],
                             mine, c->comm_ranks[r], theirs);
        return PD_BACKEND_ERR_MISMATCH;
    }
    return PD_BACKEND_OK;
}

/* Advance *next over the ranks that have reached step; true when all
 * (or only) have. */
static bool pd_all_reached(struct pd_shm_comm *c, enum pd_shm_counter which,
                           uint32_t step, int only, int *next)
{
    if (only >= 0)
        return pd_reached(atomic_load_explicit(
                              pd_counter(pd_shm_line(c, only), which, step),
                              memory_order_acquire), step);
    while (*next < c->size) {
        uint32_t v = atomic_load_explicit(
            pd_counter(pd_shm_line(c, *next), which, step),
            memory_order_acquire);
        if (!pd_reached(v, step))
            return false;
        (*next)++;
    }
    return true;
}

static int pd_check_waited(struct pd_shm_comm *c, enum pd_shm_counter which,
                           uint32_t step, int only, int next,
                           int64_t deadline, const char *what,
                           struct pd_backend_error *err)
{
    int from = only >= 0 ? only : next;
    int to = only >= 0 ? only + 1 : c->size;
    for (int r = from; r < to; r++) {
        struct pd_shm_line *l = pd_shm_line(c, r);
        if (pd_reached(atomic_load_explicit(pd_counter(l, which, step),
                                            memory_order_acquire), step))
            continue;
        if (pd_process_gone(l->pid)) {
            snprintf(err->msg, sizeof(err->msg),
                     "%s: rank %d (pid %d, this host) is gone", what,
                     c->comm_ranks[r], (int)l->pid);
            return PD_BACKEND_ERR_IO;
        }
    }
    if (pd_net_now_ms() < deadline)
        return PD_BACKEND_OK;
    char waiting[256] = "";
    size_t len = 0;
    for (int r = from; r < to && len < sizeof(waiting) - 16; r++) {
        if (!pd_reached(atomic_load_explicit(pd_counter(pd_shm_line(c, r),
                                                        which, step),
                                             memory_order_acquire), step))
            len += (size_t)snprintf(waiting + len, sizeof(waiting) - len,
                                    "%s%d", len ? ", " : "", c->comm_ranks[r]);
    }
    snprintf(err->msg, sizeof(err->msg),
             "%s: waited %d ms in shared memory for rank(s) %s", what,
             c->timeout_ms, waiting);
    return PD_BACKEND_ERR_TIMEOUT;
}

/* Whether a rank this wait is for last ran out of spin on the processor
 * this rank runs on (each notes its processor then): spinning would only
 * keep it from running. The note is old when a rank has moved since, and
 * is renewed at its next spin that runs out. */
static bool pd_waited_rank_here(struct pd_shm_comm *c, int only, int next)
{
    int cpu = pd_shm_note_cpu(c);
    int from = only >= 0 ? only : next, to = only >= 0 ? only + 1 : c->size;
    for (int r = from; r < to; r++) {
        if (r != c->rank && cpu >= 0 &&
            atomic_load_explicit(&pd_shm_line(c, r)->cpu,
                                 memory_order_relaxed) == cpu)
            return true;
    }
    return false;
}

static int pd_wait_reached(struct pd_shm_comm *c, enum pd_shm_counter which,
                           uint32_t step, int only, const char *what,
                           struct pd_backend_error *err)
{
    int next = 0;
    if (pd_all_reached(c, which, step, only, &next))
        return PD_BACKEND_OK;
    if (c->spin_ns > 0) {
        /* Poll, reading the clock every 32 polls. A spin that pays off
         * doubles the next one's time, up to c->spin; one that does not
         * halves it, down to the floor -- or to nothing when the rank
         * waited for shares this processor: spinning only delays it. */
        int64_t until = pd_clock_ns() + c->spin_ns;
        for (unsigned i = 1;; i++) {
            if (pd_all_reached(c, which, step, only, &next)) {
                c->spin_ns *= 2;
                if (c->spin_ns > (int64_t)c->spin * 1000)
                    c->spin_ns = (int64_t)c->spin * 1000;
                return PD_BACKEND_OK;
            }
            pd_cpu_relax();
            if (i % 32 == 0 && pd_clock_ns() >= until)
                break;
        }
        c->spin_ns /= 2;
        if (c->spin_ns < PD_SHM_SPIN_MIN_NS)
            c->spin_ns = 0;
        if (c->spin_ns < c->spin_floor_ns &&
            !pd_waited_rank_here(c, only, next))
            c->spin_ns = c->spin_floor_ns;
    } else if (c->spin > 0 && ++c->spin_skipped % PD_SHM_SPIN_RETRY == 0) {
        /* Try spinning again now and then, long enough to catch a peer
         * that is itself just past a yield. */
        c->spin_ns = (int64_t)c->spin * 1000 / 4;
    }
    for (int i = 0; i < PD_SHM_YIELDS; i++) {
        if (pd_all_reached(c, which, step, only, &next))
            return PD_BACKEND_OK;
        int64_t before = pd_clock_ns();
        sched_yield();
        /* A yield that took long ran another task here, with a
         * processor per rank often another rank (pd_shm_leave_cpu). */
        if (!c->oversubscribed && pd_clock_ns() - before > PD_SHM_CROWDED_NS)
            pd_shm_leave_cpu(c);
    }
    int64_t now = pd_net_now_ms();
    int64_t deadline = now + c->timeout_ms;
    int64_t next_check = now + PD_SHM_LIVENESS_MS;
    struct pd_shm_header *h = c->header;
    for (;;) {
        atomic_fetch_add(&h->sleepers, 1);
        uint32_t bell = atomic_load(&h->doorbell);
        bool ready = pd_all_reached(c, which, step, only, &next);
        if (!ready) {
            struct timespec nap = { 0, PD_SHM_NAP_MS * 1000000L };
            syscall(SYS_futex, &h->doorbell, FUTEX_WAIT, bell, &nap, NULL, 0);
        }
        atomic_fetch_sub(&h->sleepers, 1);
        if (ready || pd_all_reached(c, which, step, only, &next))
            return PD_BACKEND_OK;
        now = pd_net_now_ms();
        if (now >= next_check || now >= deadline) {
            int rc = pd_check_waited(c, which, step, only, next, deadline,
                                     what, err);
            if (rc != PD_BACKEND_OK)
                return rc;
            next_check = now + PD_SHM_LIVENESS_MS;
        }
    }
}

int pd_shm_wait(struct pd_shm_comm *c, enum pd_shm_counter which,
                uint32_t step, int only, const char *what,
                struct pd_backend_error *err)
{
    int rc = pd_wait_reached(c, which, step, only, what, err);
    if (rc == PD_BACKEND_OK && which == PD_SHM_ARRIVED) {
        rc = pd_check_calls(c, step, only, err);
        if (only < 0)
            c->all_arrived = step;
    }
    return rc;
}

int pd_shm_begin_step(struct pd_shm_comm *c, uint32_t *step, const char *what,
                      struct pd_backend_error *err)
{
    *step = ++c->step;
    /* A rank posts done for step j - 2 before it arrives at j - 1: if this
     * rank saw every rank arrive at j - 1, they are all done with j - 2. */
    if (c->all_arrived == *step - 1)
        return PD_BACKEND_OK;
    /* Counters start at 0, which wrap-around comparison takes as having
     * reached the steps "-1" and 0 before steps 1 and 2: no special case. */
    return pd_wait_reached(c, PD_SHM_DONE, *step - 2, -1, what, err);
}

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "base/clock.h"
#include "base/spin_lock.h"
#include "core/handles.h"
#include "service/request.h"

/*
 * States let go of, kept for the next requests: a state is 1.5 KiB, and
 * each malloc of that size made the allocator sort all its small free
 * chunks first (malloc_consolidate), a fifth of an 8-byte MPI_Recv.
 * Linked through their comm field.
 */
#define PD_REQUEST_STATES_KEPT 64

static struct {
    pd_spin_lock lock;
    struct pd_request_state *free;
    int count;
} pd_states = { .lock = PD_SPIN_LOCK_INIT };

static struct pd_request_state *pd_state_take(void)
{
    struct pd_request_state *st = NULL;
    if (__atomic_load_n(&pd_states.free, __ATOMIC_RELAXED) != NULL) {
        pd_spin_lock_take(&pd_states.lock);
        if ((st = pd_states.free) != NULL) {
            pd_states.free = (struct pd_request_state *)st->comm;
            pd_states.count--;
        }
        pd_spin_unlock(&pd_states.lock);
    }
    return st != NULL ? st : malloc(sizeof(*st));
}

/* The queues' hooks, where waiting threads poll (pd_polled). */
static struct pd_request_progress pd_progress_hooks;
static bool pd_progress_set;

static bool pd_polled(void)
{
    return __atomic_load_n(&pd_progress_set, __ATOMIC_ACQUIRE);
}

/* A fresh state for call on comm, in memory of any past (cleared up to
 * its reason's kilobyte, which is made empty). Where waits poll, nobody
 * sleeps on its condition: it is made lock_free, with neither. */
static void pd_state_init(struct pd_request_state *st,
                          struct ompi_communicator_t *comm, const char *call)
{
    memset(st, 0, offsetof(struct pd_request_state, fail.msg));
    st->fail.msg[0] = '\0';
    if (pd_polled()) {
        st->lock_free = true;
    } else {
        pthread_mutex_init(&st->lock, NULL);
        pthread_cond_init(&st->done_cond, NULL);
    }
    st->comm = comm;
    st->call = call;
}

/* The state's end: a waiter that polls reads done without the lock,
 * which the completing thread still holds while it wakes sleepers
 * (pd_request_complete), so wait until that thread has let go of it. A
 * lock-free state's completer touches it no more once done is set. */
static void pd_state_end(struct pd_request_state *st)
{
    if (st->lock_free)
        return;
    pthread_mutex_lock(&st->lock);
    pthread_mutex_unlock(&st->lock);
    pthread_cond_destroy(&st->done_cond);
    pthread_mutex_destroy(&st->lock);
}

/* A finished request's status (receives: source, tag, count) into
 * *status. Its MPI_ERROR stays as the caller had it: MPI sets that
 * field only in the calls that complete several requests at once
 * (MPI 3.2.5), which set it themselves. */
static void pd_state_status(const struct pd_request_state *st,
                            MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    int kept = status->MPI_ERROR;
    pd_status_set_empty(status, kept);
    if (st->has_status && !st->sync_send) {
        *status = st->status;
        status->MPI_ERROR = kept;
        if (status->MPI_SOURCE >= 0)
            status->MPI_SOURCE -= st->source_shift;
    }
}

/* The outcome of a finished request: its failure into *fail, its status
 * into *status; the error class. */
static int pd_state_outcome(const struct pd_request_state *st,
                            MPI_Status *status, struct pd_fail *fail)
{
    pd_fail_copy(fail, &st->fail);
    pd_state_status(st, status);
    return st->fail.errclass;
}

void pd_request_status(const struct ompi_request_t *req, MPI_Status *status)
{
    pd_state_status(req->state, status);
}

static void pd_state_give(struct pd_request_state *st)
{
    pd_spin_lock_take(&pd_states.lock);
    if (pd_states.count < PD_REQUEST_STATES_KEPT) {
        st->comm = (struct ompi_communicator_t *)pd_states.free;
        pd_states.free = st;
        pd_states.count++;
        st = NULL;
    }
    pd_spin_unlock(&pd_states.lock);
    free(st);
}

struct ompi_request_t *pd_request_new(struct ompi_communicator_t *comm,
                                      const char *call)
{
    struct pd_request_state *st = pd_state_take();
    if (st == NULL)
        return NULL;
    pd_state_init(st, comm, call);
    if (comm != NULL && comm->state != NULL)   /* MPI_Comm_free waits */
        __atomic_add_fetch(&comm->state->requests, 1, __ATOMIC_RELAXED);
    /* The handle lives in its state, which outlives it (and which
     * requests recycle): no allocation of its own. */
    struct ompi_request_t *req = &st->handle;  /* cleared with it */
    req->magic = PD_MAGIC_REQUEST;
    req->id = 1;
    req->state = st;
    return req;
}

void pd_request_init_local(struct ompi_request_t *req,
                           struct pd_request_state *st,
                           struct ompi_communicator_t *comm, const char *call)
{
    pd_state_init(st, comm, call);
    memset(req, 0, sizeof(*req));
    req->magic = PD_MAGIC_REQUEST;
    req->id = 1;
    req->state = st;
}

int pd_request_finish_local(struct ompi_request_t *req, MPI_Status *status,
                            struct pd_fail *fail)
{
    int errclass = pd_state_outcome(req->state, status, fail);
    pd_state_end(req->state);     /* the caller's stack goes next */
    return errclass;
}

struct ompi_request_t *pd_request_new_done(struct ompi_communicator_t *comm,
                                           const char *call)
{
    struct ompi_request_t *req = pd_request_new(comm, call);
    if (req != NULL)
        pd_request_complete(req->state);
    return req;
}

static void pd_request_state_free(struct pd_request_state *st)
{
    pd_state_end(st);
    free(st->persistent_args);
    free(st->coll_arrays);
    if (st->coll_refs) {
        if (st->coll.type != NULL)
            pd_type_release(st->coll.type);
        pd_op_release(st->coll.op);
        st->coll_refs = false;
    }
    if (st->deferred_free != NULL)
        st->deferred_free(st->deferred_args);
    free(st->parts);
    if (st->unstage != NULL)
        st->unstage(st, false, NULL);
    pd_stage_free(st->type_stages);
    if (st->greq_free != NULL)
        st->greq_free(st->greq_extra);
    struct ompi_communicator_t *comm = st->comm;
    pd_state_give(st);
    /* The last touch of comm: MPI_Comm_free may release it after this. */
    if (comm != NULL && comm->state != NULL)
        __atomic_sub_fetch(&comm->state->requests, 1, __ATOMIC_RELEASE);
}

void pd_request_set_progress(const struct pd_request_progress *progress)
{
    if (progress == NULL) {
        __atomic_store_n(&pd_progress_set, false, __ATOMIC_RELEASE);
        return;
    }
    pd_progress_hooks = *progress;
    __atomic_store_n(&pd_progress_set, true, __ATOMIC_RELEASE);
}

uint32_t pd_request_poll(void)
{
    if (!pd_polled())
        return 0;
    uint32_t bell = pd_progress_hooks.bell();
    pd_progress_hooks.poll();
    return bell;
}

void pd_request_pause(uint32_t bell, int64_t waited_ns)
{
    if (pd_polled()) {
        pd_progress_hooks.idle(bell, waited_ns);
        return;
    }
    /* Collectives take tens of microseconds at least: a short sleep
     * costs nothing measurable and leaves the core to the progress
     * threads. */
    struct timespec pause = { 0, 20000 };
    nanosleep(&pause, NULL);
}

/* A request the program freed before it completed (MPI_Request_free)
 * still completes: what a receive got reaches the user's buffer, from a
 * packed copy or a host copy of device memory, here since no completion
 * call will finish it. */
static void pd_request_deliver_orphan(struct pd_request_state *st)
{
    /* A collective's data is its own business (MPI forbids freeing an
     * active one); a send's stage has nothing to unpack. */
    if (st->collective || (st->fail.errclass != MPI_SUCCESS &&
                           st->fail.errclass != MPI_ERR_TRUNCATE))
        return;
    if (st->unstage != NULL) {
        st->unstage(st, true, &st->fail);
        st->unstage = NULL;
    }
    if (st->type_stages != NULL)
        pd_stage_unpack(st->type_stages, st->has_status ? st->status._ucount
                                                        : (size_t)-1);
}

void pd_request_complete(struct pd_request_state *st)
{
    if (st->lock_free) {
        /* Who lets go of the state: this thread, where the program freed
         * the request first (MPI_Request_free), else the program. Its
         * waiter may return once done is set: st is not touched after. */
        unsigned before = atomic_fetch_or(&st->handoff, PD_HANDOFF_DONE);
        __atomic_store_n(&st->done, true, __ATOMIC_RELEASE);
        if (before & PD_HANDOFF_FREED) {
            pd_request_deliver_orphan(st);
            pd_request_state_free(st);
        }
        if (pd_polled())
            pd_progress_hooks.wake();
        return;
    }
    pthread_mutex_lock(&st->lock);
    __atomic_store_n(&st->done, true, __ATOMIC_RELEASE);  /* polls read it */
    bool orphan = st->user_freed;
    pthread_cond_broadcast(&st->done_cond);
    pthread_mutex_unlock(&st->lock);
    if (orphan) {
        pd_request_deliver_orphan(st);
        pd_request_state_free(st);
    }
    if (pd_polled())
        pd_progress_hooks.wake();
}

bool pd_request_is_null(const struct ompi_request_t *req)
{
    return req == (struct ompi_request_t *)MPI_REQUEST_NULL;
}

bool pd_request_is_inactive(const struct ompi_request_t *req)
{
    return pd_request_is_null(req) ||
           (req->state->persistent && req->state->active == NULL);
}

bool pd_request_is_valid(const struct ompi_request_t *req)
{
    return req != NULL && req->magic == PD_MAGIC_REQUEST &&
           (pd_request_is_null(req) || req->state != NULL);
}

bool pd_request_is_done(struct ompi_request_t *req)
{
    struct pd_request_state *st = req->state;
    if (st->persistent)
        return st->active == NULL || pd_request_is_done(st->active);
    if (st->parts != NULL) {
        for (int i = 0; i < st->nparts; i++)
            if (!pd_request_is_done(st->parts[i]))
                return false;
        return true;
    }
    pd_request_poll();
    if (st->lock_free)
        return __atomic_load_n(&st->done, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&st->lock);
    bool done = st->done;
    pthread_mutex_unlock(&st->lock);
    return done;
}

#define PD_REQUEST_UNTIMED_POLLS 64

/* pd_request_wait_done where waiting threads poll. */
static void pd_request_poll_until_done(struct ompi_request_t *req)
{
    struct pd_request_state *st = req->state;
    /* The clock costs as much as a poll or two: the first polls go
     * untimed (a message between two ranks that both wait takes about
     * that long), then it is read at once and now and then. */
    int64_t since = 0, start = 0, next_watch = 0, now = 0;
    for (unsigned i = 0;; i++) {
        uint32_t bell = pd_request_poll();
        if (__atomic_load_n(&st->done, __ATOMIC_ACQUIRE))
            break;
        if (i < PD_REQUEST_UNTIMED_POLLS) {
            pd_request_pause(bell, 0);
            continue;
        }
        if (i == PD_REQUEST_UNTIMED_POLLS) {
            since = pd_clock_ms();
            now = start = pd_clock_ns();
            next_watch = start + (int64_t)PD_REQUEST_WATCH_MS * 1000000;
        } else if (i % 16 == 0) {
            now = pd_clock_ns();
        }
        if (st->watch != NULL && now >= next_watch) {
            st->watch(req, since);
            next_watch = now + (int64_t)PD_REQUEST_WATCH_MS * 1000000;
            continue;
        }
        pd_request_pause(bell, now - start);
    }
}

/* How long a waiter whose request another thread completes (a message
 * from another host, read by the backend's receiving thread) looks for
 * it, yielding the processor between looks, before it sleeps on the
 * condition. A sleeper is woken only once the kernel schedules it: on a
 * virtual machine whose processors went idle, tens of microseconds per
 * message (measured: osu_latency over TCP, np 2 with PDMPI_SHM=0, 13 us
 * at 8 bytes where Open MPI took 7). */
#define PD_REQUEST_YIELD_NS 1000000

/* True once st is done within PD_REQUEST_YIELD_NS of looks. */
static bool pd_request_yield_until_done(struct pd_request_state *st)
{
    int64_t start = 0;
    for (unsigned i = 0;; i++) {
        if (__atomic_load_n(&st->done, __ATOMIC_ACQUIRE))
            return true;
        if (i % 16 == 0) {
            int64_t now = pd_clock_ns();
            if (i == 0)
                start = now;
            else if (now - start > PD_REQUEST_YIELD_NS)
                return false;
        }
        sched_yield();
    }
}

void pd_request_wait_done(struct ompi_request_t *req)
{
    if (req->state->persistent) {
        if (req->state->active != NULL)
            pd_request_wait_done(req->state->active);
        return;
    }
    if (req->state->parts != NULL) {
        for (int i = 0; i < req->state->nparts; i++)
            pd_request_wait_done(req->state->parts[i]);
        return;
    }
    if (pd_polled() || req->state->lock_free) {
        pd_request_poll_until_done(req);
        return;
    }
    struct pd_request_state *st = req->state;
    if (pd_request_yield_until_done(st))
        return;
    int64_t since = pd_clock_ms();
    pthread_mutex_lock(&st->lock);
    while (!st->done) {
        if (st->watch == NULL) {
            pthread_cond_wait(&st->done_cond, &st->lock);
            continue;
        }
        struct timespec until = pd_clock_realtime_after(PD_REQUEST_WATCH_MS);
        if (pthread_cond_timedwait(&st->done_cond, &st->lock, &until) == 0 ||
            st->done)
            continue;
        pthread_mutex_unlock(&st->lock);
        st->watch(req, since);
        pthread_mutex_lock(&st->lock);
    }
    pthread_mutex_unlock(&st->lock);
}

void pd_status_set_empty(MPI_Status *status, int error)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = error;
    status->_cancelled = 0;
    status->_ucount = 0;
}

int pd_request_finish(MPI_Request *handle, MPI_Status *status,
                      struct pd_fail *fail)
{
    struct ompi_request_t *req = *handle;
    struct pd_request_state *st = req->state;
    if (st->persistent) {
        /* Finished, a persistent request stays, inactive. */
        if (st->active == NULL) {
            pd_status_set_empty(status, MPI_SUCCESS);
            *fail = (struct pd_fail){ MPI_SUCCESS, "" };
            return MPI_SUCCESS;
        }
        int rc = pd_request_finish(&st->active, status, fail);
        st->active = NULL;      /* not MPI_REQUEST_NULL: inactive */
        return rc;
    }
    for (int i = 0; i < st->nparts; i++) {
        struct pd_fail part;
        if (pd_request_finish(&st->parts[i], MPI_STATUS_IGNORE, &part) !=
                MPI_SUCCESS && st->fail.errclass == MPI_SUCCESS)
            st->fail = part;
    }
    if (st->unstage != NULL && st->fail.errclass == MPI_SUCCESS)
        st->unstage(st, true, &st->fail);
    /* What a receive got, truncated or not, reaches the user's buffer. */
    if (st->type_stages != NULL && (st->fail.errclass == MPI_SUCCESS ||
                                    st->fail.errclass == MPI_ERR_TRUNCATE) &&
        pd_stage_unpack(st->type_stages, st->has_status ? st->status._ucount
                                                        : (size_t)-1) != 0 &&
        st->fail.errclass == MPI_SUCCESS)
        pd_fail_set(&st->fail, MPI_ERR_OTHER, "the received data did not go "
                    "back to device memory (a device copy failed)");
    /* A generalized request's status is what its query callback says,
     * asked now, in the thread that finishes it. */
    if (st->greq_query != NULL) {
        MPI_Status asked;
        pd_status_set_empty(&asked, MPI_SUCCESS);
        int rc = st->greq_query(st->greq_extra, &asked);
        if (rc != MPI_SUCCESS && st->fail.errclass == MPI_SUCCESS)
            pd_fail_set(&st->fail, rc, "the query callback of the "
                        "generalized request returned %d", rc);
        st->status = asked;
        st->has_status = true;
    }
    int errclass = pd_state_outcome(st, status, fail);
    pd_request_drop_handle(req);
    pd_request_state_free(st);
    *handle = MPI_REQUEST_NULL;
    return errclass;
}

void pd_request_drop_handle(struct ompi_request_t *req)
{
    pd_handle_forget(PD_HANDLE_REQUEST, req);
    req->magic = PD_MAGIC_FREED;    /* its memory goes with its state */
}

void pd_request_release(MPI_Request *handle)
{
    struct ompi_request_t *req = *handle;
    struct pd_request_state *st = req->state;
    if (st->persistent) {
        /* Its operation, if started, completes on its own. */
        if (st->active != NULL)
            pd_request_release(&st->active);
        pd_request_drop_handle(req);
        pd_request_state_free(st);
        *handle = MPI_REQUEST_NULL;
        return;
    }
    /* MPI forbids freeing a collective's active request; one made of
     * parts is finished here, so that no part outlives the buffers it
     * sends from. */
    if (st->parts != NULL) {
        struct pd_fail fail;
        pd_request_wait_done(req);
        pd_request_finish(handle, MPI_STATUS_IGNORE, &fail);
        return;
    }
    /* Read before the lock is let go: from then on, the thread that
     * completes the request frees its state. */
    bool generalized = st->greq_query != NULL;
    /* The handle lives in the state, which the completing thread may let
     * go of as soon as the request is marked freed: dropped first. */
    if (!generalized)
        pd_request_drop_handle(req);
    bool done;
    if (st->lock_free) {
        /* Completed already: its completer sets done last, and is then
         * done with the state (a few instructions away). */
        __atomic_store_n(&st->user_freed, true, __ATOMIC_RELEASE);
        done = atomic_fetch_or(&st->handoff, PD_HANDOFF_FREED) &
               PD_HANDOFF_DONE;
        while (done && !__atomic_load_n(&st->done, __ATOMIC_ACQUIRE))
            sched_yield();
    } else {
        pthread_mutex_lock(&st->lock);
        done = st->done;
        st->user_freed = true;
        pthread_mutex_unlock(&st->lock);
    }
    /* A generalized request is still MPI_Grequest_complete's to complete
     * through a copy of its handle: that call lets go of it. */
    if (!done && generalized) {
        *handle = MPI_REQUEST_NULL;
        return;
    }
    if (done) {
        if (generalized)
            pd_request_drop_handle(req);
        pd_request_deliver_orphan(st);
        pd_request_state_free(st);
    }
    *handle = MPI_REQUEST_NULL;
}

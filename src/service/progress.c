#include <stdlib.h>

#include "coll/coll.h"
#include "service/p2p.h"
#include "service/progress.h"

struct pd_progress {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work;
    pthread_cond_t idle;            /* queue empty and nothing running */
    struct pd_request_state *head, *tail;
    bool running;
    bool stopping;
};

/* Set on progress threads, so pd_progress_drain knows its caller. */
static _Thread_local bool pd_on_progress_thread;

static void *pd_progress_main(void *arg)
{
    struct pd_progress *p = arg;
    pd_on_progress_thread = true;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->head == NULL && !p->stopping) {
            p->running = false;
            pthread_cond_broadcast(&p->idle);
            pthread_cond_wait(&p->work, &p->lock);
        }
        struct pd_request_state *st = p->head;
        if (st == NULL)
            break;                      /* stopping and drained */
        p->head = st->next;
        if (p->head == NULL)
            p->tail = NULL;
        p->running = true;
        pthread_mutex_unlock(&p->lock);
        int rc = st->deferred != NULL
                     ? st->deferred(st->deferred_args, &st->fail)
                     : st->send != NULL
                     ? pd_p2p_wait_send(st->comm, st->send, &st->fail)
                     : pd_coll_run(&st->coll, &st->fail);
        if (rc == MPI_SUCCESS)
            st->fail.errclass = MPI_SUCCESS;
        pd_request_complete(st);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* comm's progress thread, started on first use (state lock held). */
static struct pd_progress *pd_progress_get(struct pd_comm_state *cs,
                                           struct pd_fail *fail)
{
    if (cs->progress != NULL)
        return cs->progress;
    struct pd_progress *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        pd_fail_set(fail, MPI_ERR_NO_MEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->idle, NULL);
    if (pthread_create(&p->thread, NULL, pd_progress_main, p) != 0) {
        pthread_cond_destroy(&p->idle);
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->lock);
        free(p);
        pd_fail_set(fail, MPI_ERR_OTHER,
                    "cannot start the communicator's progress thread");
        return NULL;
    }
    /* Atomic: pd_progress_run_now reads it without the lock. */
    __atomic_store_n(&cs->progress, p, __ATOMIC_RELEASE);
    return p;
}

int pd_progress_submit(struct ompi_request_t *req, struct pd_fail *fail)
{
    struct pd_request_state *st = req->state;
    struct pd_comm_state *cs = st->comm->state;
    pthread_mutex_lock(&cs->lock);
    struct pd_progress *p = pd_progress_get(cs, fail);
    pthread_mutex_unlock(&cs->lock);
    if (p == NULL)
        return fail->errclass;
    pthread_mutex_lock(&p->lock);
    st->next = NULL;
    if (p->tail != NULL)
        p->tail->next = st;
    else
        p->head = st;
    p->tail = st;
    p->running = true;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return MPI_SUCCESS;
}

int pd_progress_defer(struct ompi_request_t *req,
                      int (*run)(void *args, struct pd_fail *fail),
                      void *args, void (*args_free)(void *args),
                      struct pd_fail *fail)
{
    req->state->collective = true;
    req->state->deferred = run;
    req->state->deferred_args = args;
    req->state->deferred_free = args_free;
    if (pd_progress_submit(req, fail) == MPI_SUCCESS)
        return MPI_SUCCESS;
    pd_request_complete(req->state);
    pd_request_release(&req);
    return fail->errclass;
}

void pd_progress_stop(struct ompi_communicator_t *comm)
{
    struct pd_comm_state *cs = comm->state;
    pthread_mutex_lock(&cs->lock);
    struct pd_progress *p = cs->progress;
    __atomic_store_n(&cs->progress, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&cs->lock);
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void pd_progress_drain(struct ompi_communicator_t *comm)
{
    if (pd_on_progress_thread)
        return;
    struct pd_comm_state *cs = comm->state;
    pthread_mutex_lock(&cs->lock);
    struct pd_progress *p = cs->progress;
    pthread_mutex_unlock(&cs->lock);
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    while (p->running)
        pthread_cond_wait(&p->idle, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

int pd_progress_run_now(const struct pd_coll *c, struct pd_fail *fail)
{
    struct pd_comm_state *cs = c->comm->state;
    /* The calls queued before this one go first, on every path: the
     * ranks' agreements over gloo, like the steps in shared memory, meet
     * in call order, and a blocking call run beside a queued one would
     * meet another rank's calls in another order. */
    if (__atomic_load_n(&cs->progress, __ATOMIC_ACQUIRE) != NULL)
        pd_progress_drain(c->comm);
    return pd_coll_run(c, fail);
}

int pd_progress_allgather(struct ompi_communicator_t *comm, const void *mine,
                          void *all, size_t bytes, struct pd_fail *fail)
{
    struct pd_coll c = { .kind = PD_COLL_ALLGATHER, .comm = comm,
                         .tag = pd_comm_reserve_tags(comm), .sendbuf = mine,
                         .recvbuf = all, .count = bytes, .root = -1 };
    return pd_progress_run_now(&c, fail);
}

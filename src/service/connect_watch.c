/* The watch over MPI_Init's connection of MPI_COMM_WORLD (see the header). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "boot/net.h"
#include "service/connect_watch.h"
#include "core/error.h"
#include "base/clock.h"
#include "base/log.h"
#include "core/runtime.h"

/* How often the watch looks: a dead rank of this host is reported within
 * about this long. */
#define PD_CONNECT_WATCH_MS 100

static _Noreturn void pd_connect_watch_fail(const char *why)
{
    fprintf(stderr, "pdmpi: MPI_Init: %s: cannot connect MPI_COMM_WORLD "
            "(rank %d of %d): %s\n", pd_error_class_name(MPI_ERR_OTHER),
            pd_rt.world.rank, pd_rt.world.size, why);
    pd_runtime_abort(MPI_ERR_OTHER);
}

/* A rank of this host that is gone: its world rank, or -1. */
static int pd_local_rank_gone(void)
{
    for (int r = 0; r < pd_rt.world.size; r++) {
        if (pd_runtime_local_rank_gone(r))
            return r;
    }
    return -1;
}

static void *pd_connect_watch_run(void *arg)
{
    struct pd_connect_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        struct timespec until = pd_clock_realtime_after(PD_CONNECT_WATCH_MS);
        pthread_cond_timedwait(&w->cond, &w->lock, &until);
        if (w->done)
            break;
        char why[256];
        int gone = pd_local_rank_gone();
        if (gone >= 0) {
            snprintf(why, sizeof(why), "rank %d (pid %d, this host) is gone",
                     gone, pd_rt.world.pid_of[gone]);
            pd_connect_watch_fail(why);
        }
        if (pd_net_now_ms() >= w->deadline_ms) {
            snprintf(why, sizeof(why), "not every rank connected within "
                     "PDMPI_TIMEOUT (%d ms); a rank may have died on "
                     "another host", w->timeout_ms);
            pd_connect_watch_fail(why);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

void pd_connect_watch_start(struct pd_connect_watch *w, int timeout_ms)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->timeout_ms = timeout_ms;
    w->deadline_ms = pd_net_now_ms() + timeout_ms;
    int rc = pthread_create(&w->thread, NULL, pd_connect_watch_run, w);
    if (rc != 0)
        pd_log(PD_LOG_WARN, "cannot start the connection watch: %s",
               strerror(rc));
    w->running = rc == 0;
}

void pd_connect_watch_stop(struct pd_connect_watch *w)
{
    pthread_mutex_lock(&w->lock);
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    if (w->running)
        pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

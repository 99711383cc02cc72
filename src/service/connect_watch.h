/*
 * A watch over MPI_Init's connection of MPI_COMM_WORLD.
 *
 * The host backend connects its peers one after another, each wait bounded
 * by PDMPI_TIMEOUT on its own; when a rank dies while the others are still
 * connecting (a launcher that does not stop the rest, as PaddlePaddle's),
 * a rank can wait that long once per peer it has yet to reach. MPI_Init's
 * failures are fatal, so the watch ends this process with MPI_Init's
 * message as soon as a rank of this host is gone, or when the whole
 * connection has taken longer than PDMPI_TIMEOUT.
 */
#ifndef PD_SERVICE_CONNECT_WATCH_H
#define PD_SERVICE_CONNECT_WATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct pd_connect_watch {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;                      /* set by pd_connect_watch_stop */
    bool running;                   /* the thread started */
    int64_t deadline_ms;            /* pd_net_now_ms() clock */
    int timeout_ms;
};

/* Start watching (a failure to start is logged; the connection then goes
 * on unwatched, bounded per peer as before). */
void pd_connect_watch_start(struct pd_connect_watch *w, int timeout_ms);
void pd_connect_watch_stop(struct pd_connect_watch *w);

#endif

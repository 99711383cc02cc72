/*
 * PDMPI_STATS=1: per-collective counters (calls, bytes, time, the ways
 * calls went and the host backend's algorithms), summed over the ranks and printed by rank 0 at
 * MPI_Finalize. Off, a call costs one predictable branch.
 */
#ifndef PD_CORE_STATS_H
#define PD_CORE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"
#include "base/coll_kind.h"

/* The ways a call can go, as bits (a call kind may see several). */
enum pd_stat_way {
    PD_WAY_HOST = 1,        /* the host backend (gloo, or self) */
    PD_WAY_DEVICE = 2,      /* the device CCL */
    PD_WAY_STAGED = 4,      /* device memory staged through the host */
    PD_WAY_SHM = 8,         /* shared memory on the host (core/hier.c) */
};

struct pd_stat_scope {
    int call;               /* enum pd_coll_kind; -1 when not recording */
    size_t bytes;
    double start;
    int ways;
    int algos;              /* bit 1 << enum pd_algo per host step */
};

extern bool pd_stats_enabled;

void pd_stats_begin(struct pd_stat_scope *scope, enum pd_coll_kind call,
                    size_t bytes);
void pd_stats_end(struct pd_stat_scope *scope);
/* Called by core where a call's way is decided. */
void pd_stats_way(enum pd_stat_way way);
/* Called by core for each step it hands the host backend. */
void pd_stats_algo(enum pd_algo algo);

/* At MPI_Finalize, on every rank (collective over MPI_COMM_WORLD):
 * rank 0 prints the table to stderr. */
void pd_stats_report(void);

#endif

/*
 * PDMPI_STATS=1: per-collective counters (calls, bytes, time, the ways
 * calls went and the host backend's algorithms), summed over the ranks and printed by rank 0 at
 * MPI_Finalize. Off, a call costs one predictable branch.
 */
#ifndef PD_CORE_STATS_H
#define PD_CORE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/coll_kind.h"

/* The ways a call can go, as bits (a call kind may see several). */
enum pd_stat_way {
    PD_WAY_HOST = 1,        /* the host backend (gloo, or self) */
    PD_WAY_DEVICE = 2,      /* the device CCL */
    PD_WAY_STAGED = 4,      /* device memory staged through the host */
    PD_WAY_SHM = 8,         /* shared memory on the host (coll/hier.c) */
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

/* This process's counters: calls, bytes and nanoseconds per kind, then
 * the ways and algorithms per kind (for the report). */
void pd_stats_snapshot(int64_t sums[3 * PD_COLL_KINDS],
                       int32_t ways[2 * PD_COLL_KINDS]);

#endif

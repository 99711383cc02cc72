/* PDMPI_STATS (see stats.h). */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "core/stats.h"

bool pd_stats_enabled;

/* Counters are updated by whichever thread calls; atomics keep them
 * exact under MPI_THREAD_MULTIPLE. Time is in nanoseconds. */
static struct {
    int64_t calls[PD_COLL_KINDS];
    int64_t bytes[PD_COLL_KINDS];
    int64_t nanos[PD_COLL_KINDS];
    int32_t ways[PD_COLL_KINDS];
    int32_t algos[PD_COLL_KINDS];
} pd_stats;

/* The call being timed on this thread: core's nested calls (an
 * allgather composed from an exchange, a staged call) count once. */
static _Thread_local struct pd_stat_scope *pd_stats_current;

void pd_stats_begin(struct pd_stat_scope *scope, enum pd_coll_kind call,
                    size_t bytes)
{
    scope->call = -1;
    if (!pd_stats_enabled || pd_stats_current != NULL)
        return;
    scope->call = (int)call;
    scope->bytes = bytes;
    scope->ways = 0;
    scope->algos = 0;
    scope->start = (double)pd_clock_ns();
    pd_stats_current = scope;
}

void pd_stats_end(struct pd_stat_scope *scope)
{
    if (scope->call < 0)
        return;
    int64_t nanos = (int64_t)((double)pd_clock_ns() - scope->start);
    int c = scope->call;
    __atomic_fetch_add(&pd_stats.calls[c], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pd_stats.bytes[c], (int64_t)scope->bytes,
                       __ATOMIC_RELAXED);
    __atomic_fetch_add(&pd_stats.nanos[c], nanos, __ATOMIC_RELAXED);
    /* A call that moved nothing (zero counts) names no way. */
    __atomic_fetch_or(&pd_stats.ways[c], scope->ways, __ATOMIC_RELAXED);
    __atomic_fetch_or(&pd_stats.algos[c], scope->algos, __ATOMIC_RELAXED);
    pd_stats_current = NULL;
}

/* pd_stats_enabled first: it is a plain load, the thread-local one a
 * call into the dynamic linker's TLS lookup on every collective. */
void pd_stats_way(enum pd_stat_way way)
{
    if (pd_stats_enabled && pd_stats_current != NULL &&
        pd_stats_current->ways == 0)
        pd_stats_current->ways = (int)way;
}

void pd_stats_algo(enum pd_algo algo)
{
    if (pd_stats_enabled && pd_stats_current != NULL)
        pd_stats_current->algos |= 1 << (int)algo;
}

void pd_stats_snapshot(int64_t sums[3 * PD_COLL_KINDS],
                       int32_t ways[2 * PD_COLL_KINDS])
{
    memcpy(sums, pd_stats.calls, sizeof(pd_stats.calls));
    memcpy(sums + PD_COLL_KINDS, pd_stats.bytes, sizeof(pd_stats.bytes));
    memcpy(sums + 2 * PD_COLL_KINDS, pd_stats.nanos, sizeof(pd_stats.nanos));
    memcpy(ways, pd_stats.ways, sizeof(pd_stats.ways));
    memcpy(ways + PD_COLL_KINDS, pd_stats.algos, sizeof(pd_stats.algos));
}

/* PDMPI_STATS (see stats.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "core/algo.h"
#include "core/coll.h"
#include "core/runtime.h"
#include "core/stats.h"
#include "route/route.h"

bool pd_stats_enabled;

static const char *const pd_stat_names[PD_STAT_COUNT] = {
    "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Allgather",
    "MPI_Allgatherv", "MPI_Gather(v)", "MPI_Scatter(v)", "MPI_Alltoall(v)",
    "MPI_Reduce_scatter", "MPI_(Ex)scan", "MPI_Barrier",
};

/* Counters are updated by whichever thread calls; atomics keep them
 * exact under MPI_THREAD_MULTIPLE. Time is in nanoseconds. */
static struct {
    int64_t calls[PD_STAT_COUNT];
    int64_t bytes[PD_STAT_COUNT];
    int64_t nanos[PD_STAT_COUNT];
    int32_t ways[PD_STAT_COUNT];
    int32_t algos[PD_STAT_COUNT];
} pd_stats;

/* The call being timed on this thread: core's nested calls (an
 * allgather composed from an exchange, a staged call) count once. */
static _Thread_local struct pd_stat_scope *pd_stats_current;

void pd_stats_begin(struct pd_stat_scope *scope, enum pd_stat_call call,
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

static void pd_stats_ways_text(int ways, int algos, const char *host,
                               char *buf, size_t len)
{
    struct pd_dccl *dev = pd_route_device();
    struct pd_dccl *rt = pd_route_runtime();
    size_t used = 0;
    buf[0] = '\0';
    if (ways & PD_WAY_SHM)
        used += (size_t)snprintf(buf + used, len - used, "shm");
    if ((ways & PD_WAY_HOST) && used < len)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 used ? "+" : "", host);
    /* The algorithms the host backend ran, wherever it ran (alone, or
     * between the hosts' leaders after shared memory). */
    for (int a = 0; algos != 0 && a < 31 && used < len; a++)
        if (algos & (1 << a))
            used += (size_t)snprintf(
                buf + used, len - used, "%s%s",
                (algos & ((1 << a) - 1)) ? ", " : " (",
                pd_algo_name((enum pd_algo)a));
    if (algos != 0 && used < len)
        used += (size_t)snprintf(buf + used, len - used, ")");
    if ((ways & PD_WAY_DEVICE) && used < len)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 used ? "+" : "", dev ? dev->b->name : "device");
    if ((ways & PD_WAY_STAGED) && used < len)
        snprintf(buf + used, len - used, "%s%s staged via %s",
                 used ? "+" : "", rt ? rt->b->memory : "device", host);
    if (ways == 0)
        snprintf(buf, len, "none (nothing moved)");
}

static void pd_stats_bytes_text(double bytes, char *buf, size_t len)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void pd_stats_report(void)
{
    if (!pd_stats_enabled)
        return;
    struct ompi_communicator_t *world =
        (struct ompi_communicator_t *)MPI_COMM_WORLD;
    int64_t sums[3 * PD_STAT_COUNT];
    int32_t ways[2 * PD_STAT_COUNT];  /* ways, then algorithms */
    struct pd_fail fail;
    memcpy(sums, pd_stats.calls, sizeof(pd_stats.calls));
    memcpy(sums + PD_STAT_COUNT, pd_stats.bytes, sizeof(pd_stats.bytes));
    memcpy(sums + 2 * PD_STAT_COUNT, pd_stats.nanos, sizeof(pd_stats.nanos));
    memcpy(ways, pd_stats.ways, sizeof(pd_stats.ways));
    memcpy(ways + PD_STAT_COUNT, pd_stats.algos, sizeof(pd_stats.algos));
    /* The report's own collectives are not counted. */
    pd_stats_enabled = false;
    if (pd_coll_allreduce(world, pd_comm_reserve_tags(world), NULL, sums,
                          3 * PD_STAT_COUNT, MPI_INT64_T, MPI_SUM,
                          &fail) != MPI_SUCCESS ||
        pd_coll_allreduce(world, pd_comm_reserve_tags(world), NULL, ways,
                          2 * PD_STAT_COUNT, MPI_INT32_T, MPI_BOR,
                          &fail) != MPI_SUCCESS || world->rank != 0)
        return;
    const struct pd_backend_ops *host = NULL;
    char ignored[8];
    const char *host_name =
        pd_route_host_backend(world->size, &host, ignored, sizeof(ignored)) == 0
            ? host->name
            : "host";
    fprintf(stderr, "pdmpi stats: %d rank%s, summed over ranks (blocking "
            "collectives; mean = time per call per rank)\n",
            world->size, world->size == 1 ? "" : "s");
    fprintf(stderr, "  %-20s %10s %12s %12s %12s  %s\n", "call", "calls",
            "bytes", "total s", "mean us", "way");
    for (int c = 0; c < PD_STAT_COUNT; c++) {
        int64_t calls = sums[c];
        if (calls == 0)
            continue;
        char bytes[32], way[160];
        pd_stats_bytes_text((double)sums[PD_STAT_COUNT + c], bytes,
                            sizeof(bytes));
        pd_stats_ways_text(ways[c], ways[PD_STAT_COUNT + c], host_name, way,
                           sizeof(way));
        double total = (double)sums[2 * PD_STAT_COUNT + c] / 1e9;
        fprintf(stderr, "  %-20s %10lld %12s %12.3f %12.1f  %s\n",
                pd_stat_names[c], (long long)calls, bytes, total,
                total / (double)calls * 1e6, way);
    }
}

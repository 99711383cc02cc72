/* PDMPI_STATS' table: every rank's counters summed, printed by rank 0. */
#include <stdint.h>
#include <stdio.h>

#include "core/algo.h"
#include "core/runtime.h"
#include "core/stats.h"
#include "route/route.h"
#include "service/progress.h"
#include "service/stats_report.h"

static const char *const pd_stat_names[PD_COLL_KINDS] = {
    [PD_COLL_ALLREDUCE] = "MPI_Allreduce", [PD_COLL_REDUCE] = "MPI_Reduce",
    [PD_COLL_BCAST] = "MPI_Bcast", [PD_COLL_ALLGATHER] = "MPI_Allgather",
    [PD_COLL_ALLGATHERV] = "MPI_Allgatherv",
    [PD_COLL_GATHERV] = "MPI_Gather(v)", [PD_COLL_SCATTERV] = "MPI_Scatter(v)",
    [PD_COLL_ALLTOALLV] = "MPI_Alltoall(v)",
    [PD_COLL_REDUCE_SCATTER] = "MPI_Reduce_scatter",
    [PD_COLL_SCAN] = "MPI_Scan", [PD_COLL_EXSCAN] = "MPI_Exscan",
    [PD_COLL_BARRIER] = "MPI_Barrier",
};

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
    int64_t sums[3 * PD_COLL_KINDS];
    int32_t ways[2 * PD_COLL_KINDS];  /* ways, then algorithms */
    struct pd_fail fail;
    pd_stats_snapshot(sums, ways);
    /* The report's own collectives are not counted. */
    pd_stats_enabled = false;
    struct pd_coll sum = { .kind = PD_COLL_ALLREDUCE, .comm = world,
                           .tag = pd_comm_reserve_tags(world), .recvbuf = sums,
                           .count = 3 * PD_COLL_KINDS, .type = MPI_INT64_T,
                           .op = MPI_SUM, .root = -1 };
    struct pd_coll bor = sum;
    bor.recvbuf = ways;
    bor.count = 2 * PD_COLL_KINDS;
    bor.type = MPI_INT32_T;
    bor.op = MPI_BOR;
    if (pd_progress_run_now(&sum, &fail) != MPI_SUCCESS ||
        (bor.tag = pd_comm_reserve_tags(world),
         pd_progress_run_now(&bor, &fail)) != MPI_SUCCESS ||
        world->rank != 0)
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
    for (int c = 0; c < PD_COLL_KINDS; c++) {
        int64_t calls = sums[c];
        if (calls == 0)
            continue;
        char bytes[32], way[160];
        pd_stats_bytes_text((double)sums[PD_COLL_KINDS + c], bytes,
                            sizeof(bytes));
        pd_stats_ways_text(ways[c], ways[PD_COLL_KINDS + c], host_name, way,
                           sizeof(way));
        double total = (double)sums[2 * PD_COLL_KINDS + c] / 1e9;
        fprintf(stderr, "  %-20s %10lld %12s %12.3f %12.1f  %s\n",
                pd_stat_names[c], (long long)calls, bytes, total,
                total / (double)calls * 1e6, way);
    }
}

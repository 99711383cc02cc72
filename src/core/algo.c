/*
 * gloo's allreduce algorithm by rank count and bytes per rank. The
 * table applies where calls go over gloo: between the hosts'
 * leaders, or everywhere with PDMPI_SHM=0. gloo's option API offers ring
 * and bcube for allreduce and one algorithm each for broadcast (binomial)
 * and allgather (ring).
 *
 * Measured 2026-11-30 on the 2-core build machine with bench/algo_sweep
 * (osu_<coll>, pdmpirun, PDMPI_SHM=0, each algorithm forced, 3 runs
 * alternating the algorithms, median of the average latency in us; full
 * tables in bench/results/algo-*.md). np 3 and 4 oversubscribe.
 *
 *   allreduce  np   16 B   1 KiB   8 KiB   64 KiB   1 MiB   4 MiB
 *   ring       2    1066   1122    549     472      797     5027
 *   bcube      2    338    352     205     217      957     4222
 *   ring       3    2015   2892    3105    2703     3783    5350
 *   bcube      3    2022   2106    1903    1976     2798    8709
 *   ring       4    3066   5815    5786    5852     6150    9673
 *   bcube      4    3887   3902    3975    3973     5129    12679
 *
 * bcube wins the middle at every size of world measured; ring the
 * smallest messages and, from 2-4 MiB at np 3-4, the largest.
 *
 * gloo's older per-algorithm classes were measured too, built per call on
 * a gloo context of their own (same files): halving-doubling allreduce
 * was 2x faster than either above for 16 B-8 KiB at np 3-4, one-to-all
 * broadcast and the classic allgather ring won some ranges. They are not
 * used: destroyed after run() with their last sends still queued in
 * gloo's transport thread, they are read after free (valgrind, np 2), and
 * after thousands of calls every 64 KiB call stalled on 40 ms timers
 * (45-137 ms per call). gloo's classic ring allreduce also gives sums that
 * differ between ranks in the last bits, and its classic bcube wrong sums
 * at np 3. Worlds above 4 ranks were not measured and keep gloo's
 * defaults.
 */
#include <string.h>

#include "core/algo.h"
#include "core/runtime.h"

/* Ranges in bytes per rank: [from, to) uses algo, for sizes in
 * [min_size, max_size]. First match wins; no match: ring. */
struct pd_algo_rule {
    int min_size, max_size;
    size_t from, to;
    enum pd_algo algo;
};

#define PD_MIB ((size_t)1 << 20)

static const struct pd_algo_rule pd_allreduce_rules[] = {
    { 2, 2, 16, 32 * PD_MIB, PD_ALGO_BCUBE },
    { 3, 3, 64, 2 * PD_MIB, PD_ALGO_BCUBE },
    { 4, 4, 32, 4 * PD_MIB, PD_ALGO_BCUBE },
};

int pd_algo_parse(const char *text, enum pd_algo *algo)
{
    if (strcmp(text, "auto") == 0)
        *algo = PD_ALGO_DEFAULT;
    else if (strcmp(text, "ring") == 0)
        *algo = PD_ALGO_RING;
    else if (strcmp(text, "bcube") == 0)
        *algo = PD_ALGO_BCUBE;
    else
        return -1;
    return 0;
}

const char *pd_algo_name(enum pd_algo algo)
{
    switch (algo) {
    case PD_ALGO_RING: return "ring";
    case PD_ALGO_BCUBE: return "bcube";
    case PD_ALGO_BINOMIAL: return "binomial";
    case PD_ALGO_CARRIED: return "in the agreement";
    default: return "default";
    }
}

enum pd_algo pd_algo_allreduce(int size, size_t bytes)
{
    if (pd_rt.config.algo_allreduce != PD_ALGO_DEFAULT)
        return pd_rt.config.algo_allreduce;
    size_t n = sizeof(pd_allreduce_rules) / sizeof(pd_allreduce_rules[0]);
    for (size_t i = 0; i < n; i++) {
        const struct pd_algo_rule *r = &pd_allreduce_rules[i];
        if (size >= r->min_size && size <= r->max_size && bytes >= r->from &&
            bytes < r->to)
            return r->algo;
    }
    return PD_ALGO_RING;    /* gloo's default, named for PDMPI_STATS */
}

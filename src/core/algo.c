/*
 * Host allreduce algorithm by size (gloo's option API offers ring and
 * bcube; its older per-algorithm classes are not used: mixed with the
 * option API on one context they hit 40 ms delayed-ACK stalls).
 *
 * Measured on the 2-core build machine with bench/algo_sweep (osu_allreduce,
 * MPI_FLOAT, pdmpirun, PDMPI_ALGO_ALLREDUCE=ring|bcube, median of 3 runs,
 * avg us; full table in bench/results/algo-allreduce.md):
 *
 *   np   8 B         64 B        64 KiB      1 MiB       4 MiB
 *   2    409 / 495   568 / 255   322 / 270   1293 / 570  4419 / 4267
 *   3    488 / 2135  3057 / 2290 2759 / 2354 3460 / 2958 5193 / 7863
 *   4    1091 / 3801 5666 / 4027 5846 / 4018 6341 / 5142 9643 / 12207
 *        (ring / bcube)
 *
 * bcube wins the middle at every size of world measured; ring wins the
 * smallest messages and, from 2-4 MiB at np 3-4 (and 64 MiB at np 2 in
 * earlier gloo measurements), the largest. Worlds above 4 ranks were not
 * measured and keep gloo's default, ring.
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

static const struct pd_algo_rule pd_allreduce_rules[] = {
    { 2, 2, 16, (size_t)32 << 20, PD_ALGO_BCUBE },
    { 3, 3, 64, (size_t)2 << 20, PD_ALGO_BCUBE },
    { 4, 4, 32, (size_t)4 << 20, PD_ALGO_BCUBE },
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
    return PD_ALGO_RING;
}

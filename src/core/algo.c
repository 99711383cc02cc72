/*
 * gloo's algorithm per host collective, by rank count and bytes per rank.
 * These tables apply where calls go over gloo: between the hosts'
 * leaders, or everywhere with PDMPI_SHM=0.
 *
 * Measured 2026-11-30 on the 2-core build machine with bench/algo_sweep
 * (osu_<coll>, pdmpirun, PDMPI_SHM=0, each algorithm forced, 3 runs
 * alternating the algorithms, median of the average latency in us; full
 * tables in bench/results/algo-<coll>.md). np 3 and 4 oversubscribe.
 *
 * allreduce   np   16 B   1 KiB   8 KiB   64 KiB   1 MiB   4 MiB
 *   ring      2    1066   1122    549     472      797     5027
 *   bcube     2    338    352     205     217      957     4222
 *   r-chunked 2    330    395     425     49737    5881    19603
 *   h-doubl.  2    221    240     521     214      1286    4721
 *   ring      3    2015   2892    3105    2703     3783    5350
 *   bcube     3    2022   2106    1903    1976     2798    8709
 *   h-doubl.  3    1032   1040    2575    1789     2311    6984
 *   ring      4    3066   5815    5786    5852     6150    9673
 *   bcube     4    3887   3902    3975    3973     5129    12679
 *   h-doubl.  4    2330   2408    3757    6831     5292    12481
 * broadcast   np   16 B   4 KiB   32 KiB  64 KiB   512 KiB 4 MiB
 *   binomial  2    143    84      75      75       146     1451
 *   one-to-all 2   77     76      71      44790    106     1213
 *   binomial  3    447    535     545     500      590     3579
 *   one-to-all 3   680    690     792     44962    484     3063
 *   binomial  4    875    851     753     976      1032    4288
 *   one-to-all 4   1062   924     981     45154    979     4620
 * allgather   np   16 B   4 KiB   32 KiB  64 KiB   512 KiB 4 MiB
 *   ring      2    165    163     153     379      633     4333
 *   classic   2    224    611     139     16835    318     3535
 *   ring      3    2037   2007    1804    2006     2059    9008
 *   classic   3    1083   760     505     91033    1775    9439
 *   ring      4    3706   3769    3850    3584     4320    17358
 *   classic   4    1973   2062    2232    137267   3503    17669
 *
 * ring and bcube (allreduce), binomial (broadcast) and ring (allgather)
 * are gloo's option API; ring-chunked, halving-doubling, one-to-all and
 * classic-ring its per-algorithm classes, built per call on a context of
 * their own. Those classes are 2-3x faster for small messages at np 3-4
 * but stall on 40 ms timers around 64 KiB once a run has made thousands
 * of calls (every one of them, at 65536 bytes, 45-137 ms per call; the
 * same size alone: 1.5 ms), and ring-chunked also at 16 and 256 KiB, so
 * the tables use them only away from that range. gloo's classic ring and
 * bcube allreduce are not offered: the ring's results differ in the last
 * bits between ranks, and the bcube class sums wrongly at np 3. Worlds
 * above 4 ranks were not measured and keep gloo's defaults.
 */
#include <stdio.h>
#include <string.h>

#include "core/algo.h"
#include "core/runtime.h"

const char *const pd_algo_coll_var[PD_ALGO_COLLS] = {
    [PD_ALGO_FOR_ALLREDUCE] = "ALLREDUCE",
    [PD_ALGO_FOR_BCAST] = "BCAST",
    [PD_ALGO_FOR_ALLGATHER] = "ALLGATHER",
};

#define PD_ALLREDUCE_BIT (1u << PD_ALGO_FOR_ALLREDUCE)
#define PD_BCAST_BIT (1u << PD_ALGO_FOR_BCAST)
#define PD_ALLGATHER_BIT (1u << PD_ALGO_FOR_ALLGATHER)

/* Every algorithm's name and the collectives that have it. */
static const struct {
    const char *name;
    enum pd_algo algo;
    unsigned colls;
} pd_algos[] = {
    { "ring", PD_ALGO_RING, PD_ALLREDUCE_BIT | PD_ALLGATHER_BIT },
    { "bcube", PD_ALGO_BCUBE, PD_ALLREDUCE_BIT },
    { "binomial", PD_ALGO_BINOMIAL, PD_BCAST_BIT },
    { "ring-chunked", PD_ALGO_RING_CHUNKED, PD_ALLREDUCE_BIT },
    { "halving-doubling", PD_ALGO_HALVING_DOUBLING, PD_ALLREDUCE_BIT },
    { "classic-ring", PD_ALGO_CLASSIC_RING, PD_ALLGATHER_BIT },
    { "one-to-all", PD_ALGO_ONE_TO_ALL, PD_BCAST_BIT },
};
#define PD_NUM_ALGOS (sizeof(pd_algos) / sizeof(pd_algos[0]))

/* Ranges in bytes per rank: [from, to) uses algo, for sizes in
 * [min_size, max_size]. First match wins; no match: gloo's default. */
struct pd_algo_rule {
    int min_size, max_size;
    size_t from, to;
    enum pd_algo algo;
};

#define PD_KIB ((size_t)1 << 10)
#define PD_MIB ((size_t)1 << 20)

static const struct pd_algo_rule pd_allreduce_rules[] = {
    { 2, 4, 16, 8 * PD_KIB, PD_ALGO_HALVING_DOUBLING },
    { 2, 2, 8 * PD_KIB, 32 * PD_MIB, PD_ALGO_BCUBE },
    { 3, 3, 8 * PD_KIB, 2 * PD_MIB, PD_ALGO_BCUBE },
    { 4, 4, 8 * PD_KIB, 4 * PD_MIB, PD_ALGO_BCUBE },
};

static const struct pd_algo_rule pd_bcast_rules[] = {
    { 2, 2, 16, 32 * PD_KIB + 1, PD_ALGO_ONE_TO_ALL },
    { 2, 3, 512 * PD_KIB, 4 * PD_MIB + 1, PD_ALGO_ONE_TO_ALL },
    { 4, 4, 256 * PD_KIB, 2 * PD_MIB + 1, PD_ALGO_ONE_TO_ALL },
};

static const struct pd_algo_rule pd_allgather_rules[] = {
    { 2, 2, 256 * PD_KIB, 4 * PD_MIB + 1, PD_ALGO_CLASSIC_RING },
    { 3, 4, 1, 32 * PD_KIB + 1, PD_ALGO_CLASSIC_RING },
    { 3, 3, 128 * PD_KIB, 2 * PD_MIB + 1, PD_ALGO_CLASSIC_RING },
    { 4, 4, 128 * PD_KIB, 1 * PD_MIB + 1, PD_ALGO_CLASSIC_RING },
};

#define PD_RULES(r) { r, sizeof(r) / sizeof(r[0]) }

static const struct {
    const struct pd_algo_rule *rules;
    size_t n;
} pd_tables[PD_ALGO_COLLS] = {
    [PD_ALGO_FOR_ALLREDUCE] = PD_RULES(pd_allreduce_rules),
    [PD_ALGO_FOR_BCAST] = PD_RULES(pd_bcast_rules),
    [PD_ALGO_FOR_ALLGATHER] = PD_RULES(pd_allgather_rules),
};

int pd_algo_parse(enum pd_algo_coll coll, const char *text,
                  enum pd_algo *algo)
{
    if (strcmp(text, "auto") == 0) {
        *algo = PD_ALGO_DEFAULT;
        return 0;
    }
    for (size_t i = 0; i < PD_NUM_ALGOS; i++)
        if ((pd_algos[i].colls & (1u << coll)) &&
            strcmp(text, pd_algos[i].name) == 0) {
            *algo = pd_algos[i].algo;
            return 0;
        }
    return -1;
}

void pd_algo_choices(enum pd_algo_coll coll, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "auto");
    for (size_t i = 0; i < PD_NUM_ALGOS && n < len; i++)
        if (pd_algos[i].colls & (1u << coll))
            n += (size_t)snprintf(buf + n, len - n, ", %s", pd_algos[i].name);
}

const char *pd_algo_name(enum pd_algo algo)
{
    for (size_t i = 0; i < PD_NUM_ALGOS; i++)
        if (pd_algos[i].algo == algo)
            return pd_algos[i].name;
    return "default";
}

enum pd_algo pd_algo_choose(enum pd_algo_coll coll, int size, size_t bytes)
{
    if (pd_rt.config.algo[coll] != PD_ALGO_DEFAULT)
        return pd_rt.config.algo[coll];
    for (size_t i = 0; i < pd_tables[coll].n; i++) {
        const struct pd_algo_rule *r = &pd_tables[coll].rules[i];
        if (size >= r->min_size && size <= r->max_size && bytes >= r->from &&
            bytes < r->to)
            return r->algo;
    }
    /* gloo's own choices, named so that PDMPI_STATS can show them. */
    static const enum pd_algo fallback[PD_ALGO_COLLS] = {
        [PD_ALGO_FOR_ALLREDUCE] = PD_ALGO_RING,
        [PD_ALGO_FOR_BCAST] = PD_ALGO_BINOMIAL,
        [PD_ALGO_FOR_ALLGATHER] = PD_ALGO_RING,
    };
    return fallback[coll];
}

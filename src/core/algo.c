/*
 * The allreduce algorithm a host step asks its backend for. It applies
 * where calls go over gloo: between the hosts' leaders, or everywhere
 * with PDMPI_SHM=0. gloo's option API offers ring and bcube; pdmpi's own
 * pipelined ring moves the same bytes on gloo's synchronous pairs from
 * the calling thread (backend/gloo/gloo_adapter.cc). Calls of up to
 * 64 KiB per rank ride in the agreement instead (coll/agree.h) unless an
 * algorithm is named.
 *
 * Measured 2026-12-02 on the 2-core build machine with
 * `bench/algo_sweep -a "pipelined bcube ring" "2 3 4" 4194304 3`
 * (osu_allreduce, pdmpirun, PDMPI_SHM=0, each algorithm forced, 3 runs
 * alternating the algorithms, median of the average latency in us; the
 * full table in bench/results/algo-allreduce.md). np 3 and 4
 * oversubscribe.
 *
 *   allreduce  np   16 B   8 KiB   64 KiB   128 KiB   1 MiB   4 MiB
 *   pipelined  2      38      40       51        84     422    1626
 *   bcube      2    1647     379      277       283    1151    4947
 *   ring       2    1924    2109     2653      2320    2573    5604
 *   pipelined  3     207     202      228       276    1136    4344
 *   bcube      3     771     667     1093       904    1412    7753
 *   ring       3    1701    2680     2920      2356    3555    7466
 *   pipelined  4     421     411      398       431    1597    6633
 *   bcube      4    3423    3457     3644      3598    4607   14273
 *   ring       4    2002    4669     4657      4504    5378    8169
 *
 * The pipelined ring is fastest at every size and world measured, so it
 * is the default everywhere; ring and bcube stay for PDMPI_ALGO_ALLREDUCE.
 *
 * gloo's older per-algorithm classes were measured too (2026-11-30),
 * built per call on a gloo context of their own. They are not used:
 * destroyed after run() with their last sends still queued in gloo's
 * transport thread, they are read after free (valgrind, np 2), and after
 * thousands of calls every 64 KiB call stalled on 40 ms timers (45-137 ms
 * per call). gloo's classic ring allreduce also gives sums that differ
 * between ranks in the last bits, and its classic bcube wrong sums at
 * np 3.
 */
#include "core/algo.h"
#include "core/runtime.h"

enum pd_algo pd_algo_allreduce(int size, size_t bytes)
{
    (void)size;
    (void)bytes;
    if (pd_rt.config.algo_allreduce != PD_ALGO_DEFAULT)
        return pd_rt.config.algo_allreduce;
    return PD_ALGO_PIPELINED;
}

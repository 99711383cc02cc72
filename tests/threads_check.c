/*
 * threads_check.c - MPI_THREAD_MULTIPLE: collectives from several threads
 * at once, each on communicators of its own.
 *
 * MPI_Init_thread(MPI_THREAD_MULTIPLE) must provide MPI_THREAD_MULTIPLE;
 * if the library provides less, every check is reported "# SKIP" and the
 * program exits 0. MPI_Query_thread must agree, and MPI_Is_thread_main must
 * be true in the main thread and false in any other.
 *
 * Then 4 threads per rank each own 2 duplicates of MPI_COMM_WORLD, made by
 * the main thread in the same order on every rank, so that calls that run
 * concurrently are always on different communicators, as the standard
 * requires; thread t of every rank uses the same two communicators in the
 * same order. Each thread alternates between its two communicators doing
 * MPI_Allreduce, MPI_Bcast (a root that moves) and MPI_Allgather, and
 * checks every result against values computed from (rank, thread,
 * iteration); meanwhile the main thread runs MPI_Allreduce on
 * MPI_COMM_WORLD. The ranks first agree on the number of iterations from
 * a timed run of 32 rounds on all threads (the slowest rank's time), aiming
 * at about 3 s of wall time; every 8 iterations a thread's ranks also agree
 * whether 6 s have passed, and stop early if so. The total number of
 * collectives is reported.
 *
 * A plain MPI program: it must give the same output under Open MPI's
 * mpirun and under pdmpirun. Output is TAP-like and printed by rank 0 only,
 * from the main thread, after the ranks agree on the verdict; the exit
 * status is non-zero when any check failed. A deadlock is caught by the
 * test driver's timeout.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap_harness.h"

/* ------------------------------------------------------------------ */
/* One round of collectives on one communicator                         */
/* ------------------------------------------------------------------ */

#define THREADS 4
#define COMMS_PER_THREAD 2
#define LEN 16
#define TARGET_SECONDS 3.0
#define LIMIT_SECONDS 6.0
#define CALIBRATION_ROUNDS 32

/* Thread t's round `it` on its communicator j: allreduce, bcast and
 * allgather, each checked. Returns the number of collectives done. */
static int round_of_collectives(struct verdict *v, MPI_Comm comm, int t,
                                int j, long it, int *gathered)
{
    int n = world_size, me = world_rank;
    int in[LEN], out[LEN], buf[LEN];

    /* The same value in every element would hide a mixed-up index. */
    for (int i = 0; i < LEN; i++)
        in[i] = me * (t + 1) + (int)(it % 1000) + i * (j + 1);
    for (int i = 0; i < LEN; i++)
        out[i] = -1;
    check_rc(v, "MPI_Allreduce",
             MPI_Allreduce(in, out, LEN, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < LEN; i++) {
        int want = (t + 1) * n * (n - 1) / 2
                   + n * ((int)(it % 1000) + i * (j + 1));
        if (out[i] != want) {
            fail(v, "thread %d comm %d iteration %ld: allreduce[%d] = %d, "
                 "expected %d", t, j, it, i, out[i], want);
            break;
        }
    }

    int root = (int)((it + t) % n);
    for (int i = 0; i < LEN; i++)
        buf[i] = me == root ? root * 1000 + (int)(it % 1000) * 7 + t + i : -1;
    check_rc(v, "MPI_Bcast", MPI_Bcast(buf, LEN, MPI_INT, root, comm));
    for (int i = 0; i < LEN; i++)
        if (buf[i] != root * 1000 + (int)(it % 1000) * 7 + t + i) {
            fail(v, "thread %d comm %d iteration %ld: bcast from %d gave "
                 "[%d] = %d", t, j, it, root, i, buf[i]);
            break;
        }

    int mine[2] = {me * 100 + t * 10 + j, (int)(it % 100000)};
    for (int i = 0; i < 2 * n; i++)
        gathered[i] = -1;
    check_rc(v, "MPI_Allgather",
             MPI_Allgather(mine, 2, MPI_INT, gathered, 2, MPI_INT, comm));
    for (int r = 0; r < n; r++)
        if (gathered[2 * r] != r * 100 + t * 10 + j
            || gathered[2 * r + 1] != (int)(it % 100000)) {
            fail(v, "thread %d comm %d iteration %ld: allgather slot %d is "
                 "{%d, %d}", t, j, it, r, gathered[2 * r],
                 gathered[2 * r + 1]);
            break;
        }
    return 3;
}

/* ------------------------------------------------------------------ */
/* Workers                                                              */
/* ------------------------------------------------------------------ */

struct worker {
    int t;
    MPI_Comm comms[COMMS_PER_THREAD];
    long iterations;
    long collectives;
    long rounds_done;
    bool stopped_early;
    int is_main;       /* MPI_Is_thread_main in this thread */
    int level;         /* MPI_Query_thread in this thread */
    struct verdict v;
};

static double start_time;

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->is_main = -1;
    w->level = -1;
    check_rc(&w->v, "MPI_Is_thread_main", MPI_Is_thread_main(&w->is_main));
    check_rc(&w->v, "MPI_Query_thread", MPI_Query_thread(&w->level));

    int *gathered = malloc(2 * (size_t)world_size * sizeof(int));
    for (long it = 0; it < w->iterations; it++) {
        int j = (int)(it % COMMS_PER_THREAD);
        w->collectives += round_of_collectives(&w->v, w->comms[j], w->t, j,
                                               it, gathered);
        w->rounds_done++;
        if (it % 8 == 7) {
            /* All ranks of this thread's communicators stop together. */
            int late = MPI_Wtime() - start_time > LIMIT_SECONDS, stop = 0;
            check_rc(&w->v, "MPI_Allreduce",
                     MPI_Allreduce(&late, &stop, 1, MPI_INT, MPI_MAX,
                                   w->comms[j]));
            w->collectives++;
            if (stop) {
                w->stopped_early = true;
                break;
            }
        }
    }
    free(gathered);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The checks                                                           */
/* ------------------------------------------------------------------ */

static const char *level_name(int level)
{
    if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
    if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
    if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
    if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
    return "an unknown level";
}

static void check_main_thread(int provided)
{
    struct verdict v = {""};
    int level = -1, is_main = -1;
    check_rc(&v, "MPI_Query_thread", MPI_Query_thread(&level));
    if (level != provided)
        fail(&v, "MPI_Query_thread says %s, MPI_Init_thread provided %s",
             level_name(level), level_name(provided));
    check_rc(&v, "MPI_Is_thread_main", MPI_Is_thread_main(&is_main));
    if (!is_main)
        fail(&v, "MPI_Is_thread_main is false in the main thread");
    report(&v, "MPI_Query_thread gives the provided level, "
           "MPI_Is_thread_main true in the main thread");
}

static void run_workers(struct worker *workers, long iterations)
{
    pthread_t ids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t].iterations = iterations;
        if (pthread_create(&ids[t], NULL, worker_main, &workers[t]) != 0) {
            fprintf(stderr, "threads_check: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(ids[t], NULL);
}

static void check_concurrent_collectives(void)
{
    struct verdict v = {""};
    struct worker workers[THREADS];
    memset(workers, 0, sizeof(workers));

    /* Same order on every rank: thread 0's two, then thread 1's, ... */
    for (int t = 0; t < THREADS; t++) {
        workers[t].t = t;
        for (int j = 0; j < COMMS_PER_THREAD; j++) {
            workers[t].comms[j] = MPI_COMM_NULL;
            check_rc(&v, "MPI_Comm_dup",
                     MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].comms[j]));
        }
    }
    if (v.detail[0] != '\0') {
        report(&v, "4 threads x 2 communicators of collectives");
        return;
    }

    /* Calibration: a few rounds on all threads at once, timed; the
     * slowest rank's time sets everyone's iteration count. */
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    start_time = MPI_Wtime();
    run_workers(workers, CALIBRATION_ROUNDS);
    double mine = MPI_Wtime() - start_time, slowest = 0;
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                           MPI_COMM_WORLD));
    double per_round = slowest / CALIBRATION_ROUNDS;
    long iterations = per_round > 0 ? (long)(TARGET_SECONDS / per_round)
                                    : 1000000;
    if (iterations < 16)
        iterations = 16;
    if (iterations > 1000000)
        iterations = 1000000;
    if (world_rank == 0)
        printf("# calibration: %.2f ms per round with %d threads; %ld "
               "iterations per thread\n", per_round * 1e3, THREADS,
               iterations);

    start_time = MPI_Wtime();
    pthread_t ids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t].iterations = iterations;
        workers[t].rounds_done = 0;
        if (pthread_create(&ids[t], NULL, worker_main, &workers[t]) != 0) {
            fprintf(stderr, "threads_check: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    /* Meanwhile the main thread uses world. */
    long main_collectives = 0;
    for (int i = 0; i < 100; i++) {
        long x = world_rank + i, sum = -1;
        check_rc(&v, "MPI_Allreduce",
                 MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM,
                               MPI_COMM_WORLD));
        main_collectives++;
        long want = (long)world_size * (world_size - 1) / 2
                    + (long)i * world_size;
        if (sum != want)
            fail(&v, "main thread: allreduce %d gave %ld, expected %ld", i,
                 sum, want);
    }

    for (int t = 0; t < THREADS; t++)
        pthread_join(ids[t], NULL);
    double elapsed = MPI_Wtime() - start_time;

    long total = main_collectives;
    bool early = false;
    for (int t = 0; t < THREADS; t++) {
        total += workers[t].collectives;
        early = early || workers[t].stopped_early;
        if (workers[t].v.detail[0] != '\0')
            fail(&v, "%s", workers[t].v.detail);
    }
    report(&v, "4 threads x 2 communicators: MPI_Allreduce, MPI_Bcast and "
           "MPI_Allgather results all correct");

    struct verdict vt = {""};
    for (int t = 0; t < THREADS; t++) {
        if (workers[t].is_main != 0)
            fail(&vt, "MPI_Is_thread_main is %d in thread %d",
                 workers[t].is_main, t);
        if (workers[t].level != MPI_THREAD_MULTIPLE)
            fail(&vt, "MPI_Query_thread says %s in thread %d",
                 level_name(workers[t].level), t);
    }
    report(&vt, "MPI_Is_thread_main false and MPI_Query_thread "
           "MPI_THREAD_MULTIPLE in the other threads");

    /* Every thread of every rank did the same number of rounds. */
    struct verdict vc = {""};
    long rounds[THREADS], lo[THREADS], hi[THREADS];
    for (int t = 0; t < THREADS; t++)
        rounds[t] = workers[t].rounds_done;
    MPI_Allreduce(rounds, lo, THREADS, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(rounds, hi, THREADS, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    for (int t = 0; t < THREADS; t++)
        if (lo[t] != hi[t])
            fail(&vc, "thread %d did between %ld and %ld rounds", t, lo[t],
                 hi[t]);
    long all_total = 0;
    MPI_Allreduce(&total, &all_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("# %ld collectives on this rank, %ld on all ranks, in %.2f s%s\n",
               total, all_total, elapsed,
               early ? " (stopped early at the time limit)" : "");
    report(&vc, "every rank's threads completed the agreed rounds "
           "(%ld collectives per rank) without deadlock", total);

    for (int t = 0; t < THREADS; t++)
        for (int j = 0; j < COMMS_PER_THREAD; j++)
            MPI_Comm_free(&workers[t].comms[j]);
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();

    if (world_rank == 0)
        printf("# threads_check on %d rank(s), %d threads each\n",
               world_size, THREADS);

    if (provided != MPI_THREAD_MULTIPLE) {
        char why[128];
        snprintf(why, sizeof(why), "MPI_THREAD_MULTIPLE not provided (got %s)",
                 level_name(provided));
        report_skip(why, "MPI_Query_thread gives the provided level, "
                    "MPI_Is_thread_main true in the main thread");
        report_skip(why, "4 threads x 2 communicators: MPI_Allreduce, "
                    "MPI_Bcast and MPI_Allgather results all correct");
        report_skip(why, "MPI_Is_thread_main false and MPI_Query_thread "
                    "MPI_THREAD_MULTIPLE in the other threads");
        report_skip(why, "every rank's threads completed the agreed rounds "
                    "without deadlock");
    } else {
        check_main_thread(provided);
        check_concurrent_collectives();
    }

    int status = finish();
    MPI_Finalize();
    return status;
}

/*
 * many_comms_check - many live communicators under MPI_THREAD_MULTIPLE.
 *
 *   many_comms_check COMMS THREADS ROUNDS
 *
 * The main thread duplicates MPI_COMM_WORLD COMMS times (the same order on
 * every rank) and keeps every duplicate alive to the end; THREADS threads
 * then each take the communicators c with c % THREADS == t and, ROUNDS
 * times over, run one MPI_Allreduce on each of them -- every communicator
 * is first used (and so set up) by a thread while the others are setting
 * up theirs. Each sum is checked against one computed here from (rank,
 * communicator, round). Calls that run at once are always on different
 * communicators, as the standard requires. TAP output from rank 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tap_harness.h"

static int comms_n, threads_n, rounds_n;
static MPI_Comm *comms;

struct worker {
    int t;
    long calls;
    struct verdict v;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int n = world_size;
    for (int round = 0; round < rounds_n; round++) {
        for (int c = w->t; c < comms_n; c += threads_n) {
            long in[2] = { world_rank + 1L, (long)c * 1000 + round }, out[2];
            int rc = MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, comms[c]);
            check_rc(&w->v, "MPI_Allreduce", rc);
            if (rc != MPI_SUCCESS)
                return NULL;
            w->calls++;
            long want0 = (long)n * (n + 1) / 2,
                 want1 = n * ((long)c * 1000 + round);
            if (out[0] != want0 || out[1] != want1) {
                fail(&w->v, "communicator %d round %d: sum {%ld, %ld}, "
                     "expected {%ld, %ld}", c, round, out[0], out[1], want0,
                     want1);
                return NULL;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (argc != 4 || (comms_n = atoi(argv[1])) < 1 ||
        (threads_n = atoi(argv[2])) < 1 || (rounds_n = atoi(argv[3])) < 1) {
        if (world_rank == 0)
            fprintf(stderr, "usage: many_comms_check COMMS THREADS ROUNDS\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_MULTIPLE) {
        report_skip("MPI_THREAD_MULTIPLE not provided", "%d communicators",
                    comms_n);
        int rc = finish();
        MPI_Finalize();
        return rc;
    }

    struct verdict v = { 0 };
    comms = calloc((size_t)comms_n, sizeof(MPI_Comm));
    int made = 0;
    for (; made < comms_n; made++) {
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[made]);
        check_rc(&v, "MPI_Comm_dup", rc);
        if (rc != MPI_SUCCESS)
            break;
    }
    report(&v, "%d duplicates of MPI_COMM_WORLD made", comms_n);

    struct worker *w = calloc((size_t)threads_n, sizeof(*w));
    pthread_t *tid = calloc((size_t)threads_n, sizeof(pthread_t));
    int started = 0;
    if (made == comms_n) {
        for (; started < threads_n; started++) {
            w[started].t = started;
            if (pthread_create(&tid[started], NULL, worker_main,
                               &w[started]) != 0)
                break;
        }
    }
    long calls = 0;
    struct verdict all = { 0 };
    if (started < threads_n)
        fail(&all, "only %d of %d threads started", started, threads_n);
    for (int t = 0; t < started; t++) {
        pthread_join(tid[t], NULL);
        calls += w[t].calls;
        if (w[t].v.detail[0] != '\0' && all.detail[0] == '\0')
            all = w[t].v;
    }
    report(&all, "%d threads, %d live communicators, %ld allreduces, every "
           "sum right", threads_n, comms_n, calls);

    struct verdict fv = { 0 };
    for (int c = 0; c < made; c++)
        check_rc(&fv, "MPI_Comm_free", MPI_Comm_free(&comms[c]));
    report(&fv, "%d communicators freed", made);
    free(comms);
    free(w);
    free(tid);
    int rc = finish();
    MPI_Finalize();
    return rc;
}

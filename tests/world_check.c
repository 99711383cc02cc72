/*
 * One program for every launcher: checks the world it was given against
 * what the test expects (EXPECT_* variables, each optional), that ranks
 * on one host group together, and that collectives over the whole world
 * give independently computed answers.
 *
 *   EXPECT_SIZE, EXPECT_LAUNCHER, EXPECT_LOCAL_SIZE, EXPECT_HOSTS
 *   world_check [ITERATIONS]   (allreduce loop length, default 10)
 *
 * Prints one line per rank: "world_check: rank R/N launcher L local
 * LR/LS hosts H: ok", or the failed check and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdmpi.h"

static int failures;

#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "world_check: " __VA_ARGS__);                   \
            fputc('\n', stderr);                                            \
            failures++;                                                     \
        }                                                                   \
    } while (0)

static void expect_int_env(const char *name, int got)
{
    const char *want = getenv(name);
    if (want != NULL && want[0] != '\0')
        EXPECT(atoi(want) == got, "%s=%s but got %d", name, want, got);
}

/* The shared-memory communicator holds exactly this host's ranks, and
 * the launcher's local ranks are a permutation of 0..local_size-1. */
static void check_host_grouping(int local_rank, int local_size)
{
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &host);
    int host_size = 0;
    MPI_Comm_size(host, &host_size);
    EXPECT(host_size == local_size,
           "MPI_COMM_TYPE_SHARED has %d ranks but the local size is %d",
           host_size, local_size);
    int *seen = calloc((size_t)host_size, sizeof(int));
    int *all = malloc((size_t)host_size * sizeof(int));
    MPI_Allgather(&local_rank, 1, MPI_INT, all, 1, MPI_INT, host);
    for (int i = 0; i < host_size; i++) {
        EXPECT(all[i] >= 0 && all[i] < host_size && !seen[all[i]]++,
               "local ranks on this host are not 0..%d (rank %d says %d)",
               host_size - 1, i, all[i]);
        if (all[i] < 0 || all[i] >= host_size)
            break;
    }
    free(seen);
    free(all);
    MPI_Comm_free(&host);
}

static void check_collectives(int rank, int size, int iterations)
{
    for (int it = 0; it < iterations; it++) {
        long mine = rank + 1 + it, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        long want = (long)size * (size + 1) / 2 + (long)size * it;
        EXPECT(sum == want, "allreduce %d: %ld, expected %ld", it, sum, want);
    }
    int *ranks = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        EXPECT(ranks[i] == i, "allgather slot %d holds %d", i, ranks[i]);
    free(ranks);
    double value = rank == size - 1 ? 2.5 * size : -1.0;
    MPI_Bcast(&value, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
    EXPECT(value == 2.5 * size, "bcast from rank %d gave %g", size - 1, value);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Init(&argc, &argv);
    int rank, size, local_rank, local_size, hosts;
    char launcher[32];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pdmpi_world_info(launcher, sizeof(launcher), &local_rank, &local_size,
                     &hosts);

    expect_int_env("EXPECT_SIZE", size);
    expect_int_env("EXPECT_LOCAL_SIZE", local_size);
    expect_int_env("EXPECT_HOSTS", hosts);
    const char *want_launcher = getenv("EXPECT_LAUNCHER");
    if (want_launcher != NULL)
        EXPECT(strcmp(want_launcher, launcher) == 0,
               "launcher %s detected, expected %s", launcher, want_launcher);
    EXPECT(local_rank >= 0 && local_rank < local_size,
           "local rank %d outside local size %d", local_rank, local_size);

    check_host_grouping(local_rank, local_size);
    check_collectives(rank, size, iterations);

    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    if (failures == 0)
        printf("world_check: rank %d/%d launcher %s local %d/%d hosts %d: "
               "%s\n",
               rank, size, launcher, local_rank, local_size, hosts,
               all_failures == 0 ? "ok" : "failed elsewhere");
    MPI_Finalize();
    return all_failures == 0 ? 0 : 1;
}

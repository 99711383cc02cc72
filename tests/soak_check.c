/*
 * soak_check - many collectives, every result checked, memory flat.
 *
 *   soak_check [SMALL [LARGE [DUPS]]]   (defaults 100000, 1000, 1000)
 *
 * SMALL allreduces of 8 ints, LARGE allreduces of 256 Ki floats (1 MiB),
 * then DUPS rounds of MPI_Comm_dup + allreduce + MPI_Comm_free. Every
 * result is compared with the value computed here. The resident set size
 * and the number of open descriptors are read after a warm-up (the first
 * tenth of each loop) and at the end; growth beyond 4 MiB or any new
 * descriptor fails. Prints one "ok"/"not ok" line per loop from rank 0.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fd_count.h"

static int rank, size;

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Agree on a verdict and print it from rank 0; returns 1 on failure. */
static int verdict(int bad, long grew_kib, int new_fds, const char *what,
                   long n)
{
    int any = 0;
    long worst = 0;
    int fds = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&grew_kib, &worst, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&new_fds, &fds, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int failed = any || worst > 4096 || fds > 0;
    if (rank == 0)
        printf("%s - %ld %s: %s, RSS grew %ld KiB after warm-up (most on "
               "any rank), %d new descriptors\n",
               failed ? "not ok" : "ok", n, what,
               any ? "WRONG RESULTS" : "every result right", worst, fds);
    return failed;
}

static int small_loop(long n)
{
    int in[8], out[8], bad = 0;
    long base = 0;
    int fds = 0;
    for (long i = 0; i < n; i++) {
        if (i == n / 10) {
            base = rss_kib();
            fds = open_fds();
        }
        for (int k = 0; k < 8; k++)
            in[k] = (int)((i + k) % 1000) + rank;
        MPI_Allreduce(in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < 8; k++) {
            int want = (int)((i + k) % 1000) * size + size * (size - 1) / 2;
            bad |= out[k] != want;
        }
    }
    return verdict(bad, rss_kib() - base, open_fds() - fds,
                   "allreduces of 8 ints", n);
}

static int large_loop(long n)
{
    size_t count = 256 * 1024;
    float *in = malloc(count * sizeof(float));
    float *out = malloc(count * sizeof(float));
    int bad = 0;
    long base = 0;
    int fds = 0;
    for (long i = 0; i < n; i++) {
        if (i == n / 10) {
            base = rss_kib();
            fds = open_fds();
        }
        /* Small integers: float sums are exact in any order. */
        for (size_t k = 0; k < count; k++)
            in[k] = (float)((k + (size_t)i) % 64 + (size_t)rank);
        MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (size_t k = 0; k < count; k++) {
            float want = (float)((k + (size_t)i) % 64) * (float)size +
                         (float)(size * (size - 1) / 2);
            bad |= out[k] != want;
        }
    }
    free(in);
    free(out);
    return verdict(bad, rss_kib() - base, open_fds() - fds,
                   "allreduces of 1 MiB", n);
}

static int dup_loop(long n)
{
    int bad = 0;
    long base = 0;
    int fds = 0;
    for (long i = 0; i < n; i++) {
        if (i == n / 10) {
            base = rss_kib();
            fds = open_fds();
        }
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
        bad |= sum != size;
        MPI_Comm_free(&dup);
    }
    return verdict(bad, rss_kib() - base, open_fds() - fds,
                   "rounds of Comm_dup, Allreduce, Comm_free", n);
}

int main(int argc, char **argv)
{
    long small = argc > 1 ? atol(argv[1]) : 100000;
    long large = argc > 2 ? atol(argv[2]) : 1000;
    long dups = argc > 3 ? atol(argv[3]) : 1000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int failed = small_loop(small);
    failed |= large_loop(large);
    failed |= dup_loop(dups);
    MPI_Finalize();
    return failed;
}

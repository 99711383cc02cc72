/*
 * memcpy_bw - this machine's memory bound, to judge a large allreduce by.
 *
 * Copies a buffer of BYTES (default 16 MiB) with memcpy, REPEATS times
 * (default 50), and reports the median time and bandwidth, for one
 * copier and for as many copiers as there are processors (each on its
 * own buffers, all at once, as the ranks of an allreduce would be).
 *
 *   bench/memcpy_bw [BYTES [REPEATS]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct copier {
    size_t bytes;
    int repeats;
    double *times;          /* seconds per copy */
    pthread_barrier_t *start;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *copy_loop(void *arg)
{
    struct copier *c = arg;
    char *src = malloc(c->bytes), *dst = malloc(c->bytes);
    if (src == NULL || dst == NULL) {
        fprintf(stderr, "memcpy_bw: out of memory\n");
        exit(1);
    }
    memset(src, 1, c->bytes);
    memset(dst, 2, c->bytes);
    pthread_barrier_wait(c->start);
    for (int i = 0; i < c->repeats; i++) {
        double t = now();
        memcpy(dst, src, c->bytes);
        c->times[i] = now() - t;
        src[i % c->bytes] = (char)i;    /* keep the copies live */
    }
    free(src);
    free(dst);
    return NULL;
}

/* Median seconds per copy with n copiers at once (over all of them). */
static double run(int n, size_t bytes, int repeats)
{
    pthread_t threads[n];
    struct copier copiers[n];
    double *times = malloc(sizeof(double) * (size_t)n * (size_t)repeats);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        copiers[i] = (struct copier){ bytes, repeats,
                                      times + (size_t)i * (size_t)repeats,
                                      &start };
        pthread_create(&threads[i], NULL, copy_loop, &copiers[i]);
    }
    for (int i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    qsort(times, (size_t)n * (size_t)repeats, sizeof(double), by_value);
    double median = times[(size_t)n * (size_t)repeats / 2];
    free(times);
    return median;
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)16 << 20;
    int repeats = argc > 2 ? atoi(argv[2]) : 50;
    if (bytes == 0 || repeats <= 0) {
        fprintf(stderr, "usage: memcpy_bw [BYTES [REPEATS]]\n");
        return 2;
    }
    int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf("# memcpy of %zu bytes, median of %d\n", bytes, repeats);
    printf("# copiers  us/copy  GB/s/copier (read + write = 2x that)\n");
    for (int n = 1; n <= cpus; n = n < cpus && n * 2 > cpus ? cpus : n * 2) {
        double t = run(n, bytes, repeats);
        printf("%-9d  %7.1f  %6.2f\n", n, t * 1e6, (double)bytes / t / 1e9);
        if (n == cpus)
            break;
    }
    return 0;
}

/*
 * Collectives on CUDA device buffers through pdmpi's NCCL backend, for
 * a machine with GPUs (tests/gpu/check.sh builds and runs it).
 *
 *   cuda_check          correctness: prints "ok N - ..." / "not ok N - ..."
 *   cuda_check bench    device vs host allreduce latency and bandwidth
 *
 * One rank per GPU (the launcher's local rank picks it). Device data is
 * written and read with cudaMemcpy: device memory is not host-addressable.
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdmpi.h"

static int rank, size, passed, failed, numbered;

static void verdict(int ok_here, const char *what)
{
    int ok_all = 0;
    MPI_Allreduce(&ok_here, &ok_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    numbered++;
    if (ok_all)
        passed++;
    else
        failed++;
    if (rank == 0)
        printf("%s %d - %s\n", ok_all ? "ok" : "not ok", numbered, what);
    fflush(stdout);
}

static void *dev(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        fprintf(stderr, "cuda_check: cudaMalloc(%zu) failed\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static void to_dev(void *d, const void *h, size_t bytes)
{
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
}

static void to_host(void *h, const void *d, size_t bytes)
{
    cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
}

/* fp16 / bf16 of small integers: exact both ways. */
static uint16_t half_of(int v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    if (v == 0)
        return 0;
    return (uint16_t)(((x >> 16) & 0x8000) |
                      ((((x >> 23) & 0xff) - 127 + 15) << 10) |
                      ((x & 0x7fffff) >> 13));
}

static uint16_t bf16_of(int v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(x >> 16);
}

static void check_allreduce_float(size_t n)
{
    float *h = malloc(n * sizeof(float)), *d = dev(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h[i] = (float)(rank + 1) * (float)(i % 5);
    to_dev(d, h, n * sizeof(float));
    MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    to_host(h, d, n * sizeof(float));
    int ok = 1;
    float tri = (float)(size * (size + 1) / 2);
    for (size_t i = 0; i < n && ok; i++)
        ok = h[i] == tri * (float)(i % 5);
    char what[128];
    snprintf(what, sizeof(what), "allreduce MPI_FLOAT sum, %zu elements, device", n);
    verdict(ok, what);
    free(h);
    cudaFree(d);
}

static void check_allreduce_16(MPI_Datatype type, uint16_t (*enc)(int),
                               const char *name)
{
    size_t n = 4096;
    uint16_t *h = malloc(n * 2), *d = dev(n * 2);
    for (size_t i = 0; i < n; i++)
        h[i] = enc((int)(i % 4));
    to_dev(d, h, n * 2);
    MPI_Allreduce(MPI_IN_PLACE, d, (int)n, type, MPI_SUM, MPI_COMM_WORLD);
    to_host(h, d, n * 2);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = h[i] == enc(size * (int)(i % 4));
    char what[128];
    snprintf(what, sizeof(what), "allreduce %s sum on device", name);
    verdict(ok, what);
    free(h);
    cudaFree(d);
}

static void check_bcast_allgather_rsb(size_t n)
{
    int *h = malloc(n * (size_t)size * sizeof(int));
    int *d = dev(n * (size_t)size * sizeof(int));
    int *mine = dev(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        h[i] = rank == 0 ? (int)i : -1;
    to_dev(d, h, n * sizeof(int));
    MPI_Bcast(d, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
    to_host(h, d, n * sizeof(int));
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = h[i] == (int)i;
    verdict(ok, "bcast MPI_INT from rank 0 on device");

    for (size_t i = 0; i < n; i++)
        h[i] = rank * 1000 + (int)(i % 1000);
    to_dev(mine, h, n * sizeof(int));
    MPI_Allgather(mine, (int)n, MPI_INT, d, (int)n, MPI_INT, MPI_COMM_WORLD);
    to_host(h, d, n * (size_t)size * sizeof(int));
    ok = 1;
    for (int r = 0; r < size && ok; r++)
        for (size_t i = 0; i < n && ok; i++)
            ok = h[(size_t)r * n + i] == r * 1000 + (int)(i % 1000);
    verdict(ok, "allgather MPI_INT on device");

    for (size_t i = 0; i < n * (size_t)size; i++)
        h[i] = (int)(i % 11) + rank;
    to_dev(d, h, n * (size_t)size * sizeof(int));
    MPI_Reduce_scatter_block(d, mine, (int)n, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD);
    to_host(h, mine, n * sizeof(int));
    ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = h[i] == size * (int)(((size_t)rank * n + i) % 11) +
                         size * (size - 1) / 2;
    verdict(ok, "reduce_scatter_block MPI_INT sum on device");
    free(h);
    cudaFree(d);
    cudaFree(mine);
}

/* MPIX_OP_AVG on device buffers is ncclAvg. */
static void check_average(void)
{
    size_t n = 1024;
    float *h = malloc(n * sizeof(float)), *d = dev(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h[i] = (float)(2 * rank) + (float)(i % 3);
    to_dev(d, h, n * sizeof(float));
    MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_FLOAT, MPIX_OP_AVG,
                  MPI_COMM_WORLD);
    to_host(h, d, n * sizeof(float));
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = h[i] == (float)(size - 1) + (float)(i % 3);
    verdict(ok, "allreduce MPI_FLOAT MPIX_OP_AVG on device (ncclAvg)");
    free(h);
    cudaFree(d);
}

/* Host and device buffers in one job, and MAXLOC (staged) on device. */
static void check_mixed(void)
{
    double host = rank + 1.0, sum = 0;
    MPI_Allreduce(&host, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    verdict(sum == size * (size + 1) / 2.0, "host-buffer allreduce in the same job");
    struct { float v; int i; } p = { (float)rank, rank }, *d = dev(sizeof(p));
    to_dev(d, &p, sizeof(p));
    MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    to_host(&p, d, sizeof(p));
    verdict(p.i == size - 1, "MAXLOC on device memory (staged through the host)");
    cudaFree(d);
}

static double now(void)
{
    return MPI_Wtime();
}

static double time_allreduce(void *buf, size_t n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
    return (now() - t0) / iters * 1e6;
}

static void bench(void)
{
    if (rank == 0)
        printf("# allreduce MPI_FLOAT, %d rank(s): device (NCCL) vs host "
               "buffers\n# %10s %14s %14s %12s %12s\n", size, "bytes",
               "device us", "host us", "dev GB/s", "host GB/s");
    for (size_t bytes = 8; bytes <= ((size_t)64 << 20); bytes *= 8) {
        size_t n = bytes / sizeof(float);
        int iters = bytes <= (1 << 20) ? 200 : 20;
        void *d = dev(bytes), *h = calloc(1, bytes);
        time_allreduce(d, n, 5);
        double td = time_allreduce(d, n, iters);
        time_allreduce(h, n, 2);
        double th = time_allreduce(h, n, iters);
        if (rank == 0)
            printf("  %10zu %14.2f %14.2f %12.3f %12.3f\n", bytes, td, th,
                   bytes / td / 1e3, bytes / th / 1e3);
        cudaFree(d);
        free(h);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* The device pdmpi uses for this rank: PDMPI_DEVICE where set (the
     * check of two ranks on one GPU sets it alike on both), else the
     * local rank, as pdmpi picks it. */
    int local_rank = 0;
    pdmpi_world_info(NULL, 0, &local_rank, NULL, NULL);
    const char *device = getenv("PDMPI_DEVICE");
    cudaSetDevice(device != NULL ? atoi(device) : local_rank);
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        bench();
        MPI_Finalize();
        return 0;
    }
    verdict(MPIX_Query_cuda_support() == 1, "MPIX_Query_cuda_support() is 1");
    check_allreduce_float(1);
    check_allreduce_float(1 << 20);
    check_allreduce_16(MPIX_C_FLOAT16, half_of, "MPIX_C_FLOAT16");
    check_allreduce_16(MPIX_BFLOAT16, bf16_of, "MPIX_BFLOAT16");
    check_bcast_allgather_rsb(1);
    check_bcast_allgather_rsb(300007);
    check_mixed();
    check_average();
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}

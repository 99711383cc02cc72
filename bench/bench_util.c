/*
 * bench_util.c - option parsing, buffers, timing and printing shared by
 * the OSU-style benchmarks.
 *
 * Method of bench_main, as in the OSU micro-benchmarks: a barrier, then
 * for every iteration time the one call alone and end with a barrier
 * outside the timed region, so no rank starts the next call before all
 * finished the last. Each rank averages over its iterations; rank 0 then
 * reports the average, minimum and maximum of those averages over the
 * ranks.
 */
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

/* ------------------------------------------------------------------ */
/* Types                                                                */
/* ------------------------------------------------------------------ */

#define BENCH_MAX_TYPES 5

static struct bench_type bench_types[BENCH_MAX_TYPES];
static size_t bench_type_count;

/* Half types are predefined handles in pdmpi, not constants, so the
 * table is built at run time (after MPI_Init). */
static void init_types(void)
{
    size_t n = 0;
    bench_types[n++] = (struct bench_type){"float", "MPI_FLOAT", MPI_FLOAT,
                                           sizeof(float), BENCH_FLOAT};
    bench_types[n++] = (struct bench_type){"double", "MPI_DOUBLE", MPI_DOUBLE,
                                           sizeof(double), BENCH_DOUBLE};
    bench_types[n++] = (struct bench_type){"int", "MPI_INT", MPI_INT,
                                           sizeof(int), BENCH_INT};
#ifdef MPIX_C_FLOAT16
    bench_types[n++] = (struct bench_type){"fp16", "MPIX_C_FLOAT16",
                                           MPIX_C_FLOAT16, 2, BENCH_FP16};
#endif
#ifdef MPIX_BFLOAT16
    bench_types[n++] = (struct bench_type){"bf16", "MPIX_BFLOAT16",
                                           MPIX_BFLOAT16, 2, BENCH_BF16};
#endif
    bench_type_count = n;
}

/* Whether MPI_SUM on the type can be relied on (see bench_util.h). */
static bool type_reduces(const struct bench_type *type)
{
#if defined(MPICH_NUMVERSION) && !defined(PDMPI_VERSION_STRING) \
    && !defined(BENCH_HALF_REDUCTIONS)
    return type->kind != BENCH_FP16 && type->kind != BENCH_BF16;
#else
    (void)type;
    return true;
#endif
}

static uint32_t float_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    return x;
}

static float bits_float(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

/* float -> binary16, rounding to nearest even. */
static uint16_t half_from_float(float f)
{
    uint32_t x = float_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u)                      /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
    if (abs >= 0x477ff000u)                      /* >= 65520: overflows */
        return (uint16_t)(sign | 0x7c00u);
    int exp = (int)(abs >> 23) - 127;
    uint32_t mant = abs & 0x7fffffu;
    uint32_t q, rem, half;
    if (exp >= -14) {                            /* normal half */
        q = ((uint32_t)(exp + 15) << 10) | (mant >> 13);
        rem = mant & 0x1fffu;
        half = 0x1000u;
    } else {                                     /* subnormal half or 0 */
        int shift = -exp - 1;                    /* >= 14 */
        if (exp == -127 || shift > 24)
            return sign;
        mant |= 0x800000u;
        q = mant >> shift;
        rem = mant & ((1u << shift) - 1);
        half = 1u << (shift - 1);
    }
    if (rem > half || (rem == half && (q & 1)))
        q++;                                     /* may carry into exp */
    return (uint16_t)(sign | q);
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)mant / 16777216.0f;     /* mant * 2^-24, exact */
        return sign ? -v : v;
    }
    if (exp == 31)
        return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

static uint16_t bf16_from_float(float f)
{
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)         /* NaN stays NaN */
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float bf16_to_float(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

void bench_store(const struct bench_type *type, void *buf, size_t i, double v)
{
    switch (type->kind) {
    case BENCH_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case BENCH_DOUBLE:
        ((double *)buf)[i] = v;
        break;
    case BENCH_INT:
        ((int *)buf)[i] = (int)v;
        break;
    case BENCH_FP16:
        ((uint16_t *)buf)[i] = half_from_float((float)v);
        break;
    case BENCH_BF16:
        ((uint16_t *)buf)[i] = bf16_from_float((float)v);
        break;
    }
}

double bench_load(const struct bench_type *type, const void *buf, size_t i)
{
    switch (type->kind) {
    case BENCH_FLOAT:
        return ((const float *)buf)[i];
    case BENCH_DOUBLE:
        return ((const double *)buf)[i];
    case BENCH_INT:
        return ((const int *)buf)[i];
    case BENCH_FP16:
        return half_to_float(((const uint16_t *)buf)[i]);
    case BENCH_BF16:
        return bf16_to_float(((const uint16_t *)buf)[i]);
    }
    return 0.0;
}

double bench_exact_limit(const struct bench_type *type)
{
    switch (type->kind) {
    case BENCH_FLOAT:
        return 16777216.0;              /* 2^24 */
    case BENCH_DOUBLE:
        return 9007199254740992.0;      /* 2^53 */
    case BENCH_INT:
        return 2147483647.0;
    case BENCH_FP16:
        return 2048.0;                  /* 2^11 */
    case BENCH_BF16:
        return 256.0;                   /* 2^8 */
    }
    return 1.0;
}

int bench_value_span(const struct bench_type *type, int contributors, int cap)
{
    double span = bench_exact_limit(type) / (contributors > 0 ? contributors : 1);
    if (span > cap)
        span = cap;
    return span < 1 ? 1 : (int)span;
}

/* ------------------------------------------------------------------ */
/* Errors and buffers                                                   */
/* ------------------------------------------------------------------ */

void bench_check_rc(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "bench: %s failed: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#ifdef BENCH_WITH_CUDA
static void check_cuda(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return;
    fprintf(stderr, "bench: %s failed: %s\n", what, cudaGetErrorString(err));
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif

void bench_copy_to_device(enum bench_device device, void *dst,
                          const void *src, size_t bytes)
{
    if (bytes == 0 || dst == src)
        return;
#ifdef BENCH_WITH_CUDA
    if (device == BENCH_CUDA) {
        check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
                   "cudaMemcpy to the device");
        return;
    }
#else
    (void)device;
#endif
    memcpy(dst, src, bytes);
}

void bench_copy_from_device(enum bench_device device, void *dst,
                            const void *src, size_t bytes)
{
    if (bytes == 0 || dst == src)
        return;
#ifdef BENCH_WITH_CUDA
    if (device == BENCH_CUDA) {
        check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
                   "cudaMemcpy from the device");
        return;
    }
#else
    (void)device;
#endif
    memcpy(dst, src, bytes);
}

void bench_upload(const struct bench_call *c)
{
    bench_copy_to_device(c->device, c->send, c->host_send, c->send_bytes);
    bench_copy_to_device(c->device, c->recv, c->host_recv, c->recv_bytes);
}

void bench_download(const struct bench_call *c)
{
    bench_copy_from_device(c->device, c->host_send, c->send, c->send_bytes);
    bench_copy_from_device(c->device, c->host_recv, c->recv, c->recv_bytes);
}

static void *host_alloc(size_t bytes)
{
    void *buf = malloc(bytes);
    if (buf == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return buf;
}

/* Touches every page and leaves sane values (no NaNs or denormals that
 * could slow the reduction) before timing starts. */
static void fill_ones(const struct bench_type *type, void *buf, size_t bytes)
{
    memset(buf, 0, bytes);
    size_t count = bytes / type->size;
    for (size_t i = 0; i < count; i++)
        bench_store(type, buf, i, 1.0);
}

void *bench_alloc(const struct bench_options *o, size_t bytes)
{
    size_t len = bytes + 1;
    void *host = host_alloc(len);
    fill_ones(o->type, host, len);
    if (o->device == BENCH_HOST)
        return host;
#ifdef BENCH_WITH_CUDA
    void *dev = NULL;
    cudaError_t err = cudaMalloc(&dev, len);
    if (err != cudaSuccess) {
        fprintf(stderr, "bench: cudaMalloc of %zu bytes failed: %s\n", len,
                cudaGetErrorString(err));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bench_copy_to_device(BENCH_CUDA, dev, host, len);
    free(host);
    return dev;
#else
    free(host);
    return NULL;    /* not reached: -d cuda is refused without CUDA */
#endif
}

void bench_free(const struct bench_options *o, void *buf)
{
#ifdef BENCH_WITH_CUDA
    if (o->device == BENCH_CUDA) {
        cudaFree(buf);
        return;
    }
#else
    (void)o;
#endif
    free(buf);
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static void print_usage(const char *program, const char *note)
{
    fprintf(stderr,
            "usage: %s [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [-c] [-f]\n"
            "       [-T float|double|int|fp16|bf16] [-d host|cuda] | -h\n"
            "  -m  message sizes in bytes, doubling from MIN to MAX "
            "(default 8:16777216)\n"
            "  -i  timed iterations per size (default 1000 up to 8 KiB, "
            "100 up to 1 MiB,\n"
            "      20 up to 16 MiB, 5 above)\n"
            "  -x  untimed warm-up iterations (default a tenth of -i, "
            "at least 2)\n"
            "  -c  check the result of each size\n"
            "  -f  also print min and max latency and the iterations\n"
            "  -T  element type (default float; fp16 and bf16 where the MPI "
            "has them)\n"
            "  -d  where the buffers live: host (default) or cuda (device "
            "memory,\n"
            "      in builds with -DBENCH_WITH_CUDA)\n"
            "  -h  print this help\n",
            program);
    if (note != NULL)
        fprintf(stderr, "%s\n", note);
}

static bool parse_size(const char *text, size_t *value)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || text[0] == '-')
        return false;
    *value = (size_t)v;
    return true;
}

static bool parse_count(const char *text, int *value)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 0 || v > 100000000)
        return false;
    *value = (int)v;
    return true;
}

/* "-m MAX", "-m MIN:MAX", "-m MIN:" as in OSU. */
static bool parse_range(const char *text, struct bench_options *o)
{
    const char *colon = strchr(text, ':');
    if (colon == NULL)
        return parse_size(text, &o->max_bytes);

    char min_text[32];
    size_t min_len = (size_t)(colon - text);
    if (min_len == 0 || min_len >= sizeof(min_text))
        return false;
    memcpy(min_text, text, min_len);
    min_text[min_len] = '\0';
    if (!parse_size(min_text, &o->min_bytes))
        return false;
    return colon[1] == '\0' || parse_size(colon + 1, &o->max_bytes);
}

static const struct bench_type *type_named(const char *name)
{
    for (size_t k = 0; k < bench_type_count; k++)
        if (strcmp(bench_types[k].name, name) == 0)
            return &bench_types[k];
    return NULL;
}

/* Why parsing stopped, beyond a plain usage error. */
enum parse_stop { STOP_NONE, STOP_USAGE, STOP_NO_TYPE, STOP_NO_CUDA };

static enum parse_stop parse_args(int argc, char **argv,
                                  struct bench_options *o,
                                  const char **missing)
{
    *o = (struct bench_options){8, (size_t)16 << 20, 0, -1, false, false,
                                &bench_types[0], BENCH_HOST};
    for (int a = 1; a < argc; a++) {
        const char *flag = argv[a];
        if (strcmp(flag, "-c") == 0) {
            o->validate = true;
            continue;
        }
        if (strcmp(flag, "-f") == 0) {
            o->full = true;
            continue;
        }
        if (a + 1 >= argc)
            return STOP_USAGE;
        const char *value = argv[++a];
        bool ok;
        if (strcmp(flag, "-m") == 0) {
            ok = parse_range(value, o);
        } else if (strcmp(flag, "-i") == 0) {
            ok = parse_count(value, &o->iterations) && o->iterations > 0;
        } else if (strcmp(flag, "-x") == 0) {
            ok = parse_count(value, &o->warmup);
        } else if (strcmp(flag, "-T") == 0) {
            ok = (o->type = type_named(value)) != NULL;
            if (!ok && (strcmp(value, "fp16") == 0
                        || strcmp(value, "bf16") == 0)) {
                *missing = value;
                return STOP_NO_TYPE;
            }
        } else if (strcmp(flag, "-d") == 0) {
            if (strcmp(value, "host") == 0) {
                o->device = BENCH_HOST;
                ok = true;
            } else if (strcmp(value, "cuda") == 0) {
#ifdef BENCH_WITH_CUDA
                o->device = BENCH_CUDA;
                ok = true;
#else
                return STOP_NO_CUDA;
#endif
            } else {
                ok = false;
            }
        } else {
            ok = false;
        }
        if (!ok)
            return STOP_USAGE;
    }
    /* Counts are ints in MPI; keep a per-rank message within one. */
    if (o->min_bytes >= 1 && o->min_bytes <= o->max_bytes
        && o->max_bytes / o->type->size <= INT32_MAX)
        return STOP_NONE;
    return STOP_USAGE;
}

#ifdef BENCH_WITH_CUDA
/* GPU local rank modulo count; returns false (everywhere) if any rank
 * has none. */
static bool select_gpu(int rank)
{
    MPI_Comm local;
    int local_rank = 0, devices = 0, ok, all_ok = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                        MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);
    ok = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0
         && cudaSetDevice(local_rank % devices) == cudaSuccess;
    if (!ok)
        fprintf(stderr, "bench: rank %d found no usable CUDA device\n", rank);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok == 1;
}
#endif

int bench_parse_options(int argc, char **argv, struct bench_options *o,
                        const char *note)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    init_types();

    /* Every rank parses the same arguments, so all stop together. */
    if (argc == 2 && strcmp(argv[1], "-h") == 0) {
        if (rank == 0)
            print_usage(argv[0], note);
        return 0;
    }
    const char *missing = NULL;
    switch (parse_args(argc, argv, o, &missing)) {
    case STOP_NONE:
        break;
    case STOP_USAGE:
        if (rank == 0)
            print_usage(argv[0], note);
        return 2;
    case STOP_NO_TYPE:
        if (rank == 0)
            fprintf(stderr, "%s is not available in this MPI\n", missing);
        return 2;
    case STOP_NO_CUDA:
        if (rank == 0)
            fprintf(stderr, "this benchmark was built without CUDA "
                            "(-DBENCH_WITH_CUDA)\n");
        return 2;
    }
#ifdef BENCH_WITH_CUDA
    if (o->device == BENCH_CUDA && !select_gpu(rank))
        return 2;
#endif
    return -1;
}

/* Fewer iterations for big messages, so a full sweep stays short. */
int bench_iterations_for(const struct bench_options *o, size_t bytes)
{
    if (o->iterations > 0)
        return o->iterations;
    if (bytes <= 8192)
        return 1000;
    if (bytes <= ((size_t)1 << 20))
        return 100;
    if (bytes <= ((size_t)16 << 20))
        return 20;
    return 5;
}

int bench_warmup_for(const struct bench_options *o, int iterations)
{
    if (o->warmup >= 0)
        return o->warmup;
    return iterations / 10 > 2 ? iterations / 10 : 2;
}

/* At most `cap` iterations of each_s seconds fit in `budget` seconds. */
static int fit(int cap, double each_s, double budget)
{
    if (each_s <= 0 || budget / each_s >= cap)
        return cap;
    return (int)(budget / each_s);
}

int bench_warm_up(const struct bench_options *o, size_t bytes,
                  void (*step)(void *arg), void *arg)
{
    if (o->iterations > 0) {
        int warmup = bench_warmup_for(o, o->iterations);
        for (int i = 0; i < warmup; i++)
            step(arg);
        return o->iterations;
    }

    int iterations = bench_iterations_for(o, bytes);
    int target = bench_warmup_for(o, iterations);
    if (target < 1)
        target = 1;   /* one step to learn the pace */
    int done = 0, batch = 1;
    double mine = 0.0, elapsed = 0.0;
    for (;;) {
        double start = MPI_Wtime();
        for (int i = 0; i < batch; i++)
            step(arg);
        mine += MPI_Wtime() - start;
        done += batch;
        /* The slowest rank's clock decides, the same way everywhere. */
        MPI_Allreduce(&mine, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (done >= target || elapsed >= BENCH_SIZE_SECONDS / 4)
            break;
        batch = 2 * batch < target - done ? 2 * batch : target - done;
    }
    iterations = fit(iterations, elapsed / done, BENCH_SIZE_SECONDS);
    return iterations > 0 ? iterations : 1;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

#define BENCH_SIZE_WIDTH 10
#define BENCH_FIELD_WIDTH 18
#define ITER_WIDTH 12
#define BW_WIDTH 14

static void print_header(const struct bench_collective *coll,
                         const struct bench_options *o, int size)
{
    printf("# pdmpi-bench %s Latency Test\n", coll->title);
    printf("# Datatype: %s, ranks: %d%s\n", o->type->mpi_name, size,
           o->device == BENCH_CUDA ? ", buffers: cuda" : "");
    printf("# algbw = bytes / avg latency, busbw = %s (GB/s = 1e9 B/s)\n",
           coll->busbw_rule);
    printf("%-*s%*s", BENCH_SIZE_WIDTH, "# Size", BENCH_FIELD_WIDTH, "Avg Latency(us)");
    if (o->full)
        printf("%*s%*s%*s", BENCH_FIELD_WIDTH, "Min Latency(us)", BENCH_FIELD_WIDTH,
               "Max Latency(us)", ITER_WIDTH, "Iterations");
    printf("%*s%*s", BW_WIDTH, "algbw(GB/s)", BW_WIDTH, "busbw(GB/s)");
    if (o->validate)
        printf("%*s", ITER_WIDTH, "Validation");
    printf("\n");
    fflush(stdout);
}

struct size_result {
    size_t bytes;
    int iterations;
    double avg_us, min_us, max_us;   /* over ranks, of per-rank averages */
    bool valid;
};

static void print_row(const struct bench_collective *coll,
                      const struct bench_options *o, int size,
                      const struct size_result *r)
{
    double seconds = r->avg_us * 1e-6;
    double algbw = seconds > 0 ? coll->algbw_bytes(r->bytes, size) / seconds
                                     / 1e9
                               : 0.0;
    double busbw = algbw * coll->bus_factor(size);

    printf("%-*zu%*.2f", BENCH_SIZE_WIDTH, r->bytes, BENCH_FIELD_WIDTH, r->avg_us);
    if (o->full)
        printf("%*.2f%*.2f%*d", BENCH_FIELD_WIDTH, r->min_us, BENCH_FIELD_WIDTH,
               r->max_us, ITER_WIDTH, r->iterations);
    printf("%*.3f%*.3f", BW_WIDTH, algbw, BW_WIDTH, busbw);
    if (o->validate)
        printf("%*s", ITER_WIDTH, r->valid ? "Pass" : "Fail");
    printf("\n");
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Timing                                                               */
/* ------------------------------------------------------------------ */

/* This rank's average time of one call, in microseconds. */
static double time_collective(const struct bench_collective *coll,
                              const struct bench_call *call, int warmup,
                              int iterations)
{
    for (int i = 0; i < warmup; i++)
        bench_check_rc(coll->run(call), coll->title);
    MPI_Barrier(MPI_COMM_WORLD);

    double total = 0.0;
    for (int i = 0; i < iterations; i++) {
        double start = MPI_Wtime();
        int rc = coll->run(call);
        total += MPI_Wtime() - start;
        bench_check_rc(rc, coll->title);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return total * 1e6 / iterations;
}

/* Average, min and max of the per-rank averages, valid at rank 0. */
static void combine_over_ranks(double local_us, int size,
                               struct size_result *r)
{
    double sum = 0.0;
    MPI_Reduce(&local_us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_us, &r->min_us, 1, MPI_DOUBLE, MPI_MIN, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&local_us, &r->max_us, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    r->avg_us = sum / size;
}

static bool validate_everywhere(const struct bench_collective *coll,
                                const struct bench_call *call)
{
    int mine = coll->validate(call) ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

static size_t send_bytes_of(const struct bench_collective *coll, size_t bytes,
                            int size)
{
    return coll->send_bytes != NULL ? coll->send_bytes(bytes, size) : bytes;
}

int bench_main(int argc, char **argv, const struct bench_collective *coll)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct bench_options o;
    int status = bench_parse_options(argc, argv, &o, NULL);
    if (status >= 0) {
        MPI_Finalize();
        return status;
    }
    if (coll->reduces && !type_reduces(o.type)) {
        if (rank == 0)
            fprintf(stderr, "%s reductions are not available in this MPI "
                            "(build with -DBENCH_HALF_REDUCTIONS to try)\n",
                    o.type->name);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        print_header(coll, &o, size);

    size_t send_max = send_bytes_of(coll, o.max_bytes, size);
    size_t recv_max = coll->recv_bytes(o.max_bytes, size);
    struct bench_call call = {
        .send = bench_alloc(&o, send_max),
        .recv = bench_alloc(&o, recv_max),
        .type = o.type,
        .rank = rank,
        .size = size,
        .device = o.device,
    };
    if (o.device == BENCH_HOST) {
        call.host_send = call.send;
        call.host_recv = call.recv;
    } else {
        call.host_send = host_alloc(send_max + 1);
        call.host_recv = host_alloc(recv_max + 1);
    }

    bool all_valid = true;
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
        /* A message smaller than one element cannot be sent. */
        if (bytes < o.type->size)
            continue;
        struct size_result r = {bytes, bench_iterations_for(&o, bytes), 0, 0,
                                0, true};
        call.count = (int)(bytes / o.type->size);
        call.send_bytes = send_bytes_of(coll, bytes, size);
        call.recv_bytes = coll->recv_bytes(bytes, size);
        double local_us = time_collective(coll, &call,
                                          bench_warmup_for(&o, r.iterations),
                                          r.iterations);
        combine_over_ranks(local_us, size, &r);
        if (o.validate)
            r.valid = validate_everywhere(coll, &call);
        all_valid = all_valid && r.valid;
        if (rank == 0)
            print_row(coll, &o, size, &r);
        if (bytes > SIZE_MAX / 2)
            break;
    }

    if (o.device != BENCH_HOST) {
        free(call.host_send);
        free(call.host_recv);
    }
    bench_free(&o, call.send);
    bench_free(&o, call.recv);
    MPI_Finalize();
    return all_valid ? 0 : 1;
}

int bench_parse_pair_options(int argc, char **argv, struct bench_options *o,
                             const char *note)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int status = bench_parse_options(argc, argv, o, note);
    if (status < 0 && size != 2) {
        if (rank == 0)
            fprintf(stderr, "%s: this test needs exactly 2 ranks, not %d\n",
                    argv[0], size);
        status = 2;
    }
    return status;
}

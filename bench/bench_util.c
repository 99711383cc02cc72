/*
 * bench_util.c - option parsing, timing and printing shared by the
 * OSU-style benchmarks (osu_allreduce, osu_bcast, osu_allgather).
 *
 * Method, as in the OSU micro-benchmarks: a barrier, then for every
 * iteration time the one call alone and end with a barrier outside the
 * timed region, so no rank starts the next call before all finished the
 * last. Each rank averages over its iterations; rank 0 then reports the
 * average, minimum and maximum of those averages over the ranks.
 */
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bench_options {
    size_t min_bytes;
    size_t max_bytes;
    int iterations;        /* 0: chosen by message size */
    int warmup;            /* -1: chosen from the iterations */
    bool validate;
    bool full;
    const struct bench_type *type;
};

static struct bench_type bench_types[3];

static void init_types(void)
{
    const struct bench_type table[3] = {
        {"float", "MPI_FLOAT", MPI_FLOAT, sizeof(float)},
        {"double", "MPI_DOUBLE", MPI_DOUBLE, sizeof(double)},
        {"int", "MPI_INT", MPI_INT, sizeof(int)},
    };
    memcpy(bench_types, table, sizeof(table));
}

void bench_store(const struct bench_type *type, void *buf, size_t i, double v)
{
    if (type->mpi == MPI_FLOAT)
        ((float *)buf)[i] = (float)v;
    else if (type->mpi == MPI_DOUBLE)
        ((double *)buf)[i] = v;
    else
        ((int *)buf)[i] = (int)v;
}

double bench_load(const struct bench_type *type, const void *buf, size_t i)
{
    if (type->mpi == MPI_FLOAT)
        return ((const float *)buf)[i];
    if (type->mpi == MPI_DOUBLE)
        return ((const double *)buf)[i];
    return ((const int *)buf)[i];
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static void print_usage(const char *program)
{
    fprintf(stderr,
            "usage: %s [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [-c] "
            "[-T float|double|int] [-f] | -h\n"
            "  -m  message sizes in bytes, doubling from MIN to MAX "
            "(default 8:16777216)\n"
            "  -i  timed iterations per size (default 1000 up to 8 KiB, "
            "100 up to 1 MiB, 20 above)\n"
            "  -x  untimed warm-up iterations (default a tenth of -i, "
            "at least 2)\n"
            "  -c  check the result of each size\n"
            "  -T  element type (default float)\n"
            "  -f  also print min and max latency and the iterations\n",
            program);
}

static bool parse_size(const char *text, size_t *value)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || *end != '\0')
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
    for (size_t k = 0; k < sizeof(bench_types) / sizeof(bench_types[0]); k++)
        if (strcmp(bench_types[k].name, name) == 0)
            return &bench_types[k];
    return NULL;
}

static bool parse_options(int argc, char **argv, struct bench_options *o)
{
    *o = (struct bench_options){8, (size_t)16 << 20, 0, -1, false, false,
                                &bench_types[0]};
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
            return false;
        const char *value = argv[++a];
        bool ok;
        if (strcmp(flag, "-m") == 0)
            ok = parse_range(value, o);
        else if (strcmp(flag, "-i") == 0)
            ok = parse_count(value, &o->iterations) && o->iterations > 0;
        else if (strcmp(flag, "-x") == 0)
            ok = parse_count(value, &o->warmup);
        else if (strcmp(flag, "-T") == 0)
            ok = (o->type = type_named(value)) != NULL;
        else
            ok = false;
        if (!ok)
            return false;
    }
    /* Counts are ints in MPI; keep a per-rank message within one. */
    return o->min_bytes >= 1 && o->min_bytes <= o->max_bytes
           && o->max_bytes / o->type->size <= INT32_MAX;
}

/* Fewer iterations for big messages, so a full sweep stays short. */
static int iterations_for(const struct bench_options *o, size_t bytes)
{
    if (o->iterations > 0)
        return o->iterations;
    if (bytes <= 8192)
        return 1000;
    if (bytes <= ((size_t)1 << 20))
        return 100;
    return 20;
}

static int warmup_for(const struct bench_options *o, int iterations)
{
    if (o->warmup >= 0)
        return o->warmup;
    return iterations / 10 > 2 ? iterations / 10 : 2;
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
    printf("# Datatype: %s, ranks: %d\n", o->type->mpi_name, size);
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

static void check_rc(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "bench: %s failed: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* This rank's average time of one call, in microseconds. */
static double time_collective(const struct bench_collective *coll,
                              const struct bench_call *call, int warmup,
                              int iterations)
{
    for (int i = 0; i < warmup; i++)
        check_rc(coll->run(call), coll->title);
    MPI_Barrier(MPI_COMM_WORLD);

    double total = 0.0;
    for (int i = 0; i < iterations; i++) {
        double start = MPI_Wtime();
        int rc = coll->run(call);
        total += MPI_Wtime() - start;
        check_rc(rc, coll->title);
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

/* Touches every page and leaves sane values (no NaNs or denormals that
 * could slow the reduction) before timing starts. */
static void *alloc_filled(const struct bench_type *type, size_t bytes)
{
    size_t count = bytes / type->size;
    void *buf = malloc(bytes > 0 ? bytes : 1);
    if (buf == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 0, bytes);
    for (size_t i = 0; i < count; i++)
        bench_store(type, buf, i, 1.0);
    return buf;
}

int bench_main(int argc, char **argv, const struct bench_collective *coll)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    init_types();

    /* Every rank parses the same arguments, so all stop together. */
    struct bench_options o;
    if (argc == 2 && strcmp(argv[1], "-h") == 0) {
        if (rank == 0)
            print_usage(argv[0]);
        MPI_Finalize();
        return 0;
    }
    if (!parse_options(argc, argv, &o)) {
        if (rank == 0)
            print_usage(argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        print_header(coll, &o, size);

    struct bench_call call = {NULL, NULL, 0, o.type, rank, size};
    call.send = alloc_filled(o.type, o.max_bytes);
    call.recv = alloc_filled(o.type, coll->recv_bytes(o.max_bytes, size));

    bool all_valid = true;
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
        /* A message smaller than one element cannot be sent. */
        if (bytes < o.type->size)
            continue;
        struct size_result r = {bytes, iterations_for(&o, bytes), 0, 0, 0,
                                true};
        call.count = (int)(bytes / o.type->size);
        double local_us = time_collective(coll, &call,
                                          warmup_for(&o, r.iterations),
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

    free(call.send);
    free(call.recv);
    MPI_Finalize();
    return all_valid ? 0 : 1;
}

/*
 * bench_util.h - the shared part of the OSU-style benchmarks.
 *
 * A collective benchmark describes its collective in a struct
 * bench_collective and hands it to bench_main, which parses the options,
 * sizes the buffers, times each message size, optionally validates, and
 * prints the table. The point-to-point and barrier benchmarks, which do
 * not fit that table, use the pieces it is made of: bench_parse_options,
 * bench_iterations_for, bench_warmup_for, bench_alloc and friends.
 *
 * Everything here is plain MPI, so the same source builds with pdmpi,
 * with Open MPI's mpicc and with MPICH's mpicc. pdmpi's extensions
 * (half-precision types) come from pdmpi.h where it is found: define
 * PDMPI_BENCH to insist on it, BENCH_NO_PDMPI to build without it while
 * pdmpi's include directory is on the path -- which it is for every
 * compiler once a pdmpi package has put pdmpi.h in /usr/include, so a
 * build for another MPI there needs BENCH_NO_PDMPI (bench/compare passes
 * it).
 *
 * fp16 and bf16 come with MPIX_C_FLOAT16 and MPIX_BFLOAT16. MPICH
 * defines MPIX_C_FLOAT16 but sums it only when built with _Float16
 * support, and otherwise fails an assertion instead of returning an
 * error, so on MPICH the reduction benchmarks refuse fp16 unless built
 * with -DBENCH_HALF_REDUCTIONS; moving fp16 data works either way.
 */
#ifndef PDMPI_BENCH_UTIL_H
#define PDMPI_BENCH_UTIL_H

#include <mpi.h>

#if defined(PDMPI_BENCH)
#include "pdmpi.h"
#elif !defined(BENCH_NO_PDMPI) && defined(__has_include)
#if __has_include("pdmpi.h") && defined(OMPI_PREDEFINED_GLOBAL)
#include "pdmpi.h"
#endif
#endif

#include <stdbool.h>
#include <stddef.h>

/* Element types for -T; kind says how bench_store and bench_load see
 * the bytes. */
enum bench_kind {
    BENCH_FLOAT,
    BENCH_DOUBLE,
    BENCH_INT,
    BENCH_FP16,   /* IEEE 754 binary16 */
    BENCH_BF16,   /* bfloat16 */
};

/* The element type chosen with -T. */
struct bench_type {
    const char *name;     /* as given to -T: "float", "double", "int", ... */
    const char *mpi_name; /* "MPI_FLOAT" ... */
    MPI_Datatype mpi;
    size_t size;
    enum bench_kind kind;
};

/* Where the buffers live (-d). */
enum bench_device {
    BENCH_HOST,
    BENCH_CUDA,   /* only when built with -DBENCH_WITH_CUDA */
};

/* The parsed command line. */
struct bench_options {
    size_t min_bytes;
    size_t max_bytes;
    int iterations;        /* 0: chosen by message size */
    int warmup;            /* -1: chosen from the iterations */
    bool validate;         /* -c */
    bool full;             /* -f */
    const struct bench_type *type;
    enum bench_device device;
};

/* Everything one call of the collective needs. */
struct bench_call {
    void *send;                   /* the buffers MPI sees (device with -d cuda) */
    void *recv;
    void *host_send;              /* host copies for fill and check; the */
    void *host_recv;              /* same buffers as send/recv with -d host */
    size_t send_bytes;            /* bytes of send/recv in use at this size */
    size_t recv_bytes;
    int count;                    /* elements per rank */
    const struct bench_type *type;
    int rank;
    int size;
    enum bench_device device;
};

struct bench_collective {
    const char *title;            /* "Allreduce", as in the header */
    const char *busbw_rule;       /* how busbw is derived, for the header */
    /* Bytes of receive buffer for a message of `bytes` per rank. */
    size_t (*recv_bytes)(size_t bytes, int size);
    /* Bytes that count for algbw, and the busbw / algbw ratio. */
    double (*algbw_bytes)(size_t bytes, int size);
    double (*bus_factor)(int size);
    /* One call of the collective; returns its MPI error code. */
    int (*run)(const struct bench_call *call);
    /* Fills call->host_send / host_recv with known data, moves them with
     * bench_upload, runs once, fetches with bench_download and checks
     * this rank's result. Collective; returns the local verdict. */
    bool (*validate)(const struct bench_call *call);
    /* Bytes of send buffer for a message of `bytes`; NULL: `bytes`. */
    size_t (*send_bytes)(size_t bytes, int size);
    /* True for reductions: -T fp16/bf16 then also needs MPI_SUM on them. */
    bool reduces;
};

int bench_main(int argc, char **argv, const struct bench_collective *coll);

/* ------------------------------------------------------------------ */
/* Pieces of bench_main, for benchmarks with their own loop             */
/* ------------------------------------------------------------------ */

/*
 * Parses the options every benchmark takes (-m -i -x -c -f -T -d -h) on
 * every rank; MPI must be initialized. Returns -1 to go on, else the exit
 * status to finish with after MPI_Finalize: 0 after -h, 2 after a bad
 * option, a type this MPI lacks or a device this build lacks (rank 0 has
 * said why). note, if not NULL, is printed below the option list of -h.
 * With -d cuda it also selects this rank's GPU (local rank modulo count).
 */
int bench_parse_options(int argc, char **argv, struct bench_options *o,
                        const char *note);

/* bench_parse_options for the point-to-point tests, which also need
 * exactly 2 ranks (else rank 0 says so and the status is 2). */
int bench_parse_pair_options(int argc, char **argv, struct bench_options *o,
                             const char *note);
/* Timed iterations for a message of `bytes`: -i, else 1000 up to 8 KiB,
 * 100 up to 1 MiB, 20 up to 16 MiB, 5 above (a full sweep to 64 MiB
 * stays under a minute). */
int bench_iterations_for(const struct bench_options *o, size_t bytes);
/* Warm-up iterations: -x, else a tenth of `iterations`, at least 2. */
int bench_warmup_for(const struct bench_options *o, int iterations);

/*
 * Warm-up with a time cap, for loops whose one step (a round trip, a
 * window) may be slow: runs step(arg) in doubling batches until the
 * warm-up (-x, else bench_warmup_for of the default iterations, at least
 * 1) has run or a quarter of BENCH_SIZE_SECONDS has passed, agreeing on
 * that over MPI_COMM_WORLD, and returns the default iterations cut to
 * what fits in BENCH_SIZE_SECONDS at the pace seen (at least 1). With -i
 * it runs bench_warmup_for steps and returns -i. Collective.
 */
#define BENCH_SIZE_SECONDS 1.0
int bench_warm_up(const struct bench_options *o, size_t bytes,
                  void (*step)(void *arg), void *arg);

/* A buffer of `bytes` on the -d device (plus one spare byte), holding
 * ones of the -T type; aborts if out of memory. */
void *bench_alloc(const struct bench_options *o, size_t bytes);
void bench_free(const struct bench_options *o, void *buf);
/* Host <-> -d device copies (plain memcpy with -d host). */
void bench_copy_to_device(enum bench_device device, void *dst,
                          const void *src, size_t bytes);
void bench_copy_from_device(enum bench_device device, void *dst,
                            const void *src, size_t bytes);
/* Copy call->host_send/host_recv to call->send/recv (send_bytes,
 * recv_bytes of them), and back. Nothing to do with -d host. */
void bench_upload(const struct bench_call *call);
void bench_download(const struct bench_call *call);

/* Aborts with the MPI error text if rc is not MPI_SUCCESS. */
void bench_check_rc(int rc, const char *what);

/* Element access by the -T type, for the fill and check code. */
void bench_store(const struct bench_type *type, void *buf, size_t i, double v);
double bench_load(const struct bench_type *type, const void *buf, size_t i);
/* The largest integer up to which every integer is exact in the type:
 * 2^24 for float, 2048 for fp16, 256 for bf16, ... */
double bench_exact_limit(const struct bench_type *type);
/* How many distinct small values 1..span a pattern may use when
 * `contributors` of them are summed: at most `cap`, at least 1, with
 * every partial sum exact in the type. */
int bench_value_span(const struct bench_type *type, int contributors, int cap);

#endif /* PDMPI_BENCH_UTIL_H */

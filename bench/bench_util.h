/*
 * bench_util.h - the shared part of the OSU-style collective benchmarks.
 *
 * A benchmark describes its collective in a struct bench_collective and
 * hands it to bench_main, which parses the options, sizes the buffers,
 * times each message size, optionally validates, and prints the table.
 * Everything here is plain MPI, so the same source builds with Open MPI's
 * mpicc and with pdmpi.
 */
#ifndef PDMPI_BENCH_UTIL_H
#define PDMPI_BENCH_UTIL_H

#include <mpi.h>

#include <stdbool.h>
#include <stddef.h>

/* The element type chosen with -T. */
struct bench_type {
    const char *name;     /* as given to -T: "float", "double", "int" */
    const char *mpi_name; /* "MPI_FLOAT" ... */
    MPI_Datatype mpi;
    size_t size;
};

/* Everything one call of the collective needs. */
struct bench_call {
    void *send;
    void *recv;
    int count;                    /* elements per rank */
    const struct bench_type *type;
    int rank;
    int size;
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
    /* Fills the buffers with known data, runs once, checks this rank's
     * result. Collective; returns the local verdict. */
    bool (*validate)(const struct bench_call *call);
};

int bench_main(int argc, char **argv, const struct bench_collective *coll);

/* Element access by the -T type, for the fill and check code. Values are
 * small integers, exact in every type. */
void bench_store(const struct bench_type *type, void *buf, size_t i, double v);
double bench_load(const struct bench_type *type, const void *buf, size_t i);

#endif /* PDMPI_BENCH_UTIL_H */

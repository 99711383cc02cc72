/*
 * tap_harness.h - verdicts and TAP-like output shared by the conformance
 * programs (plain MPI: they build with Open MPI's mpicc too, with
 * tap_harness.c alongside).
 *
 * Each check keeps a local verdict per rank; report() agrees on it over
 * MPI_COMM_WORLD and rank 0 prints "ok N - ..." or "not ok N - ... (rank
 * R: detail)", explained by the lowest failing rank. finish() prints the
 * plan line before MPI_Finalize and returns the exit status.
 */
#ifndef PD_TESTS_TAP_HARNESS_H
#define PD_TESTS_TAP_HARNESS_H

#include <mpi.h>

#include <stdbool.h>

#define DETAIL_LEN 256

/* The local outcome of one check: an empty detail means it passed. Only
 * the first problem is kept; it is the one worth reading. */
struct verdict {
    char detail[DETAIL_LEN];
};

/* Where a check stands with the library under test. */
enum expectation {
    EXPECT_PASS,   /* an ordinary check */
    EXPECT_TODO    /* a known deviation: reported, does not fail the run */
};

extern int world_rank, world_size;
extern int checks_run, checks_failed;
extern bool on_open_mpi;

__attribute__((format(printf, 2, 3)))
void fail(struct verdict *v, const char *fmt, ...);
/* Fail with the call's name and error string unless rc is MPI_SUCCESS. */
void check_rc(struct verdict *v, const char *call, int rc);
/* Collective over MPI_COMM_WORLD. */
void report_as(enum expectation expect, const char *why,
               const struct verdict *v, const char *description);
__attribute__((format(printf, 2, 3)))
void report(const struct verdict *v, const char *fmt, ...);
/* A check that passed or not, with no detail to add. Collective. */
__attribute__((format(printf, 2, 3)))
void report_bool(bool passed, const char *fmt, ...);
/* Not attempted; counts as passed. Not collective. */
__attribute__((format(printf, 2, 3)))
void report_skip(const char *why, const char *fmt, ...);
bool library_is_open_mpi(void);
/* The error class of an MPI return code (-1 if MPI_Error_class fails). */
int error_class(int rc);
/* Call before MPI_Finalize; returns the exit status. */
int finish(void);

#endif

/*
 * Per-entry-point call counters of the test doubles. With the variable
 * NCCL_DOUBLE_COUNTS=PATH set, each process also keeps them in a file of
 * its own, PATH.<library>.<pid>, mapped shared and updated on every call
 * ("name count" lines of fixed width), so a test can sum them over every
 * process it ran -- including processes that ended with _exit or a
 * signal, which run no exit handler.
 */
#ifndef PD_TESTS_CCL_DOUBLE_COUNTS_H
#define PD_TESTS_CCL_DOUBLE_COUNTS_H

#include <pthread.h>
#include <stdatomic.h>

struct ccl_counts {
    const char *library;            /* "nccl", "cudart": in the file name */
    const char *const *names;       /* the entry points */
    int n;
    _Atomic long *calls;            /* n counters */
    pthread_mutex_t lock;           /* the file's lines */
    int state;                      /* 0: not tried, 1: mapped, -1: none */
    char *map;
};

#define CCL_COUNTS_INIT(lib, names, n, calls) \
    { lib, names, n, calls, PTHREAD_MUTEX_INITIALIZER, 0, NULL }

/* One more call of entry point e (its index in names). */
void ccl_count(struct ccl_counts *c, int e);
/* Calls of the named entry point in this process; -1 for no such name. */
long ccl_count_of(struct ccl_counts *c, const char *name);

#endif

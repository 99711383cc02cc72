/*
 * Which algorithm a host collective asks its backend for, by collective,
 * communicator size and message size: one table per collective, measured
 * (see algo.c); allreduce's is overridable with PDMPI_ALGO_ALLREDUCE.
 */
#ifndef PD_CORE_ALGO_H
#define PD_CORE_ALGO_H

#include <stddef.h>

#include "backend/backend.h"

enum pd_algo_coll {
    PD_ALGO_FOR_ALLREDUCE,
    PD_ALGO_FOR_BCAST,
    PD_ALGO_FOR_ALLGATHER,
    PD_ALGO_COLLS
};

/* Parse an algorithm's name for coll ("auto" = DEFAULT); -1 if it names
 * no algorithm of that collective. */
int pd_algo_parse(enum pd_algo_coll coll, const char *text,
                  enum pd_algo *algo);

/* "auto, ring, ..." : the values pd_algo_parse takes for coll. */
void pd_algo_choices(enum pd_algo_coll coll, char *buf, size_t len);

const char *pd_algo_name(enum pd_algo algo);

/* The algorithm for coll among size ranks with bytes per rank: the
 * variable's if set, else the measured table's, else gloo's default for
 * that collective (ring, binomial, ring). */
enum pd_algo pd_algo_choose(enum pd_algo_coll coll, int size, size_t bytes);

#endif

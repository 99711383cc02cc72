/*
 * Which algorithm a host allreduce asks its backend for, by communicator
 * size and message size: one table, measured (see algo.c), overridable
 * with PDMPI_ALGO_ALLREDUCE. Broadcast and allgather have one algorithm
 * each in gloo's option API (PD_ALGO_BINOMIAL, PD_ALGO_RING).
 */
#ifndef PD_CORE_ALGO_H
#define PD_CORE_ALGO_H

#include <stddef.h>

#include "backend/backend.h"

/* Parse PDMPI_ALGO_ALLREDUCE's value (auto | ring | bcube); -1 if bad. */
int pd_algo_parse(const char *text, enum pd_algo *algo);
const char *pd_algo_name(enum pd_algo algo);

/* The allreduce algorithm for size ranks and bytes per rank: the
 * variable's if set, else the measured table's, else gloo's ring. */
enum pd_algo pd_algo_allreduce(int size, size_t bytes);

#endif

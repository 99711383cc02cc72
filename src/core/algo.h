/*
 * Which algorithm a host allreduce asks its backend for: the measured
 * default (see algo.c), overridable with PDMPI_ALGO_ALLREDUCE. Broadcast
 * and allgather run pipelined (a chain, a ring); gloo's own (binomial,
 * ring) stay in the backend for callers that name them.
 */
#ifndef PD_CORE_ALGO_H
#define PD_CORE_ALGO_H

#include <stddef.h>

#include "backend/backend.h"

/* Parse PDMPI_ALGO_ALLREDUCE's value (auto | pipelined | ring | bcube);
 * -1 if bad. */
int pd_algo_parse(const char *text, enum pd_algo *algo);
const char *pd_algo_name(enum pd_algo algo);

/* The allreduce algorithm for size ranks and bytes per rank: the
 * variable's if set, else the pipelined ring (fastest at every size
 * measured). */
enum pd_algo pd_algo_allreduce(int size, size_t bytes);

#endif

/*
 * Scratch memory for data in flight: the packed form of a non-contiguous
 * datatype's buffer, taken and given back once per call. A fresh
 * allocation of megabytes is fresh pages, and the first touch of each
 * costs a page fault -- on a virtual machine several times the copy it
 * precedes (an 8 MiB allreduce of a vector type spent three quarters of
 * its time faulting). Large buffers given back are therefore kept, up to
 * PDMPI_SCRATCH_KEEP bytes in all, for the next call to take; small ones
 * come from and go to malloc, which serves them from pages it holds.
 */
#ifndef PD_CORE_SCRATCH_H
#define PD_CORE_SCRATCH_H

#include <stddef.h>

/* Buffers of at least this many bytes are kept when given back. */
#define PD_SCRATCH_MIN ((size_t)64 << 10)
/* PDMPI_SCRATCH_KEEP's default: bytes kept in all. */
#define PD_DEFAULT_SCRATCH_KEEP ((size_t)64 << 20)

/* bytes of scratch (64-byte aligned), a kept buffer where one is large
 * enough; NULL: out of memory. */
void *pd_scratch_take(size_t bytes);
/* p (from pd_scratch_take, or NULL) given back: kept while the kept
 * buffers stay within the limit, freed otherwise. */
void pd_scratch_give(void *p);
/* Bytes kept in all (what pd_scratch_give may keep) from now on; a
 * smaller limit frees what no longer fits. */
void pd_scratch_limit(size_t bytes);
/* Every kept buffer freed (MPI_Finalize). */
void pd_scratch_release(void);

#endif

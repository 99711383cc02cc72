/*
 * What the CUDA runtime double (cudart_double.c) exports beside the
 * runtime's own entry points, for the NCCL double and the tests.
 */
#ifndef PD_TESTS_CUDART_DOUBLE_H
#define PD_TESTS_CUDART_DOUBLE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

/* The memory type (enum cudaMemoryType) of bytes at ptr, its device and
 * where the double may read and write them (*view); -1 when they run past
 * the end of their allocation. Unregistered host memory is its own view. */
int cudart_double_view(const void *ptr, size_t bytes, int *device,
                       void **view);

/* Queue fn(arg) on stream, after everything queued before (the default
 * stream 0 runs it at once); -1 for a stream of no runtime. */
int cudart_double_enqueue(cudaStream_t stream, void (*fn)(void *),
                          void *arg);

/* Allocations not freed yet, and how often an entry point was called
 * (-1: no such entry point). */
long cudart_double_live_allocations(void);
long cudart_double_calls(const char *name);

#endif

/*
 * Copies into the segment that bypass this core's cache.
 *
 * A line of the segment that another rank read last time is in that
 * rank's cache; an ordinary store must first take it back from there, a
 * round trip to the other core per line. Non-temporal stores write whole
 * lines to memory without reading them, and the reader then finds them
 * in memory. Worth it when the ranks' cores do not share a cache, for
 * pieces of PDMPI_SHM_STREAM bytes and more (default 128 KiB): np 2 on
 * this project's 2-core test machine, allreduce of 1 MiB 142 -> 117 us
 * and of 16 MiB 2.6 -> 2.2 ms; no gain below 128 KiB. Not on an
 * oversubscribed host, where the reader often runs on the writer's core
 * (np 3 on 2 cores: 10-20% slower from 256 KiB to 2 MiB).
 */
#include <string.h>

#include "backend/shm/shm_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>

/* Copy n bytes from src to dst with non-temporal stores and, when also
 * is not NULL, to also with ordinary ones: src is read once. Inlined
 * into each caller below, so the test of also leaves the loop. */
static inline __attribute__((always_inline)) void
pd_stream_lines(unsigned char *d, unsigned char *also, const unsigned char *s,
                size_t n)
{
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    if (also != NULL) {
        memcpy(also, s, head);
        also += head;
    }
    d += head;
    s += head;
    n -= head;
    size_t k = 0;
    for (; k + 64 <= n; k += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + k));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + k + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + k + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + k + 48));
        _mm_stream_si128((__m128i *)(d + k), a);
        _mm_stream_si128((__m128i *)(d + k + 16), b);
        _mm_stream_si128((__m128i *)(d + k + 32), c);
        _mm_stream_si128((__m128i *)(d + k + 48), e);
        if (also != NULL) {
            _mm_storeu_si128((__m128i *)(also + k), a);
            _mm_storeu_si128((__m128i *)(also + k + 16), b);
            _mm_storeu_si128((__m128i *)(also + k + 32), c);
            _mm_storeu_si128((__m128i *)(also + k + 48), e);
        }
    }
    memcpy(d + k, s + k, n - k);
    if (also != NULL)
        memcpy(also + k, s + k, n - k);
}

void pd_shm_stream(void *dst, const void *src, size_t n)
{
    pd_stream_lines(dst, NULL, src, n);
}

void pd_shm_stream_twice(void *dst, void *also, const void *src, size_t n)
{
    pd_stream_lines(dst, also, src, n);
}

void pd_shm_stream_done(void)
{
    _mm_sfence();
}

#else

void pd_shm_stream(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void pd_shm_stream_twice(void *dst, void *also, const void *src, size_t n)
{
    memcpy(dst, src, n);
    memcpy(also, src, n);
}

void pd_shm_stream_done(void)
{
}

#endif

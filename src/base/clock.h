/*
 * The monotonic clock: intervals and deadlines that never jump with the
 * wall clock. Inline because the shared-memory path reads it in its spin
 * loops.
 */
#ifndef PD_BASE_CLOCK_H
#define PD_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t pd_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds, the unit of every timeout and deadline. */
static inline int64_t pd_clock_ms(void)
{
    return pd_clock_ns() / 1000000;
}

/* The wall-clock time ms from now, as pthread_cond_timedwait takes it
 * for a condition variable on its default clock. */
static inline struct timespec pd_clock_realtime_after(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ms * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

#endif

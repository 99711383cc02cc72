/*
 * A lock for sections of a few hundred nanoseconds that are rarely
 * contended: taken with one atomic exchange, released with a plain
 * release store -- no locked instruction on the way out, so a thread
 * that has just written to cache lines another core holds (a shared-
 * memory queue) does not wait for them before it goes on, as it would
 * on pthread_mutex_unlock. A waiter yields the processor.
 */
#ifndef PD_BASE_SPIN_LOCK_H
#define PD_BASE_SPIN_LOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    atomic_bool held;
} pd_spin_lock;

#define PD_SPIN_LOCK_INIT { false }

static inline bool pd_spin_trylock(pd_spin_lock *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, true, memory_order_acquire);
}

static inline void pd_spin_lock_take(pd_spin_lock *l)
{
    while (!pd_spin_trylock(l))
        sched_yield();
}

static inline void pd_spin_unlock(pd_spin_lock *l)
{
    atomic_store_explicit(&l->held, false, memory_order_release);
}

#endif

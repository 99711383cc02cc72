/*
 * Where the ranks of a segment run: whether they have a processor each,
 * and moving a rank off a processor it shares.
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdbool.h>
#include <unistd.h>

#include "backend/shm/shm_internal.h"

/* At most one move per this many nanoseconds (a move costs two system
 * calls and a migration; more often would only chase a busy neighbour). */
#define PD_SHM_MOVE_GAP_NS 1000000

/*
 * Processors the ranks may run on together: the union of their
 * affinities, not this rank's own -- a launcher that binds each rank to a
 * core of its own (as Open MPI's mpirun does at np 2) gives every rank
 * one processor, and the ranks still have one each. A rank whose
 * affinity cannot be read (another pid namespace) adds nothing beyond
 * this rank's.
 */
int pd_shm_processors(int size, const int *pids)
{
    cpu_set_t all, one;
    CPU_ZERO(&all);
    if (sched_getaffinity(0, sizeof(all), &all) != 0)
        return (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int r = 0; r < size; r++) {
        if (pids[r] > 0 && sched_getaffinity(pids[r], sizeof(one), &one) == 0)
            CPU_OR(&all, &all, &one);
    }
    return CPU_COUNT(&all);
}

void pd_shm_describe(const struct pd_shm_comm *c, char *buf, size_t len)
{
    char stream[64] = "no non-temporal copies";
    if (c->stream != 0)
        snprintf(stream, sizeof(stream), "non-temporal copies from %zu bytes",
                 c->stream);
    char floor[32] = "";
    if (c->spin_floor_ns != 0)
        snprintf(floor, sizeof(floor), " (at least %lld)",
                 (long long)(c->spin_floor_ns / 1000));
    snprintf(buf, len, "%d ranks on %d processor%s%s, %zu-byte chunks, "
             "spin %ld us%s, %s", c->size, c->processors,
             c->processors == 1 ? "" : "s",
             c->oversubscribed ? " (oversubscribed)" : "", c->chunk, c->spin,
             floor, stream);
}

int pd_shm_note_cpu(struct pd_shm_comm *c)
{
    int cpu = sched_getcpu();
    atomic_store_explicit(&pd_shm_line(c, c->rank)->cpu, cpu,
                          memory_order_relaxed);
    return cpu;
}

/* Tasks running or ready to run on this machine now, counting this one
 * (the kernel's count in /proc/loadavg); INT_MAX when unknown. */
static int pd_running_tasks(void)
{
    char buf[128];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return INT_MAX;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    int running;
    if (n <= 0)
        return INT_MAX;
    buf[n] = '\0';
    if (sscanf(buf, "%*f %*f %*f %d/", &running) != 1)
        return INT_MAX;
    return running;
}

/*
 * Two ranks on one processor, with another idle, take turns at every
 * wait: the scheduler keeps waking each where the other runs (seen here
 * for up to 30 ms after start-up, 10 us a wait instead of 0.5). The
 * higher rank moves (only one, or both would land together again), and
 * only when no more tasks want to run than it has processors: beside a
 * busy program a move would put the rank next to that one, far slower
 * than sharing with the other rank (np 2 with a busy loop on a 2-core
 * machine: 2 ms a call, against 7 us staying). It takes its processor
 * out of its affinity -- the kernel migrates a thread at once when its
 * processor leaves its mask -- and puts it back, which leaves the thread
 * where it went.
 */
void pd_shm_leave_cpu(struct pd_shm_comm *c)
{
    int cpu = pd_shm_note_cpu(c);
    int64_t now = pd_clock_ns();
    if (cpu < 0 || cpu >= CPU_SETSIZE ||
        (c->moved_ns != 0 && now - c->moved_ns < PD_SHM_MOVE_GAP_NS))
        return;
    bool shared = false;
    for (int r = 0; r < c->rank && !shared; r++)
        shared = atomic_load_explicit(&pd_shm_line(c, r)->cpu,
                                      memory_order_relaxed) == cpu;
    if (!shared)
        return;
    c->moved_ns = now;
    cpu_set_t mask, away;
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0 ||
        !CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2 ||
        pd_running_tasks() > CPU_COUNT(&mask))
        return;
    away = mask;
    CPU_CLR(cpu, &away);
    if (sched_setaffinity(0, sizeof(away), &away) == 0) {
        sched_setaffinity(0, sizeof(mask), &mask);
        /* The budget ran out while the two shared a processor; with one
         * each, spinning pays again. */
        c->spin_ns = (int64_t)c->spin * 1000;
    }
    pd_shm_note_cpu(c);
}

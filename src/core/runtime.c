/* The process state between MPI_Init and MPI_Finalize, and ending it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/shm_name.h"
#include "core/runtime.h"

struct pd_runtime pd_rt;

void pd_runtime_note_peer_lost(void)
{
    __atomic_store_n(&pd_rt.peer_lost, 1, __ATOMIC_RELEASE);
}

/* How long a rank that only lost a peer waits before exiting. */
#define PD_SECONDARY_EXIT_DELAY_US 500000

bool pd_runtime_local_rank_gone(int w)
{
    const struct pd_world *world = &pd_rt.world;
    return w != world->rank && world->pid_of != NULL &&
           world->node_of != NULL &&
           world->node_of[w] == world->node_of[world->rank] &&
           pd_process_gone((pid_t)world->pid_of[w]);
}

_Noreturn void pd_runtime_abort_job(int code, const char *msg)
{
    fflush(stdout);
    fflush(stderr);
    /* Under mpirun and mpiexec, the process manager ends every rank with
     * this code; elsewhere the exit status carries it to the launcher. */
    if (__atomic_load_n(&pd_rt.state, __ATOMIC_ACQUIRE) == PD_RT_ACTIVE)
        pd_world_abort(&pd_rt.world, code, msg);
    pd_runtime_abort(code);
}

_Noreturn void pd_runtime_abort(int code)
{
    fflush(stdout);
    fflush(stderr);
    /* When one rank dies, its peers see their connections close within
     * a millisecond and fail too. The launcher reports the first failure
     * it reaps, so the peers hold back briefly and let the rank that
     * really failed be the one reported (the launcher stops them in the
     * meantime anyway). */
    if (__atomic_load_n(&pd_rt.peer_lost, __ATOMIC_ACQUIRE))
        usleep(PD_SECONDARY_EXIT_DELAY_US);
    /* The launcher sees this exit status and takes the other ranks down;
     * exit statuses are 8 bits, so keep a non-zero code non-zero. */
    if (code != 0 && (code & 0xff) == 0)
        code = 1;
    _exit(code & 0xff);
}

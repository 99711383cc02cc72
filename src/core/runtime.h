/* Process-wide state between MPI_Init and MPI_Finalize. */
#ifndef PD_CORE_RUNTIME_H
#define PD_CORE_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>

#include "boot/world.h"
#include "core/config.h"

enum pd_runtime_state {
    PD_RT_UNINITIALIZED = 0,
    PD_RT_ACTIVE,
    PD_RT_FINALIZED,
};

struct pd_runtime {
    int state;                      /* enum pd_runtime_state (atomic) */
    int thread_level;               /* provided MPI_THREAD_* level */
    pthread_t main_thread;
    struct pd_world world;
    struct pd_config config;
    struct pd_store_client *store;  /* NULL for a one-process world */
    char host[256];                 /* this process's host name */
    int peer_lost;                  /* a backend lost a peer (atomic) */
};

extern struct pd_runtime pd_rt;

static inline int pd_runtime_state(void)
{
    return __atomic_load_n(&pd_rt.state, __ATOMIC_ACQUIRE);
}

/* Whether world rank w is another process of this host that has ended
 * (its pid is gone or a zombie); false where pids are not known. */
bool pd_runtime_local_rank_gone(int w);

/* The first rank of comm on this host whose process has ended (the
 * calling rank aside), or -1. */
struct ompi_communicator_t;
int pd_runtime_comm_rank_gone(const struct ompi_communicator_t *comm);

/* Whether world rank w, a process of another host, has ended: it holds
 * no connection to the job's store any more, or the store itself is gone
 * (refused: its host's launcher or rank ended). Asks the store at most
 * every PD_REMOTE_CHECK_MS (false in between); why says what was found. */
#define PD_REMOTE_CHECK_MS 500
bool pd_runtime_remote_rank_gone(int w, char *why, size_t len);

/* Record that a peer's connection was lost: this rank's own failure is
 * then a consequence, not the cause (see pd_runtime_abort). */
void pd_runtime_note_peer_lost(void);

/* End this process -- and, through the launcher, the job -- with code. */
_Noreturn void pd_runtime_abort(int code);

/* MPI_Abort: ask the process manager (mpirun, mpiexec) to end every
 * rank with code, then end this process. */
_Noreturn void pd_runtime_abort_job(int code, const char *msg);

#endif

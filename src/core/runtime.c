/* The process state between MPI_Init and MPI_Finalize, and ending it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "boot/shm_name.h"
#include "boot/store.h"
#include "core/comm.h"
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

int pd_runtime_comm_rank_gone(const struct ompi_communicator_t *comm)
{
    for (int r = 0; r < comm->size; r++)
        if (pd_runtime_local_rank_gone(pd_comm_world_rank(comm, r)))
            return r;
    return -1;
}

/* The connection remote checks use: their own, so that they never wait
 * behind another thread's request on the main one. */
static pthread_mutex_t pd_remote_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pd_store_client *pd_remote_store;
static int64_t pd_remote_last_ms;

bool pd_runtime_remote_rank_gone(int w, char *why, size_t len)
{
    const struct pd_world *world = &pd_rt.world;
    if (w == world->rank || pd_rt.store == NULL || world->node_of == NULL ||
        world->node_of[w] == world->node_of[world->rank])
        return false;
    bool gone = false;
    pthread_mutex_lock(&pd_remote_lock);
    int64_t now = pd_clock_ms();
    if (now - pd_remote_last_ms >= PD_REMOTE_CHECK_MS) {
        pd_remote_last_ms = now;
        char err[512];
        int64_t connections = 1;
        int rc = -1;
        for (int attempt = 0; attempt < 2 && rc != 0; attempt++) {
            if (pd_remote_store == NULL &&
                pd_store_reconnect(world->store_addr, world->job_key,
                                   world->rank, PD_REMOTE_CHECK_MS * 4,
                                   &pd_remote_store, err, sizeof(err)) != 0)
                break;
            rc = pd_store_alive(pd_remote_store, w, &connections, err,
                                sizeof(err));
            if (rc != 0) {          /* a broken connection: once more */
                pd_store_close(pd_remote_store);
                pd_remote_store = NULL;
            }
        }
        if (rc == 0 && connections == 0) {
            snprintf(why, len, "it holds no connection to the job's store "
                     "any more: its process ended");
            gone = true;
        } else if (rc != 0 && strstr(err, "Connection refused") != NULL) {
            snprintf(why, len, "the job's store at %s is gone (%s): the "
                     "launcher or rank that served it ended",
                     world->store_addr, err);
            gone = true;
        }
    }
    pthread_mutex_unlock(&pd_remote_lock);
    return gone;
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

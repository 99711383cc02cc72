/*
 * MPI_Init's and MPI_Finalize's work: the composition root that builds
 * the process state of core/runtime.h from configuration, launcher and
 * store, and takes it down again. Only the API calls it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "boot/fd_limit.h"
#include "core/attr.h"
#include "core/calls.h"
#include "service/call_check.h"
#include "core/group.h"
#include "core/runtime.h"
#include "core/scratch.h"
#include "core/stats.h"
#include "route/route.h"
#include "service/comm_create.h"
#include "service/connect_watch.h"
#include "service/p2p.h"
#include "service/lifecycle.h"
#include "service/progress.h"
#include "service/stats_report.h"

#ifndef PD_GLOO_VERSION
#define PD_GLOO_VERSION "none"
#endif

static void pd_log_world(void)
{
    if (!pd_log_enabled(PD_LOG_INFO) || pd_rt.world.rank != 0)
        return;
    char routes[1024], transport[256] = "none";
    struct ompi_communicator_t *world = (struct ompi_communicator_t *)MPI_COMM_WORLD;
    struct pd_comm_state *st = world->state;
    pd_route_describe(pd_rt.world.size, routes, sizeof(routes));
    if (st->host_ops->describe != NULL)
        st->host_ops->describe(st->host_comm, transport, sizeof(transport));
    pd_log(PD_LOG_INFO,
           "pdmpi %s: world of %d formed by %s in %lld ms (%d host%s, local "
           "size %d), store %s, timeout %d ms",
           PACKAGE_VERSION, pd_rt.world.size, pd_rt.world.launcher,
           (long long)pd_rt.world.formed_ms, pd_rt.world.num_nodes,
           pd_rt.world.num_nodes == 1 ? "" : "s", pd_rt.world.local_size,
           pd_rt.world.store_addr[0] ? pd_rt.world.store_addr : "none",
           pd_rt.config.timeout_ms);
    if (pd_rt.world.pm != NULL)
        pd_log(PD_LOG_INFO, "process manager: %s", pd_rt.world.pm->detail);
    pd_log(PD_LOG_INFO, "backends: %s", routes);
    char shm[160] = "off (PDMPI_SHM=0)";
    if (pd_rt.config.shm)
        snprintf(shm, sizeof(shm), "shared memory among ranks of a host "
                 "(%zu-byte chunks, spin %ld us%s)", pd_rt.config.shm_chunk,
                 pd_rt.config.shm_spin,
                 pd_rt.config.shm_spin < 0 ? " = automatic" : "");
    pd_log(PD_LOG_INFO, "host path: %s", shm);
    pd_log(PD_LOG_INFO, "host transport: %s; built with gloo %s, Open MPI %d.%d.%d ABI",
           transport, PD_GLOO_VERSION, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
           OMPI_RELEASE_VERSION);
}

/* gloo writes to its sockets without MSG_NOSIGNAL: when a peer dies, the
 * default SIGPIPE would kill this rank silently instead of letting the
 * write fail with EPIPE and the call report "connection closed by peer".
 * A program that installed its own handler keeps it. */
static void pd_ignore_sigpipe(void)
{
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) == 0 &&
        current.sa_handler == SIG_DFL && !(current.sa_flags & SA_SIGINFO))
        signal(SIGPIPE, SIG_IGN);
}

/*
 * A rank that leaves without MPI_Finalize while the others still count on
 * it must not look like a success (a non-zero exit code is kept as it
 * is): launchers only take a job down for a non-zero status (Hydra reports such a job as successful), and the
 * others would wait on it. Open MPI's mpirun treats it the same way.
 */
static void pd_exit_without_finalize(int status, void *unused)
{
    (void)unused;
    if (status != 0 || pd_runtime_state() != PD_RT_ACTIVE)
        return;
    fflush(NULL);
    fprintf(stderr,
            "pdmpi: rank %d: the process is exiting without calling "
            "MPI_Finalize; ending the job with status 1\n",
            pd_rt.world.rank);
    _exit(1);
}

static const char *pd_lib_path(const char *var)
{
    return pd_config_lib_path(&pd_rt.config, var);
}

int pd_runtime_init(int required_level, int *provided, char *err,
                    size_t errlen)
{
    char why[512];
    if (pd_config_load(&pd_rt.config, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "bad configuration: %s", why);
        return MPI_ERR_ARG;
    }
    pd_log_level = pd_rt.config.debug_level;
    pd_scratch_limit(pd_rt.config.scratch_keep);
    pd_stats_enabled = pd_rt.config.stats;
    /* Each live communicator across processes holds sockets. */
    pd_fd_limit_raise();

    if (pd_world_detect(&pd_rt.world, pd_rt.config.launcher,
                        pd_rt.config.timeout_ms, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "cannot form the world: %s", why);
        return MPI_ERR_OTHER;
    }
    pd_log_set_rank(pd_rt.world.rank);
    /* A launcher's backend request applies unless PDMPI_BACKEND is set. */
    if (getenv("PDMPI_BACKEND") == NULL && pd_rt.world.backend_hint[0] != '\0')
        snprintf(pd_rt.config.backend, sizeof(pd_rt.config.backend), "%s",
                 pd_rt.world.backend_hint);
    if (gethostname(pd_rt.host, sizeof(pd_rt.host)) != 0)
        strcpy(pd_rt.host, "localhost");
    pd_rt.host[sizeof(pd_rt.host) - 1] = '\0';

    if (pd_world_connect(&pd_rt.world, pd_rt.config.timeout_ms, &pd_rt.store,
                         why, sizeof(why)) != 0) {
        snprintf(err, errlen, "cannot form the world: %s", why);
        return MPI_ERR_OTHER;
    }
    /* The device is chosen by local rank, known only now. */
    struct pd_route_setup route = {
        .policy = pd_rt.config.backend,
        .device_hint = pd_rt.world.device_hint,
        .local_rank = pd_rt.world.local_rank,
        .local_size = pd_rt.world.local_size,
        .fallback_error = pd_rt.config.device_fallback_error,
        .lib_path = pd_lib_path,
    };
    if (pd_route_init(&route, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s", why);
        if (pd_rt.store != NULL)
            pd_store_close(pd_rt.store);
        pd_rt.store = NULL;
        pd_world_release(&pd_rt.world);
        return MPI_ERR_OTHER;
    }
    pd_ignore_sigpipe();
    static bool exit_check_installed;
    if (!exit_check_installed)
        exit_check_installed = on_exit(pd_exit_without_finalize, NULL) == 0;

    /* Communicator ids: "w" and "s"; every other one derives from its
     * parent's id, identically on every member. */
    struct pd_fail fail = { 0, "" };
    struct ompi_communicator_t *world = (struct ompi_communicator_t *)MPI_COMM_WORLD;
    struct ompi_communicator_t *self = (struct ompi_communicator_t *)MPI_COMM_SELF;
    int me = pd_rt.world.rank;
    struct ompi_group_t *world_group = pd_group_new_world(pd_rt.world.size);
    struct ompi_group_t *self_group = pd_group_new(1, &me);
    if (world_group == NULL || self_group == NULL) {
        pd_group_release(world_group);
        pd_group_release(self_group);
        snprintf(err, errlen, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    struct pd_connect_watch watch;
    if (pd_rt.world.size > 1)
        pd_connect_watch_start(&watch, pd_rt.config.timeout_ms);
    int connected = pd_comm_init_predefined(world, world_group, "w", true,
                                            &fail);
    if (pd_rt.world.size > 1)
        pd_connect_watch_stop(&watch);
    if (connected != 0 ||
        pd_comm_init_predefined(self, self_group, "s", false, &fail) != 0) {
        snprintf(err, errlen, "%s", fail.msg);
        pd_comm_finalize_predefined(world);
        if (pd_rt.store != NULL)
            pd_store_close(pd_rt.store);
        pd_rt.store = NULL;
        pd_world_release(&pd_rt.world);
        return fail.errclass;
    }

    /* Every level is provided: each communicator serializes its own
     * calls and the store client locks, so threads may call freely. */
    pd_rt.thread_level = required_level;
    if (pd_rt.thread_level < MPI_THREAD_SINGLE)
        pd_rt.thread_level = MPI_THREAD_SINGLE;
    if (pd_rt.thread_level > MPI_THREAD_MULTIPLE)
        pd_rt.thread_level = MPI_THREAD_MULTIPLE;
    if (provided != NULL)
        *provided = pd_rt.thread_level;
    pd_rt.main_thread = pthread_self();
    if (pd_p2p_shm_open(&fail) != MPI_SUCCESS ||
        (pd_p2p_needs_network(world) &&
         pd_p2p_listen(world, &fail) != MPI_SUCCESS)) {
        snprintf(err, errlen, "%s", fail.msg);
        return fail.errclass;
    }
    pd_calls_start_publisher();
    __atomic_store_n(&pd_rt.state, PD_RT_ACTIVE, __ATOMIC_RELEASE);
    pd_log_world();
    return MPI_SUCCESS;
}

int pd_runtime_finalize(char *err, size_t errlen)
{
    struct ompi_communicator_t *world = (struct ompi_communicator_t *)MPI_COMM_WORLD;
    struct ompi_communicator_t *self = (struct ompi_communicator_t *)MPI_COMM_SELF;
    struct pd_fail fail = { 0, "" };
    /* MPI_Finalize begins as if MPI_COMM_SELF were freed: its attributes'
     * delete callbacks run while MPI is still usable (bindings free
     * their keyvals from them). */
    pd_attr_delete_all(PD_ATTR_COMM, self);
    pd_stats_report();
    /* No rank lets go of the launcher while another still needs it. */
    struct pd_call call = { "MPI_Finalize", NULL, NULL, -1, 0 };
    int rc = pd_calls_enter(world, &call, &fail);
    if (rc == MPI_SUCCESS)
        rc = pd_progress_run_now(&(struct pd_coll){
            .kind = PD_COLL_BARRIER, .comm = world,
            .tag = pd_comm_reserve_tags(world), .root = -1 }, &fail);
    if (rc != MPI_SUCCESS)
        snprintf(err, errlen, "%s", fail.msg);
    /* Communicators freed with requests never finished go now. */
    pd_comm_release_freed(true);
    __atomic_store_n(&pd_rt.state, PD_RT_FINALIZED, __ATOMIC_RELEASE);
    pd_calls_stop_publisher();
    pd_p2p_shm_close();
    pd_comm_finalize_predefined(self);
    pd_comm_finalize_predefined(world);
    if (pd_rt.store != NULL)
        pd_store_close(pd_rt.store);
    pd_rt.store = NULL;
    /* Only now, after the barrier, may rank 0 stop the store it hosts
     * and every rank let go of the process manager. */
    pd_world_release(&pd_rt.world);
    pd_scratch_release();
    return rc;
}


/* Launcher detection: each launcher is one detector in a table. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/env.h"
#include "boot/net.h"
#include "boot/world.h"

typedef int (*pd_detect_fn)(struct pd_world *world, int64_t deadline_ms,
                            char *err, size_t errlen);

struct pd_launcher {
    const char *name;
    pd_detect_fn detect;
};

static int pd_detect_pdmpirun(struct pd_world *w, int64_t deadline_ms,
                              char *err, size_t errlen)
{
    static const char src[] = "pdmpirun";
    (void)deadline_ms;
    if (getenv("PDMPI_RANK") == NULL && getenv("PDMPI_SIZE") == NULL)
        return PD_DETECT_ABSENT;
    w->launcher = "pdmpirun";
    w->launcher_desc = "pdmpirun";
    w->rank_var = "PDMPI_RANK";
    if (pd_env_int(src, "PDMPI_SIZE", 1, INT_MAX, &w->size, err, errlen) != 0 ||
        pd_env_int(src, "PDMPI_RANK", 0, w->size - 1, &w->rank, err,
                   errlen) != 0 ||
        pd_env_int_or(src, "PDMPI_LOCAL_SIZE", 1, w->size, -1,
                      &w->local_size, err, errlen) != 0 ||
        pd_env_int_or(src, "PDMPI_LOCAL_RANK", 0,
                      w->local_size > 0 ? w->local_size - 1 : w->size - 1,
                      -1, &w->local_rank, err, errlen) != 0)
        return PD_DETECT_ERROR;
    if (w->size > 1) {
        if (pd_env_copy(src, "PDMPI_STORE", w->store_addr,
                        sizeof(w->store_addr), err, errlen) != 0 ||
            pd_env_copy(src, "PDMPI_JOBKEY", w->job_key, sizeof(w->job_key),
                        err, errlen) != 0)
            return PD_DETECT_ERROR;
        w->rendezvous = PD_RDV_GIVEN;
    }
    const char *backend = pd_env_get("PDMPI_BACKEND");
    if (backend != NULL)
        snprintf(w->backend_hint, sizeof(w->backend_hint), "%s", backend);
    const char *device = pd_env_get("PDMPI_DEVICE");
    if (device != NULL)
        snprintf(w->device_hint, sizeof(w->device_hint), "%s", device);
    return PD_DETECT_PRESENT;
}

/* PMIx and PMI-1 worlds come from the process manager's own answers. */
static int pd_world_from_pm(struct pd_world *w, struct pd_pm *pm,
                            const char *desc)
{
    w->launcher = pm->name;
    w->launcher_desc = desc;
    w->pm = pm;
    w->rank = pm->rank;
    w->size = pm->size;
    w->local_rank = pm->local_rank;
    w->local_size = pm->local_size;
    w->rank_var = strcmp(pm->name, "pmix") == 0 ? "PMIX_RANK" : "PMI_RANK";
    if (w->size > 1)
        w->rendezvous = PD_RDV_PUBLISH;
    return PD_DETECT_PRESENT;
}

static int pd_detect_pmix(struct pd_world *w, int64_t deadline_ms,
                          char *err, size_t errlen)
{
    struct pd_pm *pm = NULL;
    int found = pd_pmix_open(&pm, deadline_ms, err, errlen);
    if (found <= 0)
        return found;
    /* Open MPI's mpirun also says the local rank in its own variables. */
    if (pm->local_rank < 0 && pd_env_get("OMPI_COMM_WORLD_LOCAL_RANK")) {
        pd_env_int_or("mpirun", "OMPI_COMM_WORLD_LOCAL_RANK", 0, INT_MAX, -1,
                      &pm->local_rank, err, errlen);
        pd_env_int_or("mpirun", "OMPI_COMM_WORLD_LOCAL_SIZE", 1, INT_MAX, -1,
                      &pm->local_size, err, errlen);
    }
    return pd_world_from_pm(w, pm, "PMIx (mpirun or srun --mpi=pmix)");
}

static int pd_detect_pmi1(struct pd_world *w, int64_t deadline_ms,
                          char *err, size_t errlen)
{
    struct pd_pm *pm = NULL;
    int found = pd_pmi1_open(&pm, deadline_ms, err, errlen);
    if (found <= 0)
        return found;
    return pd_world_from_pm(w, pm, "PMI-1 (mpiexec or srun --mpi=pmi2)");
}

static int pd_detect_singleton(struct pd_world *w, int64_t deadline_ms,
                               char *err, size_t errlen)
{
    (void)deadline_ms;
    (void)err;
    (void)errlen;
    w->launcher = "singleton";
    w->launcher_desc = "no launcher";
    w->rank = 0;
    w->size = 1;
    w->local_rank = 0;
    w->local_size = 1;
    return PD_DETECT_PRESENT;
}

/* Innermost first; the singleton always matches and comes last. */
static const struct pd_launcher pd_launchers[] = {
    { "pdmpirun", pd_detect_pdmpirun },
    { "paddle", pd_detect_paddle },
    { "pmix", pd_detect_pmix },
    { "pmi1", pd_detect_pmi1 },
    { "slurm", pd_detect_slurm },
    { "singleton", pd_detect_singleton },
};
#define PD_NUM_LAUNCHERS (sizeof(pd_launchers) / sizeof(pd_launchers[0]))

static const struct pd_launcher *pd_find_launcher(const char *name)
{
    for (size_t i = 0; i < PD_NUM_LAUNCHERS; i++)
        if (strcmp(pd_launchers[i].name, name) == 0)
            return &pd_launchers[i];
    return NULL;
}

static int pd_run_detector(struct pd_world *world,
                           const struct pd_launcher *l, int64_t deadline_ms,
                           char *err, size_t errlen)
{
    memset(world, 0, sizeof(*world));
    world->local_rank = world->local_size = -1;
    return l->detect(world, deadline_ms, err, errlen);
}

int pd_world_detect(struct pd_world *world, const char *forced,
                    int timeout_ms, char *err, size_t errlen)
{
    int64_t deadline_ms = pd_net_now_ms() + timeout_ms;
    int64_t start_ms = pd_net_now_ms();
    bool auto_detect = forced == NULL || forced[0] == '\0' ||
                       strcmp(forced, "auto") == 0;
    int found = PD_DETECT_ABSENT;
    if (!auto_detect) {
        const struct pd_launcher *l = pd_find_launcher(forced);
        if (l == NULL) {
            snprintf(err, errlen,
                     "PDMPI_LAUNCHER=%s is not a known launcher (known: auto, "
                     "pdmpirun, paddle, pmix, pmi1, slurm, singleton)",
                     forced);
            return -1;
        }
        found = pd_run_detector(world, l, deadline_ms, err, errlen);
        if (found == PD_DETECT_ABSENT)
            snprintf(err, errlen,
                     "PDMPI_LAUNCHER=%s but that launcher's variables are "
                     "not set",
                     forced);
    } else {
        for (size_t i = 0; i < PD_NUM_LAUNCHERS && found == PD_DETECT_ABSENT;
             i++)
            found = pd_run_detector(world, &pd_launchers[i], deadline_ms, err,
                                    errlen);
    }
    if (found != PD_DETECT_PRESENT)
        return -1;
    if (world->local_size > world->size ||
        (world->local_size > 0 && world->local_rank >= world->local_size)) {
        snprintf(err, errlen,
                 "%s: local rank %d / local size %d do not fit a world of %d",
                 world->launcher_desc, world->local_rank, world->local_size,
                 world->size);
        return -1;
    }
    world->formed_ms = pd_net_now_ms() - start_ms;
    return 0;
}

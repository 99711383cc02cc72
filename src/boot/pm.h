/*
 * A process manager's key-value channel: what world formation needs from
 * PMIx (Open MPI's mpirun, srun --mpi=pmix) and PMI-1 (MPICH's Hydra,
 * srun --mpi=pmi2). Rank 0 puts the store's address, every rank fences,
 * the others get it. The same channel aborts the job and is let go of at
 * finalize, after the last barrier.
 *
 * Values are short printable strings without spaces (the callers
 * hex-encode); every wait takes an absolute deadline (pd_net_now_ms()).
 * Functions return 0, or -1 with a one-line reason in err.
 */
#ifndef PD_BOOT_PM_H
#define PD_BOOT_PM_H

#include <stddef.h>
#include <stdint.h>

/* Longest value a caller may put: PMI-1 servers truncate at 1023 bytes
 * (Hydra) or desynchronize beyond 1024 (Slurm). */
#define PD_PM_MAX_VALUE 960

struct pd_pm;

struct pd_pm_ops {
    int (*put)(struct pd_pm *pm, const char *key, const char *value,
               char *err, size_t errlen);
    /* Collective over the job: afterwards every put is visible. */
    int (*fence)(struct pd_pm *pm, int64_t deadline_ms, char *err,
                 size_t errlen);
    int (*get)(struct pd_pm *pm, int rank, const char *key, char *value,
               size_t valuelen, int64_t deadline_ms, char *err,
               size_t errlen);
    /* Ask the process manager to end the whole job with code. */
    void (*abort)(struct pd_pm *pm, int code, const char *msg);
    /* Let go of the process manager and free pm. */
    void (*finalize)(struct pd_pm *pm);
};

struct pd_pm {
    const struct pd_pm_ops *ops;
    const char *name;               /* "pmix", "pmi1" */
    int rank;
    int size;
    int local_rank;                 /* -1 when the manager does not say */
    int local_size;                 /* -1 when the manager does not say */
    char detail[160];               /* version, job name: for the log */
};

/* Open a process manager from the environment. Return 1 with *out set,
 * 0 if the manager's variables are absent, -1 on error (err names the
 * launcher, the variable or the step that failed). */
int pd_pmix_open(struct pd_pm **out, int64_t deadline_ms, char *err,
                 size_t errlen);
int pd_pmi1_open(struct pd_pm **out, int64_t deadline_ms, char *err,
                 size_t errlen);

#endif

/*
 * A Slurm step without PMI (srun --mpi=none): rank and size from
 * SLURM_PROCID / SLURM_STEP_NUM_TASKS. Only a step counts: a batch script
 * or salloc shell also carries SLURM_PROCID=0 and SLURM_NTASKS, and
 * mpirun or mpiexec inside an allocation leave SLURM_PROCID=0 on every
 * rank, so without SLURM_STEP_ID (or with PMI variables, which earlier
 * detectors take) these variables are not trusted.
 *
 * Rank 0 hosts the store on the first host of SLURM_STEP_NODELIST, at a
 * port derived from the job and step ids, so two steps of one job do not
 * collide; PDMPI_MASTER_ADDR / PDMPI_MASTER_PORT override both.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/env.h"
#include "boot/world.h"

static const char pd_slurm_src[] = "Slurm step";

/* Ports 29000-61767: 1024 jobs x 32 steps. */
#define PD_SLURM_PORT_BASE 29000
#define PD_SLURM_JOBS 1024
#define PD_SLURM_STEPS 32

int pd_slurm_first_host(const char *list, char *host, size_t hostlen)
{
    if (list == NULL || hostlen == 0)
        return -1;
    size_t out = 0;
    const char *p = list;
    /* prefix up to a top-level ',' or the first '[' */
    while (*p != '\0' && *p != ',' && *p != '[') {
        if (*p == ']' || isspace((unsigned char)*p) || out + 1 >= hostlen)
            return -1;
        host[out++] = *p++;
    }
    if (*p == '[') {
        p++;
        /* the first number of the first range, zero padding kept */
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p)) {
            if (out + 1 >= hostlen)
                return -1;
            host[out++] = *p++;
        }
        const char *close = strchr(p, ']');
        if (close == NULL || (*p != ']' && *p != ',' && *p != '-'))
            return -1;
        p = close + 1;
        /* a suffix after the brackets ("n[1-2]-ib") */
        while (*p != '\0' && *p != ',' && *p != '[') {
            if (*p == ']' || isspace((unsigned char)*p) || out + 1 >= hostlen)
                return -1;
            host[out++] = *p++;
        }
        if (*p == '[')
            return -1;  /* two bracket groups in one name: not supported */
    }
    if (out == 0)
        return -1;
    host[out] = '\0';
    return 0;
}

int pd_slurm_tasks_on_node(const char *list, int node)
{
    if (list == NULL || node < 0)
        return -1;
    const char *p = list;
    int index = 0;
    while (*p != '\0') {
        char *end = NULL;
        long tasks = strtol(p, &end, 10);
        if (end == p || tasks < 0 || tasks > INT_MAX)
            return -1;
        long repeat = 1;
        p = end;
        if (p[0] == '(' && p[1] == 'x') {
            repeat = strtol(p + 2, &end, 10);
            if (end == p + 2 || *end != ')' || repeat < 1 || repeat > INT_MAX)
                return -1;
            p = end + 1;
        }
        if (node < index + repeat)
            return (int)tasks;
        index += (int)repeat;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return -1;
    }
    return -1;
}

static int pd_slurm_master(struct pd_world *w, long job, long step, char *err,
                           size_t errlen)
{
    char host[256];
    const char *addr = pd_env_get("PDMPI_MASTER_ADDR");
    const char *list = pd_env_get("SLURM_STEP_NODELIST");
    const char *list_var = "SLURM_STEP_NODELIST";
    if (list == NULL) {
        list = pd_env_get("SLURM_JOB_NODELIST");
        list_var = "SLURM_JOB_NODELIST";
    }
    if (addr != NULL) {
        snprintf(host, sizeof(host), "%s", addr);
        w->master_var = "PDMPI_MASTER_ADDR";
    } else if (list == NULL) {
        snprintf(err, errlen, "%s: neither SLURM_STEP_NODELIST nor "
                 "PDMPI_MASTER_ADDR is set", pd_slurm_src);
        return -1;
    } else if (pd_slurm_first_host(list, host, sizeof(host)) != 0) {
        snprintf(err, errlen, "%s: %s=%s is not a host list", pd_slurm_src,
                 list_var, list);
        return -1;
    } else {
        w->master_var = list_var;
    }
    int port = PD_SLURM_PORT_BASE +
               (int)(job % PD_SLURM_JOBS) * PD_SLURM_STEPS +
               (int)(step % PD_SLURM_STEPS);
    if (pd_env_int_or(pd_slurm_src, "PDMPI_MASTER_PORT", 1, 65535, port,
                      &port, err, errlen) != 0)
        return -1;
    snprintf(w->master, sizeof(w->master), "%s:%d", host, port);
    return 0;
}

int pd_detect_slurm(struct pd_world *w, int64_t deadline_ms, char *err,
                    size_t errlen)
{
    (void)deadline_ms;
    if (pd_env_get("SLURM_STEP_ID") == NULL || pd_env_get("SLURM_PROCID") == NULL)
        return PD_DETECT_ABSENT;
    w->launcher = "slurm";
    w->launcher_desc = pd_slurm_src;
    w->rank_var = "SLURM_PROCID";
    const char *size_var = pd_env_get("SLURM_STEP_NUM_TASKS")
                               ? "SLURM_STEP_NUM_TASKS"
                               : "SLURM_NTASKS";
    int job = 0, step = 0, node = -1;
    if (pd_env_int(pd_slurm_src, size_var, 1, INT_MAX, &w->size, err,
                   errlen) != 0 ||
        pd_env_int(pd_slurm_src, "SLURM_PROCID", 0, w->size - 1, &w->rank,
                   err, errlen) != 0 ||
        pd_env_int(pd_slurm_src, "SLURM_STEP_ID", 0, INT_MAX, &step, err,
                   errlen) != 0 ||
        pd_env_int_or(pd_slurm_src, "SLURM_JOB_ID", 0, INT_MAX, 0, &job, err,
                      errlen) != 0 ||
        pd_env_int_or(pd_slurm_src, "SLURM_LOCALID", 0, w->size - 1, -1,
                      &w->local_rank, err, errlen) != 0 ||
        pd_env_int_or(pd_slurm_src, "SLURM_NODEID", 0, w->size - 1, -1,
                      &node, err, errlen) != 0)
        return PD_DETECT_ERROR;
    if (node >= 0)
        w->local_size = pd_slurm_tasks_on_node(
            pd_env_get("SLURM_STEP_TASKS_PER_NODE"), node);
    if (w->local_size <= 0 || w->local_rank >= w->local_size)
        w->local_size = -1;   /* found from node ids instead */
    if (w->size == 1)
        return PD_DETECT_PRESENT;
    if (pd_slurm_master(w, job, step, err, errlen) != 0)
        return PD_DETECT_ERROR;
    w->rendezvous = PD_RDV_AT_MASTER;
    char material[64];
    snprintf(material, sizeof(material), "%d.%d", job, step);
    pd_derive_job_key("slurm", material, w->job_key, sizeof(w->job_key));
    return PD_DETECT_PRESENT;
}

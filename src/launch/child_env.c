/* Each rank's environment: pdmpirun's own, with the PDMPI_* variables that
 * give the rank its place in this job. */
#include "pdmpirun.h"

#include <stdarg.h>

/* Does entry (NAME=value) set the variable that own sets? */
static int same_variable(const char *entry, const char *own)
{
    return strncmp(entry, own, strcspn(own, "=") + 1) == 0;
}

static char *format_variable(const char *name, const char *fmt, ...)
{
    char value[PD_STORE_ADDR_LEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    size_t len = strlen(name) + 1 + strlen(value) + 1;
    char *entry = malloc(len);
    if (entry != NULL)
        snprintf(entry, len, "%s=%s", name, value);
    return entry;
}

/*
 * The rank's environment: pdmpirun's, with the PDMPI_* variables this job
 * defines replaced (a nested or leftover value must not leak through).
 * Built before fork, because the child may not allocate.
 */
char **pd_build_environment(const struct pd_job *job, int rank)
{
    char *own[8];
    size_t nown = 0;
    own[nown++] = format_variable("PDMPI_RANK", "%d",
                                  pd_global_rank(job, rank));
    own[nown++] = format_variable("PDMPI_SIZE", "%d",
                                  job->opt.nnodes * job->opt.nranks);
    own[nown++] = format_variable("PDMPI_LOCAL_RANK", "%d", rank);
    own[nown++] = format_variable("PDMPI_LOCAL_SIZE", "%d", job->opt.nranks);
    own[nown++] = format_variable("PDMPI_STORE", "%s", job->store_addr);
    own[nown++] = format_variable("PDMPI_JOBKEY", "%s", job->job_key);
    if (job->opt.backend != NULL)
        own[nown++] = format_variable("PDMPI_BACKEND", "%s", job->opt.backend);
    if (job->opt.devices != NULL)
        own[nown++] = format_variable("PDMPI_DEVICE", "%d",
                                      job->opt.devices[rank]);

    size_t count = 0;
    while (environ[count] != NULL)
        count++;
    char **env = calloc(count + nown + 1, sizeof *env);
    int failed = env == NULL;
    for (size_t k = 0; k < nown; k++)
        failed |= own[k] == NULL;
    if (failed) {
        for (size_t k = 0; k < nown; k++)
            free(own[k]);
        free(env);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        size_t k = 0;
        while (k < nown && !same_variable(environ[i], own[k]))
            k++;
        if (k == nown)
            env[n++] = environ[i];
    }
    memcpy(env + n, own, nown * sizeof *own);
    return env;
}

/* Frees what pd_build_environment allocated: its own entries start at the
 * first PDMPI_RANK, since the inherited one was filtered out. */
void pd_free_environment(char **env)
{
    if (env == NULL)
        return;
    size_t i = 0;
    while (env[i] != NULL && !same_variable(env[i], "PDMPI_RANK="))
        i++;
    for (; env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

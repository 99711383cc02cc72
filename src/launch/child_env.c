/* Each rank's environment: pdmpirun's own, with the PDMPI_* variables that
 * give the rank its place in this job. */
#include "pdmpirun.h"

#include <stdarg.h>

/* Does entry (NAME=value) set the variable that own sets? */
static int same_variable(const char *entry, const char *own)
{
    return strncmp(entry, own, strcspn(own, "=") + 1) == 0;
}

/* "name=value", value formatted; NULL when out of memory. */
static char *format_variable(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int value_len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (value_len < 0)
        return NULL;
    size_t name_len = strlen(name);
    size_t len = name_len + 1 + (size_t)value_len + 1;
    char *entry = malloc(len);
    if (entry == NULL)
        return NULL;
    snprintf(entry, len, "%s=", name);
    va_start(ap, fmt);
    vsnprintf(entry + name_len + 1, len - name_len - 1, fmt, ap);
    va_end(ap);
    return entry;
}

/*
 * The rank's environment: pdmpirun's, with the PDMPI_* variables this job
 * defines replaced (a nested or leftover value must not leak through).
 * Built before fork, because the child may not allocate.
 */
char **pd_build_environment(const struct pd_job *job, int rank)
{
    char *own[10];
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
    /* --dropin: the loader finds pdmpi's libmpi.so.40 before any other. */
    if (job->opt.dropin_dir != NULL) {
        const char *path = getenv("LD_LIBRARY_PATH");
        own[nown++] = path != NULL && *path != '\0'
            ? format_variable("LD_LIBRARY_PATH", "%s:%s", job->opt.dropin_dir,
                              path)
            : format_variable("LD_LIBRARY_PATH", "%s", job->opt.dropin_dir);
    }

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

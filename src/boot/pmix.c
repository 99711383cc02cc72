/*
 * PMIx client (Open MPI's mpirun, srun --mpi=pmix) behind struct pd_pm.
 *
 * libpmix is loaded with dlopen only when the PMIx variables are present,
 * so the library has no link dependency on it. Struct layouts come from
 * the build-time pmix.h; PMIx keeps its wire protocol compatible across
 * versions, and the run-time version is logged.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boot/net.h"
#include "boot/pm.h"

#ifndef PD_HAVE_PMIX_H

static bool pd_pmix_vars_present(void)
{
    return getenv("PMIX_NAMESPACE") != NULL && getenv("PMIX_RANK") != NULL;
}

int pd_pmix_open(struct pd_pm **out, int64_t deadline_ms, char *err,
                 size_t errlen)
{
    (void)deadline_ms;
    *out = NULL;
    if (!pd_pmix_vars_present())
        return 0;
    snprintf(err, errlen,
             "PMIx: PMIX_NAMESPACE=%s is set (launched by mpirun or srun "
             "--mpi=pmix), but this pdmpi build has no PMIx support "
             "(pmix.h was not found at configure time)",
             getenv("PMIX_NAMESPACE"));
    return -1;
}

#else

#include <pmix.h>

#define PD_PMIX_LIB "libpmix.so.2"

typedef pmix_status_t (*pd_pmix_init_fn)(pmix_proc_t *, pmix_info_t[],
                                         size_t);
typedef pmix_status_t (*pd_pmix_finalize_fn)(const pmix_info_t[], size_t);
typedef pmix_status_t (*pd_pmix_abort_fn)(int, const char[], pmix_proc_t[],
                                          size_t);
typedef pmix_status_t (*pd_pmix_put_fn)(pmix_scope_t, const char[],
                                        pmix_value_t *);
typedef pmix_status_t (*pd_pmix_commit_fn)(void);
typedef pmix_status_t (*pd_pmix_fence_fn)(const pmix_proc_t[], size_t,
                                          const pmix_info_t[], size_t);
typedef pmix_status_t (*pd_pmix_get_fn)(const pmix_proc_t *, const char[],
                                        const pmix_info_t[], size_t,
                                        pmix_value_t **);
typedef const char *(*pd_pmix_error_string_fn)(pmix_status_t);
typedef const char *(*pd_pmix_version_fn)(void);
typedef void (*pd_pmix_value_destruct_fn)(pmix_value_t *);

struct pd_pmix {
    struct pd_pm pm;                /* first: the generic view */
    void *lib;
    pmix_proc_t me;
    pd_pmix_init_fn init;
    pd_pmix_finalize_fn finalize;
    pd_pmix_abort_fn abort;
    pd_pmix_put_fn put;
    pd_pmix_commit_fn commit;
    pd_pmix_fence_fn fence;
    pd_pmix_get_fn get;
    pd_pmix_error_string_fn error_string;
    pd_pmix_version_fn version;
    pd_pmix_value_destruct_fn value_destruct;
};

/* The server URI variable's name changes with the wire generation. */
static const char *pd_pmix_server_uri_var(void)
{
    static const char *const names[] = {
        "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
        "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", "PMIX_SERVER_URI",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (getenv(names[i]) != NULL)
            return names[i];
    return NULL;
}

static const char *pd_pmix_strerror(struct pd_pmix *x, pmix_status_t rc)
{
    return x->error_string != NULL ? x->error_string(rc) : "unknown error";
}

static int pd_pmix_load(struct pd_pmix *x, char *err, size_t errlen)
{
    x->lib = dlopen(PD_PMIX_LIB, RTLD_NOW | RTLD_LOCAL);
    if (x->lib == NULL) {
        snprintf(err, errlen,
                 "PMIx: launched under PMIx (PMIX_NAMESPACE=%s) but %s "
                 "cannot be loaded: %s (install libpmix2)",
                 getenv("PMIX_NAMESPACE"), PD_PMIX_LIB, dlerror());
        return -1;
    }
    struct {
        const char *name;
        void **slot;
    } syms[] = {
        { "PMIx_Init", (void **)&x->init },
        { "PMIx_Finalize", (void **)&x->finalize },
        { "PMIx_Abort", (void **)&x->abort },
        { "PMIx_Put", (void **)&x->put },
        { "PMIx_Commit", (void **)&x->commit },
        { "PMIx_Fence", (void **)&x->fence },
        { "PMIx_Get", (void **)&x->get },
        { "PMIx_Error_string", (void **)&x->error_string },
        { "PMIx_Get_version", (void **)&x->version },
        { "PMIx_Value_destruct", (void **)&x->value_destruct },
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        *syms[i].slot = dlsym(x->lib, syms[i].name);
        if (*syms[i].slot == NULL) {
            snprintf(err, errlen, "PMIx: %s lacks %s", PD_PMIX_LIB,
                     syms[i].name);
            return -1;
        }
    }
    return 0;
}

/*
 * PMIx_Init against a server URI that listens but never answers hangs
 * forever; run it on a thread and give up at the deadline. A thread that
 * never returns is left behind: the process is about to fail anyway.
 */
struct pd_pmix_init_job {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    bool done;
    bool abandoned;
    pmix_status_t rc;
    struct pd_pmix *x;
};

static void pd_pmix_init_job_release(struct pd_pmix_init_job *job)
{
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->done_cv);
    free(job);
}

static void *pd_pmix_init_thread(void *arg)
{
    struct pd_pmix_init_job *job = arg;
    pmix_proc_t me;
    memset(&me, 0, sizeof(me));
    pmix_status_t rc = job->x->init(&me, NULL, 0);
    pthread_mutex_lock(&job->lock);
    bool abandoned = job->abandoned;
    if (!abandoned) {
        job->rc = rc;
        job->x->me = me;
        job->done = true;
        pthread_cond_signal(&job->done_cv);
    }
    pthread_mutex_unlock(&job->lock);
    if (abandoned)
        pd_pmix_init_job_release(job);
    return NULL;
}

static int pd_pmix_init_with_deadline(struct pd_pmix *x, int64_t deadline_ms,
                                      char *err, size_t errlen)
{
    struct pd_pmix_init_job *job = calloc(1, sizeof(*job));
    if (job == NULL) {
        snprintf(err, errlen, "PMIx: out of memory");
        return -1;
    }
    pthread_mutex_init(&job->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&job->done_cv, &attr);
    pthread_condattr_destroy(&attr);
    job->x = x;

    pthread_t thread;
    int rc = pthread_create(&thread, NULL, pd_pmix_init_thread, job);
    if (rc != 0) {
        snprintf(err, errlen, "PMIx: cannot start a thread: %s", strerror(rc));
        pd_pmix_init_job_release(job);
        return -1;
    }
    pthread_detach(thread);

    struct timespec until;
    until.tv_sec = deadline_ms / 1000;
    until.tv_nsec = (deadline_ms % 1000) * 1000000;
    pthread_mutex_lock(&job->lock);
    while (!job->done) {
        if (pthread_cond_timedwait(&job->done_cv, &job->lock, &until) ==
                ETIMEDOUT &&
            !job->done)
            break;
    }
    if (!job->done) {
        job->abandoned = true;
        pthread_mutex_unlock(&job->lock);
        const char *uri_var = pd_pmix_server_uri_var();
        snprintf(err, errlen,
                 "PMIx: PMIx_Init did not answer before the deadline "
                 "(PDMPI_TIMEOUT); is the server at %s=%s alive?",
                 uri_var ? uri_var : "PMIX_SERVER_URI",
                 uri_var ? getenv(uri_var) : "");
        return -1;
    }
    pmix_status_t status = job->rc;
    pthread_mutex_unlock(&job->lock);
    pd_pmix_init_job_release(job);
    if (status != PMIX_SUCCESS) {
        const char *uri_var = pd_pmix_server_uri_var();
        snprintf(err, errlen,
                 "PMIx: PMIx_Init failed (%s) for PMIX_NAMESPACE=%s via %s=%s",
                 pd_pmix_strerror(x, status), getenv("PMIX_NAMESPACE"),
                 uri_var ? uri_var : "PMIX_SERVER_URI",
                 uri_var ? getenv(uri_var) : "(unset)");
        return -1;
    }
    return 0;
}

/* Whole seconds left before the deadline, at least 1: PMIX_TIMEOUT. */
static int pd_pmix_seconds_left(int64_t deadline_ms)
{
    int64_t left = deadline_ms - pd_net_now_ms();
    int seconds = (int)((left + 999) / 1000);
    return seconds < 1 ? 1 : seconds;
}

static void pd_pmix_info_timeout(pmix_info_t *info, int seconds)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "%s", PMIX_TIMEOUT);
    info->value.type = PMIX_INT;
    info->value.data.integer = seconds;
}

/* Read an integer job or process attribute; -1 if the server lacks it. */
static int pd_pmix_get_uint(struct pd_pmix *x, pmix_rank_t rank,
                            const char *key, int64_t deadline_ms)
{
    pmix_proc_t proc = x->me;
    proc.rank = rank;
    pmix_info_t info;
    pd_pmix_info_timeout(&info, pd_pmix_seconds_left(deadline_ms));
    pmix_value_t *v = NULL;
    if (x->get(&proc, key, &info, 1, &v) != PMIX_SUCCESS || v == NULL)
        return -1;
    int out = -1;
    if (v->type == PMIX_UINT32)
        out = (int)v->data.uint32;
    else if (v->type == PMIX_UINT16)
        out = (int)v->data.uint16;
    else if (v->type == PMIX_INT)
        out = v->data.integer;
    x->value_destruct(v);
    free(v);
    return out;
}

static int pd_pmix_put(struct pd_pm *pm, const char *key, const char *value,
                       char *err, size_t errlen)
{
    struct pd_pmix *x = (struct pd_pmix *)pm;
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_STRING;
    v.data.string = (char *)value;   /* PMIx_Put copies it */
    pmix_status_t rc = x->put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = x->commit();
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "PMIx: publishing %s failed: %s", key,
                 pd_pmix_strerror(x, rc));
        return -1;
    }
    return 0;
}

static int pd_pmix_fence(struct pd_pm *pm, int64_t deadline_ms, char *err,
                         size_t errlen)
{
    struct pd_pmix *x = (struct pd_pmix *)pm;
    pmix_proc_t all = x->me;
    all.rank = PMIX_RANK_WILDCARD;
    pmix_info_t info[2];
    memset(info, 0, sizeof(info));
    snprintf(info[0].key, sizeof(info[0].key), "%s", PMIX_COLLECT_DATA);
    info[0].value.type = PMIX_BOOL;
    info[0].value.data.flag = true;
    pd_pmix_info_timeout(&info[1], pd_pmix_seconds_left(deadline_ms));
    pmix_status_t rc = x->fence(&all, 1, info, 2);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen,
                 "PMIx: fence over namespace %s failed: %s (a rank exited "
                 "or did not arrive before the deadline)",
                 x->me.nspace, pd_pmix_strerror(x, rc));
        return -1;
    }
    return 0;
}

static int pd_pmix_get(struct pd_pm *pm, int rank, const char *key,
                       char *value, size_t valuelen, int64_t deadline_ms,
                       char *err, size_t errlen)
{
    struct pd_pmix *x = (struct pd_pmix *)pm;
    pmix_proc_t peer = x->me;
    peer.rank = (pmix_rank_t)rank;
    pmix_info_t info;
    pd_pmix_info_timeout(&info, pd_pmix_seconds_left(deadline_ms));
    pmix_value_t *v = NULL;
    pmix_status_t rc = x->get(&peer, key, &info, 1, &v);
    if (rc != PMIX_SUCCESS || v == NULL) {
        snprintf(err, errlen, "PMIx: reading %s of rank %d failed: %s", key,
                 rank, pd_pmix_strerror(x, rc));
        return -1;
    }
    int out = 0;
    if (v->type != PMIX_STRING || v->data.string == NULL ||
        strlen(v->data.string) >= valuelen) {
        snprintf(err, errlen, "PMIx: %s of rank %d is not a string that fits",
                 key, rank);
        out = -1;
    } else {
        memcpy(value, v->data.string, strlen(v->data.string) + 1);
    }
    x->value_destruct(v);
    free(v);
    return out;
}

static void pd_pmix_abort(struct pd_pm *pm, int code, const char *msg)
{
    struct pd_pmix *x = (struct pd_pmix *)pm;
    /* NULL procs: the whole namespace. The call may not return. */
    x->abort(code, msg, NULL, 0);
}

static void pd_pmix_finalize(struct pd_pm *pm)
{
    struct pd_pmix *x = (struct pd_pmix *)pm;
    x->finalize(NULL, 0);
    /* libpmix keeps threads and handlers: never dlclose it. */
    free(x);
}

static const struct pd_pm_ops pd_pmix_ops = {
    .put = pd_pmix_put,
    .fence = pd_pmix_fence,
    .get = pd_pmix_get,
    .abort = pd_pmix_abort,
    .finalize = pd_pmix_finalize,
};

int pd_pmix_open(struct pd_pm **out, int64_t deadline_ms, char *err,
                 size_t errlen)
{
    *out = NULL;
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    const char *uri_var = pd_pmix_server_uri_var();
    if (ns == NULL && rank == NULL && uri_var == NULL)
        return 0;
    if (ns == NULL || rank == NULL || uri_var == NULL) {
        snprintf(err, errlen,
                 "PMIx: incomplete environment (PMIX_NAMESPACE %s, "
                 "PMIX_RANK %s, PMIX_SERVER_URI* %s)",
                 ns ? "set" : "missing", rank ? "set" : "missing",
                 uri_var ? "set" : "missing");
        return -1;
    }
    struct pd_pmix *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        snprintf(err, errlen, "PMIx: out of memory");
        return -1;
    }
    if (pd_pmix_load(x, err, errlen) != 0 ||
        pd_pmix_init_with_deadline(x, deadline_ms, err, errlen) != 0) {
        free(x);   /* the library stays loaded; see pd_pmix_finalize */
        return -1;
    }
    x->pm.ops = &pd_pmix_ops;
    x->pm.name = "pmix";
    /* "OpenPMIx 4.2.2rc2 (PMIx Standard: 4.2, ...)": the name is enough */
    const char *version = x->version();
    int version_len = (int)strcspn(version, "(");
    snprintf(x->pm.detail, sizeof(x->pm.detail), "%.*s, namespace %.100s",
             version_len > 40 ? 40 : version_len, version, x->me.nspace);
    x->pm.rank = (int)x->me.rank;
    x->pm.size = pd_pmix_get_uint(x, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE,
                                  deadline_ms);
    x->pm.local_size = pd_pmix_get_uint(x, PMIX_RANK_WILDCARD,
                                        PMIX_LOCAL_SIZE, deadline_ms);
    x->pm.local_rank = pd_pmix_get_uint(x, x->me.rank, PMIX_LOCAL_RANK,
                                        deadline_ms);
    if (x->pm.size < 1 || x->pm.rank >= x->pm.size) {
        snprintf(err, errlen,
                 "PMIx: job size %d for namespace %s does not hold rank %d",
                 x->pm.size, x->me.nspace, x->pm.rank);
        x->finalize(NULL, 0);
        free(x);
        return -1;
    }
    *out = &x->pm;
    return 1;
}

#endif

/* pdmpirun's internals: the job all its files work on, and what each file
 * offers the others. Include it before any system header. */
#ifndef PD_LAUNCH_PDMPIRUN_H
#define PD_LAUNCH_PDMPIRUN_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* pipe2, execvpe, environ under -std=c11 */
#endif

/* The C library headers nearly every file of pdmpirun needs. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/store.h"

#define PD_EXIT_SETUP 1
#define PD_EXIT_USAGE 2
#define PD_EXIT_TIMEOUT 124
#define PD_EXIT_EXEC 127

struct pd_options {
    int nranks;
    const char *backend;      /* NULL: not given */
    const char *log_dir;      /* NULL: not given */
    int tag_output;
    int verbose;              /* --verbose: show the world forming */
    double timeout_s;         /* 0: no timeout */
    int nnodes;               /* hosts in the job (--nnodes, default 1) */
    int node_rank;            /* this host's index (--node-rank) */
    const char *master;       /* --master HOST:PORT, or NULL */
    int master_port;          /* its PORT */
    const char *job_id;       /* --job-id, or NULL */
    int *devices;             /* --devices: one device id per rank, or NULL */
    int ndevices;
    const char *timeout_text; /* as the user wrote it, for messages */
    const char *timeout_from; /* "--timeout" or "MPIEXEC_TIMEOUT" */
    char *dropin_dir;         /* --dropin: the folder of pdmpi's
                                 libmpi.so.40, or NULL */
    char **program_argv;
};

/* Output of one rank that pdmpirun copies: a pipe's read end. */
struct pd_stream {
    int fd;         /* -1 once closed */
    int rank;
    int echo_fd;    /* STDOUT_FILENO or STDERR_FILENO */
    int log_fd;     /* -1: no log copy */
    int tag;
    char *line;     /* unfinished line (tag mode) */
    size_t line_len;
    size_t line_cap;
};

struct pd_rank {
    pid_t pid;      /* 0: not started */
    int alive;
    int log_fd;     /* kept open by pdmpirun only when it tees (rank 0) */
    int exec_status_fd;  /* until its exec is known to have worked */
};

struct pd_job {
    struct pd_options opt;
    struct pd_rank *ranks;
    struct pd_stream *streams;
    size_t nstreams;
    int live;
    int terminating;       /* the job is being taken down */
    int exit_code;         /* valid once terminating */
    int64_t kill_at_ms;    /* SIGKILL survivors then; 0 = not scheduled */
    int64_t deadline_ms;   /* --timeout; 0 = none */
    int64_t grace_ms;
    int stdin_null_fd;
    char store_addr[PD_STORE_ADDR_LEN];
    char job_key[PD_STORE_MAX_JOBKEY + 1];
};

/* Where one rank's standard descriptors go, decided before fork. */
struct pd_rank_io {
    int stdin_fd;   /* -1: inherit */
    int stdout_fd;  /* -1: inherit */
    int stderr_fd;  /* -1: inherit */
};

/* Ranks are numbered across hosts: host I runs I*N .. I*N+N-1. */
static inline int pd_global_rank(const struct pd_job *job, int local)
{
    return job->opt.node_rank * job->opt.nranks + local;
}

/* pdmpirun.c */
void pd_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* census.c: the world forming, once a second (--verbose; host 0 only:
 * NULL otherwise). */
struct pd_census;
struct pd_census *pd_census_start(const struct pd_job *job);
int64_t pd_census_next_ms(const struct pd_census *c);   /* 0: none */
void pd_census_tick(struct pd_census *c, int64_t now);
void pd_census_stop(struct pd_census *c);

/* options.c */
void pd_parse_args(int argc, char **argv, struct pd_options *o);
int64_t pd_kill_grace_ms(void);

/* child_env.c */
char **pd_build_environment(const struct pd_job *job, int rank);
void pd_free_environment(char **env);

/* output.c */
int pd_make_log_dir(const char *path);
int pd_prepare_rank_io(struct pd_job *job, int rank, struct pd_rank_io *io);
void pd_release_rank_io(const struct pd_rank_io *io);
void pd_stream_read(struct pd_stream *s);
void pd_stream_close(struct pd_stream *s);

/* spawn.c */
int pd_launch_rank(struct pd_job *job, int rank);
void pd_check_execs(struct pd_job *job);

/* supervise.c */
int pd_install_signal_handlers(void);
void pd_restore_signals_in_child(void);
void pd_begin_termination(struct pd_job *job, int exit_code);
void pd_supervise(struct pd_job *job);

#endif

/*
 * pdmpirun: start N ranks of one pdmpi job on this machine.
 *
 * pdmpirun hosts the job's rendezvous store, forks the ranks (each in its
 * own process group, told its rank and the store through PDMPI_*), copies
 * their output when asked to tag or log it, and watches them: the first
 * rank to fail is named and takes the rest of the job down with it, so a
 * dead rank never leaves its peers hanging in a collective.
 *
 * Here the job is set up and torn down; spawn.c starts the ranks and
 * supervise.c watches them.
 */
#include "pdmpirun.h"

#include <stdarg.h>

#include "boot/env.h"
#include "boot/fd_limit.h"
#include "boot/net.h"

void pd_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pdmpirun: %s\n", line);
}

/* Pipes created later must not land on 0/1/2 if pdmpirun got them closed. */
static void ensure_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0 && null_fd != fd) {
            dup2(null_fd, fd);
            close(null_fd);
        }
    }
}

/*
 * One host: a store on loopback at a port the kernel picks, a random key.
 * Across hosts: host 0 serves the store at --master (on the master
 * address's interface where that is one of this host's) and
 * every host derives the same key from what they were all told.
 */
static int setup_store(struct pd_job *job, struct pd_store_server **server)
{
    char err[512];
    const struct pd_options *o = &job->opt;
    if (o->master == NULL) {
        int port = 0;
        pd_store_make_job_key(job->job_key, sizeof job->job_key);
        if (pd_store_server_start("127.0.0.1", job->job_key, server, &port,
                                  err, sizeof err) < 0) {
            pd_say("cannot start the rendezvous store: %s", err);
            return -1;
        }
        snprintf(job->store_addr, sizeof job->store_addr, "127.0.0.1:%d",
                 port);
        return 0;
    }
    char material[512];
    /* Not the sizes: a host started with another -np must reach the
     * store to be told so (boot/rendezvous.c compares the sizes). */
    snprintf(material, sizeof material, "%s|%s", o->master,
             o->job_id ? o->job_id : "");
    pd_derive_job_key("pdmpirun", material, job->job_key,
                      sizeof job->job_key);
    snprintf(job->store_addr, sizeof job->store_addr, "%s", o->master);
    if (o->node_rank != 0)
        return 0;
    int port = o->master_port;
    char host[PD_NET_HOST_LEN], port_text[PD_NET_PORT_LEN], bind[64];
    const char *why;
    bind[0] = '\0';
    if (pd_net_split_addr(o->master, host, sizeof host, port_text,
                          sizeof port_text, err, sizeof err) == 0)
        pd_net_store_bind(host, bind, sizeof bind, &why);
    if (pd_store_server_start(bind, job->job_key, server, &port, err,
                              sizeof err) < 0) {
        pd_say("cannot serve the rendezvous store at --master %s: %s",
               o->master, err);
        return -1;
    }
    return 0;
}

static int setup_job(struct pd_job *job, struct pd_store_server **server)
{
    if (setup_store(job, server) < 0)
        return -1;

    if (job->opt.log_dir != NULL && pd_make_log_dir(job->opt.log_dir) < 0) {
        pd_say("cannot create log directory %s: %s", job->opt.log_dir,
               strerror(errno));
        return -1;
    }
    job->stdin_null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->stdin_null_fd < 0) {
        pd_say("cannot open /dev/null: %s", strerror(errno));
        return -1;
    }
    int nranks = job->opt.nranks;
    job->ranks = calloc((size_t)nranks, sizeof *job->ranks);
    job->streams = calloc((size_t)nranks * 2, sizeof *job->streams);
    if (job->ranks == NULL || job->streams == NULL) {
        pd_say("out of memory for %d ranks", nranks);
        return -1;
    }
    for (int r = 0; r < nranks; r++) {
        job->ranks[r].log_fd = -1;
        job->ranks[r].exec_status_fd = -1;
    }
    job->grace_ms = pd_kill_grace_ms();
    if (job->opt.timeout_s > 0)
        job->deadline_ms = pd_net_now_ms() +
                           (int64_t)(job->opt.timeout_s * 1000 + 0.5);
    return 0;
}

static void teardown_job(struct pd_job *job, struct pd_store_server *server)
{
    pd_store_server_stop(server);
    if (job->ranks != NULL)
        for (int r = 0; r < job->opt.nranks; r++)
            if (job->ranks[r].log_fd >= 0)
                close(job->ranks[r].log_fd);
    if (job->stdin_null_fd >= 0)
        close(job->stdin_null_fd);
    free(job->ranks);
    free(job->streams);
    free(job->opt.devices);
}

int main(int argc, char **argv)
{
    struct pd_job job = { .stdin_null_fd = -1 };
    struct pd_store_server *server = NULL;

    pd_parse_args(argc, argv, &job.opt);
    ensure_standard_fds();
    /* Copied output takes two descriptors per rank, the store one per
     * connection: every rank's, and one per communicator set up at once. */
    pd_fd_limit_raise();
    if (pd_install_signal_handlers() < 0) {
        pd_say("cannot install signal handlers: %s", strerror(errno));
        return PD_EXIT_SETUP;
    }
    if (setup_job(&job, &server) < 0) {
        teardown_job(&job, server);
        return PD_EXIT_SETUP;
    }

    pd_supervise(&job);
    teardown_job(&job, server);
    return job.terminating ? job.exit_code : 0;
}

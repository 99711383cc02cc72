/* Running the job: start the ranks, then one poll() loop reaps them, acts
 * on signals, copies output and runs the --timeout and kill-grace timers.
 * Signal handlers only write the signal number into a pipe the loop reads,
 * so that no job state is touched from a handler. */
#include "pdmpirun.h"

#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>

#include "boot/net.h"
#include "boot/shm_name.h"

/* Once every rank is reaped, how long output pipes still held open by a
 * rank's leftover children may delay pdmpirun's exit. */
#define PD_DRAIN_LINGER_MS 1000

static const int caught[] = { SIGCHLD, SIGINT, SIGTERM };
static int signal_pipe[2] = { -1, -1 };
static int hup_handled;     /* 0 when SIGHUP came in ignored (nohup) */
static volatile sig_atomic_t stop_launching;

static const char *signal_name(int sig)
{
    static const struct { int sig; const char *name; } names[] = {
        { SIGHUP, "SIGHUP" },   { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" },
        { SIGILL, "SIGILL" },   { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
        { SIGBUS, "SIGBUS" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
        { SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
        { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
        { SIGSTKFLT, "SIGSTKFLT" }, { SIGCHLD, "SIGCHLD" },
        { SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" }, { SIGTSTP, "SIGTSTP" },
        { SIGTTIN, "SIGTTIN" }, { SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" },
        { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
        { SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },
        { SIGWINCH, "SIGWINCH" }, { SIGIO, "SIGIO" }, { SIGPWR, "SIGPWR" },
        { SIGSYS, "SIGSYS" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "unknown signal";
}

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    ssize_t ignored = write(signal_pipe[1], &byte, 1);
    (void)ignored;
    if (sig != SIGCHLD)
        stop_launching = 1;
    errno = saved;
}

int pd_install_signal_handlers(void)
{
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    struct sigaction sa = { 0 };
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
        if (sigaction(caught[i], &sa, NULL) < 0)
            return -1;
    /* Under nohup, SIGHUP stays ignored, for pdmpirun and its ranks. */
    struct sigaction old;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
        if (sigaction(SIGHUP, &sa, NULL) < 0)
            return -1;
        hup_handled = 1;
    }
    /* A closed stdout must not kill pdmpirun while ranks run. */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* In a child between fork and exec: async-signal-safe calls only. A rank
 * starts with the dispositions pdmpirun was started with; the caller
 * blocked every signal so that none is taken for pdmpirun's own. */
void pd_restore_signals_in_child(void)
{
    struct sigaction dfl = { 0 };
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
        sigaction(caught[i], &dfl, NULL);
    sigaction(SIGPIPE, &dfl, NULL);
    if (hup_handled)
        sigaction(SIGHUP, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static void signal_live_ranks(struct pd_job *job, int sig)
{
    for (int r = 0; r < job->opt.nranks; r++) {
        struct pd_rank *rank = &job->ranks[r];
        if (!rank->alive)
            continue;
        /* The whole group: a rank's own children go down with it. */
        if (kill(-rank->pid, sig) < 0)
            kill(rank->pid, sig);
    }
}

/* Ask the ranks to stop with sig; survivors of the grace get SIGKILL. */
static void terminate_with(struct pd_job *job, int exit_code, int sig)
{
    job->terminating = 1;
    job->exit_code = exit_code;
    signal_live_ranks(job, sig);
    job->kill_at_ms = pd_net_now_ms() + job->grace_ms;
}

void pd_begin_termination(struct pd_job *job, int exit_code)
{
    if (!job->terminating)
        terminate_with(job, exit_code, SIGTERM);
}

static void on_rank_exit(struct pd_job *job, int rank, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (job->terminating)
        return; /* collateral of a failure already reported */

    char others[64] = "";
    if (job->live > 0)
        snprintf(others, sizeof others, "; terminating the other %d rank%s",
                 job->live, job->live == 1 ? "" : "s");
    char how[96];
    int code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        snprintf(how, sizeof how, "was killed by signal %d (%s)%s", sig,
                 signal_name(sig), WCOREDUMP(status) ? ", core dumped" : "");
        code = 128 + sig;
    } else {
        snprintf(how, sizeof how, "exited with code %d", code);
    }
    pd_say("rank %d (pid %d) %s%s", pd_global_rank(job, rank),
           (int)job->ranks[rank].pid, how, others);
    pd_begin_termination(job, code);
}

static void reap_children(struct pd_job *job)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        int rank = 0;
        while (rank < job->opt.nranks && job->ranks[rank].pid != pid)
            rank++;
        if (rank == job->opt.nranks || !job->ranks[rank].alive)
            continue;
        job->ranks[rank].alive = 0;
        job->live--;
        on_rank_exit(job, rank, status);
    }
}

static void on_forwarded_signal(struct pd_job *job, int sig)
{
    if (!job->terminating) {
        pd_say("received %s; forwarding it to %d rank%s",
               signal_name(sig), job->live, job->live == 1 ? "" : "s");
        terminate_with(job, 128 + sig, sig);
        return;
    }
    if (job->live > 0) {
        pd_say("received %s again; killing %d rank%s", signal_name(sig),
               job->live, job->live == 1 ? "" : "s");
        signal_live_ranks(job, SIGKILL);
        job->kill_at_ms = 0;
    }
}

static void drain_signal_pipe(struct pd_job *job)
{
    unsigned char sigs[64];
    ssize_t n;
    while ((n = read(signal_pipe[0], sigs, sizeof sigs)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (sigs[i] != SIGCHLD)
                on_forwarded_signal(job, sigs[i]);
    }
    reap_children(job);
}

static void check_timers(struct pd_job *job, int64_t now)
{
    if (!job->terminating && job->deadline_ms && now >= job->deadline_ms) {
        pd_say("job exceeded %s %ss; terminating %d rank%s",
               job->opt.timeout_from, job->opt.timeout_text, job->live,
               job->live == 1 ? "" : "s");
        pd_begin_termination(job, PD_EXIT_TIMEOUT);
    }
    if (job->kill_at_ms && now >= job->kill_at_ms) {
        signal_live_ranks(job, SIGKILL);
        job->kill_at_ms = 0;
    }
}

static int next_timeout_ms(const struct pd_job *job, int64_t now,
                           int64_t linger_until, int64_t census_at)
{
    int64_t next = census_at;
    if (!job->terminating && job->deadline_ms)
        next = job->deadline_ms;
    if (job->kill_at_ms && (next == 0 || job->kill_at_ms < next))
        next = job->kill_at_ms;
    if (linger_until && (next == 0 || linger_until < next))
        next = linger_until;
    if (next == 0)
        return -1;
    if (next <= now)
        return 0;
    return next - now > 60000 ? 60000 : (int)(next - now);
}

static void run_event_loop(struct pd_job *job, struct pd_census *census)
{
    struct pollfd *pfds = calloc(job->nstreams + 1, sizeof *pfds);
    struct pd_stream **polled = calloc(job->nstreams + 1, sizeof *polled);
    int64_t linger_until = 0;
    if (pfds == NULL || polled == NULL) {
        pd_say("out of memory");
        exit(PD_EXIT_SETUP);
    }

    drain_signal_pipe(job);
    for (;;) {
        size_t n = 0;
        pfds[n++] = (struct pollfd){ .fd = signal_pipe[0],
                                     .events = POLLIN };
        for (size_t i = 0; i < job->nstreams; i++) {
            if (job->streams[i].fd < 0)
                continue;
            polled[n] = &job->streams[i];
            pfds[n++] = (struct pollfd){ .fd = job->streams[i].fd,
                                         .events = POLLIN };
        }
        if (job->live == 0 && n == 1)
            break; /* every rank reaped, all its output copied */
        int64_t now = pd_net_now_ms();
        if (job->live == 0 && linger_until == 0)
            linger_until = now + PD_DRAIN_LINGER_MS;
        if (linger_until && now >= linger_until)
            break; /* a rank's leftover child still holds its pipe */
        int ready = poll(pfds, n, next_timeout_ms(job, now, linger_until,
                                                  pd_census_next_ms(census)));
        if (ready < 0 && errno != EINTR) {
            pd_say("poll: %s", strerror(errno));
            break;
        }
        for (size_t i = 1; ready > 0 && i < n; i++)
            if (pfds[i].revents)
                pd_stream_read(polled[i]);
        if (ready > 0 && pfds[0].revents)
            drain_signal_pipe(job);
        check_timers(job, pd_net_now_ms());
        if (!job->terminating)
            pd_census_tick(census, pd_net_now_ms());
    }
    for (size_t i = 0; i < job->nstreams; i++)
        pd_stream_close(&job->streams[i]);
    free(pfds);
    free(polled);
}

/* Should the loop break with ranks alive (poll failure), leave none. */
static void kill_and_reap_stragglers(struct pd_job *job)
{
    if (job->live == 0)
        return;
    signal_live_ranks(job, SIGKILL);
    for (int r = 0; r < job->opt.nranks; r++) {
        if (!job->ranks[r].alive)
            continue;
        while (waitpid(job->ranks[r].pid, NULL, 0) < 0 && errno == EINTR)
            ;
        job->ranks[r].alive = 0;
        job->live--;
    }
}

/* A rank killed while its shared-memory segment was being mapped leaves
 * the segment's name in /dev/shm, holding RAM: remove the ranks' own
 * (now that every rank is reaped) rather than wait for the next job. */
static void sweep_segments(const struct pd_job *job)
{
    pid_t *pids = malloc((size_t)job->opt.nranks * sizeof(pid_t));
    if (pids == NULL)
        return;
    size_t n = 0;
    for (int r = 0; r < job->opt.nranks; r++)
        if (job->ranks[r].pid > 0)
            pids[n++] = job->ranks[r].pid;
    int removed = pd_shm_name_sweep(pids, n);
    if (removed > 0)
        pd_say("removed %d shared memory segment%s the ranks left in "
               "/dev/shm", removed, removed == 1 ? "" : "s");
    free(pids);
}

void pd_supervise(struct pd_job *job)
{
    /* Once pdmpirun is told to stop, ranks not yet started stay so. */
    for (int r = 0; r < job->opt.nranks && !stop_launching; r++) {
        if (pd_launch_rank(job, r) < 0) {
            pd_begin_termination(job, PD_EXIT_SETUP);
            break;
        }
    }
    pd_check_execs(job);
    struct pd_census *census = pd_census_start(job);
    run_event_loop(job, census);
    pd_census_stop(census);
    kill_and_reap_stragglers(job);
    sweep_segments(job);
}

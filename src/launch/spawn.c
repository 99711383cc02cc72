/* Starting the ranks, each in its own process group; exec failures are
 * collected afterwards so that the starts run in parallel. */
#include "pdmpirun.h"

#include <signal.h>
#include <sys/prctl.h>

/* In the child between fork and exec: async-signal-safe calls only. */
static void exec_rank(char **argv, char **env, const struct pd_rank_io *io,
                      int exec_status_fd, pid_t launcher)
{
    setpgid(0, 0);
    /* If pdmpirun is killed outright nobody watches the job any more, and
     * ranks left waiting in a collective would hang: take them along. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher)
        _exit(PD_EXIT_EXEC);
    pd_restore_signals_in_child();

    if (io->stdin_fd >= 0)
        dup2(io->stdin_fd, STDIN_FILENO);
    if (io->stdout_fd >= 0)
        dup2(io->stdout_fd, STDOUT_FILENO);
    if (io->stderr_fd >= 0)
        dup2(io->stderr_fd, STDERR_FILENO);

    execvpe(argv[0], argv, env);
    int err = errno;
    ssize_t ignored = write(exec_status_fd, &err, sizeof err);
    (void)ignored;
    _exit(PD_EXIT_EXEC);
}

/*
 * Fork one rank; -1 if it could not be started. Whether its exec worked is
 * checked later (pd_check_execs), so the ranks start in parallel.
 */
int pd_launch_rank(struct pd_job *job, int rank)
{
    struct pd_rank_io io;
    if (pd_prepare_rank_io(job, rank, &io) < 0)
        return -1;
    char **env = pd_build_environment(job, rank);
    int status_pipe[2];
    if (env == NULL || pipe2(status_pipe, O_CLOEXEC) < 0) {
        pd_say("cannot prepare rank %d: %s", pd_global_rank(job, rank),
               strerror(errno ? errno : ENOMEM));
        pd_free_environment(env);
        pd_release_rank_io(&io);
        return -1;
    }

    /* Signals stay blocked until the child has dropped pdmpirun's handlers:
     * a signal caught in between would be reported as pdmpirun's own. */
    sigset_t all, old_mask;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old_mask);
    pid_t launcher = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_rank(job->opt.program_argv, env, &io, status_pipe[1], launcher);
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    close(status_pipe[1]);
    pd_free_environment(env);
    pd_release_rank_io(&io);
    if (pid < 0) {
        close(status_pipe[0]);
        pd_say("cannot start rank %d: fork: %s", pd_global_rank(job, rank),
               strerror(fork_errno));
        return -1;
    }
    setpgid(pid, pid); /* also here: no window where it is in our group */
    job->ranks[rank].pid = pid;
    job->ranks[rank].alive = 1;
    job->ranks[rank].exec_status_fd = status_pipe[0];
    job->live++;
    return 0;
}

/*
 * Collect every started rank's exec result. All ranks run the same
 * program, so an exec failure is reported once, for the lowest rank.
 */
void pd_check_execs(struct pd_job *job)
{
    for (int r = 0; r < job->opt.nranks; r++) {
        struct pd_rank *rank = &job->ranks[r];
        if (rank->exec_status_fd < 0)
            continue;
        /* End of file, not an errno: the exec worked and closed the pipe. */
        int exec_errno = 0;
        ssize_t n;
        do
            n = read(rank->exec_status_fd, &exec_errno, sizeof exec_errno);
        while (n < 0 && errno == EINTR);
        close(rank->exec_status_fd);
        rank->exec_status_fd = -1;
        if (n != (ssize_t)sizeof exec_errno || exec_errno == 0 ||
            job->terminating)
            continue;
        pd_say("rank %d: cannot execute %s: %s", pd_global_rank(job, r),
               job->opt.program_argv[0], strerror(exec_errno));
        pd_begin_termination(job, PD_EXIT_EXEC);
    }
}


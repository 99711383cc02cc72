/* Where each rank's output goes (inherited, tagged, logged), and copying
 * what the ranks' pipes carry to the terminal and the log files. */
#include "pdmpirun.h"

#include <poll.h>
#include <sys/stat.h>

#define PD_LINE_MAX (64 * 1024)     /* longer lines are split */
#define PD_READ_CHUNK (64 * 1024)

static int echo_broken[3];  /* stdout/stderr gone: stop echoing there */

int pd_make_log_dir(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) < 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* -1 when fd takes no more; the caller decides what is lost. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EAGAIN) {
            /* A non-blocking stdout inherited from the caller. */
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            poll(&pfd, 1, 100);
        } else if (!(n < 0 && errno == EINTR)) {
            return -1;
        }
    }
    return 0;
}

/* A closed terminal or pipe must not stop the job, only the echo. */
static void echo_write(int fd, const char *buf, size_t len)
{
    if (!echo_broken[fd] && write_all(fd, buf, len) < 0)
        echo_broken[fd] = 1;
}

/* One tagged line in one write, so lines of different ranks never mix. */
static void emit_tagged_line(const struct pd_stream *s, const char *data,
                             size_t len)
{
    static char buf[PD_LINE_MAX + 32];
    int tag_len = snprintf(buf, sizeof buf, "[%d] ", s->rank);
    memcpy(buf + tag_len, data, len);
    buf[tag_len + len] = '\n';
    echo_write(s->echo_fd, buf, (size_t)tag_len + len + 1);
}

static int stream_append(struct pd_stream *s, const char *data, size_t len)
{
    if (s->line_len + len > s->line_cap) {
        size_t cap = s->line_cap ? s->line_cap : 256;
        while (cap < s->line_len + len)
            cap *= 2;
        char *line = realloc(s->line, cap);
        if (line == NULL)
            return -1;
        s->line = line;
        s->line_cap = cap;
    }
    memcpy(s->line + s->line_len, data, len);
    s->line_len += len;
    return 0;
}

static void stream_flush_line(struct pd_stream *s)
{
    if (s->line_len == 0)
        return;
    emit_tagged_line(s, s->line, s->line_len);
    s->line_len = 0;
}

static void stream_tag_output(struct pd_stream *s, const char *data,
                              size_t len)
{
    while (len > 0) {
        const char *newline = memchr(data, '\n', len);
        size_t line_end = newline ? (size_t)(newline - data) : len;
        size_t take = line_end;
        if (take > PD_LINE_MAX - s->line_len)
            take = PD_LINE_MAX - s->line_len; /* an endless line: split it */
        int completes = newline != NULL && take == line_end;

        if (s->line_len == 0 && completes) {
            emit_tagged_line(s, data, take); /* whole line in hand: no copy */
        } else {
            if (stream_append(s, data, take) < 0)
                s->line_len = 0;
            if (completes || s->line_len == PD_LINE_MAX)
                stream_flush_line(s);
        }
        data += take + (size_t)completes;
        len -= take + (size_t)completes;
    }
}

void pd_stream_close(struct pd_stream *s)
{
    if (s->fd < 0)
        return;
    if (s->tag)
        stream_flush_line(s);
    close(s->fd);
    s->fd = -1;
    free(s->line);
    s->line = NULL;
    s->line_len = s->line_cap = 0;
}

void pd_stream_read(struct pd_stream *s)
{
    static char buf[PD_READ_CHUNK];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n <= 0) {
        if (n == 0 || (errno != EINTR && errno != EAGAIN))
            pd_stream_close(s);
        return;
    }
    /* Disk full: keep the job running, lose the log tail. */
    if (s->log_fd >= 0)
        write_all(s->log_fd, buf, (size_t)n);
    if (s->tag)
        stream_tag_output(s, buf, (size_t)n);
    else
        echo_write(s->echo_fd, buf, (size_t)n);
}

static int open_log_file(const struct pd_job *job, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/workerlog.%d", job->opt.log_dir,
             pd_global_rank(job, rank));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        pd_say("cannot open log file %s: %s", path, strerror(errno));
    return fd;
}

/*
 * Decide where rank's output goes. Creates the pipes pdmpirun reads (their
 * write ends are returned in io and closed by the caller after fork).
 *   plain          inherit pdmpirun's stdout/stderr
 *   --tag-output   stdout and stderr through two pipes, tagged
 *   --log-dir      rank R > 0 writes its log file directly; rank 0 writes
 *                  one pipe (log order kept) that pdmpirun tees to stdout
 */
/* A pipe whose read end pdmpirun copies; its write end is the rank's. */
static int open_stream(struct pd_job *job, int rank, int echo_fd, int log_fd,
                       int tag)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        pd_say("cannot create a pipe for rank %d: %s",
               pd_global_rank(job, rank), strerror(errno));
        return -1;
    }
    job->streams[job->nstreams++] = (struct pd_stream){
        .fd = p[0], .rank = pd_global_rank(job, rank), .echo_fd = echo_fd,
        .log_fd = log_fd, .tag = tag };
    return p[1];
}

/*
 * Decide where rank's output goes. Creates the pipes pdmpirun reads (their
 * write ends are returned in io and closed by the caller after fork).
 *   plain          inherit pdmpirun's stdout/stderr
 *   --tag-output   stdout and stderr through two pipes, tagged
 *   --log-dir      rank R > 0 writes its log file directly; rank 0 writes
 *                  one pipe (log order kept) that pdmpirun tees to stdout
 */
int pd_prepare_rank_io(struct pd_job *job, int rank, struct pd_rank_io *io)
{
    *io = (struct pd_rank_io){ .stdin_fd = -1, .stdout_fd = -1,
                               .stderr_fd = -1 };
    if (rank != 0 || isatty(STDIN_FILENO))
        io->stdin_fd = job->stdin_null_fd;

    if (job->opt.log_dir != NULL) {
        int log_fd = open_log_file(job, rank);
        if (log_fd < 0)
            return -1;
        if (rank != 0) {
            io->stdout_fd = io->stderr_fd = log_fd;
            return 0;
        }
        io->stdout_fd = io->stderr_fd = open_stream(
            job, rank, STDOUT_FILENO, log_fd, job->opt.tag_output);
        if (io->stdout_fd < 0) {
            close(log_fd);
            return -1;
        }
        job->ranks[rank].log_fd = log_fd;
        return 0;
    }
    if (!job->opt.tag_output)
        return 0;

    io->stdout_fd = open_stream(job, rank, STDOUT_FILENO, -1, 1);
    if (io->stdout_fd < 0)
        return -1;
    io->stderr_fd = open_stream(job, rank, STDERR_FILENO, -1, 1);
    if (io->stderr_fd < 0) {
        close(io->stdout_fd);
        return -1;
    }
    return 0;
}

/* Close pdmpirun's copies of what the child now holds. */
void pd_release_rank_io(const struct pd_rank_io *io)
{
    if (io->stdout_fd >= 0)
        close(io->stdout_fd);
    if (io->stderr_fd >= 0 && io->stderr_fd != io->stdout_fd)
        close(io->stderr_fd);
}

/*
 * pdmpirun: start N ranks of one pdmpi job on this machine.
 *
 * pdmpirun hosts the job's rendezvous store, forks the ranks (each in its
 * own process group, told its rank and the store through PDMPI_*), copies
 * their output when asked to tag or log it, and watches them: the first
 * rank to fail is named and takes the rest of the job down with it, so a
 * dead rank never leaves its peers hanging in a collective.
 *
 * Everything after the ranks start runs in one poll() loop on the main
 * thread: signal handlers only write the signal number into a pipe, and
 * the loop reaps children, forwards signals, copies output and runs the
 * --timeout and kill-grace timers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* pipe2, execvpe, environ under -std=c11 */
#endif
/* The build may already force-include config.h; it has no include guard. */
#if defined(HAVE_CONFIG_H) && !defined(PACKAGE_VERSION)
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/env.h"
#include "boot/net.h"
#include "boot/store.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

#define PD_EXIT_SETUP 1
#define PD_EXIT_USAGE 2
#define PD_EXIT_TIMEOUT 124
#define PD_EXIT_EXEC 127
#define PD_MAX_RANKS 65536
#define PD_DEFAULT_KILL_GRACE_S 3.0
#define PD_LINE_MAX (64 * 1024)     /* longer lines are split */
#define PD_READ_CHUNK (64 * 1024)
/* Once every rank is reaped, how long output pipes still held open by a
 * rank's leftover children may delay pdmpirun's exit. */
#define PD_DRAIN_LINGER_MS 1000

struct pd_options {
    int nranks;
    const char *backend;      /* NULL: not given */
    const char *log_dir;      /* NULL: not given */
    int tag_output;
    double timeout_s;         /* 0: no timeout */
    int nnodes;               /* hosts in the job (--nnodes, default 1) */
    int node_rank;            /* this host's index (--node-rank) */
    const char *master;       /* --master HOST:PORT, or NULL */
    const char *job_id;       /* --job-id, or NULL */
    int *devices;             /* --devices: one device id per rank, or NULL */
    int ndevices;
    const char *timeout_text; /* as the user wrote it, for messages */
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

/* Ranks are numbered across hosts: host I runs I*N .. I*N+N-1. */
static int global_rank(const struct pd_job *job, int local)
{
    return job->opt.node_rank * job->opt.nranks + local;
}

static int signal_pipe[2] = { -1, -1 };
static int hup_handled;     /* 0 when SIGHUP came in ignored (nohup) */
static volatile sig_atomic_t stop_launching;
static int echo_broken[3];  /* stdout/stderr gone: stop echoing there */

/* ---------------------------------------------------------- messages */

static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pdmpirun: %s\n", line);
}

static void usage_error(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pdmpirun: %s (try 'pdmpirun --help')\n", line);
    exit(PD_EXIT_USAGE);
}

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

static void print_help(void)
{
    fputs(
"Usage: pdmpirun -np N [OPTIONS] [--] PROGRAM [ARGS...]\n"
"       pdmpirun --nnodes M --node-rank I --master HOST:PORT -np N [OPTIONS]\n"
"                [--] PROGRAM [ARGS...]   (run once on each of M hosts)\n"
"\n"
"Start N copies of PROGRAM on this machine as the ranks of one pdmpi job;\n"
"with --nnodes, as ranks I*N .. I*N+N-1 of a job of M*N ranks across hosts.\n"
"\n"
"Options:\n"
"  -np N, -n N, --np N  number of ranks to start (required, N >= 1)\n"
"  --backend NAME       collective backend for every rank: gloo, nccl, bkcl\n"
"                       or auto (sets PDMPI_BACKEND; without it the ranks\n"
"                       inherit whatever PDMPI_BACKEND pdmpirun has)\n"
"  --log-dir DIR        write each rank's stdout and stderr to\n"
"                       DIR/workerlog.R (DIR is created, files truncated);\n"
"                       rank 0's output is also echoed to stdout\n"
"  --tag-output         prefix each line of output with \"[R] \", R the rank\n"
"                       (with --log-dir: the echo of rank 0 is tagged)\n"
"  --timeout SECONDS    take the job down if it runs longer (exit 124)\n"
"  --nnodes M           number of hosts in the job (default 1)\n"
"  --node-rank I        this host's index, 0..M-1 (default 0)\n"
"  --master HOST:PORT   where host 0's pdmpirun serves the rendezvous store\n"
"                       (required with --nnodes M > 1; HOST must be an\n"
"                       address every host reaches, not loopback)\n"
"  --job-id ID          name of the job, mixed into the job key so that a\n"
"                       pdmpirun of another job at the same master is refused\n"
"  --devices LIST       device ids, one per rank (e.g. 0,1,2,3): rank I on\n"
"                       this host uses the I-th (sets PDMPI_DEVICE); -np\n"
"                       defaults to their number\n"
"  -h, --help           show this help and exit\n"
"  --version            show the version and exit\n"
"\n"
"Each rank runs in its own process group, with pdmpirun's environment plus:\n"
"  PDMPI_RANK           the rank, 0..M*N-1\n"
"  PDMPI_SIZE           M*N\n"
"  PDMPI_LOCAL_RANK     the rank on this machine, 0..N-1\n"
"  PDMPI_LOCAL_SIZE     ranks on this machine (= N)\n"
"  PDMPI_STORE          the job's rendezvous store: 127.0.0.1:PORT on one\n"
"                       host (a port the kernel picks), else --master\n"
"  PDMPI_JOBKEY         key that identifies this job to the store: random\n"
"                       on one host, derived from --master, -np, --nnodes\n"
"                       and --job-id across hosts\n"
"  PDMPI_BACKEND        the --backend value (only when --backend is given)\n"
"  PDMPI_DEVICE         this rank's device id (only when --devices is given)\n"
"Rank 0 reads pdmpirun's standard input unless that is a terminal; the\n"
"other ranks read /dev/null.\n"
"\n"
"When a rank exits with a non-zero code or is killed by a signal, pdmpirun\n"
"names it, sends SIGTERM to the other ranks, waits PDMPI_KILL_GRACE seconds\n"
"and then sends SIGKILL. SIGINT, SIGTERM and SIGHUP received by pdmpirun are\n"
"forwarded to every rank, with the same grace; a second one kills at once.\n"
"(Under nohup, SIGHUP stays ignored by pdmpirun and the ranks.) If pdmpirun\n"
"itself is killed with SIGKILL, the ranks get SIGKILL too.\n"
"\n"
"Environment read by pdmpirun:\n"
"  PDMPI_KILL_GRACE     seconds between SIGTERM and SIGKILL (default 3)\n"
"\n"
"Exit status: 0 when every rank exits 0; else the first failing rank's exit\n"
"code, or 128+S if signal S killed it; 124 after --timeout; 128+S when\n"
"pdmpirun itself got signal S; 127 when PROGRAM cannot be executed; 2 for\n"
"bad usage; 1 when the job cannot be set up.\n",
        stdout);
}

/* ------------------------------------------------------ argument parsing */

static int parse_rank_count(const char *text)
{
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || n <= 0)
        usage_error("-np needs a positive integer, got '%s'", text);
    if (n > PD_MAX_RANKS)
        usage_error("-np %ld is more ranks than pdmpirun supports (%d)", n,
                    PD_MAX_RANKS);
    return (int)n;
}

static int parse_count(const char *option, const char *text, long min,
                       long max)
{
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || n < min || n > max)
        usage_error("%s needs an integer in [%ld, %ld], got '%s'", option, min,
                    max, text);
    return (int)n;
}

static const char *parse_master(const char *text)
{
    char host[PD_NET_HOST_LEN], port[PD_NET_PORT_LEN], why[256];
    if (pd_net_split_addr(text, host, sizeof host, port, sizeof port, why,
                          sizeof why) != 0)
        usage_error("--master %s: %s", text, why);
    return text;
}

/* "0,1,3": one non-negative device id per rank, none twice. */
static void parse_devices(const char *text, struct pd_options *o)
{
    int cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    free(o->devices); /* --devices given twice: the last one counts */
    o->devices = calloc((size_t)cap, sizeof(int));
    if (o->devices == NULL)
        usage_error("out of memory");
    o->ndevices = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long id = strtol(p, &end, 10);
        if (errno != 0 || end == p || id < 0 || id > 65535 ||
            (*end != ',' && *end != '\0'))
            usage_error("--devices needs device ids like 0,1,2, got '%s'",
                        text);
        for (int i = 0; i < o->ndevices; i++)
            if (o->devices[i] == id)
                usage_error("--devices lists device %ld twice: one rank per "
                            "device", id);
        o->devices[o->ndevices++] = (int)id;
        if (*end == '\0')
            break;
        p = end + 1;
    }
}

static double parse_seconds(const char *option, const char *text)
{
    char *end;
    errno = 0;
    double s = strtod(text, &end);
    /* !(s > 0) also refuses NaN; the upper bound refuses infinity. */
    if (errno != 0 || end == text || *end != '\0' || !(s > 0) || s > 1e9)
        usage_error("%s needs a positive number of seconds, got '%s'", option,
                    text);
    return s;
}

static const char *parse_backend(const char *text)
{
    static const char *known[] = { "gloo", "nccl", "bkcl", "auto" };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(text, known[i]) == 0)
            return known[i];
    usage_error("unknown backend '%s' (expected gloo, nccl, bkcl or auto)",
                text);
    return NULL;
}

/*
 * If arg is one of names ("--opt" or "--opt=value" forms), return its value
 * (advancing *i past a separate value), else NULL.
 */
static const char *option_value(int argc, char **argv, int *i,
                                const char *const *names)
{
    const char *arg = argv[*i];
    for (; *names != NULL; names++) {
        size_t len = strlen(*names);
        if (strncmp(arg, *names, len) != 0)
            continue;
        if (arg[len] == '=')
            return arg + len + 1;
        if (arg[len] != '\0')
            continue;
        if (*i + 1 >= argc)
            usage_error("%s needs a value", *names);
        return argv[++*i];
    }
    return NULL;
}

static void parse_args(int argc, char **argv, struct pd_options *o)
{
    static const char *const np_names[] = { "-np", "--np", "-n", NULL };
    static const char *const backend_names[] = { "--backend", NULL };
    static const char *const log_names[] = { "--log-dir", NULL };
    static const char *const timeout_names[] = { "--timeout", NULL };
    static const char *const nnodes_names[] = { "--nnodes", NULL };
    static const char *const node_rank_names[] = { "--node-rank", NULL };
    static const char *const master_names[] = { "--master", NULL };
    static const char *const job_id_names[] = { "--job-id", NULL };
    static const char *const devices_names[] = { "--devices", NULL };
    const char *value;
    int i = 1;

    memset(o, 0, sizeof *o);
    o->nnodes = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            break;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help();
            exit(0);
        }
        if (strcmp(arg, "--version") == 0) {
            printf("pdmpirun (pdmpi) %s\n", PACKAGE_VERSION);
            exit(0);
        }
        if (strcmp(arg, "--tag-output") == 0)
            o->tag_output = 1;
        else if ((value = option_value(argc, argv, &i, np_names)) != NULL)
            o->nranks = parse_rank_count(value);
        else if ((value = option_value(argc, argv, &i, backend_names)) != NULL)
            o->backend = parse_backend(value);
        else if ((value = option_value(argc, argv, &i, log_names)) != NULL) {
            if (*value == '\0')
                usage_error("--log-dir needs a directory");
            o->log_dir = value;
        } else if ((value = option_value(argc, argv, &i, timeout_names))) {
            o->timeout_s = parse_seconds("--timeout", value);
            o->timeout_text = value;
        } else if ((value = option_value(argc, argv, &i, nnodes_names)))
            o->nnodes = parse_count("--nnodes", value, 1, PD_MAX_RANKS);
        else if ((value = option_value(argc, argv, &i, node_rank_names)))
            o->node_rank = parse_count("--node-rank", value, 0, PD_MAX_RANKS);
        else if ((value = option_value(argc, argv, &i, master_names)))
            o->master = parse_master(value);
        else if ((value = option_value(argc, argv, &i, devices_names)))
            parse_devices(value, o);
        else if ((value = option_value(argc, argv, &i, job_id_names))) {
            if (*value == '\0' || strlen(value) > 200)
                usage_error("--job-id needs a name of 1-200 characters");
            o->job_id = value;
        } else
            usage_error("unknown option '%s'", arg);
    }
    if (o->nranks == 0 && o->ndevices > 0)
        o->nranks = o->ndevices;
    if (o->nranks == 0)
        usage_error("missing -np N (how many ranks to start)");
    if (o->ndevices > 0 && o->ndevices != o->nranks)
        usage_error("--devices lists %d devices for -np %d: give one per rank",
                    o->ndevices, o->nranks);
    if (i >= argc)
        usage_error("missing the program to run");
    if (o->node_rank >= o->nnodes)
        usage_error("--node-rank %d is not below --nnodes %d", o->node_rank,
                    o->nnodes);
    if (o->nnodes > 1 && o->master == NULL)
        usage_error("--nnodes %d needs --master HOST:PORT (host 0's address)",
                    o->nnodes);
    if ((long)o->nnodes * o->nranks > PD_MAX_RANKS)
        usage_error("--nnodes %d x -np %d is more ranks than pdmpirun "
                    "supports (%d)", o->nnodes, o->nranks, PD_MAX_RANKS);
    o->program_argv = argv + i;
}

static int64_t kill_grace_ms(void)
{
    const char *text = getenv("PDMPI_KILL_GRACE");
    if (text == NULL || *text == '\0')
        return (int64_t)(PD_DEFAULT_KILL_GRACE_S * 1000);
    char *end;
    errno = 0;
    double s = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(s >= 0) ||
        s > 86400) {
        say("ignoring PDMPI_KILL_GRACE='%s' (not a number of seconds); "
            "using %g", text, PD_DEFAULT_KILL_GRACE_S);
        return (int64_t)(PD_DEFAULT_KILL_GRACE_S * 1000);
    }
    return (int64_t)(s * 1000);
}

/* ------------------------------------------------------------ set-up */

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

static int install_signal_handlers(void)
{
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    struct sigaction sa = { 0 };
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    const int handled[] = { SIGCHLD, SIGINT, SIGTERM };
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        if (sigaction(handled[i], &sa, NULL) < 0)
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

/* Copied output needs two descriptors per rank in pdmpirun. */
static void raise_fd_limit(int needed)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= (rlim_t)needed)
        return;
    rl.rlim_cur = rl.rlim_max < (rlim_t)needed ? rl.rlim_max : (rlim_t)needed;
    setrlimit(RLIMIT_NOFILE, &rl);
}

static int make_dirs(const char *path)
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

/* ------------------------------------------------------ environment */

static int is_variable(const char *entry, const char *name)
{
    size_t len = strlen(name);
    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static int is_ours(const char *entry, int backend_given, int devices_given)
{
    if (devices_given && is_variable(entry, "PDMPI_DEVICE"))
        return 1;
    static const char *const ours[] = {
        "PDMPI_RANK", "PDMPI_SIZE", "PDMPI_LOCAL_RANK", "PDMPI_LOCAL_SIZE",
        "PDMPI_STORE", "PDMPI_JOBKEY", NULL,
    };
    for (const char *const *name = ours; *name; name++)
        if (is_variable(entry, *name))
            return 1;
    return backend_given && is_variable(entry, "PDMPI_BACKEND");
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

#define PD_OWN_VARIABLES 8

/*
 * The rank's environment: pdmpirun's, with the PDMPI_* variables this job
 * defines replaced (a nested or leftover value must not leak through).
 * Built before fork, because the child may not allocate.
 */
static char **build_environment(const struct pd_job *job, int rank)
{
    size_t count = 0;
    while (environ[count] != NULL)
        count++;
    char **env = calloc(count + PD_OWN_VARIABLES + 1, sizeof *env);
    if (env == NULL)
        return NULL;

    size_t n = 0;
    int backend_given = job->opt.backend != NULL;
    for (size_t i = 0; i < count; i++)
        if (!is_ours(environ[i], backend_given, job->opt.devices != NULL))
            env[n++] = environ[i];

    size_t first_own = n;
    env[n++] = format_variable("PDMPI_RANK", "%d", global_rank(job, rank));
    env[n++] = format_variable("PDMPI_SIZE", "%d",
                               job->opt.nnodes * job->opt.nranks);
    env[n++] = format_variable("PDMPI_LOCAL_RANK", "%d", rank);
    env[n++] = format_variable("PDMPI_LOCAL_SIZE", "%d", job->opt.nranks);
    env[n++] = format_variable("PDMPI_STORE", "%s", job->store_addr);
    env[n++] = format_variable("PDMPI_JOBKEY", "%s", job->job_key);
    if (backend_given)
        env[n++] = format_variable("PDMPI_BACKEND", "%s", job->opt.backend);
    if (job->opt.devices != NULL)
        env[n++] = format_variable("PDMPI_DEVICE", "%d",
                                   job->opt.devices[rank]);
    for (size_t i = first_own; i < n; i++) {
        if (env[i] == NULL) {
            for (size_t j = first_own; j < n; j++)
                free(env[j]);
            free(env);
            return NULL;
        }
    }
    return env;
}

/* Frees what build_environment allocated: its own entries start at the
 * first PDMPI_RANK, since the inherited one was filtered out. */
static void free_environment(char **env)
{
    if (env == NULL)
        return;
    size_t i = 0;
    while (env[i] != NULL && !is_variable(env[i], "PDMPI_RANK"))
        i++;
    for (; env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

/* -------------------------------------------------------------- output */

static void write_all_or_mark_broken(int fd, const char *buf, size_t len)
{
    if (fd <= 2 && echo_broken[fd])
        return;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            poll(&pfd, 1, 100);
            continue;
        }
        if (fd <= 2)
            echo_broken[fd] = 1;
        return;
    }
}

static void log_write(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return; /* disk full: keep the job running, lose the log tail */
        }
    }
}

/* One tagged line in one write, so lines of different ranks never mix. */
static void emit_tagged_line(const struct pd_stream *s, const char *data,
                             size_t len)
{
    static char buf[PD_LINE_MAX + 32];
    int tag_len = snprintf(buf, sizeof buf, "[%d] ", s->rank);
    memcpy(buf + tag_len, data, len);
    buf[tag_len + len] = '\n';
    write_all_or_mark_broken(s->echo_fd, buf, (size_t)tag_len + len + 1);
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

static void stream_copy(struct pd_stream *s, const char *data, size_t len)
{
    if (s->log_fd >= 0)
        log_write(s->log_fd, data, len);
    if (s->tag)
        stream_tag_output(s, data, len);
    else
        write_all_or_mark_broken(s->echo_fd, data, len);
}

static void stream_close(struct pd_stream *s)
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

static void stream_read(struct pd_stream *s)
{
    static char buf[PD_READ_CHUNK];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n > 0)
        stream_copy(s, buf, (size_t)n);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        stream_close(s);
}

static int streams_open(const struct pd_job *job)
{
    for (size_t i = 0; i < job->nstreams; i++)
        if (job->streams[i].fd >= 0)
            return 1;
    return 0;
}

/* ----------------------------------------------------------- children */

/* Where one rank's standard descriptors go, decided before fork. */
struct pd_rank_io {
    int stdin_fd;   /* -1: inherit */
    int stdout_fd;  /* -1: inherit */
    int stderr_fd;  /* -1: inherit */
};

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
    struct sigaction dfl = { 0 };
    dfl.sa_handler = SIG_DFL;
    const int reset[] = { SIGCHLD, SIGINT, SIGTERM, SIGPIPE };
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
        sigaction(reset[i], &dfl, NULL);
    if (hup_handled)
        sigaction(SIGHUP, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

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

/* 0 once the child has exec'ed, else the errno of its failed exec. */
static int wait_for_exec(int status_fd)
{
    int err = 0;
    ssize_t n;
    do
        n = read(status_fd, &err, sizeof err);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof err ? err : 0;
}

static struct pd_stream *add_stream(struct pd_job *job, int fd, int rank,
                                    int echo_fd, int log_fd, int tag)
{
    struct pd_stream *s = &job->streams[job->nstreams++];
    *s = (struct pd_stream){ .fd = fd, .rank = global_rank(job, rank),
                             .echo_fd = echo_fd,
                             .log_fd = log_fd, .tag = tag };
    return s;
}

static int open_log_file(const struct pd_job *job, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/workerlog.%d", job->opt.log_dir,
             global_rank(job, rank));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        say("cannot open log file %s: %s", path, strerror(errno));
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
static int prepare_rank_io(struct pd_job *job, int rank,
                           struct pd_rank_io *io)
{
    int p[2];
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
        if (pipe2(p, O_CLOEXEC) < 0) {
            say("cannot create a pipe for rank 0: %s", strerror(errno));
            close(log_fd);
            return -1;
        }
        job->ranks[rank].log_fd = log_fd;
        add_stream(job, p[0], rank, STDOUT_FILENO, log_fd,
                   job->opt.tag_output);
        io->stdout_fd = io->stderr_fd = p[1];
        return 0;
    }
    if (!job->opt.tag_output)
        return 0;

    if (pipe2(p, O_CLOEXEC) < 0)
        goto no_pipe;
    add_stream(job, p[0], rank, STDOUT_FILENO, -1, 1);
    io->stdout_fd = p[1];
    if (pipe2(p, O_CLOEXEC) < 0)
        goto no_pipe;
    add_stream(job, p[0], rank, STDERR_FILENO, -1, 1);
    io->stderr_fd = p[1];
    return 0;

no_pipe:
    say("cannot create a pipe for rank %d: %s", global_rank(job, rank),
        strerror(errno));
    if (io->stdout_fd >= 0)
        close(io->stdout_fd);
    return -1;
}

/* Close pdmpirun's copies of what the child now holds. */
static void release_rank_io(const struct pd_rank_io *io)
{
    if (io->stdout_fd >= 0)
        close(io->stdout_fd);
    if (io->stderr_fd >= 0 && io->stderr_fd != io->stdout_fd)
        close(io->stderr_fd);
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

static void begin_termination(struct pd_job *job, int exit_code)
{
    if (job->terminating)
        return;
    job->terminating = 1;
    job->exit_code = exit_code;
    signal_live_ranks(job, SIGTERM);
    job->kill_at_ms = pd_net_now_ms() + job->grace_ms;
}

static void describe_others(const struct pd_job *job, char *buf, size_t len)
{
    if (job->live == 0)
        buf[0] = '\0';
    else
        snprintf(buf, len, "; terminating the other %d rank%s", job->live,
                 job->live == 1 ? "" : "s");
}

static void on_rank_exit(struct pd_job *job, int rank, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (job->terminating)
        return; /* collateral of a failure already reported */

    char others[64];
    describe_others(job, others, sizeof others);
    pid_t pid = job->ranks[rank].pid;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        say("rank %d (pid %d) was killed by signal %d (%s)%s%s",
            global_rank(job, rank),
            (int)pid, sig, signal_name(sig),
            WCOREDUMP(status) ? ", core dumped" : "", others);
        begin_termination(job, 128 + sig);
    } else {
        int code = WEXITSTATUS(status);
        say("rank %d (pid %d) exited with code %d%s", global_rank(job, rank),
            (int)pid, code, others);
        begin_termination(job, code);
    }
}

static int rank_of_pid(const struct pd_job *job, pid_t pid)
{
    for (int r = 0; r < job->opt.nranks; r++)
        if (job->ranks[r].pid == pid)
            return r;
    return -1;
}

static void reap_children(struct pd_job *job)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        int rank = rank_of_pid(job, pid);
        if (rank < 0 || !job->ranks[rank].alive)
            continue;
        job->ranks[rank].alive = 0;
        job->live--;
        on_rank_exit(job, rank, status);
    }
}

/*
 * Fork one rank; -1 if it could not be started. Whether its exec worked is
 * checked later (check_execs), so the ranks start in parallel.
 */
static int launch_rank(struct pd_job *job, int rank)
{
    struct pd_rank_io io;
    if (prepare_rank_io(job, rank, &io) < 0)
        return -1;
    char **env = build_environment(job, rank);
    int status_pipe[2];
    if (env == NULL || pipe2(status_pipe, O_CLOEXEC) < 0) {
        say("cannot prepare rank %d: %s", global_rank(job, rank),
            strerror(errno ? errno
                                                                : ENOMEM));
        free_environment(env);
        release_rank_io(&io);
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
    free_environment(env);
    release_rank_io(&io);
    if (pid < 0) {
        close(status_pipe[0]);
        say("cannot start rank %d: fork: %s", global_rank(job, rank),
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
static void check_execs(struct pd_job *job)
{
    for (int r = 0; r < job->opt.nranks; r++) {
        struct pd_rank *rank = &job->ranks[r];
        if (rank->exec_status_fd < 0)
            continue;
        int exec_errno = wait_for_exec(rank->exec_status_fd);
        close(rank->exec_status_fd);
        rank->exec_status_fd = -1;
        if (exec_errno == 0 || job->terminating)
            continue;
        say("rank %d: cannot execute %s: %s", global_rank(job, r),
            job->opt.program_argv[0],
            strerror(exec_errno));
        begin_termination(job, PD_EXIT_EXEC);
    }
}

static void launch_all(struct pd_job *job)
{
    for (int r = 0; r < job->opt.nranks; r++) {
        if (stop_launching)
            break;
        if (launch_rank(job, r) < 0) {
            begin_termination(job, PD_EXIT_SETUP);
            break;
        }
    }
    check_execs(job);
}

/* ---------------------------------------------------------- main loop */

static void on_forwarded_signal(struct pd_job *job, int sig)
{
    if (!job->terminating) {
        say("received %s; forwarding it to %d rank%s", signal_name(sig),
            job->live, job->live == 1 ? "" : "s");
        job->terminating = 1;
        job->exit_code = 128 + sig;
        signal_live_ranks(job, sig);
        job->kill_at_ms = pd_net_now_ms() + job->grace_ms;
        return;
    }
    if (job->live > 0) {
        say("received %s again; killing %d rank%s", signal_name(sig),
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
        say("job exceeded --timeout %ss; terminating %d rank%s",
            job->opt.timeout_text, job->live, job->live == 1 ? "" : "s");
        begin_termination(job, PD_EXIT_TIMEOUT);
    }
    if (job->kill_at_ms && now >= job->kill_at_ms) {
        signal_live_ranks(job, SIGKILL);
        job->kill_at_ms = 0;
    }
}

static int next_timeout_ms(const struct pd_job *job, int64_t now,
                           int64_t linger_until)
{
    int64_t next = 0;
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

static void run_event_loop(struct pd_job *job)
{
    struct pollfd *pfds = calloc(job->nstreams + 1, sizeof *pfds);
    struct pd_stream **polled = calloc(job->nstreams + 1, sizeof *polled);
    int64_t linger_until = 0;
    if (pfds == NULL || polled == NULL) {
        say("out of memory");
        exit(PD_EXIT_SETUP);
    }

    drain_signal_pipe(job);
    while (job->live > 0 || streams_open(job)) {
        int64_t now = pd_net_now_ms();
        if (job->live == 0 && linger_until == 0)
            linger_until = now + PD_DRAIN_LINGER_MS;
        if (linger_until && now >= linger_until)
            break; /* a rank's leftover child still holds its pipe */

        size_t n = 0;
        pfds[n++] = (struct pollfd){ .fd = signal_pipe[0], .events = POLLIN };
        for (size_t i = 0; i < job->nstreams; i++) {
            if (job->streams[i].fd < 0)
                continue;
            polled[n] = &job->streams[i];
            pfds[n++] = (struct pollfd){ .fd = job->streams[i].fd,
                                         .events = POLLIN };
        }
        int ready = poll(pfds, n, next_timeout_ms(job, now, linger_until));
        if (ready < 0 && errno != EINTR) {
            say("poll: %s", strerror(errno));
            break;
        }
        for (size_t i = 1; ready > 0 && i < n; i++)
            if (pfds[i].revents)
                stream_read(polled[i]);
        if (ready > 0 && pfds[0].revents)
            drain_signal_pipe(job);
        check_timers(job, pd_net_now_ms());
    }
    for (size_t i = 0; i < job->nstreams; i++)
        stream_close(&job->streams[i]);
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

/* ---------------------------------------------------------------- main */

/*
 * One host: a store on loopback at a port the kernel picks, a random key.
 * Across hosts: host 0 serves the store at --master (all interfaces) and
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
            say("cannot start the rendezvous store: %s", err);
            return -1;
        }
        snprintf(job->store_addr, sizeof job->store_addr, "127.0.0.1:%d",
                 port);
        return 0;
    }
    char material[512];
    snprintf(material, sizeof material, "%s|%d|%d|%s", o->master, o->nnodes,
             o->nranks, o->job_id ? o->job_id : "");
    pd_derive_job_key("pdmpirun", material, job->job_key,
                      sizeof job->job_key);
    snprintf(job->store_addr, sizeof job->store_addr, "%s", o->master);
    if (o->node_rank != 0)
        return 0;
    char host[PD_NET_HOST_LEN], port_text[PD_NET_PORT_LEN];
    pd_net_split_addr(o->master, host, sizeof host, port_text,
                      sizeof port_text, err, sizeof err);
    int port = atoi(port_text);
    if (pd_store_server_start(NULL, job->job_key, server, &port, err,
                              sizeof err) < 0) {
        say("cannot serve the rendezvous store at --master %s: %s", o->master,
            err);
        return -1;
    }
    return 0;
}

static int setup_job(struct pd_job *job, struct pd_store_server **server)
{
    if (setup_store(job, server) < 0)
        return -1;

    if (job->opt.log_dir != NULL && make_dirs(job->opt.log_dir) < 0) {
        say("cannot create log directory %s: %s", job->opt.log_dir,
            strerror(errno));
        return -1;
    }
    job->stdin_null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->stdin_null_fd < 0) {
        say("cannot open /dev/null: %s", strerror(errno));
        return -1;
    }
    int nranks = job->opt.nranks;
    job->ranks = calloc((size_t)nranks, sizeof *job->ranks);
    job->streams = calloc((size_t)nranks * 2, sizeof *job->streams);
    if (job->ranks == NULL || job->streams == NULL) {
        say("out of memory for %d ranks", nranks);
        return -1;
    }
    for (int r = 0; r < nranks; r++) {
        job->ranks[r].log_fd = -1;
        job->ranks[r].exec_status_fd = -1;
    }
    job->grace_ms = kill_grace_ms();
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

    parse_args(argc, argv, &job.opt);
    ensure_standard_fds();
    raise_fd_limit(3 * job.opt.nranks + 64);
    if (install_signal_handlers() < 0) {
        say("cannot install signal handlers: %s", strerror(errno));
        return PD_EXIT_SETUP;
    }
    if (setup_job(&job, &server) < 0) {
        teardown_job(&job, server);
        return PD_EXIT_SETUP;
    }

    launch_all(&job);
    run_event_loop(&job);
    kill_and_reap_stragglers(&job);
    teardown_job(&job, server);
    return job.terminating ? job.exit_code : 0;
}

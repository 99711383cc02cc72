/* The command line, its usage text and PDMPI_KILL_GRACE: checked before
 * anything starts, so that a mistake ends pdmpirun at no cost. */
#include "pdmpirun.h"

#include <limits.h>
#include <strings.h>
#include <stdarg.h>

#include "boot/env.h"
#include "boot/net.h"

#define PD_MAX_RANKS 65536
#define PD_DEFAULT_KILL_GRACE_S 3.0

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
"  --dropin             run a program linked against Open MPI's libmpi.so.40\n"
"                       unchanged: the ranks load pdmpi under that name\n"
"                       (LD_LIBRARY_PATH starts with pdmpi's drop-in folder)\n"
"  --devices LIST       device ids, one per rank (e.g. 0,1,2,3): rank I on\n"
"                       this host uses the I-th (sets PDMPI_DEVICE); -np\n"
"                       defaults to their number\n"
"  -v, --verbose        show the world forming: once a second until every\n"
"                       rank has reached the store, how many have, per host,\n"
"                       and which are missing (also with PDMPI_DEBUG=info\n"
"                       or trace in pdmpirun's environment)\n"
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
"  MPIEXEC_TIMEOUT      seconds, as --timeout where that is not given (the\n"
"                       variable mpirun and mpiexec read)\n"
"\n"
"Exit status: 0 when every rank exits 0; else the first failing rank's exit\n"
"code, or 128+S if signal S killed it; 124 after --timeout or\n"
"MPIEXEC_TIMEOUT; 128+S when\n"
"pdmpirun itself got signal S; 127 when PROGRAM cannot be executed; 2 for\n"
"bad usage; 1 when the job cannot be set up.\n",
        stdout);
}

static int parse_rank_count(const char *text)
{
    long n;
    if (!pd_parse_int(text, 1, LONG_MAX, &n))
        usage_error("-np needs a positive integer, got '%s'", text);
    if (n > PD_MAX_RANKS)
        usage_error("-np %ld is more ranks than pdmpirun supports (%d)", n,
                    PD_MAX_RANKS);
    return (int)n;
}

static int parse_count(const char *option, const char *text, long min,
                       long max)
{
    long n;
    if (!pd_parse_int(text, min, max, &n))
        usage_error("%s needs an integer in [%ld, %ld], got '%s'", option, min,
                    max, text);
    return (int)n;
}

static void parse_master(const char *text, struct pd_options *o)
{
    char host[PD_NET_HOST_LEN], port[PD_NET_PORT_LEN], why[256];
    if (pd_net_split_addr(text, host, sizeof host, port, sizeof port, why,
                          sizeof why) != 0)
        usage_error("--master %s: %s", text, why);
    o->master = text;
    o->master_port = atoi(port);
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

/* Comparisons are written so that NaN fails them; max refuses infinity. */
static int read_seconds(const char *text, double max, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return errno == 0 && end != text && *end == '\0' && *out >= 0 &&
           *out <= max;
}

static double parse_seconds(const char *option, const char *text)
{
    double s;
    if (!read_seconds(text, 1e9, &s) || s == 0)
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
 * If arg is one of names (space-separated; "--opt" or "--opt=value"
 * forms), return its value (advancing *i past a separate value), else NULL.
 */
static const char *option_value(int argc, char **argv, int *i,
                                const char *names)
{
    const char *arg = argv[*i];
    size_t arg_len = strcspn(arg, "=");
    for (const char *name = names; *name != '\0';) {
        size_t len = strcspn(name, " ");
        if (len == arg_len && strncmp(arg, name, len) == 0) {
            if (arg[len] == '=')
                return arg + len + 1;
            if (*i + 1 >= argc)
                usage_error("%.*s needs a value", (int)len, name);
            return argv[++*i];
        }
        name += len + (name[len] == ' ');
    }
    return NULL;
}

/* Does dir hold a libmpi.so.40 the loader can open? */
static int has_dropin(const char *dir)
{
    size_t len = strlen(dir) + sizeof "/libmpi.so.40";
    char *path = malloc(len);
    if (path == NULL)
        return 0;
    memcpy(path, dir, len - sizeof "/libmpi.so.40");
    memcpy(path + len - sizeof "/libmpi.so.40", "/libmpi.so.40",
           sizeof "/libmpi.so.40");
    int found = access(path, R_OK) == 0;
    free(path);
    return found;
}

/*
 * The folder whose libmpi.so.40 is pdmpi: PDMPI_DROPIN_DIR when set;
 * else, for a pdmpirun run from its build tree, the tree's dropin/ beside
 * it; else the one `make install` fills ($libdir/pdmpi).
 */
static char *find_dropin_dir(void)
{
    const char *env = getenv("PDMPI_DROPIN_DIR");
    if (env != NULL && *env != '\0') {
        if (!has_dropin(env))
            usage_error("--dropin: PDMPI_DROPIN_DIR=%s has no libmpi.so.40",
                        env);
        return strdup(env);
    }
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 16);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            strcpy(slash + 1, "dropin");
            if (has_dropin(exe))
                return strdup(exe);
        }
    }
    if (!has_dropin(PD_DROPIN_DIR))
        usage_error("--dropin: %s has no libmpi.so.40 (is pdmpi installed? "
                    "PDMPI_DROPIN_DIR names another folder)", PD_DROPIN_DIR);
    return strdup(PD_DROPIN_DIR);
}

void pd_parse_args(int argc, char **argv, struct pd_options *o)
{
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
        else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0)
            o->verbose = 1;
        else if (strcmp(arg, "--dropin") == 0)
            o->dropin_dir = find_dropin_dir();
        else if ((value = option_value(argc, argv, &i, "-np --np -n")) != NULL)
            o->nranks = parse_rank_count(value);
        else if ((value = option_value(argc, argv, &i, "--backend")) != NULL)
            o->backend = parse_backend(value);
        else if ((value = option_value(argc, argv, &i, "--log-dir")) != NULL) {
            if (*value == '\0')
                usage_error("--log-dir needs a directory");
            o->log_dir = value;
        } else if ((value = option_value(argc, argv, &i, "--timeout"))) {
            o->timeout_s = parse_seconds("--timeout", value);
            o->timeout_text = value;
            o->timeout_from = "--timeout";
        } else if ((value = option_value(argc, argv, &i, "--nnodes")))
            o->nnodes = parse_count("--nnodes", value, 1, PD_MAX_RANKS);
        else if ((value = option_value(argc, argv, &i, "--node-rank")))
            o->node_rank = parse_count("--node-rank", value, 0, PD_MAX_RANKS);
        else if ((value = option_value(argc, argv, &i, "--master")))
            parse_master(value, o);
        else if ((value = option_value(argc, argv, &i, "--devices")))
            parse_devices(value, o);
        else if ((value = option_value(argc, argv, &i, "--job-id"))) {
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
    /* The job's time limit as mpirun and mpiexec take it from the
     * environment (MPICH's test suite sets it), where --timeout is not
     * given. */
    const char *limit = getenv("MPIEXEC_TIMEOUT");
    if (o->timeout_s == 0 && limit != NULL && *limit != '\0') {
        o->timeout_s = parse_seconds("MPIEXEC_TIMEOUT", limit);
        o->timeout_text = limit;
        o->timeout_from = "MPIEXEC_TIMEOUT";
    }
    /* The ranks' own level of detail asks for the launcher's too. */
    const char *debug = getenv("PDMPI_DEBUG");
    if (debug != NULL && (strcasecmp(debug, "info") == 0 ||
                          strcasecmp(debug, "trace") == 0))
        o->verbose = 1;
}

int64_t pd_kill_grace_ms(void)
{
    const char *text = getenv("PDMPI_KILL_GRACE");
    if (text == NULL || *text == '\0')
        return (int64_t)(PD_DEFAULT_KILL_GRACE_S * 1000);
    double s;
    if (!read_seconds(text, 86400, &s)) {
        pd_say("ignoring PDMPI_KILL_GRACE='%s' (not a number of seconds); "
            "using %g", text, PD_DEFAULT_KILL_GRACE_S);
        return (int64_t)(PD_DEFAULT_KILL_GRACE_S * 1000);
    }
    return (int64_t)(s * 1000);
}


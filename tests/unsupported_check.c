/*
 * unsupported_check.c - functions of Open MPI's API that pdmpi does not
 * implement: the program loads although it names them (it is linked with
 * -z now, so the loader resolves every one at start-up), and each call
 * fails cleanly with MPI_ERR_UNSUPPORTED_OPERATION.
 *
 * Usage: unsupported_check [return | fatal NAME]
 *   return      (the default) every call below under MPI_ERRORS_RETURN
 *               returns MPI_ERR_UNSUPPORTED_OPERATION; rank 0 prints one
 *               TAP-like line per check, other ranks only their failures,
 *               and the exit status is non-zero if any rank failed one.
 *   fatal NAME  the call NAME under the default MPI_ERRORS_ARE_FATAL: the
 *               library must print one line and end the job. If the call
 *               returns, this prints "unsupported_check: SURVIVED" and
 *               exits 0, so the caller can tell.
 *
 * The calls are ones pdmpi leaves out on purpose (one-sided, MPI-IO,
 * topologies, dynamic processes and name publishing, the tools
 * interface), so the test does not start failing as the implemented part
 * grows. Their arguments are valid, so a library implementing them would
 * not crash here either.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

static int world_rank;
static int checks_run, checks_failed;

static void report(int passed, const char *description, const char *detail)
{
    checks_run++;
    if (!passed) {
        checks_failed++;
        printf("not ok %d - %s (rank %d: %s)\n", checks_run, description,
               world_rank, detail);
    } else if (world_rank == 0) {
        printf("ok %d - %s\n", checks_run, description);
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* The calls                                                            */
/* ------------------------------------------------------------------ */

static int window_memory[4];

static int call_win_create(void)
{
    MPI_Win win = MPI_WIN_NULL;
    return MPI_Win_create(window_memory, sizeof(window_memory), sizeof(int),
                          MPI_INFO_NULL, MPI_COMM_WORLD, &win);
}

static int call_win_allocate(void)
{
    void *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    return MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win);
}

static int pretend_extent(MPI_Datatype type, MPI_Aint *extent, void *state)
{
    (void)type;
    (void)state;
    *extent = 1;
    return MPI_SUCCESS;
}

static int call_register_datarep(void)
{
    return MPI_Register_datarep("pdmpi-unsupported-check",
                                MPI_CONVERSION_FN_NULL,
                                MPI_CONVERSION_FN_NULL, pretend_extent, NULL);
}

static int call_comm_connect(void)
{
    MPI_Comm inter = MPI_COMM_NULL;
    return MPI_Comm_connect("pdmpi-unsupported-check", MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &inter);
}

/* On MPI_COMM_SELF: its handler, not MPI_COMM_WORLD's, must apply. */
static int call_comm_spawn(void)
{
    MPI_Comm children = MPI_COMM_NULL;
    return MPI_Comm_spawn("unsupported_check", MPI_ARGV_NULL, 1,
                          MPI_INFO_NULL, 0, MPI_COMM_SELF, &children,
                          MPI_ERRCODES_IGNORE);
}

static int call_open_port(void)
{
    char port[MPI_MAX_PORT_NAME];
    return MPI_Open_port(MPI_INFO_NULL, port);
}

static int call_lookup_name(void)
{
    char port[MPI_MAX_PORT_NAME];
    return MPI_Lookup_name("pdmpi-unsupported-check", MPI_INFO_NULL, port);
}

static int call_t_init_thread(void)
{
    int provided = -1;
    return MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
}

static int call_t_pvar_get_num(void)
{
    int count = -1;
    return MPI_T_pvar_get_num(&count);
}

struct unsupported_call {
    const char *name;
    int (*call)(void);
};

static const struct unsupported_call calls[] = {
    { "MPI_Win_create", call_win_create },
    { "MPI_Win_allocate", call_win_allocate },
    { "MPI_Register_datarep", call_register_datarep },
    { "MPI_Comm_connect", call_comm_connect },
    { "MPI_Comm_spawn", call_comm_spawn },
    { "MPI_Open_port", call_open_port },
    { "MPI_Lookup_name", call_lookup_name },
    { "MPI_T_init_thread", call_t_init_thread },
    { "MPI_T_pvar_get_num", call_t_pvar_get_num },
};
#define NUM_CALLS ((int)(sizeof(calls) / sizeof(calls[0])))

/* ------------------------------------------------------------------ */
/* Modes                                                                */
/* ------------------------------------------------------------------ */

static const struct unsupported_call *find_call(const char *name)
{
    for (int i = 0; i < NUM_CALLS; i++)
        if (strcmp(calls[i].name, name) == 0)
            return &calls[i];
    return NULL;
}

/* context, when not empty, tells apart two checks of one call. */
static void check_returns_unsupported(const struct unsupported_call *entry,
                                      const char *context)
{
    char description[160], detail[200] = "";
    snprintf(description, sizeof(description),
             "%s returns MPI_ERR_UNSUPPORTED_OPERATION%s", entry->name,
             context);
    int rc = entry->call();
    int errclass = -1;
    if (rc == MPI_SUCCESS) {
        snprintf(detail, sizeof(detail), "returned MPI_SUCCESS");
    } else if (MPI_Error_class(rc, &errclass) != MPI_SUCCESS ||
               errclass != MPI_ERR_UNSUPPORTED_OPERATION) {
        snprintf(detail, sizeof(detail), "returned %d, class %d", rc,
                 errclass);
    }
    report(detail[0] == '\0', description, detail);
}

static int run_return(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);

    /* First with only MPI_COMM_SELF returning errors: a call on it must
     * come back, even though MPI_COMM_WORLD's handler is still fatal. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    check_returns_unsupported(find_call("MPI_Comm_spawn"),
                              " on MPI_COMM_SELF, MPI_COMM_WORLD fatal");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < NUM_CALLS; i++)
        check_returns_unsupported(&calls[i], "");

    /* Conversions return a handle, not an error code: the stub gives the
     * null handle (MPI_Win_f2c) or zero (MPI_Win_c2f) and returns. */
    MPI_Win win = MPI_Win_f2c(0);
    report(win == MPI_WIN_NULL, "MPI_Win_f2c returns MPI_WIN_NULL",
           "another handle");
    MPI_Fint win_index = MPI_Win_c2f(MPI_WIN_NULL);
    report(win_index == 0, "MPI_Win_c2f returns 0", "non-zero");

    /* The failed calls left nothing behind: collectives still work. */
    int one = 1, ranks = 0, size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    report(rc == MPI_SUCCESS && ranks == size,
           "MPI_Allreduce works after the unsupported calls",
           "wrong sum or error");

    int any_failed = 0;
    MPI_Allreduce(&checks_failed, &any_failed, 1, MPI_INT, MPI_MAX,
                  MPI_COMM_WORLD);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}

static int run_fatal(int *argc, char ***argv, const char *name)
{
    const struct unsupported_call *entry = find_call(name);
    if (entry == NULL) {
        fprintf(stderr, "unsupported_check: %s is not one of the calls\n", name);
        return 2;
    }
    MPI_Init(argc, argv);
    int rc = entry->call();
    printf("unsupported_check: SURVIVED %s: returned %d\n", name, rc);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "return";

    if (strcmp(mode, "return") == 0)
        return run_return(&argc, &argv);
    if (strcmp(mode, "fatal") == 0 && argc > 2)
        return run_fatal(&argc, &argv, argv[2]);

    fprintf(stderr, "usage: unsupported_check [return | fatal NAME]\n");
    return 2;
}

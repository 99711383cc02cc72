/*
 * fatal_check.c - errors that must end the job, not return.
 *
 * Usage: fatal_check MODE, MODE one of
 *   fatal           MPI_Allreduce with count -1 under the default handler,
 *                   MPI_ERRORS_ARE_FATAL: the job must die with a one-line
 *                   message on stderr and a non-zero exit status.
 *   bottom          MPI_Bcast of one MPI_INT at MPI_BOTTOM (NULL): the
 *                   message must say why NULL is refused there.
 *   before-init     MPI_Comm_rank before MPI_Init.
 *   after-finalize  MPI_Allreduce after MPI_Finalize.
 *   abort           the last rank calls MPI_Abort(MPI_COMM_WORLD, 7) while
 *                   the others wait in MPI_Barrier: the whole job must end
 *                   with status 7 under every launcher.
 * The last two are erroneous programs; the library must say so clearly and
 * exit non-zero rather than crash or carry on.
 *
 * The checking is left to the caller (a test script), which looks at the
 * exit status and stderr. When the library lets a bad call return, this
 * program prints a line starting with "fatal_check: SURVIVED" and exits 0,
 * so "the job exited 0" always means the library failed to stop it.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

static int survived(const char *mode, const char *call, int rc)
{
    printf("fatal_check: SURVIVED %s: %s returned %d\n", mode, call, rc);
    fflush(stdout);
    return 0;
}

static int run_fatal(int *argc, char ***argv)
{
    float in = 1.0f, out = 0.0f;
    MPI_Init(argc, argv);
    int rc = MPI_Allreduce(&in, &out, -1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    survived("fatal", "MPI_Allreduce(count -1)", rc);
    MPI_Finalize();
    return 0;
}

/* A call that has no communicator names none. */
static int run_no_comm(int *argc, char ***argv)
{
    int size = 0;
    MPI_Init(argc, argv);
    int rc = MPI_Type_size(MPI_DATATYPE_NULL, &size);
    survived("no-comm", "MPI_Type_size(MPI_DATATYPE_NULL)", rc);
    MPI_Finalize();
    return 0;
}

/* MPI_BOTTOM with a type that is not of absolute addresses. */
static int run_bottom(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    int rc = MPI_Bcast(MPI_BOTTOM, 1, MPI_INT, 0, MPI_COMM_WORLD);
    survived("bottom", "MPI_Bcast(MPI_BOTTOM, 1, MPI_INT)", rc);
    MPI_Finalize();
    return 0;
}

/* An unnamed communicator is named by something, not by nothing. */
static int run_unnamed(int *argc, char ***argv)
{
    float in = 1.0f, out = 0.0f;
    MPI_Comm dup;
    MPI_Init(argc, argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_ARE_FATAL);
    int rc = MPI_Allreduce(&in, &out, -1, MPI_FLOAT, MPI_SUM, dup);
    survived("unnamed", "MPI_Allreduce(count -1) on a duplicate", rc);
    MPI_Finalize();
    return 0;
}

static int run_before_init(void)
{
    int rank = -1;
    int rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return survived("before-init", "MPI_Comm_rank", rc);
}

static int run_after_finalize(int *argc, char ***argv)
{
    float in = 1.0f, out = 0.0f;
    MPI_Init(argc, argv);
    MPI_Finalize();
    int rc = MPI_Allreduce(&in, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return survived("after-finalize", "MPI_Allreduce", rc);
}

static int run_abort(int *argc, char ***argv)
{
    int rank, size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    survived("abort", "MPI_Barrier after a peer's MPI_Abort", rc);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    if (strcmp(mode, "fatal") == 0)
        return run_fatal(&argc, &argv);
    if (strcmp(mode, "bottom") == 0)
        return run_bottom(&argc, &argv);
    if (strcmp(mode, "no-comm") == 0)
        return run_no_comm(&argc, &argv);
    if (strcmp(mode, "unnamed") == 0)
        return run_unnamed(&argc, &argv);
    if (strcmp(mode, "before-init") == 0)
        return run_before_init();
    if (strcmp(mode, "after-finalize") == 0)
        return run_after_finalize(&argc, &argv);
    if (strcmp(mode, "abort") == 0)
        return run_abort(&argc, &argv);

    fprintf(stderr,
            "usage: fatal_check fatal|bottom|no-comm|unnamed|before-init|"
            "after-finalize|abort\n");
    return 2;
}

/*
 * exit_rank.c - one rank exits early, the others hang in a barrier.
 *
 * Usage: exit_rank [RANK [CODE [DIR]]]   (defaults: 1, 3, no directory)
 *
 * Right after MPI_Init, rank RANK (size-1 when RANK is out of range) exits
 * with status CODE without calling MPI_Finalize; every other rank blocks in
 * MPI_Barrier until the launcher kills it. A test script then checks that
 * the launcher noticed, ended the job, reported CODE, and left no process
 * behind.
 *
 * With DIR, every rank writes its pid to DIR/rank<N>.pid (atomically, via a
 * rename) so the script can look for survivors, and the exiting rank first
 * waits, up to 30 s, for all those files: the others are then on their way
 * into the barrier, and no pid is missed because the job died first.
 * Without DIR the pids go to stdout and the rank exits at once.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void pid_file_path(char *path, size_t size, const char *dir, int rank)
{
    snprintf(path, size, "%s/rank%d.pid", dir, rank);
}

/* A reader never sees a half-written file: write aside, then rename. */
static void write_pid_file(const char *dir, int rank)
{
    char path[4096], tmp[4200];
    pid_file_path(path, sizeof(path), dir, rank);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%ld\n", (long)getpid()) < 0
        || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "exit_rank: rank %d cannot write %s\n", rank, path);
        exit(2);
    }
}

static int all_pid_files_exist(const char *dir, int size)
{
    for (int r = 0; r < size; r++) {
        char path[4096];
        pid_file_path(path, sizeof(path), dir, r);
        if (access(path, F_OK) != 0)
            return 0;
    }
    return 1;
}

static void wait_for_pid_files(const char *dir, int size)
{
    const struct timespec pause = {0, 10 * 1000 * 1000};
    for (int tries = 0; tries < 3000; tries++) {
        if (all_pid_files_exist(dir, size))
            return;
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "exit_rank: not all ranks wrote their pid within 30 s\n");
}

int main(int argc, char **argv)
{
    int exiting_rank = argc > 1 ? atoi(argv[1]) : 1;
    int exit_code = argc > 2 ? atoi(argv[2]) : 3;
    const char *dir = argc > 3 ? argv[3] : NULL;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (exiting_rank < 0 || exiting_rank >= size)
        exiting_rank = size - 1;

    if (dir != NULL)
        write_pid_file(dir, rank);
    else
        printf("exit_rank: rank %d pid %ld\n", rank, (long)getpid());
    fflush(stdout);

    if (rank == exiting_rank) {
        if (dir != NULL)
            wait_for_pid_files(dir, size);
        fprintf(stderr, "exit_rank: rank %d exits with status %d\n", rank,
                exit_code);
        exit(exit_code);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    /* Reaching this line means the barrier completed without the exited
     * rank: the library is broken. */
    fprintf(stderr, "exit_rank: rank %d left the barrier\n", rank);
    MPI_Finalize();
    return 4;
}

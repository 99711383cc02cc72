/*
 * osu_bw.c - point-to-point bandwidth between 2 ranks, in the style of
 * OSU's osu_bw: per iteration rank 0 posts a window of 64 MPI_Isend,
 * rank 1 the matching 64 MPI_Irecv (into one buffer, as OSU does), both
 * wait, and rank 1 replies with a one-element message. Bandwidth is
 * bytes * window * iterations over the time at rank 0, in MB/s (1e6 B/s).
 *
 * Above 8 MiB the window shrinks so that at most 512 MiB is in flight
 * (32 messages of 16 MiB ... 8 of 64 MiB): 64 messages of 64 MiB would
 * make one window 4 GiB. Options, iterations and warm-up as in the
 * collective benchmarks (bench_util.c), except that without -i the warm-up
 * is timed and the default iterations cut to fit about BENCH_SIZE_SECONDS
 * per size (bench_warm_up).
 *
 * -c runs one more window with a known pattern and checks what rank 1
 * received.
 *
 * Built with PD_BIBW it is osu_bibw: both ranks post the window of
 * receives, then the window of sends, to each other, and the bandwidth
 * counts both directions.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

#define SIZE_WIDTH 10
#define FIELD_WIDTH 18
#define ITER_WIDTH 12
#define WINDOW 64
#define TAG_DATA 100
#define TAG_REPLY 101
#define WINDOW_BYTES ((size_t)512 << 20)

#ifdef PD_BIBW
#define NAME "osu_bibw"
#define TITLE "OSU MPI Bi-Directional Bandwidth Test"
#define DIRECTIONS 2
#else
#define NAME "osu_bw"
#define TITLE "OSU MPI Bandwidth Test"
#define DIRECTIONS 1
#endif

struct stream {
    void *send, *recv;              /* MPI's buffers (device with -d cuda) */
    void *host;                     /* staging for -c */
    const struct bench_options *o;
    int rank, count;
    int window;                     /* messages per window, <= WINDOW */
};

/* One window; returns its duration on this rank. */
static double window(const struct stream *s)
{
    double start = MPI_Wtime();
    MPI_Request requests[2 * WINDOW];
    /* A real array rather than MPI_STATUSES_IGNORE, which gcc's
     * -Wstringop-overflow mistakes for a 0-byte region with MPICH. */
    MPI_Status statuses[2 * WINDOW];
    MPI_Datatype t = s->o->type->mpi;
    if (DIRECTIONS == 2) {
        int peer = 1 - s->rank;
        for (int w = 0; w < s->window; w++)
            bench_check_rc(MPI_Irecv(s->recv, s->count, t, peer, TAG_DATA,
                                     MPI_COMM_WORLD, &requests[w]),
                           "MPI_Irecv");
        for (int w = 0; w < s->window; w++)
            bench_check_rc(MPI_Isend(s->send, s->count, t, peer, TAG_DATA,
                                     MPI_COMM_WORLD,
                                     &requests[s->window + w]),
                           "MPI_Isend");
        bench_check_rc(MPI_Waitall(2 * s->window, requests, statuses),
                       "MPI_Waitall");
    } else if (s->rank == 0) {
        for (int w = 0; w < s->window; w++)
            bench_check_rc(MPI_Isend(s->send, s->count, t, 1, TAG_DATA,
                                     MPI_COMM_WORLD, &requests[w]),
                           "MPI_Isend");
        bench_check_rc(MPI_Waitall(s->window, requests, statuses),
                       "MPI_Waitall");
        bench_check_rc(MPI_Recv(s->recv, 1, t, 1, TAG_REPLY, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE),
                       "MPI_Recv");
    } else {
        for (int w = 0; w < s->window; w++)
            bench_check_rc(MPI_Irecv(s->recv, s->count, t, 0, TAG_DATA,
                                     MPI_COMM_WORLD, &requests[w]),
                           "MPI_Irecv");
        bench_check_rc(MPI_Waitall(s->window, requests, statuses),
                       "MPI_Waitall");
        bench_check_rc(MPI_Send(s->send, 1, t, 0, TAG_REPLY, MPI_COMM_WORLD),
                       "MPI_Send");
    }
    return MPI_Wtime() - start;
}

static void window_step(void *s)
{
    window(s);
}

/* WINDOW messages, fewer where they would exceed WINDOW_BYTES. */
static int window_for(size_t bytes)
{
    size_t fits = WINDOW_BYTES / bytes;
    if (fits >= WINDOW)
        return WINDOW;
    return fits > 0 ? (int)fits : 1;
}

/* Element i of the pattern; at most 250, exact in every type. */
static double element(int i)
{
    return (i % 199 + 3) % 251;
}

static bool validate(const struct stream *s)
{
    const struct bench_type *type = s->o->type;
    size_t bytes = (size_t)s->count * type->size;
    for (int i = 0; i < s->count; i++)
        bench_store(type, s->host, (size_t)i, s->rank == 0 ? element(i) : -1);
    bench_copy_to_device(s->o->device, s->rank == 0 ? s->send : s->recv,
                         s->host, bytes);

    window(s);

    int mine = 1, all = 0;
    if (s->rank == 1) {
        bench_copy_from_device(s->o->device, s->host, s->recv, bytes);
        for (int i = 0; i < s->count && mine; i++)
            mine = bench_load(type, s->host, (size_t)i) == element(i);
    }
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct bench_options o;
    int status = bench_parse_pair_options(argc, argv, &o,
                                     NAME " runs on exactly 2 ranks with a window "
                                     "of 64 messages (fewer above 8 MiB:\n"
                                     "at most 512 MiB in flight); -f adds the "
                                     "window and the iterations.\nWithout -i, "
                                     "the default iterations are cut to about "
                                     "1 s per size.");
    if (status >= 0) {
        MPI_Finalize();
        return status;
    }

    struct stream s = {
        .send = bench_alloc(&o, o.max_bytes),
        .recv = bench_alloc(&o, o.max_bytes),
        .host = malloc(o.max_bytes + 1),
        .o = &o,
        .rank = rank,
    };
    if (s.host == NULL) {
        fprintf(stderr, NAME ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (rank == 0) {
        printf("# " TITLE "\n");
        printf("# Datatype: %s, window: %d messages (at most %zu MiB)%s\n",
               o.type->mpi_name, WINDOW, WINDOW_BYTES >> 20,
               o.device == BENCH_CUDA ? ", buffers: cuda" : "");
        printf("%-*s%*s", SIZE_WIDTH, "# Size", FIELD_WIDTH, "Bandwidth (MB/s)");
        if (o.full)
            printf("%*s%*s", ITER_WIDTH, "Window", ITER_WIDTH, "Iterations");
        if (o.validate)
            printf("%*s", ITER_WIDTH, "Validation");
        printf("\n");
        fflush(stdout);
    }

    bool all_valid = true;
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
        if (bytes < o.type->size)
            continue;
        s.count = (int)(bytes / o.type->size);
        s.window = window_for(bytes);
        int iterations = bench_warm_up(&o, bytes, window_step, &s);
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (int i = 0; i < iterations; i++)
            window(&s);
        double seconds = MPI_Wtime() - start;
        double mbps = (double)bytes * s.window * iterations * DIRECTIONS /
                      seconds / 1e6;
        bool valid = !o.validate || validate(&s);
        all_valid = all_valid && valid;

        if (rank == 0) {
            printf("%-*zu%*.2f", SIZE_WIDTH, bytes, FIELD_WIDTH, mbps);
            if (o.full)
                printf("%*d%*d", ITER_WIDTH, s.window, ITER_WIDTH, iterations);
            if (o.validate)
                printf("%*s", ITER_WIDTH, valid ? "Pass" : "Fail");
            printf("\n");
            fflush(stdout);
        }
        if (bytes > ((size_t)-1) / 2)
            break;
    }

    free(s.host);
    bench_free(&o, s.send);
    bench_free(&o, s.recv);
    MPI_Finalize();
    return all_valid ? 0 : 1;
}

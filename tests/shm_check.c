/*
 * shm_check - what the shared-memory host path promises beyond plain
 * correctness (coll_check covers that):
 * - a float allreduce equals, bit for bit, the sum folded in rank order
 *   on one host (computed here independently), and is the same bits on
 *   every rank, small and large (several chunks);
 * - reduce_scatter_block keeps each rank's block of that same sum;
 * - communicators made and freed in a loop (each with its own segment)
 *   leave no file descriptors behind;
 * - with --die R N: rank R kills itself with SIGKILL in the middle of the
 *   N-th allreduce of a loop, and the others must fail (the driver checks
 *   how fast, and the message);
 * - with --skip, --count or --blocks: ranks in different calls must
 *   fail, not mix their data;
 * - with --orphan HOW [D W]: rank W (1) waits for a message from rank D
 *   (0) that never comes -- HOW is recv, any (MPI_ANY_SOURCE), probe,
 *   irecv (MPI_Wait) or sendrecv, or sends rank D 4 MiB that it never
 *   receives (send: MPI_Send, isend: MPI_Isend and MPI_Wait), and rank D
 *   dies (SIGKILL) -- or midway: rank D dies 100 ms into sending 2 GiB
 *   that rank W's posted receive is taking (midway-vector: every other
 *   int of them, packed as they go) -- or
 *   timeout, where rank D lives on, silent, for 6 s; rank W must fail,
 *   not hang (with D and W given, the other ranks stay 6 s and exit);
 * - with --die-mapping: rank 0 is killed while it waits for the other
 *   ranks to map a new communicator's segment (they come 2 s late); the
 *   driver checks that no segment is left in /dev/shm;
 * - with --freeze R S: rank R stops (SIGSTOP) 2 s after one allreduce,
 *   and a child of it kills it S seconds later; the others time out in a
 *   barrier (the driver checks the message);
 * - with --freeze-during R S: the same, but rank R stops inside a run
 *   of 16 MiB allreduces, mostly in the middle of one.
 * Each rank prints "shm_check: rank R pid P" first, so the driver can
 * look for segments left in /dev/shm under those pids.
 */
#include <mpi.h>

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fd_count.h"

#include "tap_harness.h"

static float input_of(int rank, size_t i)
{
    /* Magnitudes that differ widely, so the order of the sum matters. */
    return (float)(sin((double)(rank * 7919 + (long)i)) *
                   pow(10.0, (double)((rank + (long)i) % 7) - 3.0));
}

static void check_rank_order_sum(size_t count, const char *what)
{
    struct verdict v = { "" };
    float *in = malloc(count * sizeof(float));
    float *out = malloc(count * sizeof(float));
    float *all = malloc(count * sizeof(float) * (size_t)world_size);
    for (size_t i = 0; i < count; i++)
        in[i] = input_of(world_rank, i);
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM,
                           MPI_COMM_WORLD));
    for (size_t i = 0; i < count && v.detail[0] == '\0'; i++) {
        float want = input_of(0, i);
        for (int r = 1; r < world_size; r++)
            want = want + input_of(r, i);
        if (memcmp(&want, &out[i], sizeof(float)) != 0)
            fail(&v, "element %zu is %.9g, the rank-order sum is %.9g", i,
                 (double)out[i], (double)want);
    }
    report(&v, "%s: allreduce of %zu floats is the rank-order sum, bit for "
           "bit", what, count);

    struct verdict same = { "" };
    check_rc(&same, "MPI_Allgather",
             MPI_Allgather(out, (int)count, MPI_FLOAT, all, (int)count,
                           MPI_FLOAT, MPI_COMM_WORLD));
    for (int r = 0; r < world_size && same.detail[0] == '\0'; r++)
        if (memcmp(all + (size_t)r * count, out, count * sizeof(float)) != 0)
            fail(&same, "rank %d's result differs from this rank's", r);
    report(&same, "%s: every rank has the same bits", what);

    /* The same sum, scattered: each rank keeps its block. */
    struct verdict rs = { "" };
    size_t block = count / (size_t)world_size;
    if (block > 0) {
        float *mine = malloc(block * sizeof(float));
        check_rc(&rs, "MPI_Reduce_scatter_block",
                 MPI_Reduce_scatter_block(in, mine, (int)block, MPI_FLOAT,
                                          MPI_SUM, MPI_COMM_WORLD));
        size_t at = block * (size_t)world_rank;
        if (memcmp(mine, out + at, block * sizeof(float)) != 0)
            fail(&rs, "this rank's block differs from the allreduce's");
        free(mine);
    }
    report(&rs, "%s: reduce_scatter_block keeps this rank's block of it",
           what);
    free(in);
    free(out);
    free(all);
}

static void check_dup_free_loop(int rounds)
{
    struct verdict v = { "" };
    int before = 0;
    for (int i = 0; i < rounds && v.detail[0] == '\0'; i++) {
        MPI_Comm dup;
        check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        int one = 1, sum = 0;
        check_rc(&v, "MPI_Allreduce",
                 MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
        if (sum != world_size)
            fail(&v, "round %d: sum %d, expected %d", i, sum, world_size);
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
        if (i == 1)
            before = open_fds();
    }
    int after = open_fds();
    if (v.detail[0] == '\0' && after > before)
        fail(&v, "%d file descriptors open after the loop, %d after round 2",
             after, before);
    report(&v, "%d rounds of Comm_dup, Allreduce, Comm_free: no descriptor "
           "left behind", rounds);
}

/* Rank `dying` kills itself during allreduce number `at`: it sends the
 * signal from inside a long loop so the others are mid-call. */
static int die_in_loop(int dying, int at)
{
    size_t count = 1 << 16;
    float *buf = calloc(count, sizeof(float));
    for (int i = 0;; i++) {
        if (world_rank == dying && i == at) {
            fprintf(stderr, "shm_check: rank %d kills itself in allreduce %d\n",
                    world_rank, i);
            fflush(stderr);
            raise(SIGKILL);
        }
        int rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT,
                               MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return 1;
        if (i > at + 100000)
            return 2;                   /* never noticed: the driver fails */
    }
}

static void kill_self(int sig)
{
    (void)sig;
    raise(SIGKILL);
}

/* Rank 0 makes a new communicator's segment at its first allreduce and
 * waits for the others to map it; they come 2 s late, it is killed after
 * 1 s. */
static int die_mapping(void)
{
    MPI_Comm dup;
    float buf[4] = { 0 };
    if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS)
        return 2;
    if (world_rank == 0) {
        signal(SIGALRM, kill_self);
        alarm(1);
    } else {
        sleep(2);
    }
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_FLOAT, MPI_SUM, dup);
    return rc == MPI_SUCCESS ? 3 : 1;   /* 3: rank 0's death unnoticed */
}

/* Rank `frozen` stops where the others go on to a barrier; with it stops
 * the rendezvous store it may host. A child ends it after `seconds`. */
static int freeze(int frozen, int seconds)
{
    float buf[4] = { 0 };
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_FLOAT, MPI_SUM,
                           MPI_COMM_WORLD);
    if (world_rank == frozen) {
        sleep(2);                       /* its last call is published */
        pid_t self = getpid();
        if (fork() == 0) {
            sleep((unsigned)seconds);
            kill(self, SIGKILL);
            _exit(0);
        }
        raise(SIGSTOP);
        return 4;                       /* never resumed */
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 3 : 1;
}

static void *stop_soon(void *arg)
{
    usleep((useconds_t)(uintptr_t)arg);
    raise(SIGSTOP);
    return NULL;
}

/* Rank `frozen` stops in the middle of a run of large allreduces (a
 * thread stops the whole process 0.3 s in), inside a step more often
 * than between two; a child ends it after `seconds`. */
static int freeze_during(int frozen, int seconds)
{
    size_t n = 4u << 20;
    float *buf = calloc(n, sizeof(float));
    if (buf == NULL)
        return 2;
    if (world_rank == frozen) {
        pid_t self = getpid();
        if (fork() == 0) {
            sleep((unsigned)seconds);
            kill(self, SIGKILL);
            _exit(0);
        }
        pthread_t t;
        pthread_create(&t, NULL, stop_soon, (void *)(uintptr_t)300000);
        pthread_detach(t);
    }
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 1000 && rc == MPI_SUCCESS; i++)
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM,
                           MPI_COMM_WORLD);
    free(buf);
    return rc == MPI_SUCCESS ? 3 : 1;
}

static void *kill_soon(void *arg)
{
    usleep((useconds_t)(uintptr_t)arg);
    raise(SIGKILL);
    return NULL;
}

/* Rank 1 waits for what rank 0 never sends. */
static int orphan(const char *how, int dying, int waiter, bool given)
{
    int x = 0, y = 1, rc = MPI_SUCCESS;
    MPI_Status status;
    MPI_Request req;
    /* midway: rank D sends 2 GiB to a receive posted for it and dies
     * (SIGKILL) 100 ms into it: its header is out by then, and its
     * payload, at well under 20 GB/s, is not. */
    const size_t midway_bytes = (size_t)2 << 30;
    /* midway-vector: the same with every other int of the 2 GiB, 1 GiB
     * that the sender packs as it goes. */
    bool vector = strcmp(how, "midway-vector") == 0;
    int midway_ints = (int)(midway_bytes / sizeof(int) / (vector ? 2 : 1));
    if (vector)
        how = "midway";
    if (strcmp(how, "midway") == 0 && world_rank == dying) {
        char *big = calloc(midway_bytes, 1);
        MPI_Datatype type = MPI_INT;
        if (vector) {
            MPI_Type_vector(midway_ints, 1, 2, MPI_INT, &type);
            MPI_Type_commit(&type);
        }
        sleep(1);                       /* the receive is posted by then */
        pthread_t t;
        pthread_create(&t, NULL, kill_soon, (void *)(uintptr_t)100000);
        pthread_detach(t);
        MPI_Send(big, vector ? 1 : midway_ints, type, waiter, 7,
                 MPI_COMM_WORLD);   /* never returns */
        pause();                        /* killed by then */
        return 0;
    }
    if (world_rank == dying) {
        if (strcmp(how, "timeout") == 0) {
            sleep(6);                   /* alive, silent, past the timeout */
            return 0;
        }
        sleep(1);                       /* the waiter is waiting by then */
        raise(SIGKILL);
    }
    if (world_rank != waiter) {
        if (given) {                    /* stay (a store it may host) */
            sleep(6);
            return 0;
        }
        return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 3 : 1;
    }
    if (strcmp(how, "any") == 0)
        rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
                      &status);
    else if (strcmp(how, "probe") == 0)
        rc = MPI_Probe(dying, 7, MPI_COMM_WORLD, &status);
    else if (strcmp(how, "irecv") == 0) {
        rc = MPI_Irecv(&x, 1, MPI_INT, dying, 7, MPI_COMM_WORLD, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, &status);
    } else if (strcmp(how, "sendrecv") == 0) {
        rc = MPI_Sendrecv(&y, 1, MPI_INT, dying, 8, &x, 1, MPI_INT, dying, 7,
                          MPI_COMM_WORLD, &status);
    } else if (strcmp(how, "send") == 0 || strcmp(how, "isend") == 0) {
        const int n = 1 << 20;          /* past any eager limit */
        int *big = calloc((size_t)n, sizeof(int));
        if (strcmp(how, "send") == 0) {
            rc = MPI_Send(big, n, MPI_INT, dying, 7, MPI_COMM_WORLD);
        } else {
            rc = MPI_Isend(big, n, MPI_INT, dying, 7, MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, &status);
        }
        /* Not freed after a failure: the library may still read it. */
        if (rc == MPI_SUCCESS)
            free(big);
    } else if (strcmp(how, "midway") == 0) {
        char *big = malloc(midway_bytes);
        rc = MPI_Recv(big, midway_ints, MPI_INT, dying, 7, MPI_COMM_WORLD,
                      &status);
        free(big);
    } else
        rc = MPI_Recv(&x, 1, MPI_INT, dying, 7, MPI_COMM_WORLD, &status);
    return rc == MPI_SUCCESS ? 3 : 1;
}

/* --skip [R]: rank R (default 1) skips allreduce number 5 of 10, then every rank calls
 * MPI_Barrier: the others' last allreduce meets rank R's barrier (R = 0
 * is the barrier's hub, R = 1 one of its leaves).
 * --count: rank 1 passes one element more than the others.
 * --uneven [K]: ranks K and up (default: the last rank) pass 1000
 * elements, the others 1024 (a data-parallel job's short last batch).
 * --roots: odd ranks broadcast from rank 1, even ones from rank 0, then
 * all call MPI_Barrier.
 * --op: rank 1 reduces with MPI_MAX where the others use MPI_SUM (the
 * same bytes: only the op tells the calls apart).
 * --blocks: rank 0 calls MPI_Alltoall where the others call MPI_Gather
 * with root 1 (both go through the segment's pieces).
 * --types bcast|allgather: odd ranks pass 4 MPI_INT, even ones 4
 * MPI_FLOAT (the same bytes: only the datatype tells the calls apart);
 * MPI_Barrier after the broadcast.
 * Every rank that sees the mismatch fails; the driver checks the
 * message. */
static int mismatch(const char *how, int skipper)
{
    float buf[8] = { 0 };
    int rc = MPI_SUCCESS;
    if (strcmp(how, "--skip") == 0) {
        for (int i = 0; i < 10 && rc == MPI_SUCCESS; i++)
            if (!(world_rank == skipper && i == 5))
                rc = MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_FLOAT, MPI_SUM,
                                   MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            rc = MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(how, "--blocks") == 0) {
        float all[64];
        rc = world_rank == 0
                 ? MPI_Alltoall(buf, 1, MPI_FLOAT, all, 1, MPI_FLOAT,
                                MPI_COMM_WORLD)
                 : MPI_Gather(buf, 1, MPI_FLOAT, all, 1, MPI_FLOAT, 1,
                              MPI_COMM_WORLD);
    } else if (strcmp(how, "--uneven") == 0) {
        static float big[1024];
        rc = MPI_Allreduce(MPI_IN_PLACE, big,
                           world_rank >= skipper ? 1000 : 1024,
                           MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(how, "bcast") == 0 || strcmp(how, "allgather") == 0) {
        MPI_Datatype type = world_rank % 2 ? MPI_INT : MPI_FLOAT;
        static float all[4 * 64];
        rc = how[0] == 'b'
                 ? MPI_Bcast(buf, 4, type, 0, MPI_COMM_WORLD)
                 : MPI_Allgather(buf, 4, type, all, 4, type, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS && how[0] == 'b')     /* as --roots */
            rc = MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(how, "--roots") == 0) {
        /* A root may return before anyone finds the mismatch (over gloo
         * it does): the next call must. */
        rc = MPI_Bcast(buf, 4, MPI_FLOAT, world_rank % 2, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            rc = MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(how, "--op") == 0) {
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_FLOAT,
                           world_rank == 1 ? MPI_MAX : MPI_SUM,
                           MPI_COMM_WORLD);
    } else {
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, world_rank == 1 ? 5 : 4,
                           MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    return rc == MPI_SUCCESS ? 3 : 1;   /* 3: the mismatch went unnoticed */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    printf("shm_check: rank %d pid %d\n", world_rank, (int)getpid());
    fflush(stdout);
    if (argc == 4 && strcmp(argv[1], "--die") == 0)
        return die_in_loop(atoi(argv[2]), atoi(argv[3]));
    if (argc == 2 && strcmp(argv[1], "--die-mapping") == 0)
        return die_mapping();
    if (argc == 3 && strcmp(argv[1], "--orphan") == 0)
        return orphan(argv[2], 0, 1, false);
    if (argc == 5 && strcmp(argv[1], "--orphan") == 0)
        return orphan(argv[2], atoi(argv[3]), atoi(argv[4]), true);
    if (argc == 4 && strcmp(argv[1], "--freeze-during") == 0)
        return freeze_during(atoi(argv[2]), atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "--freeze") == 0)
        return freeze(atoi(argv[2]), atoi(argv[3]));
    if ((argc == 2 || argc == 3) && strcmp(argv[1], "--skip") == 0)
        return mismatch(argv[1], argc == 3 ? atoi(argv[2]) : 1);
    if ((argc == 2 || argc == 3) && strcmp(argv[1], "--uneven") == 0)
        return mismatch(argv[1], argc == 3 ? atoi(argv[2]) : world_size - 1);
    if (argc == 3 && strcmp(argv[1], "--types") == 0)
        return mismatch(argv[2], 1);
    if (argc == 2 && (strcmp(argv[1], "--count") == 0 ||
                      strcmp(argv[1], "--blocks") == 0 ||
                      strcmp(argv[1], "--roots") == 0 ||
                      strcmp(argv[1], "--op") == 0))
        return mismatch(argv[1], 1);

    check_rank_order_sum(5, "small");
    check_rank_order_sum(3000, "medium");
    check_rank_order_sum(600001, "large");
    check_dup_free_loop(200);
    int rc = finish();
    MPI_Finalize();
    return rc;
}

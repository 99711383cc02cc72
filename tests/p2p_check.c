/*
 * p2p_check.c - point-to-point communication.
 *
 * MPI_Send/MPI_Recv, MPI_Sendrecv, MPI_Isend/MPI_Irecv with MPI_Wait and
 * MPI_Waitall, tags, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_PROC_NULL, the
 * MPI_Status fields and MPI_Get_count, MPI_Probe and MPI_Iprobe (the size
 * learned before receiving), the non-overtaking order per (source,
 * communicator) - 1000 messages of varying sizes and tags from every rank
 * to rank 0, received with MPI_ANY_SOURCE and MPI_ANY_TAG, and a receive
 * posted before a blocking one taking the first message - a ring
 * exchange, 8 MiB messages, MPI_ERR_TRUNCATE for a receive buffer that
 * is too small, 80 large messages in flight received in the reverse
 * order of their tags, and 3000 small ones in flight while their sender
 * is in a barrier, MPI_Cancel of receives, sends and a collective,
 * matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv: the
 * message a probe takes is the one received, whatever is received in
 * between). With one rank every exchange is with itself.
 *
 * Every message's content is a pure function of (source, destination,
 * tag, sequence number, index), so each receiver checks what it got
 * without any other communication; receive buffers carry a canary element
 * after their end. A plain MPI program: it must give the same output
 * under Open MPI's mpirun and under pdmpirun. Output is TAP-like and
 * printed by rank 0 only after the ranks agree on the verdict; the exit
 * status is non-zero when any check failed. The run uses
 * MPI_ERRORS_RETURN, so a refused call is a failed check.
 *
 * Open MPI 4.1.4 (Debian), measured: with one rank, a receive posted
 * before a longer message to self completes with MPI_SUCCESS and the
 * message cut short; that check is "# TODO" (a known failure that does
 * not fail the run) under Open MPI at one rank.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap_harness.h"

/* ------------------------------------------------------------------ */
/* Message contents                                                     */
/* ------------------------------------------------------------------ */

#define CANARY (-123456789)

static int payload(int src, int dst, int tag, int seq, int i)
{
    return (int)(((unsigned)src * 2654435761u) ^ ((unsigned)dst * 40503u)
                 ^ ((unsigned)tag << 20) ^ ((unsigned)seq * 97u)
                 ^ (unsigned)i) & 0x7fffffff;
}

static void fill(int *buf, int n, int src, int dst, int tag, int seq)
{
    for (int i = 0; i < n; i++)
        buf[i] = payload(src, dst, tag, seq, i);
}

static int *alloc_ints(size_t n)
{
    int *p = malloc((n + 1) * sizeof(int));
    if (p == NULL) {
        fprintf(stderr, "p2p_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i <= n; i++)
        p[i] = CANARY;
    return p;
}

/* buf[0..n) must be the message, buf[n..cap] untouched. */
static void verify_msg(struct verdict *v, const int *buf, int n, int cap,
                       int src, int dst, int tag, int seq, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != payload(src, dst, tag, seq, i)) {
            fail(v, "%s: element %d of the message from %d (tag %d, seq %d) "
                 "is %d, expected %d", what, i, src, tag, seq, buf[i],
                 payload(src, dst, tag, seq, i));
            return;
        }
    for (int i = n; i <= cap; i++)
        if (buf[i] != CANARY) {
            fail(v, "%s: element %d, past the %d received, was written",
                 what, i, n);
            return;
        }
}

static void verify_status(struct verdict *v, const MPI_Status *st, int src,
                          int tag, int count, const char *what)
{
    int got = -1;
    MPI_Get_count(st, MPI_INT, &got);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || got != count)
        fail(v, "%s: status source %d tag %d count %d, expected %d, %d, %d",
             what, st->MPI_SOURCE, st->MPI_TAG, got, src, tag, count);
}

static int next_rank(int d)
{
    return (world_rank + d % world_size + world_size) % world_size;
}

/* ------------------------------------------------------------------ */
/* Basic exchanges                                                      */
/* ------------------------------------------------------------------ */

/* Pairs (0,1), (2,3), ... exchange with blocking MPI_Send and MPI_Recv,
 * the lower rank sending first; an unpaired last rank talks to itself
 * with MPI_Sendrecv. */
static void check_send_recv_pairs(void)
{
    struct verdict v = {""};
    const int n = 100;
    int *out = alloc_ints((size_t)n), *in = alloc_ints((size_t)n + 10);
    int partner = world_rank % 2 == 0 ? world_rank + 1 : world_rank - 1;
    MPI_Status st;
    if (partner >= world_size) {
        fill(out, n, world_rank, world_rank, 5, 0);
        check_rc(&v, "MPI_Sendrecv",
                 MPI_Sendrecv(out, n, MPI_INT, world_rank, 5, in, n + 10,
                              MPI_INT, world_rank, 5, MPI_COMM_WORLD, &st));
        verify_msg(&v, in, n, n + 10, world_rank, world_rank, 5, 0, "self");
        verify_status(&v, &st, world_rank, 5, n, "self");
    } else {
        fill(out, n, world_rank, partner, 5, 0);
        if (world_rank < partner) {
            check_rc(&v, "MPI_Send",
                     MPI_Send(out, n, MPI_INT, partner, 5, MPI_COMM_WORLD));
            check_rc(&v, "MPI_Recv",
                     MPI_Recv(in, n + 10, MPI_INT, partner, 5,
                              MPI_COMM_WORLD, &st));
        } else {
            check_rc(&v, "MPI_Recv",
                     MPI_Recv(in, n + 10, MPI_INT, partner, 5,
                              MPI_COMM_WORLD, &st));
            check_rc(&v, "MPI_Send",
                     MPI_Send(out, n, MPI_INT, partner, 5, MPI_COMM_WORLD));
        }
        verify_msg(&v, in, n, n + 10, partner, world_rank, 5, 0, "pair");
        verify_status(&v, &st, partner, 5, n, "pair");
    }
    free(out);
    free(in);
    report(&v, "MPI_Send / MPI_Recv between pairs (status, MPI_Get_count, "
           "a receive buffer larger than the message)");
}

/* A ring: everyone sends to the next rank and receives from the previous,
 * with MPI_Sendrecv and with MPI_Isend/MPI_Irecv + MPI_Waitall, several
 * rounds with the data passed along. */
static void check_ring(int n, const char *label)
{
    struct verdict v = {""};
    int *out = alloc_ints((size_t)n), *in = alloc_ints((size_t)n);
    int to = next_rank(1), from = next_rank(-1);
    MPI_Status st;
    for (int round = 0; round < 4; round++) {
        fill(out, n, world_rank, to, round, round);
        for (int i = 0; i <= n; i++)
            in[i] = CANARY;
        if (round % 2 == 0) {
            check_rc(&v, "MPI_Sendrecv",
                     MPI_Sendrecv(out, n, MPI_INT, to, round, in, n, MPI_INT,
                                  from, round, MPI_COMM_WORLD, &st));
        } else {
            MPI_Request reqs[2];
            MPI_Status sts[2];
            check_rc(&v, "MPI_Irecv",
                     MPI_Irecv(in, n, MPI_INT, from, round, MPI_COMM_WORLD,
                               &reqs[0]));
            check_rc(&v, "MPI_Isend",
                     MPI_Isend(out, n, MPI_INT, to, round, MPI_COMM_WORLD,
                               &reqs[1]));
            check_rc(&v, "MPI_Waitall", MPI_Waitall(2, reqs, sts));
            st = sts[0];
            if (reqs[0] != MPI_REQUEST_NULL || reqs[1] != MPI_REQUEST_NULL)
                fail(&v, "MPI_Waitall left a request set");
        }
        verify_msg(&v, in, n, n, from, world_rank, round, round, label);
        verify_status(&v, &st, from, round, n, label);
    }
    free(out);
    free(in);
    report(&v, "ring exchange of %s with MPI_Sendrecv and "
           "MPI_Isend/MPI_Irecv/MPI_Waitall", label);
}

/* Every rank sends three tagged messages to the next rank, which receives
 * them by tag in the reverse order. */
static void check_tags(void)
{
    struct verdict v = {""};
    enum { N = 20 };
    int out[3][N + 1], in[3][N + 1];
    int to = next_rank(1), from = next_rank(-1);
    MPI_Request reqs[3];
    const int tags[3] = {7, 0, 32767};
    for (int t = 0; t < 3; t++) {
        fill(out[t], N, world_rank, to, tags[t], t);
        check_rc(&v, "MPI_Isend",
                 MPI_Isend(out[t], N, MPI_INT, to, tags[t], MPI_COMM_WORLD,
                           &reqs[t]));
    }
    for (int t = 2; t >= 0; t--) {
        MPI_Status st;
        for (int i = 0; i <= N; i++)
            in[t][i] = CANARY;
        check_rc(&v, "MPI_Recv",
                 MPI_Recv(in[t], N, MPI_INT, from, tags[t], MPI_COMM_WORLD,
                          &st));
        verify_msg(&v, in[t], N, N, from, world_rank, tags[t], t, "by tag");
        verify_status(&v, &st, from, tags[t], N, "by tag");
    }
    check_rc(&v, "MPI_Waitall", MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    report(&v, "tags select messages: three tags received in reverse order");
}

/* Every rank sends one message to every rank (itself included); each
 * receives them with MPI_ANY_SOURCE and MPI_ANY_TAG and tells them apart
 * by the status. */
static void check_any_source_any_tag(void)
{
    struct verdict v = {""};
    int n = world_size;
    MPI_Request *reqs = malloc((size_t)n * sizeof(MPI_Request));
    int *out = alloc_ints((size_t)n * 16);
    for (int d = 0; d < n; d++) {
        int tag = 100 + world_rank;
        int count = 1 + (world_rank + d) % 16;
        fill(out + d * 16, count, world_rank, d, tag, 0);
        check_rc(&v, "MPI_Isend",
                 MPI_Isend(out + d * 16, count, MPI_INT, d, tag,
                           MPI_COMM_WORLD, &reqs[d]));
    }
    bool *seen = calloc((size_t)n, sizeof(bool));
    int in[17];
    for (int k = 0; k < n; k++) {
        MPI_Status st;
        for (int i = 0; i < 17; i++)
            in[i] = CANARY;
        check_rc(&v, "MPI_Recv",
                 MPI_Recv(in, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE;
        if (src < 0 || src >= n || seen[src]) {
            fail(&v, "status source %d", src);
            continue;
        }
        seen[src] = true;
        int count = 1 + (src + world_rank) % 16;
        verify_status(&v, &st, src, 100 + src, count, "any source, any tag");
        verify_msg(&v, in, count, 16, src, world_rank, 100 + src, 0,
                   "any source, any tag");
    }
    check_rc(&v, "MPI_Waitall", MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    free(seen);
    free(reqs);
    free(out);
    report(&v, "MPI_ANY_SOURCE and MPI_ANY_TAG: one message from every rank, "
           "told apart by the status");
}

static void check_zero_length(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    int in[2] = {CANARY, CANARY}, out = 1;
    MPI_Status st;
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(&out, 0, MPI_INT, to, 9, in, 2, MPI_INT, from, 9,
                          MPI_COMM_WORLD, &st));
    verify_status(&v, &st, from, 9, 0, "zero-length");
    if (in[0] != CANARY || in[1] != CANARY)
        fail(&v, "a zero-length message wrote the buffer");
    MPI_Request reqs[2];
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(NULL, 0, MPI_INT, from, 10, MPI_COMM_WORLD, &reqs[0]));
    check_rc(&v, "MPI_Isend",
             MPI_Isend(NULL, 0, MPI_INT, to, 10, MPI_COMM_WORLD, &reqs[1]));
    MPI_Status sts[2];
    check_rc(&v, "MPI_Waitall", MPI_Waitall(2, reqs, sts));
    verify_status(&v, &sts[0], from, 10, 0, "zero-length, NULL buffers");
    report(&v, "zero-length messages (also with NULL buffers)");
}

/* ------------------------------------------------------------------ */
/* MPI_PROC_NULL                                                        */
/* ------------------------------------------------------------------ */

static void expect_proc_null_status(struct verdict *v, const MPI_Status *st,
                                    const char *call)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    if (st->MPI_SOURCE != MPI_PROC_NULL || st->MPI_TAG != MPI_ANY_TAG
        || count != 0)
        fail(v, "%s from MPI_PROC_NULL: status source %d tag %d count %d",
             call, st->MPI_SOURCE, st->MPI_TAG, count);
}

static void check_proc_null(void)
{
    struct verdict v = {""};
    int buf[4] = {CANARY, CANARY, CANARY, CANARY}, out[4] = {1, 2, 3, 4};
    MPI_Status st;

    check_rc(&v, "MPI_Send",
             MPI_Send(out, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    memset(&st, 0x5a, sizeof(st));
    check_rc(&v, "MPI_Recv",
             MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    expect_proc_null_status(&v, &st, "MPI_Recv");

    memset(&st, 0x5a, sizeof(st));
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(out, 4, MPI_INT, MPI_PROC_NULL, 2, buf, 4, MPI_INT,
                          MPI_PROC_NULL, 2, MPI_COMM_WORLD, &st));
    expect_proc_null_status(&v, &st, "MPI_Sendrecv");

    MPI_Request reqs[2];
    MPI_Status sts[2];
    memset(sts, 0x5a, sizeof(sts));
    check_rc(&v, "MPI_Isend",
             MPI_Isend(out, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD,
                       &reqs[0]));
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD,
                       &reqs[1]));
    int flag = 0;
    check_rc(&v, "MPI_Test", MPI_Test(&reqs[1], &flag, &sts[1]));
    if (!flag)
        fail(&v, "MPI_Irecv from MPI_PROC_NULL not complete at once");
    else
        expect_proc_null_status(&v, &sts[1], "MPI_Irecv + MPI_Test");
    check_rc(&v, "MPI_Wait", MPI_Wait(&reqs[0], &sts[0]));
    if (reqs[0] != MPI_REQUEST_NULL || reqs[1] != MPI_REQUEST_NULL)
        fail(&v, "a completed request is not MPI_REQUEST_NULL");

    for (int i = 0; i < 4; i++)
        if (buf[i] != CANARY)
            fail(&v, "a receive from MPI_PROC_NULL wrote the buffer");

    /* MPI_Probe of MPI_PROC_NULL returns at once, too. */
    memset(&st, 0x5a, sizeof(st));
    check_rc(&v, "MPI_Probe",
             MPI_Probe(MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st));
    expect_proc_null_status(&v, &st, "MPI_Probe");
    flag = 0;
    check_rc(&v, "MPI_Iprobe",
             MPI_Iprobe(MPI_PROC_NULL, 4, MPI_COMM_WORLD, &flag, &st));
    if (!flag)
        fail(&v, "MPI_Iprobe of MPI_PROC_NULL: flag false");
    report(&v, "MPI_PROC_NULL: sends and receives complete at once, status "
           "source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0");
}

/* ------------------------------------------------------------------ */
/* Probe                                                                */
/* ------------------------------------------------------------------ */

/* Each rank sends the next one messages whose size the receiver learns
 * from MPI_Probe / MPI_Iprobe before allocating. */
static void check_probe(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    const int tag = 77;
    int flag = 1;
    MPI_Status st;

    /* Nobody ever sends this tag. */
    check_rc(&v, "MPI_Iprobe",
             MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, &st));
    if (flag)
        fail(&v, "MPI_Iprobe found a message with a tag nobody sent");

    MPI_Request reqs[4];
    int *out[4];
    for (int k = 0; k < 4; k++) {
        int size = 1 + (world_rank * 37 + k * 1013) % 5000;
        out[k] = alloc_ints((size_t)size);
        fill(out[k], size, world_rank, to, tag + k % 2, k);
        check_rc(&v, "MPI_Isend",
                 MPI_Isend(out[k], size, MPI_INT, to, tag + k % 2,
                           MPI_COMM_WORLD, &reqs[k]));
    }
    for (int k = 0; k < 4; k++) {
        int want_size = 1 + (from * 37 + k * 1013) % 5000;
        int want_tag = tag + k % 2;
        if (k % 2 == 0) {
            check_rc(&v, "MPI_Probe",
                     MPI_Probe(MPI_ANY_SOURCE, want_tag, MPI_COMM_WORLD, &st));
        } else {
            flag = 0;
            double start = MPI_Wtime();
            while (!flag && MPI_Wtime() - start < 60.0)
                check_rc(&v, "MPI_Iprobe",
                         MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                                    &st));
            if (!flag) {
                fail(&v, "MPI_Iprobe found nothing in 60 s");
                break;
            }
        }
        int size = -1;
        check_rc(&v, "MPI_Get_count", MPI_Get_count(&st, MPI_INT, &size));
        if (st.MPI_SOURCE != from || st.MPI_TAG != want_tag
            || size != want_size) {
            fail(&v, "probe %d: source %d tag %d size %d, expected %d, %d, "
                 "%d", k, st.MPI_SOURCE, st.MPI_TAG, size, from, want_tag,
                 want_size);
            break;
        }
        int *in = alloc_ints((size_t)size);
        MPI_Status rst;
        check_rc(&v, "MPI_Recv",
                 MPI_Recv(in, size, MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
                          MPI_COMM_WORLD, &rst));
        verify_msg(&v, in, size, size, from, world_rank, want_tag, k,
                   "probed");
        verify_status(&v, &rst, from, want_tag, size, "probed");
        free(in);
    }
    check_rc(&v, "MPI_Waitall", MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 4; k++)
        free(out[k]);
    report(&v, "MPI_Probe and MPI_Iprobe give source, tag and size before "
           "the receive");
}

/* ------------------------------------------------------------------ */
/* Order                                                                */
/* ------------------------------------------------------------------ */

#define ORDER_MSGS 1000
#define ORDER_MAX 600

static int order_size(int src, int seq)
{
    return (seq * 37 + src * 11) % ORDER_MAX;   /* 0 .. ORDER_MAX-1 ints */
}

/* Every rank (rank 0 too) sends ORDER_MSGS messages of varying sizes and
 * three tags to rank 0, alternating between world and a duplicate; rank 0
 * receives first everything on the duplicate, then everything on world,
 * each time with MPI_ANY_SOURCE and MPI_ANY_TAG, and checks that every
 * source's messages come in the order they were sent. */
static void check_order(void)
{
    struct verdict v = {""};
    MPI_Comm dup = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Request *reqs = malloc(ORDER_MSGS * sizeof(MPI_Request));
    int **out = malloc(ORDER_MSGS * sizeof(int *));

    for (int seq = 0; seq < ORDER_MSGS; seq++) {
        int size = order_size(world_rank, seq);
        int tag = seq % 3;
        MPI_Comm c = seq % 2 ? dup : MPI_COMM_WORLD;
        out[seq] = alloc_ints((size_t)size + 1);
        out[seq][0] = seq;
        fill(out[seq] + 1, size, world_rank, 0, tag, seq);
        check_rc(&v, "MPI_Isend",
                 MPI_Isend(out[seq], size + 1, MPI_INT, 0, tag, c, &reqs[seq]));
    }

    if (world_rank == 0) {
        int *next = calloc((size_t)world_size, sizeof(int));
        int *in = alloc_ints(ORDER_MAX + 1);
        for (int pass = 0; pass < 2; pass++) {
            MPI_Comm c = pass == 0 ? dup : MPI_COMM_WORLD;
            int first = pass == 0 ? 1 : 0;   /* odd seqs went on the dup */
            for (int r = 0; r < world_size; r++)
                next[r] = first;
            int total = world_size * (ORDER_MSGS / 2);
            /* After a failure the rest is still received (unchecked), so
             * that the senders complete. */
            for (int k = 0; k < total; k++) {
                MPI_Status st;
                check_rc(&v, "MPI_Recv",
                         MPI_Recv(in, ORDER_MAX + 1, MPI_INT, MPI_ANY_SOURCE,
                                  MPI_ANY_TAG, c, &st));
                int src = st.MPI_SOURCE, seq = in[0], count = -1;
                MPI_Get_count(&st, MPI_INT, &count);
                if (v.detail[0] != '\0') {
                } else if (src < 0 || src >= world_size) {
                    fail(&v, "status source %d", src);
                } else if (seq != next[src]) {
                    fail(&v, "%s: from rank %d got message %d, expected %d",
                         pass == 0 ? "dup" : "world", src, seq, next[src]);
                } else if (st.MPI_TAG != seq % 3
                           || count != order_size(src, seq) + 1) {
                    fail(&v, "message %d from %d: tag %d count %d", seq, src,
                         st.MPI_TAG, count);
                } else {
                    next[src] += 2;
                    int size = order_size(src, seq);
                    verify_msg(&v, in + 1, size, size, src, 0, seq % 3, seq,
                               "ordered");
                }
                for (int i = 0; i <= ORDER_MAX + 1; i++)
                    in[i] = CANARY;
            }
        }
        free(next);
        free(in);
    }
    check_rc(&v, "MPI_Waitall",
             MPI_Waitall(ORDER_MSGS, reqs, MPI_STATUSES_IGNORE));
    for (int seq = 0; seq < ORDER_MSGS; seq++)
        free(out[seq]);
    free(out);
    free(reqs);
    MPI_Comm_free(&dup);
    report(&v, "%d messages of 1..%d ints from every rank to rank 0 over two "
           "communicators arrive in order per source (MPI_ANY_SOURCE, "
           "MPI_ANY_TAG)", ORDER_MSGS, ORDER_MAX);
}

/* Blocking sends to rank 0, which receives by source in a rank-dependent
 * order: messages of one source in order, whatever other sources do. */
static void check_order_blocking(void)
{
    struct verdict v = {""};
    enum { MSGS = 200 };
    if (world_rank != 0) {
        int buf[9];
        for (int seq = 0; seq < MSGS; seq++) {
            buf[0] = seq;
            fill(buf + 1, 8, world_rank, 0, 3, seq);
            check_rc(&v, "MPI_Send",
                     MPI_Send(buf, 1 + seq % 9, MPI_INT, 0, 3,
                              MPI_COMM_WORLD));
        }
    } else {
        int *next = calloc((size_t)world_size, sizeof(int));
        int *got = calloc((size_t)world_size, sizeof(int));
        int buf[10];
        for (int k = 0; k < MSGS * (world_size - 1); k++) {
            /* Every seventh receive takes any source; the others name the
             * next source, round robin, that still has messages. */
            int src = MPI_ANY_SOURCE;
            if (k % 7 != 0)
                for (int d = 0; d < world_size - 1; d++) {
                    int s = 1 + (k + d) % (world_size - 1);
                    if (got[s] < MSGS) {
                        src = s;
                        break;
                    }
                }
            for (int i = 0; i < 10; i++)
                buf[i] = CANARY;
            MPI_Status st;
            check_rc(&v, "MPI_Recv",
                     MPI_Recv(buf, 10, MPI_INT, src, 3, MPI_COMM_WORLD, &st));
            int from = st.MPI_SOURCE;
            int count = -1;
            MPI_Get_count(&st, MPI_INT, &count);
            if (from >= 1 && from < world_size)
                got[from]++;
            if (v.detail[0] != '\0') {
                /* keep receiving, unchecked, so the senders finish */
            } else if (from < 1 || from >= world_size) {
                fail(&v, "status source %d", from);
            } else if (buf[0] != next[from] || count != 1 + buf[0] % 9) {
                fail(&v, "from %d: message %d (%d ints), expected %d", from,
                     buf[0], count, next[from]);
            } else {
                verify_msg(&v, buf + 1, count - 1, count - 1, from, 0, 3,
                           buf[0], "blocking");
                next[from]++;
            }
        }
        free(next);
        free(got);
    }
    report(&v, "blocking MPI_Send of %d messages per rank to rank 0, "
           "received by source and by MPI_ANY_SOURCE, in order", MSGS);
}

/* A receive posted earlier takes a source's first message before a
 * blocking receive that comes after it, whether the messages are sent
 * before or after the two receives are posted, and whether the earlier
 * one names the source or takes any: rank 1 sends rank 0 messages 0 and
 * 1 (tag 5) in each of four rounds; rank 0 posts MPI_Irecv (source 1 or
 * MPI_ANY_SOURCE), then calls MPI_Recv (source 1), and message 0 must
 * land in the MPI_Irecv's buffer. */
static void check_posted_before_blocking(void)
{
    struct verdict v = {""};
    for (int round = 0; round < 4; round++) {
        bool any = round % 2 != 0, early = round >= 2;
        int first[10], second[10];      /* a canary after 9 received */
        if (world_rank == 1) {
            if (!early)
                MPI_Barrier(MPI_COMM_WORLD);
            for (int seq = 0; seq < 2; seq++) {
                int buf[9];
                buf[0] = seq;
                fill(buf + 1, 8, 1, 0, 5, seq);
                check_rc(&v, "MPI_Send",
                         MPI_Send(buf, 9, MPI_INT, 0, 5, MPI_COMM_WORLD));
            }
            if (early)
                MPI_Barrier(MPI_COMM_WORLD);
        } else if (world_rank == 0) {
            for (int i = 0; i < 10; i++)
                first[i] = second[i] = CANARY;
            if (early)
                MPI_Barrier(MPI_COMM_WORLD);
            MPI_Request req;
            check_rc(&v, "MPI_Irecv",
                     MPI_Irecv(first, 9, MPI_INT, any ? MPI_ANY_SOURCE : 1, 5,
                               MPI_COMM_WORLD, &req));
            if (!early)
                MPI_Barrier(MPI_COMM_WORLD);
            check_rc(&v, "MPI_Recv",
                     MPI_Recv(second, 9, MPI_INT, 1, 5, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
            check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
            if (v.detail[0] == '\0' && (first[0] != 0 || second[0] != 1))
                fail(&v, "round %d (%s, sent %s): the MPI_Irecv got message "
                     "%d and the MPI_Recv after it message %d", round,
                     any ? "MPI_ANY_SOURCE" : "source 1",
                     early ? "before" : "after", first[0], second[0]);
            else if (v.detail[0] == '\0') {
                verify_msg(&v, first + 1, 8, 8, 1, 0, 5, 0, "posted first");
                verify_msg(&v, second + 1, 8, 8, 1, 0, 5, 1, "blocking");
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    report(&v, "a receive posted before a blocking receive from the same "
           "source takes its first message (named source or "
           "MPI_ANY_SOURCE, sent before or after the receives)");
}

/* ------------------------------------------------------------------ */
/* Large messages and truncation                                        */
/* ------------------------------------------------------------------ */

static void check_truncation(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    int out[10], in[6];
    MPI_Request sreq;
    MPI_Status st;

    fill(out, 10, world_rank, to, 20, 0);
    for (int i = 0; i < 6; i++)
        in[i] = CANARY;
    check_rc(&v, "MPI_Isend",
             MPI_Isend(out, 10, MPI_INT, to, 20, MPI_COMM_WORLD, &sreq));
    int rc = MPI_Recv(in, 5, MPI_INT, from, 20, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TRUNCATE)
        fail(&v, "MPI_Recv of 10 ints into 5: error class %d, expected "
             "MPI_ERR_TRUNCATE", cls);
    if (in[5] != CANARY)
        fail(&v, "MPI_Recv wrote past the 5-element buffer");
    check_rc(&v, "MPI_Wait", MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    report(&v, "MPI_Recv of a message longer than the buffer gives "
           "MPI_ERR_TRUNCATE");

    /* The same with MPI_Irecv posted before the send: the error comes from
     * MPI_Wait. */
    v.detail[0] = '\0';
    for (int i = 0; i < 6; i++)
        in[i] = CANARY;
    MPI_Request rreq;
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(in, 5, MPI_INT, from, 21, MPI_COMM_WORLD, &rreq));
    check_rc(&v, "MPI_Isend",
             MPI_Isend(out, 10, MPI_INT, to, 21, MPI_COMM_WORLD, &sreq));
    rc = MPI_Wait(&rreq, &st);
    cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TRUNCATE)
        fail(&v, "MPI_Wait on a truncated MPI_Irecv: error class %d, "
             "expected MPI_ERR_TRUNCATE", cls);
    if (in[5] != CANARY)
        fail(&v, "MPI_Irecv wrote past the 5-element buffer");
    check_rc(&v, "MPI_Wait", MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    bool todo = on_open_mpi && world_size == 1;
    report_as(todo ? EXPECT_TODO : EXPECT_PASS,
              "Open MPI 4.1 truncates a message to self silently when the "
              "receive was posted first", &v,
              "MPI_Irecv posted first, then a longer message: MPI_Wait gives "
              "MPI_ERR_TRUNCATE");

    /* Communication still works afterwards. */
    v.detail[0] = '\0';
    int in2[11];
    for (int i = 0; i < 11; i++)
        in2[i] = CANARY;
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(out, 10, MPI_INT, to, 22, in2, 10, MPI_INT, from, 22,
                          MPI_COMM_WORLD, &st));
    fill(out, 10, from, world_rank, 20, 0);   /* what from sent */
    for (int i = 0; i < 10; i++)
        if (in2[i] != out[i]) {
            fail(&v, "element %d is %d after the truncation", i, in2[i]);
            break;
        }
    report(&v, "messages flow after a truncated receive");
}

/* ------------------------------------------------------------------ */
/* Many messages in flight                                              */
/* ------------------------------------------------------------------ */

/* Every rank starts 80 sends of 80 KB (larger than any eager limit) to
 * the next rank, tags 0..79, and receives from the previous one in the
 * reverse order of tags: each receive matches the last message sent. */
static void check_reverse_large(void)
{
    struct verdict v = {""};
    enum { MSGS = 80, N = 20000 };
    int to = next_rank(1), from = next_rank(-1);
    int *out[MSGS];
    MPI_Request reqs[MSGS];
    for (int t = 0; t < MSGS; t++) {
        out[t] = alloc_ints(N);
        fill(out[t], N, world_rank, to, t, 0);
        check_rc(&v, "MPI_Isend", MPI_Isend(out[t], N, MPI_INT, to, t,
                                            MPI_COMM_WORLD, &reqs[t]));
    }
    int *in = alloc_ints(N);
    for (int t = MSGS - 1; t >= 0; t--) {
        MPI_Status st;
        check_rc(&v, "MPI_Recv", MPI_Recv(in, N, MPI_INT, from, t,
                                          MPI_COMM_WORLD, &st));
        verify_msg(&v, in, N, N, from, world_rank, t, 0, "reverse order");
        verify_status(&v, &st, from, t, N, "reverse order");
    }
    check_rc(&v, "MPI_Waitall",
             MPI_Waitall(MSGS, reqs, MPI_STATUSES_IGNORE));
    for (int t = 0; t < MSGS; t++)
        free(out[t]);
    free(in);
    report(&v, "80 MPI_Isend of 80 KB to the next rank, received in the "
           "reverse order of their tags");
}

/* Ranks 0, 2, ... start 3000 sends of 1 KiB to the next rank (more than
 * a shared-memory queue holds) and enter a barrier; the next rank
 * receives them all before it enters the barrier: the sends must
 * progress while their sender waits in the barrier. */
static void check_flood_then_barrier(void)
{
    struct verdict v = {""};
    enum { MSGS = 3000, N = 256 };
    bool sends = world_rank % 2 == 0 && world_rank + 1 < world_size;
    bool receives = world_rank % 2 == 1;
    int *buf = alloc_ints((size_t)MSGS * N);
    MPI_Request *reqs = malloc(MSGS * sizeof(*reqs));
    for (int k = 0; sends && k < MSGS; k++) {
        fill(buf + (size_t)k * N, N, world_rank, world_rank + 1, 3, k);
        check_rc(&v, "MPI_Isend",
                 MPI_Isend(buf + (size_t)k * N, N, MPI_INT, world_rank + 1, 3,
                           MPI_COMM_WORLD, &reqs[k]));
    }
    /* Let the sender reach the barrier first (for the check to mean
     * something; it passes either way). */
    if (receives)
        nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
    for (int k = 0; receives && k < MSGS; k++) {
        check_rc(&v, "MPI_Recv", MPI_Recv(buf, N, MPI_INT, world_rank - 1, 3,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (v.detail[0] == '\0')
            verify_msg(&v, buf, N, N, world_rank - 1, world_rank, 3, k,
                       "flood");
    }
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    if (sends)
        check_rc(&v, "MPI_Waitall",
                 MPI_Waitall(MSGS, reqs, MPI_STATUSES_IGNORE));
    free(reqs);
    free(buf);
    report(&v, "3000 MPI_Isend of 1 KiB to the next rank, the sender in a "
           "barrier while the receiver takes them");
}

/* Ranks 0, 2, ... send 1 MiB to the next rank and wait for the send;
 * the next rank waits until a probe sees the message (so it is queued as
 * unexpected), posts its MPI_Irecv and goes on to a barrier without
 * waiting on it: the data must still be taken while the receiver is in
 * the barrier, or the sender's MPI_Wait would never return (MPI's
 * progress rule). With MPI_Ssend too, whose receipt follows the data. */
static void check_unexpected_then_barrier(void)
{
    struct verdict v = {""};
    enum { N = 256 * 1024 };
    bool sends = world_rank % 2 == 0 && world_rank + 1 < world_size;
    bool receives = world_rank % 2 == 1;
    int *buf = alloc_ints(N);
    for (int round = 0; round < 2; round++) {
        const char *send = round == 0 ? "MPI_Isend" : "MPI_Issend";
        MPI_Request r = MPI_REQUEST_NULL;
        if (sends) {
            fill(buf, N, world_rank, world_rank + 1, 40, round);
            check_rc(&v, send,
                     (round == 0 ? MPI_Isend : MPI_Issend)(
                         buf, N, MPI_INT, world_rank + 1, 40, MPI_COMM_WORLD,
                         &r));
            check_rc(&v, "MPI_Wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        if (receives) {
            int flag = 0;
            while (!flag && v.detail[0] == '\0')
                check_rc(&v, "MPI_Iprobe",
                         MPI_Iprobe(world_rank - 1, 40, MPI_COMM_WORLD, &flag,
                                    MPI_STATUS_IGNORE));
            check_rc(&v, "MPI_Irecv",
                     MPI_Irecv(buf, N, MPI_INT, world_rank - 1, 40,
                               MPI_COMM_WORLD, &r));
        }
        check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
        if (receives) {
            check_rc(&v, "MPI_Wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
            if (v.detail[0] == '\0')
                verify_msg(&v, buf, N, N, world_rank - 1, world_rank, 40,
                           round, send);
        }
    }
    free(buf);
    report(&v, "1 MiB MPI_Isend and MPI_Issend completed while their "
           "receiver, whose MPI_Irecv matched them as unexpected, waits in "
           "a barrier");
}

/* ------------------------------------------------------------------ */
/* Cancellation                                                         */
/* ------------------------------------------------------------------ */

/* A receive nothing matches is taken back: MPI_Wait completes it,
 * MPI_Test_cancelled says so, its buffer is untouched. A receive racing
 * its message is either cancelled (a later receive gets the message) or
 * completes with it; a send's cancel may fail, the send then completes
 * as usual: either way every message arrives exactly once. */
static void check_cancel(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    int in[5], out[4], flag = -1;
    MPI_Request req, sreq;
    MPI_Status st;

    for (int i = 0; i < 5; i++)
        in[i] = CANARY;
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(in, 4, MPI_INT, from, 30, MPI_COMM_WORLD, &req));
    check_rc(&v, "MPI_Cancel", MPI_Cancel(&req));
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, &st));
    check_rc(&v, "MPI_Test_cancelled", MPI_Test_cancelled(&st, &flag));
    if (flag != 1)
        fail(&v, "MPI_Test_cancelled gives %d for a receive nothing matched",
             flag);
    if (req != MPI_REQUEST_NULL)
        fail(&v, "MPI_Wait left the cancelled request set");
    for (int i = 0; i < 5; i++)
        if (in[i] != CANARY) {
            fail(&v, "element %d of the cancelled receive's buffer was "
                 "written", i);
            break;
        }
    report(&v, "MPI_Cancel of a receive nothing matches: MPI_Wait completes "
           "it, MPI_Test_cancelled is true, its buffer untouched");

    v.detail[0] = '\0';
    fill(out, 4, world_rank, to, 31, 0);
    for (int i = 0; i < 5; i++)
        in[i] = CANARY;
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(in, 4, MPI_INT, from, 31, MPI_COMM_WORLD, &req));
    check_rc(&v, "MPI_Isend",
             MPI_Isend(out, 4, MPI_INT, to, 31, MPI_COMM_WORLD, &sreq));
    check_rc(&v, "MPI_Cancel", MPI_Cancel(&req));
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, &st));
    flag = -1;
    check_rc(&v, "MPI_Test_cancelled", MPI_Test_cancelled(&st, &flag));
    if (flag)
        check_rc(&v, "MPI_Recv",
                 MPI_Recv(in, 4, MPI_INT, from, 31, MPI_COMM_WORLD, &st));
    verify_msg(&v, in, 4, 4, from, world_rank, 31, 0, "the raced message");
    check_rc(&v, "MPI_Wait", MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    report(&v, "MPI_Cancel racing its message: cancelled and received "
           "later, or received, exactly once");

    /* A send: whether its cancel took is known to the sender only, so it
     * tells the receiver (tag 33) before the receiver waits for it. */
    v.detail[0] = '\0';
    for (int i = 0; i < 5; i++)
        in[i] = CANARY;
    check_rc(&v, "MPI_Isend",
             MPI_Isend(out, 4, MPI_INT, to, 32, MPI_COMM_WORLD, &sreq));
    check_rc(&v, "MPI_Cancel", MPI_Cancel(&sreq));
    check_rc(&v, "MPI_Wait", MPI_Wait(&sreq, &st));
    int cancelled = -1, theirs = -1;
    check_rc(&v, "MPI_Test_cancelled", MPI_Test_cancelled(&st, &cancelled));
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(&cancelled, 1, MPI_INT, to, 33, &theirs, 1, MPI_INT,
                          from, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (!theirs) {
        fill(out, 4, from, world_rank, 31, 0);   /* what from sent */
        check_rc(&v, "MPI_Recv",
                 MPI_Recv(in, 4, MPI_INT, from, 32, MPI_COMM_WORLD, &st));
        verify_msg(&v, in, 4, 4, from, world_rank, 31, 0,
                   "the message of a send whose cancel failed");
    }
    fill(out, 4, world_rank, to, 31, 0);
    report(&v, "MPI_Cancel of a send: cancelled, or completed and received");

    v.detail[0] = '\0';
    MPI_Request null = MPI_REQUEST_NULL;
    int cls = error_class(MPI_Cancel(&null));
    if (cls != MPI_ERR_REQUEST)
        fail(&v, "MPI_Cancel(MPI_REQUEST_NULL): error class %d, expected "
             "MPI_ERR_REQUEST", cls);
    report(&v, "MPI_Cancel of MPI_REQUEST_NULL is MPI_ERR_REQUEST");

    if (on_open_mpi) {
        report_skip("pdmpi's answer", "MPI_Cancel of a nonblocking "
                    "collective is MPI_ERR_REQUEST, and the collective "
                    "completes");
        return;
    }
    v.detail[0] = '\0';
    int one = 1, sum = 0;
    check_rc(&v, "MPI_Iallreduce",
             MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            &req));
    cls = error_class(MPI_Cancel(&req));
    if (cls != MPI_ERR_REQUEST)
        fail(&v, "MPI_Cancel of an MPI_Iallreduce: error class %d, expected "
             "MPI_ERR_REQUEST", cls);
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (sum != world_size)
        fail(&v, "the allreduce gave %d, expected %d", sum, world_size);
    report(&v, "MPI_Cancel of a nonblocking collective is MPI_ERR_REQUEST, "
           "and the collective completes");
}

/* ------------------------------------------------------------------ */
/* Buffered and ready sends                                             */
/* ------------------------------------------------------------------ */

/* Every rank buffers three messages to its next neighbour (a 256 KiB one
 * among them) before any receive is posted: MPI_Bsend and MPI_Ibsend
 * return at once. A message larger than the attached buffer is
 * MPI_ERR_BUFFER; MPI_Buffer_detach gives back the buffer attached once
 * every message has gone. Then MPI_Rsend and MPI_Irsend to receives
 * posted before a barrier. */
static void check_buffered_and_ready(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    const int sizes[3] = { 10, 65536, 0 };
    int size_total = 3 * MPI_BSEND_OVERHEAD;
    for (int k = 0; k < 3; k++)
        size_total += sizes[k] * (int)sizeof(int);
    char *buffer = malloc((size_t)size_total);
    check_rc(&v, "MPI_Buffer_attach", MPI_Buffer_attach(buffer, size_total));
    int *out[3];
    for (int k = 0; k < 3; k++) {
        out[k] = alloc_ints((size_t)sizes[k]);
        fill(out[k], sizes[k], world_rank, to, 40 + k, k);
    }
    check_rc(&v, "MPI_Bsend",
             MPI_Bsend(out[0], sizes[0], MPI_INT, to, 40, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Bsend",
             MPI_Bsend(out[1], sizes[1], MPI_INT, to, 41, MPI_COMM_WORLD));
    MPI_Request req;
    check_rc(&v, "MPI_Ibsend",
             MPI_Ibsend(out[2], sizes[2], MPI_INT, to, 42, MPI_COMM_WORLD,
                        &req));
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* The senders' copies are theirs: overwrite ours before receiving. */
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < sizes[k]; i++)
            out[k][i] = -1;
    /* Open MPI 4.1 answers MPI_ERR_BUFFER too, but a later ready send
     * then never completes (a ten-line program shows it): there the
     * check is left out, so the rest of this program still runs. */
    int too_many = size_total / (int)sizeof(int);
    int *big = alloc_ints((size_t)too_many);
    if (!on_open_mpi &&
        error_class(MPI_Bsend(big, too_many, MPI_INT, to, 43,
                              MPI_COMM_WORLD)) != MPI_ERR_BUFFER)
        fail(&v, "a buffered send larger than the attached buffer is not "
             "MPI_ERR_BUFFER");
    free(big);
    for (int k = 2; k >= 0; k--) {
        int *in = alloc_ints((size_t)sizes[k]);
        MPI_Status st;
        check_rc(&v, "MPI_Recv",
                 MPI_Recv(in, sizes[k], MPI_INT, from, 40 + k, MPI_COMM_WORLD,
                          &st));
        verify_msg(&v, in, sizes[k], sizes[k], from, world_rank, 40 + k, k,
                   "buffered");
        free(in);
    }
    void *back = NULL;
    int back_size = -1;
    check_rc(&v, "MPI_Buffer_detach", MPI_Buffer_detach(&back, &back_size));
    if (back != buffer || back_size != size_total)
        fail(&v, "MPI_Buffer_detach gave %p and %d, not the buffer attached "
             "(%p, %d)", back, back_size, (void *)buffer, size_total);
    for (int k = 0; k < 3; k++)
        free(out[k]);
    free(buffer);
    report(&v, "MPI_Bsend and MPI_Ibsend return before any receive, "
           "MPI_ERR_BUFFER past the buffer attached, MPI_Buffer_detach gives "
           "the buffer back");

    v.detail[0] = '\0';
    int in[2] = { CANARY, CANARY }, mine[2] = { world_rank, -world_rank };
    MPI_Request recvs[2], sreq;
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(&in[0], 1, MPI_INT, from, 50, MPI_COMM_WORLD,
                       &recvs[0]));
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(&in[1], 1, MPI_INT, from, 51, MPI_COMM_WORLD,
                       &recvs[1]));
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    check_rc(&v, "MPI_Rsend",
             MPI_Rsend(&mine[0], 1, MPI_INT, to, 50, MPI_COMM_WORLD));
    check_rc(&v, "MPI_Irsend",
             MPI_Irsend(&mine[1], 1, MPI_INT, to, 51, MPI_COMM_WORLD, &sreq));
    check_rc(&v, "MPI_Waitall", MPI_Waitall(2, recvs, MPI_STATUSES_IGNORE));
    check_rc(&v, "MPI_Wait", MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    if (in[0] != from || in[1] != -from)
        fail(&v, "ready sends delivered %d and %d, expected %d and %d",
             in[0], in[1], from, -from);
    report(&v, "MPI_Rsend and MPI_Irsend to receives posted before a "
           "barrier");
}

/* ------------------------------------------------------------------ */
/* Persistent requests                                                  */
/* ------------------------------------------------------------------ */

/* A small and a 256 KiB message to the next rank, each through one
 * MPI_Send_init / MPI_Recv_init pair started five times with
 * MPI_Startall (new contents each time); the handles stay after
 * MPI_Waitall, and an inactive one completes at once with an empty
 * status. A started receive nothing matches is cancelled. */
static void check_persistent(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    const int sizes[2] = { 10, 65536 };
    int *out[2], *in[2];
    MPI_Request reqs[4];
    for (int k = 0; k < 2; k++) {
        out[k] = alloc_ints((size_t)sizes[k]);
        in[k] = alloc_ints((size_t)sizes[k]);
        check_rc(&v, "MPI_Recv_init",
                 MPI_Recv_init(in[k], sizes[k], MPI_INT, from, 60 + k,
                               MPI_COMM_WORLD, &reqs[2 * k]));
        check_rc(&v, "MPI_Send_init",
                 MPI_Send_init(out[k], sizes[k], MPI_INT, to, 60 + k,
                               MPI_COMM_WORLD, &reqs[2 * k + 1]));
    }
    for (int round = 0; round < 5; round++) {
        for (int k = 0; k < 2; k++)
            fill(out[k], sizes[k], world_rank, to, 60 + k, round);
        check_rc(&v, "MPI_Startall", MPI_Startall(4, reqs));
        MPI_Status st[4];
        check_rc(&v, "MPI_Waitall", MPI_Waitall(4, reqs, st));
        for (int k = 0; k < 2; k++) {
            verify_msg(&v, in[k], sizes[k], sizes[k], from, world_rank,
                       60 + k, round, "persistent");
            verify_status(&v, &st[2 * k], from, 60 + k, sizes[k],
                          "persistent");
        }
        for (int i = 0; i < 4; i++)
            if (reqs[i] == MPI_REQUEST_NULL)
                fail(&v, "MPI_Waitall set persistent request %d to "
                     "MPI_REQUEST_NULL", i);
    }
    int flag = 0;
    MPI_Status st;
    check_rc(&v, "MPI_Test", MPI_Test(&reqs[0], &flag, &st));
    if (!flag || st.MPI_SOURCE != MPI_ANY_SOURCE || st.MPI_TAG != MPI_ANY_TAG)
        fail(&v, "an inactive persistent request: flag %d, source %d, tag %d",
             flag, st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < 4; i++)
        check_rc(&v, "MPI_Request_free", MPI_Request_free(&reqs[i]));
    MPI_Request lone;
    int x = CANARY;
    check_rc(&v, "MPI_Recv_init",
             MPI_Recv_init(&x, 1, MPI_INT, from, 62, MPI_COMM_WORLD, &lone));
    check_rc(&v, "MPI_Start", MPI_Start(&lone));
    check_rc(&v, "MPI_Cancel", MPI_Cancel(&lone));
    check_rc(&v, "MPI_Wait", MPI_Wait(&lone, &st));
    flag = 0;
    MPI_Test_cancelled(&st, &flag);
    if (!flag || x != CANARY || lone == MPI_REQUEST_NULL)
        fail(&v, "a started persistent receive nothing matched was not "
             "cancelled (flag %d)", flag);
    check_rc(&v, "MPI_Request_free", MPI_Request_free(&lone));
    for (int k = 0; k < 2; k++) {
        free(out[k]);
        free(in[k]);
    }
    report(&v, "persistent sends and receives (10 ints and 256 KiB) started "
           "5 times with MPI_Startall; inactive requests; MPI_Cancel of a "
           "started receive");
}

/* ------------------------------------------------------------------ */
/* A fresh communicator                                                 */
/* ------------------------------------------------------------------ */

/* The first call on a new communicator is a receive, posted while rank
 * 0 is already in a barrier of another communicator: the receive must
 * not wait for rank 0 to do anything on the new one. */
static void check_first_call_on_dup(void)
{
    struct verdict v = {""};
    MPI_Comm dup;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (world_rank == 0) {
        check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
        for (int r = 1; r < world_size; r++) {
            int value = 1000 + r;
            check_rc(&v, "MPI_Send",
                     MPI_Send(&value, 1, MPI_INT, r, 3, dup));
        }
    } else {
        int got = -1;
        MPI_Request req;
        check_rc(&v, "MPI_Irecv", MPI_Irecv(&got, 1, MPI_INT, 0, 3, dup, &req));
        check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
        check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (got != 1000 + world_rank)
            fail(&v, "received %d, expected %d", got, 1000 + world_rank);
    }
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
    report(&v, "an MPI_Irecv as the first call on a fresh MPI_Comm_dup, its "
           "sender in a barrier of MPI_COMM_WORLD");
}

/* ------------------------------------------------------------------ */
/* Matched probes                                                       */
/* ------------------------------------------------------------------ */

/* Each rank sends its next neighbour, in this order: tag 90 seq 0
 * (small), tag 90 seq 1 (4 MiB, large enough to stay with its sender
 * until received), tag 91 seq 2 (empty), tag 91 seq 3 (small). The
 * receiver takes seq 0 with MPI_Mprobe, receives seq 1 with a plain
 * MPI_Recv of tag 90 (the taken message must not match it), then seq 0
 * with MPI_Mrecv; then MPI_Improbe takes seq 2 and seq 3, received in
 * reverse with MPI_Imrecv and MPI_Mrecv, the latter into a buffer one
 * element short (MPI_ERR_TRUNCATE). */
static void check_matched_probe(void)
{
    struct verdict v = {""};
    int to = next_rank(1), from = next_rank(-1);
    const int sizes[4] = { 37, 1 << 20, 0, 5 };
    const int tags[4] = { 90, 90, 91, 91 };
    MPI_Request reqs[4];
    int *out[4];
    for (int k = 0; k < 4; k++) {
        out[k] = alloc_ints((size_t)sizes[k]);
        fill(out[k], sizes[k], world_rank, to, tags[k], k);
        check_rc(&v, "MPI_Isend",
                 MPI_Isend(out[k], sizes[k], MPI_INT, to, tags[k],
                           MPI_COMM_WORLD, &reqs[k]));
    }

    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    check_rc(&v, "MPI_Mprobe",
             MPI_Mprobe(MPI_ANY_SOURCE, 90, MPI_COMM_WORLD, &msg, &st));
    verify_status(&v, &st, from, 90, sizes[0], "MPI_Mprobe");
    if (msg == MPI_MESSAGE_NULL)
        fail(&v, "MPI_Mprobe gave MPI_MESSAGE_NULL for a message");
    int *large = alloc_ints((size_t)sizes[1]);
    check_rc(&v, "MPI_Recv",
             MPI_Recv(large, sizes[1], MPI_INT, from, 90, MPI_COMM_WORLD,
                      &st));
    verify_status(&v, &st, from, 90, sizes[1], "MPI_Recv after MPI_Mprobe");
    verify_msg(&v, large, sizes[1], sizes[1], from, world_rank, 90, 1,
               "MPI_Recv after MPI_Mprobe");
    free(large);
    int *small = alloc_ints((size_t)sizes[0]);
    check_rc(&v, "MPI_Mrecv",
             MPI_Mrecv(small, sizes[0], MPI_INT, &msg, &st));
    verify_status(&v, &st, from, 90, sizes[0], "MPI_Mrecv");
    verify_msg(&v, small, sizes[0], sizes[0], from, world_rank, 90, 0,
               "MPI_Mrecv");
    if (msg != MPI_MESSAGE_NULL)
        fail(&v, "MPI_Mrecv left the message handle set");
    free(small);

    MPI_Message m2 = MPI_MESSAGE_NULL, m3 = MPI_MESSAGE_NULL;
    MPI_Status st2, st3;
    int flag = 0;
    double start = MPI_Wtime();
    while (!flag && MPI_Wtime() - start < 60.0)
        check_rc(&v, "MPI_Improbe",
                 MPI_Improbe(from, 91, MPI_COMM_WORLD, &flag, &m2, &st2));
    flag = 0;
    while (!flag && MPI_Wtime() - start < 60.0)
        check_rc(&v, "MPI_Improbe",
                 MPI_Improbe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m3,
                             &st3));
    if (!flag) {
        fail(&v, "MPI_Improbe found nothing in 60 s");
    } else {
        verify_status(&v, &st2, from, 91, 0, "MPI_Improbe (empty)");
        verify_status(&v, &st3, from, 91, sizes[3], "MPI_Improbe (second)");
        int in[6];
        for (int i = 0; i < 6; i++)
            in[i] = CANARY;
        int rc = MPI_Mrecv(in, sizes[3] - 1, MPI_INT, &m3, &st);
        if (error_class(rc) != MPI_ERR_TRUNCATE)
            fail(&v, "MPI_Mrecv into a buffer one element short: error "
                 "class %d, expected MPI_ERR_TRUNCATE", error_class(rc));
        MPI_Request r;
        int none = CANARY;
        check_rc(&v, "MPI_Imrecv",
                 MPI_Imrecv(&none, 1, MPI_INT, &m2, &r));
        check_rc(&v, "MPI_Wait", MPI_Wait(&r, &st));
        verify_status(&v, &st, from, 91, 0, "MPI_Imrecv");
        if (none != CANARY || m2 != MPI_MESSAGE_NULL)
            fail(&v, "MPI_Imrecv of an empty message wrote the buffer or "
                 "left the handle set");
    }
    check_rc(&v, "MPI_Waitall", MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 4; k++)
        free(out[k]);
    report(&v, "MPI_Mprobe/MPI_Improbe take the message for MPI_Mrecv/"
           "MPI_Imrecv: a receive between them gets the next one");

    v.detail[0] = '\0';
    msg = MPI_MESSAGE_NULL;
    check_rc(&v, "MPI_Mprobe",
             MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    if (msg != MPI_MESSAGE_NO_PROC)
        fail(&v, "MPI_Mprobe(MPI_PROC_NULL) did not give "
             "MPI_MESSAGE_NO_PROC");
    int x = CANARY;
    check_rc(&v, "MPI_Mrecv", MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    if (st.MPI_SOURCE != MPI_PROC_NULL || msg != MPI_MESSAGE_NULL ||
        x != CANARY)
        fail(&v, "MPI_Mrecv of MPI_MESSAGE_NO_PROC: source %d, handle %s, "
             "buffer %s", st.MPI_SOURCE,
             msg == MPI_MESSAGE_NULL ? "null" : "set",
             x == CANARY ? "untouched" : "written");
    report(&v, "matched probes of MPI_PROC_NULL give MPI_MESSAGE_NO_PROC");

    /* Open MPI raises this through MPI_COMM_NULL's handler, which is
     * fatal; pdmpi through MPI_COMM_WORLD's, as MPI-3 says. */
    if (on_open_mpi) {
        report_skip("pdmpi's answer", "MPI_Mrecv of MPI_MESSAGE_NULL is "
                    "MPI_ERR_REQUEST");
        return;
    }
    v.detail[0] = '\0';
    int cls = error_class(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    if (cls != MPI_ERR_REQUEST)
        fail(&v, "MPI_Mrecv of MPI_MESSAGE_NULL: error class %d, expected "
             "MPI_ERR_REQUEST", cls);
    report(&v, "MPI_Mrecv of MPI_MESSAGE_NULL is MPI_ERR_REQUEST");
}

/* Synchronous sends complete only once a receive has matched them: an
 * Issend to a rank that has not posted its receive stays incomplete
 * while that rank waits at a barrier; an Ssend to a rank that posted an
 * Irecv and went on to a barrier completes (MPI's progress rule); an
 * Issend to oneself completes after the receive; Ssend_init starts
 * synchronous sends; a tag past MPI_TAG_UB is MPI_ERR_TAG. */
/* MPI_Request_free of a receive no message has matched yet: the receive
 * still takes the next message and fills the buffer. */
static void check_freed_receive(void)
{
    struct verdict v = {""};
    int right = (world_rank + 1) % world_size,
        left = (world_rank + world_size - 1) % world_size;
    int x = CANARY, y = CANARY, out = 1000 + world_rank, after = 0;
    MPI_Request r;
    check_rc(&v, "MPI_Irecv", MPI_Irecv(&x, 1, MPI_INT, left, 36,
                                        MPI_COMM_WORLD, &r));
    check_rc(&v, "MPI_Request_free", MPI_Request_free(&r));
    if (r != MPI_REQUEST_NULL)
        fail(&v, "MPI_Request_free left the handle set");
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc(&v, "MPI_Send", MPI_Send(&out, 1, MPI_INT, right, 36,
                                      MPI_COMM_WORLD));
    /* The same sender's next message comes after it (non-overtaking):
     * once it is here, the first has been taken. */
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(&out, 1, MPI_INT, right, 37, &y, 1, MPI_INT, left,
                          37, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_rc(&v, "MPI_Iprobe", MPI_Iprobe(left, 36, MPI_COMM_WORLD, &after,
                                          MPI_STATUS_IGNORE));
    if (x != 1000 + left || y != 1000 + left || after)
        fail(&v, "freed receive got %d, next %d, left over %d; expected %d",
             x, y, after, 1000 + left);
    /* The same with a strided type: the message is unpacked into it. */
    MPI_Datatype every_other;
    MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int strided[3] = { CANARY, CANARY, CANARY }, pair[2] = { out, -out };
    check_rc(&v, "MPI_Irecv", MPI_Irecv(strided, 1, every_other, left, 38,
                                        MPI_COMM_WORLD, &r));
    check_rc(&v, "MPI_Request_free", MPI_Request_free(&r));
    MPI_Barrier(MPI_COMM_WORLD);
    check_rc(&v, "MPI_Send", MPI_Send(pair, 2, MPI_INT, right, 38,
                                      MPI_COMM_WORLD));
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(&out, 1, MPI_INT, right, 39, &y, 1, MPI_INT, left,
                          39, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (strided[0] != 1000 + left || strided[1] != CANARY ||
        strided[2] != -(1000 + left))
        fail(&v, "freed strided receive holds %d %d %d", strided[0],
             strided[1], strided[2]);
    /* A matched probe's message, received by an MPI_Imrecv let go of at
     * once: it lands all the same. */
    int matched[3] = { CANARY, CANARY, CANARY };
    MPI_Message msg;
    check_rc(&v, "MPI_Send", MPI_Send(pair, 2, MPI_INT, right, 40,
                                      MPI_COMM_WORLD));
    check_rc(&v, "MPI_Mprobe", MPI_Mprobe(left, 40, MPI_COMM_WORLD, &msg,
                                          MPI_STATUS_IGNORE));
    check_rc(&v, "MPI_Imrecv", MPI_Imrecv(matched, 1, every_other, &msg, &r));
    check_rc(&v, "MPI_Request_free", MPI_Request_free(&r));
    check_rc(&v, "MPI_Sendrecv",
             MPI_Sendrecv(&out, 1, MPI_INT, right, 41, &y, 1, MPI_INT, left,
                          41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (matched[0] != 1000 + left || matched[1] != CANARY ||
        matched[2] != -(1000 + left))
        fail(&v, "freed strided MPI_Imrecv holds %d %d %d", matched[0],
             matched[1], matched[2]);
    MPI_Type_free(&every_other);
    report(&v, "MPI_Request_free of a posted receive: the receive still "
           "takes its message into the buffer, strided too, and so does an "
           "MPI_Imrecv");
}

static void check_synchronous(void)
{
    struct verdict v = {""};
    int right = (world_rank + 1) % world_size,
        left = (world_rank + world_size - 1) % world_size;
    int x = 1000 + world_rank, y = -1, flag = -1;
    MPI_Request q;
    if (world_size > 1) {
        check_rc(&v, "MPI_Issend",
                 MPI_Issend(&x, 1, MPI_INT, right, 31, MPI_COMM_WORLD, &q));
        for (int i = 0; i < 20; i++)
            check_rc(&v, "MPI_Test", MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
        if (flag)
            fail(&v, "MPI_Issend completed before rank %d posted a receive",
                 right);
        MPI_Barrier(MPI_COMM_WORLD);
        check_rc(&v, "MPI_Recv", MPI_Recv(&y, 1, MPI_INT, left, 31,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_rc(&v, "MPI_Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (y != 1000 + left)
            fail(&v, "received %d from rank %d", y, left);
    }
    report(&v, "MPI_Issend stays incomplete until its receive is posted");

    v.detail[0] = '\0';
    if (world_size > 1) {
        /* Even ranks send to the next; odd ones receive from the one
         * before: receive posted, then a barrier, then the wait. */
        bool sender = world_rank % 2 == 0 && world_rank + 1 < world_size;
        bool receiver = world_rank % 2 == 1;
        y = -1;
        if (receiver)
            check_rc(&v, "MPI_Irecv", MPI_Irecv(&y, 1, MPI_INT, left, 32,
                                                MPI_COMM_WORLD, &q));
        if (sender)
            check_rc(&v, "MPI_Ssend", MPI_Ssend(&x, 1, MPI_INT, right, 32,
                                                MPI_COMM_WORLD));
        MPI_Barrier(MPI_COMM_WORLD);
        if (receiver) {
            check_rc(&v, "MPI_Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
            if (y != 1000 + left)
                fail(&v, "received %d", y);
        }
    }
    report(&v, "MPI_Ssend to a rank whose MPI_Irecv is posted completes "
           "while that rank is in MPI_Barrier");

    v.detail[0] = '\0';
    MPI_Status st;
    check_rc(&v, "MPI_Issend", MPI_Issend(&x, 1, MPI_INT, world_rank, 33,
                                          MPI_COMM_WORLD, &q));
    check_rc(&v, "MPI_Test", MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    if (flag)
        fail(&v, "MPI_Issend to oneself completed before the receive");
    check_rc(&v, "MPI_Recv", MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE,
                                      MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_rc(&v, "MPI_Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
    if (y != x || st.MPI_TAG != 33 || st.MPI_SOURCE != world_rank)
        fail(&v, "received %d with tag %d from %d", y, st.MPI_TAG,
             st.MPI_SOURCE);
    report(&v, "MPI_Issend to oneself, received with MPI_ANY_TAG");

    /* A synchronous send's message is on its way: MPI lets a cancel
     * fail, and then the send completes when it is received. Whichever
     * way, a cancelled send is never received and a received one never
     * reads as cancelled. */
    v.detail[0] = '\0';
    x = 4242;
    y = CANARY;
    check_rc(&v, "MPI_Issend", MPI_Issend(&x, 1, MPI_INT, world_rank, 35,
                                          MPI_COMM_WORLD, &q));
    check_rc(&v, "MPI_Cancel", MPI_Cancel(&q));
    int cancelled = 0, waiting = 0;
    check_rc(&v, "MPI_Test", MPI_Test(&q, &flag, &st));
    if (flag)
        MPI_Test_cancelled(&st, &cancelled);
    check_rc(&v, "MPI_Iprobe", MPI_Iprobe(world_rank, 35, MPI_COMM_WORLD,
                                          &waiting, MPI_STATUS_IGNORE));
    if (cancelled && waiting)
        fail(&v, "the send reads as cancelled and its message is there");
    if (!cancelled) {
        check_rc(&v, "MPI_Recv", MPI_Recv(&y, 1, MPI_INT, world_rank, 35,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (!flag)
            check_rc(&v, "MPI_Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (y != x)
            fail(&v, "received %d after a cancel that failed", y);
    }
    report(&v, "MPI_Cancel of an MPI_Issend: cancelled and never received, "
           "or received and not cancelled");

    v.detail[0] = '\0';
    MPI_Request ps, pr;
    check_rc(&v, "MPI_Ssend_init", MPI_Ssend_init(&x, 1, MPI_INT, right, 34,
                                                  MPI_COMM_WORLD, &ps));
    check_rc(&v, "MPI_Recv_init", MPI_Recv_init(&y, 1, MPI_INT, left, 34,
                                                MPI_COMM_WORLD, &pr));
    for (int round = 0; round < 3; round++) {
        y = -1;
        x = round * 100 + world_rank;
        MPI_Request both[2] = { pr, ps };
        check_rc(&v, "MPI_Startall", MPI_Startall(2, both));
        /* Waitany passes over a finished (inactive) persistent request. */
        int first = -1, second = -1, third = -1;
        check_rc(&v, "MPI_Waitany",
                 MPI_Waitany(2, both, &first, MPI_STATUS_IGNORE));
        check_rc(&v, "MPI_Waitany",
                 MPI_Waitany(2, both, &second, MPI_STATUS_IGNORE));
        check_rc(&v, "MPI_Waitany",
                 MPI_Waitany(2, both, &third, MPI_STATUS_IGNORE));
        if (first == second || first < 0 || second < 0 ||
            third != MPI_UNDEFINED)
            fail(&v, "MPI_Waitany gave %d, %d, %d", first, second, third);
        if (y != round * 100 + left)
            fail(&v, "round %d: received %d", round, y);
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
    x = 1000 + world_rank;
    report(&v, "MPI_Ssend_init and MPI_Recv_init around a ring, three "
           "rounds, finished by MPI_Waitany");

    v.detail[0] = '\0';
    int *ub, found = 0;
    check_rc(&v, "MPI_Comm_get_attr",
             MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found));
    if (!found || *ub < 32767)
        fail(&v, "MPI_TAG_UB %d", found ? *ub : -1);
    else if (*ub < 2147483647) {
        int rc = MPI_Send(&x, 1, MPI_INT, world_rank, *ub + 1, MPI_COMM_WORLD);
        if (error_class(rc) != MPI_ERR_TAG)
            fail(&v, "a tag past MPI_TAG_UB: %d, expected MPI_ERR_TAG", rc);
    }
    report(&v, "MPI_TAG_UB is at least 32767 and a tag past it is "
           "MPI_ERR_TAG");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();

    if (world_rank == 0)
        printf("# p2p_check on %d rank(s)\n", world_size);

    check_send_recv_pairs();
    check_ring(1, "1 int");
    check_ring(1000, "1000 ints");
    check_ring(2 * 1024 * 1024, "8 MiB");
    check_tags();
    check_any_source_any_tag();
    check_zero_length();
    check_proc_null();
    check_probe();
    check_order();
    if (world_size > 1)
        check_order_blocking();
    else
        report_skip("needs 2 ranks", "blocking MPI_Send of 200 messages per "
                    "rank to rank 0, received by source and by "
                    "MPI_ANY_SOURCE, in order");
    if (world_size > 1)
        check_posted_before_blocking();
    else
        report_skip("needs 2 ranks", "a receive posted before a blocking "
                    "receive from the same source takes its first message "
                    "(named source or MPI_ANY_SOURCE, sent before or after "
                    "the receives)");
    check_truncation();
    check_reverse_large();
    check_flood_then_barrier();
    check_unexpected_then_barrier();
    check_cancel();
    check_matched_probe();
    check_first_call_on_dup();
    check_buffered_and_ready();
    check_persistent();
    check_synchronous();
    check_freed_receive();

    int status = finish();
    MPI_Finalize();
    return status;
}

/*
 * nonblocking_check.c - nonblocking collectives and request completion.
 *
 * MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Ireduce, MPI_Ibarrier,
 * MPI_Ialltoall and MPI_Ireduce_scatter_block, completed with MPI_Wait,
 * MPI_Waitall, MPI_Waitany, MPI_Test (looping until the flag is set),
 * MPI_Testall and MPI_Request_get_status; several outstanding at once on
 * one communicator and completed in any order (a different order on each
 * rank), a blocking collective between a start and its completion,
 * requests on two communicators interleaved, MPI_REQUEST_NULL in the
 * completion calls (return at once, empty status), completed requests set
 * to MPI_REQUEST_NULL, and starts that return before a late rank arrives.
 *
 * MPI_Request_free is tested on a started MPI_Isend, not on a collective
 * request: the standard (MPI-3.1 5.12, MPI-4.1 6.12) makes freeing a
 * nonblocking collective's request erroneous. The freed send must still
 * be delivered.
 *
 * Every value is a pure function of (rank, index, instance), so each rank
 * computes its expected results without communicating; receive buffers
 * carry a canary element after their end. A plain MPI program: it must
 * give the same output under Open MPI's mpirun and under pdmpirun. Output
 * is TAP-like and printed by rank 0 only after the ranks agree on the
 * verdict; the exit status is non-zero when any check failed. The run
 * uses MPI_ERRORS_RETURN, so a refused call is a failed check.
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

#include "tap_harness.h"

/* ------------------------------------------------------------------ */
/* One nonblocking collective, its buffers and its expected result      */
/* ------------------------------------------------------------------ */

enum nbkind {
    NB_IALLREDUCE, NB_IBCAST, NB_IALLGATHER, NB_IREDUCE, NB_IBARRIER,
    NB_IALLTOALL, NB_IREDUCE_SCATTER_BLOCK, NB_KINDS
};

static const char *nb_names[NB_KINDS] = {
    "MPI_Iallreduce", "MPI_Ibcast", "MPI_Iallgather", "MPI_Ireduce",
    "MPI_Ibarrier", "MPI_Ialltoall", "MPI_Ireduce_scatter_block"
};

#define CANARY (-123456789)

struct nbop {
    enum nbkind kind;
    int k;            /* instance: makes every outstanding op's data differ */
    MPI_Comm comm;
    int n, me;        /* size of comm and rank in it */
    int count;
    int root;
    int *send;        /* send_len elements */
    int *recv;        /* recv_len elements and a canary */
    size_t send_len, recv_len;
    MPI_Request req;
    bool started;
};

static int send_value(const struct nbop *op, int rank, size_t j)
{
    switch (op->kind) {
    case NB_IALLREDUCE:
    case NB_IREDUCE_SCATTER_BLOCK:
        return (rank + 1) * (int)(j + 1) + op->k;
    case NB_IREDUCE:
        return (rank * 3 + (int)j * (op->k + 1)) % 101;
    case NB_IALLGATHER:
        return rank * 100 + (int)j + op->k;
    case NB_IBCAST:
        return rank * 1000 + (int)j + op->k * 7;
    case NB_IALLTOALL:   /* j = destination * count + i */
        return rank * 10000 + (int)j + op->k;
    default:
        return 0;
    }
}

/* Element j of the result on rank me of comm, or CANARY where nothing is
 * defined. */
static int expected_value(const struct nbop *op, size_t j)
{
    int n = op->n, me = op->me;
    size_t c = (size_t)op->count;
    switch (op->kind) {
    case NB_IALLREDUCE: {
        int s = 0;
        for (int r = 0; r < n; r++)
            s += send_value(op, r, j);
        return s;
    }
    case NB_IREDUCE: {
        if (me != op->root)
            return CANARY;
        int m = send_value(op, 0, j);
        for (int r = 1; r < n; r++)
            if (send_value(op, r, j) > m)
                m = send_value(op, r, j);
        return m;
    }
    case NB_IBCAST:
        return send_value(op, op->root, j);
    case NB_IALLGATHER:
        return send_value(op, (int)(j / c), j % c);
    case NB_IALLTOALL: {
        int src = (int)(j / c);
        return send_value(op, src, (size_t)me * c + j % c);
    }
    case NB_IREDUCE_SCATTER_BLOCK: {
        int s = 0;
        for (int r = 0; r < n; r++)
            s += send_value(op, r, (size_t)me * c + j);
        return s;
    }
    default:
        return CANARY;
    }
}

static int *alloc_ints(size_t n)
{
    int *p = malloc((n + 1) * sizeof(int));
    if (p == NULL) {
        fprintf(stderr, "nonblocking_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i <= n; i++)
        p[i] = CANARY;
    return p;
}

/* Starts op; the root of rooted kinds moves with k. */
static void nb_start(struct verdict *v, struct nbop *op, enum nbkind kind,
                     int k, MPI_Comm comm, int count)
{
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->k = k;
    op->comm = comm;
    op->count = count;
    op->req = MPI_REQUEST_NULL;
    MPI_Comm_size(comm, &op->n);
    MPI_Comm_rank(comm, &op->me);
    op->root = (k * 5 + 3) % op->n;
    size_t c = (size_t)count, n = (size_t)op->n;

    switch (kind) {
    case NB_IALLREDUCE: op->send_len = c; op->recv_len = c; break;
    case NB_IREDUCE: op->send_len = c; op->recv_len = c; break;
    case NB_IBCAST: op->send_len = 0; op->recv_len = c; break;
    case NB_IALLGATHER: op->send_len = c; op->recv_len = c * n; break;
    case NB_IALLTOALL: op->send_len = c * n; op->recv_len = c * n; break;
    case NB_IREDUCE_SCATTER_BLOCK:
        op->send_len = c * n;
        op->recv_len = c;
        break;
    default: break;
    }
    op->send = alloc_ints(op->send_len);
    op->recv = alloc_ints(op->recv_len);
    for (size_t j = 0; j < op->send_len; j++)
        op->send[j] = send_value(op, op->me, j);
    if (kind == NB_IBCAST && op->me == op->root)
        for (size_t j = 0; j < c; j++)
            op->recv[j] = send_value(op, op->me, j);

    int rc = MPI_ERR_INTERN;
    switch (kind) {
    case NB_IALLREDUCE:
        rc = MPI_Iallreduce(op->send, op->recv, count, MPI_INT, MPI_SUM, comm,
                            &op->req);
        break;
    case NB_IBCAST:
        rc = MPI_Ibcast(op->recv, count, MPI_INT, op->root, comm, &op->req);
        break;
    case NB_IALLGATHER:
        rc = MPI_Iallgather(op->send, count, MPI_INT, op->recv, count, MPI_INT,
                            comm, &op->req);
        break;
    case NB_IREDUCE:
        rc = MPI_Ireduce(op->send, op->recv, count, MPI_INT, MPI_MAX, op->root,
                         comm, &op->req);
        break;
    case NB_IBARRIER:
        rc = MPI_Ibarrier(comm, &op->req);
        break;
    case NB_IALLTOALL:
        rc = MPI_Ialltoall(op->send, count, MPI_INT, op->recv, count, MPI_INT,
                           comm, &op->req);
        break;
    case NB_IREDUCE_SCATTER_BLOCK:
        rc = MPI_Ireduce_scatter_block(op->send, op->recv, count, MPI_INT,
                                       MPI_SUM, comm, &op->req);
        break;
    default:
        break;
    }
    check_rc(v, nb_names[kind], rc);
    op->started = rc == MPI_SUCCESS;
    if (op->started && op->req == MPI_REQUEST_NULL)
        fail(v, "%s returned MPI_REQUEST_NULL", nb_names[kind]);
}

/* After completion: the result, the canary, the send buffer, the handle. */
static void nb_verify(struct verdict *v, const struct nbop *op,
                      const char *how)
{
    if (!op->started)
        return;
    if (op->req != MPI_REQUEST_NULL)
        fail(v, "%s completed by %s: the request is not MPI_REQUEST_NULL",
             nb_names[op->kind], how);
    for (size_t j = 0; j < op->recv_len; j++) {
        int want = expected_value(op, j);
        if (op->recv[j] != want) {
            fail(v, "%s (instance %d) completed by %s: element %zu is %d, "
                 "expected %d", nb_names[op->kind], op->k, how, j,
                 op->recv[j], want);
            break;
        }
    }
    if (op->recv[op->recv_len] != CANARY)
        fail(v, "%s completed by %s: wrote past the end of the receive "
             "buffer", nb_names[op->kind], how);
    for (size_t j = 0; j < op->send_len; j++)
        if (op->send[j] != send_value(op, op->me, j)) {
            fail(v, "%s completed by %s: send buffer changed at %zu",
                 nb_names[op->kind], how, j);
            break;
        }
}

static void nb_free(struct nbop *op)
{
    free(op->send);
    free(op->recv);
    op->send = op->recv = NULL;
}

/* ------------------------------------------------------------------ */
/* Completion                                                           */
/* ------------------------------------------------------------------ */

/* Loops on a test call give up after this long, so that a request that
 * never completes is reported instead of hanging the run. */
#define TEST_LOOP_LIMIT_S 60.0

enum method {
    M_WAIT, M_WAITALL, M_WAITANY, M_TEST, M_TESTALL, M_GET_STATUS, M_METHODS
};

static const char *method_names[M_METHODS] = {
    "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Test loop",
    "MPI_Testall loop", "MPI_Request_get_status loop then MPI_Wait"
};

static void complete(struct verdict *v, struct nbop *op, enum method m)
{
    if (!op->started)
        return;
    MPI_Status st;
    int flag = 0, index = -1;
    double start = MPI_Wtime();
    switch (m) {
    case M_WAIT:
        check_rc(v, "MPI_Wait", MPI_Wait(&op->req, &st));
        break;
    case M_WAITALL:
        check_rc(v, "MPI_Waitall", MPI_Waitall(1, &op->req, &st));
        break;
    case M_WAITANY:
        check_rc(v, "MPI_Waitany", MPI_Waitany(1, &op->req, &index, &st));
        if (index != 0)
            fail(v, "MPI_Waitany gave index %d", index);
        break;
    case M_TEST:
        while (!flag && MPI_Wtime() - start < TEST_LOOP_LIMIT_S)
            check_rc(v, "MPI_Test", MPI_Test(&op->req, &flag, &st));
        break;
    case M_TESTALL:
        while (!flag && MPI_Wtime() - start < TEST_LOOP_LIMIT_S)
            check_rc(v, "MPI_Testall", MPI_Testall(1, &op->req, &flag, &st));
        break;
    case M_GET_STATUS:
        while (!flag && MPI_Wtime() - start < TEST_LOOP_LIMIT_S)
            check_rc(v, "MPI_Request_get_status",
                     MPI_Request_get_status(op->req, &flag, &st));
        if (flag && op->req == MPI_REQUEST_NULL)
            fail(v, "MPI_Request_get_status freed the request");
        if (flag)
            check_rc(v, "MPI_Wait", MPI_Wait(&op->req, &st));
        break;
    default:
        break;
    }
    if ((m == M_TEST || m == M_TESTALL || m == M_GET_STATUS) && !flag)
        fail(v, "%s: not complete after %.0f s", method_names[m],
             TEST_LOOP_LIMIT_S);
}

static void check_each_method(void)
{
    for (int kind = 0; kind < NB_KINDS; kind++) {
        struct verdict v = {""};
        for (int m = 0; m < M_METHODS; m++) {
            static const int counts[] = {0, 1, 7, 1000};
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                struct nbop op;
                nb_start(&v, &op, (enum nbkind)kind, m * 10 + (int)c,
                         MPI_COMM_WORLD, counts[c]);
                complete(&v, &op, (enum method)m);
                nb_verify(&v, &op, method_names[m]);
                nb_free(&op);
            }
        }
        report(&v, "%s (counts 0, 1, 7, 1000; every root) completed by each "
               "of MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Test, "
               "MPI_Testall, MPI_Request_get_status", nb_names[kind]);
    }
}

/* ------------------------------------------------------------------ */
/* Several outstanding                                                  */
/* ------------------------------------------------------------------ */

static void start_all_kinds(struct verdict *v, struct nbop *ops, int base_k,
                            MPI_Comm comm, int count)
{
    for (int kind = 0; kind < NB_KINDS; kind++)
        nb_start(v, &ops[kind], (enum nbkind)kind, base_k + kind, comm, count);
}

static void verify_free_all(struct verdict *v, struct nbop *ops, int n,
                            const char *how)
{
    for (int i = 0; i < n; i++) {
        nb_verify(v, &ops[i], how);
        nb_free(&ops[i]);
    }
}

static void check_outstanding(void)
{
    struct nbop ops[NB_KINDS];
    MPI_Request reqs[NB_KINDS];
    MPI_Status sts[NB_KINDS];

    /* Reverse order with MPI_Wait. */
    struct verdict v = {""};
    start_all_kinds(&v, ops, 100, MPI_COMM_WORLD, 1000);
    for (int i = NB_KINDS - 1; i >= 0; i--)
        complete(&v, &ops[i], M_WAIT);
    verify_free_all(&v, ops, NB_KINDS, "MPI_Wait in reverse order");
    report(&v, "all 7 kinds outstanding on one communicator, completed in "
           "reverse order");

    /* A different order on every rank. */
    v.detail[0] = '\0';
    start_all_kinds(&v, ops, 200, MPI_COMM_WORLD, 1000);
    for (int i = 0; i < NB_KINDS; i++) {
        int pick = (i * 3 + world_rank * 2) % NB_KINDS;  /* a permutation */
        complete(&v, &ops[pick], world_rank % 2 ? M_TEST : M_WAIT);
    }
    verify_free_all(&v, ops, NB_KINDS, "a rank-dependent order");
    report(&v, "all 7 kinds outstanding, each rank completing them in its "
           "own order");

    /* MPI_Waitany until done: every index once, each handle nulled. */
    v.detail[0] = '\0';
    start_all_kinds(&v, ops, 300, MPI_COMM_WORLD, 100);
    for (int i = 0; i < NB_KINDS; i++)
        reqs[i] = ops[i].req;
    bool seen[NB_KINDS] = {false};
    for (int done = 0; done < NB_KINDS; done++) {
        int index = -1;
        check_rc(&v, "MPI_Waitany",
                 MPI_Waitany(NB_KINDS, reqs, &index, MPI_STATUS_IGNORE));
        if (index < 0 || index >= NB_KINDS || seen[index]) {
            fail(&v, "MPI_Waitany gave index %d", index);
            break;
        }
        seen[index] = true;
        if (reqs[index] != MPI_REQUEST_NULL)
            fail(&v, "MPI_Waitany left request %d set", index);
    }
    int index = -2;
    check_rc(&v, "MPI_Waitany", MPI_Waitany(NB_KINDS, reqs, &index, sts));
    if (index != MPI_UNDEFINED)
        fail(&v, "MPI_Waitany on all-null requests gave index %d", index);
    for (int i = 0; i < NB_KINDS; i++)
        ops[i].req = reqs[i];
    verify_free_all(&v, ops, NB_KINDS, "MPI_Waitany");
    report(&v, "MPI_Waitany over all 7 kinds returns each index once, then "
           "MPI_UNDEFINED");

    /* MPI_Testall loop, then MPI_Waitall with statuses. */
    v.detail[0] = '\0';
    start_all_kinds(&v, ops, 400, MPI_COMM_WORLD, 100);
    for (int i = 0; i < NB_KINDS; i++)
        reqs[i] = ops[i].req;
    int flag = 0;
    double start = MPI_Wtime();
    while (!flag && MPI_Wtime() - start < TEST_LOOP_LIMIT_S)
        check_rc(&v, "MPI_Testall",
                 MPI_Testall(NB_KINDS, reqs, &flag, MPI_STATUSES_IGNORE));
    if (!flag)
        fail(&v, "MPI_Testall: not complete after %.0f s", TEST_LOOP_LIMIT_S);
    for (int i = 0; i < NB_KINDS; i++)
        ops[i].req = reqs[i];
    verify_free_all(&v, ops, NB_KINDS, "MPI_Testall");

    start_all_kinds(&v, ops, 500, MPI_COMM_WORLD, 100);
    for (int i = 0; i < NB_KINDS; i++)
        reqs[i] = ops[i].req;
    check_rc(&v, "MPI_Waitall", MPI_Waitall(NB_KINDS, reqs, sts));
    for (int i = 0; i < NB_KINDS; i++)
        ops[i].req = reqs[i];
    verify_free_all(&v, ops, NB_KINDS, "MPI_Waitall");
    report(&v, "all 7 kinds completed together by MPI_Testall and by "
           "MPI_Waitall");

    /* 32 MPI_Iallreduce at once, completed last first. */
    v.detail[0] = '\0';
    struct nbop many[32];
    for (int i = 0; i < 32; i++)
        nb_start(&v, &many[i], NB_IALLREDUCE, 600 + i, MPI_COMM_WORLD, 257);
    for (int i = 31; i >= 0; i--)
        complete(&v, &many[i], i % 2 ? M_WAIT : M_TEST);
    verify_free_all(&v, many, 32, "MPI_Wait/MPI_Test, last first");
    report(&v, "32 MPI_Iallreduce outstanding at once, completed last first");

    /* Blocking collectives between a start and its completion. */
    v.detail[0] = '\0';
    struct nbop first, second;
    nb_start(&v, &first, NB_IALLREDUCE, 700, MPI_COMM_WORLD, 64);
    int x = world_rank + 1, sum = -1;
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (sum != world_size * (world_size + 1) / 2)
        fail(&v, "the blocking allreduce gave %d", sum);
    nb_start(&v, &second, NB_IBCAST, 701, MPI_COMM_WORLD, 64);
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    complete(&v, &second, M_WAIT);
    complete(&v, &first, M_WAIT);
    nb_verify(&v, &first, "MPI_Wait after blocking collectives");
    nb_verify(&v, &second, "MPI_Wait after blocking collectives");
    nb_free(&first);
    nb_free(&second);
    report(&v, "blocking MPI_Allreduce and MPI_Barrier between nonblocking "
           "starts and their completion");
}

/* Starts on two communicators (one with ranks reversed), alternating, and
 * completes them one communicator after the other. */
static void check_two_communicators(void)
{
    struct verdict v = {""};
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    check_rc(&v, "MPI_Comm_split",
             MPI_Comm_split(MPI_COMM_WORLD, 0, -world_rank, &b));
    if (a == MPI_COMM_NULL || b == MPI_COMM_NULL) {
        fail(&v, "could not make the communicators");
        report(&v, "nonblocking collectives on two communicators, "
               "interleaved");
        return;
    }
    int brank = -1;
    MPI_Comm_rank(b, &brank);
    if (brank != world_size - 1 - world_rank)
        fail(&v, "rank %d in the reversed communicator", brank);

    for (int round = 0; round < 3; round++) {
        struct nbop ops[2 * NB_KINDS];
        for (int kind = 0; kind < NB_KINDS; kind++) {
            nb_start(&v, &ops[2 * kind], (enum nbkind)kind, 800 + kind, a,
                     50 + round);
            nb_start(&v, &ops[2 * kind + 1],
                     (enum nbkind)((kind + 3) % NB_KINDS), 900 + kind, b,
                     50 + round);
        }
        if (round == 0) {          /* b's first, then a's */
            for (int i = 1; i < 2 * NB_KINDS; i += 2)
                complete(&v, &ops[i], M_WAIT);
            for (int i = 0; i < 2 * NB_KINDS; i += 2)
                complete(&v, &ops[i], M_TEST);
        } else if (round == 1) {   /* one MPI_Waitall over both */
            MPI_Request reqs[2 * NB_KINDS];
            for (int i = 0; i < 2 * NB_KINDS; i++)
                reqs[i] = ops[i].req;
            check_rc(&v, "MPI_Waitall",
                     MPI_Waitall(2 * NB_KINDS, reqs, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 2 * NB_KINDS; i++)
                ops[i].req = reqs[i];
        } else {                   /* a rank-dependent order */
            for (int i = 0; i < 2 * NB_KINDS; i++)
                complete(&v, &ops[(i + 5 * world_rank) % (2 * NB_KINDS)],
                         M_WAIT);
        }
        verify_free_all(&v, ops, 2 * NB_KINDS, "two communicators");
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    report(&v, "nonblocking collectives on two communicators, interleaved, "
           "completed per communicator, together, and in a rank-dependent "
           "order");
}

/* ------------------------------------------------------------------ */
/* MPI_REQUEST_NULL                                                     */
/* ------------------------------------------------------------------ */

/* An empty status: source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0. The
 * MPI_ERROR field is not examined: single-completion calls leave it
 * undefined. */
static void expect_empty_status(struct verdict *v, const MPI_Status *st,
                                const char *call)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG
        || count != 0)
        fail(v, "%s on MPI_REQUEST_NULL: status source %d tag %d count %d, "
             "expected an empty status", call, st->MPI_SOURCE, st->MPI_TAG,
             count);
}

static void poison_status(MPI_Status *st)
{
    memset(st, 0x5a, sizeof(*st));
}

static void check_null_requests(void)
{
    struct verdict v = {""};
    MPI_Request null = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag = 0, index = -2;

    poison_status(&st);
    check_rc(&v, "MPI_Wait", MPI_Wait(&null, &st));
    expect_empty_status(&v, &st, "MPI_Wait");

    poison_status(&st);
    check_rc(&v, "MPI_Test", MPI_Test(&null, &flag, &st));
    if (!flag)
        fail(&v, "MPI_Test on MPI_REQUEST_NULL: flag false");
    expect_empty_status(&v, &st, "MPI_Test");

    poison_status(&st);
    flag = 0;
    check_rc(&v, "MPI_Request_get_status",
             MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    if (!flag)
        fail(&v, "MPI_Request_get_status on MPI_REQUEST_NULL: flag false");
    expect_empty_status(&v, &st, "MPI_Request_get_status");

    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                            MPI_REQUEST_NULL};
    MPI_Status sts[3];
    for (int i = 0; i < 3; i++)
        poison_status(&sts[i]);
    check_rc(&v, "MPI_Waitall", MPI_Waitall(3, nulls, sts));
    for (int i = 0; i < 3; i++)
        expect_empty_status(&v, &sts[i], "MPI_Waitall");

    flag = 0;
    check_rc(&v, "MPI_Testall", MPI_Testall(3, nulls, &flag, sts));
    if (!flag)
        fail(&v, "MPI_Testall on MPI_REQUEST_NULLs: flag false");

    poison_status(&st);
    check_rc(&v, "MPI_Waitany", MPI_Waitany(3, nulls, &index, &st));
    if (index != MPI_UNDEFINED)
        fail(&v, "MPI_Waitany on MPI_REQUEST_NULLs: index %d", index);
    expect_empty_status(&v, &st, "MPI_Waitany");

    flag = 0;
    index = -2;
    check_rc(&v, "MPI_Testany", MPI_Testany(3, nulls, &index, &flag, &st));
    if (!flag || index != MPI_UNDEFINED)
        fail(&v, "MPI_Testany on MPI_REQUEST_NULLs: flag %d index %d", flag,
             index);

    /* Zero requests. */
    check_rc(&v, "MPI_Waitall", MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    flag = 0;
    check_rc(&v, "MPI_Testall",
             MPI_Testall(0, NULL, &flag, MPI_STATUSES_IGNORE));
    if (!flag)
        fail(&v, "MPI_Testall of 0 requests: flag false");
    report(&v, "MPI_REQUEST_NULL in MPI_Wait, MPI_Test, "
           "MPI_Request_get_status, MPI_Waitall, MPI_Testall, MPI_Waitany, "
           "MPI_Testany: immediate, empty status");

    /* A mix of null and live requests in one MPI_Waitall. */
    v.detail[0] = '\0';
    struct nbop a, b;
    nb_start(&v, &a, NB_IALLGATHER, 1000, MPI_COMM_WORLD, 9);
    nb_start(&v, &b, NB_IALLREDUCE, 1001, MPI_COMM_WORLD, 9);
    MPI_Request mixed[4] = {MPI_REQUEST_NULL, a.req, MPI_REQUEST_NULL, b.req};
    MPI_Status sts4[4];
    for (int i = 0; i < 4; i++)
        poison_status(&sts4[i]);
    check_rc(&v, "MPI_Waitall", MPI_Waitall(4, mixed, sts4));
    expect_empty_status(&v, &sts4[0], "MPI_Waitall");
    expect_empty_status(&v, &sts4[2], "MPI_Waitall");
    for (int i = 0; i < 4; i++)
        if (mixed[i] != MPI_REQUEST_NULL)
            fail(&v, "MPI_Waitall left request %d set", i);
    a.req = mixed[1];
    b.req = mixed[3];
    nb_verify(&v, &a, "MPI_Waitall with null requests");
    nb_verify(&v, &b, "MPI_Waitall with null requests");
    nb_free(&a);
    nb_free(&b);
    report(&v, "MPI_Waitall over live and null requests");
}

/* ------------------------------------------------------------------ */
/* Starts are local                                                     */
/* ------------------------------------------------------------------ */

static void sleep_seconds(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Rank 0 starts late. Everyone else's start must return before it does
 * (a start is a local call), MPI_Test must say "not yet" meanwhile, and
 * MPI_Wait must wait for rank 0. The bounds are loose: a third of the
 * delay. */
static void check_late_rank(enum nbkind kind)
{
    const double delay = 0.6;
    struct verdict v = {""};
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    if (world_rank == 0)
        sleep_seconds(delay);
    struct nbop op;
    nb_start(&v, &op, kind, 1100, MPI_COMM_WORLD, 33);
    double started = MPI_Wtime() - t0;
    int flag = -1;
    if (op.started)
        check_rc(&v, "MPI_Test", MPI_Test(&op.req, &flag, MPI_STATUS_IGNORE));
    double tested = MPI_Wtime() - t0;
    if (!flag)
        complete(&v, &op, M_WAIT);
    double waited = MPI_Wtime() - t0;
    nb_verify(&v, &op, "MPI_Test then MPI_Wait");
    nb_free(&op);
    if (world_rank != 0 && world_size > 1) {
        if (started > delay / 3)
            fail(&v, "the start returned after %.3f s, when rank 0 arrived",
                 started);
        else if (flag && tested < delay / 3)
            fail(&v, "MPI_Test said complete after %.3f s, before rank 0 "
                 "started", tested);
        else if (waited < delay / 3)
            fail(&v, "completed after %.3f s, rank 0 started after %.3f s",
                 waited, delay);
    }
    report(&v, "%s: starts return before a late rank arrives, MPI_Test "
           "says incomplete meanwhile, MPI_Wait waits", nb_names[kind]);
}

/* ------------------------------------------------------------------ */
/* MPI_Request_free on a started point-to-point request                 */
/* ------------------------------------------------------------------ */

static void check_request_free(void)
{
    struct verdict v = {""};
    enum { N = 64 };
    int out[N], in[N + 1];
    int to = (world_rank + 1) % world_size;
    int from = (world_rank + world_size - 1) % world_size;
    for (int i = 0; i < N; i++)
        out[i] = world_rank * 1000 + i;
    for (int i = 0; i <= N; i++)
        in[i] = CANARY;
    MPI_Request req = MPI_REQUEST_NULL;
    check_rc(&v, "MPI_Isend",
             MPI_Isend(out, N, MPI_INT, to, 42, MPI_COMM_WORLD, &req));
    check_rc(&v, "MPI_Request_free", MPI_Request_free(&req));
    if (req != MPI_REQUEST_NULL)
        fail(&v, "MPI_Request_free left the handle set");
    MPI_Status st;
    check_rc(&v, "MPI_Recv",
             MPI_Recv(in, N, MPI_INT, from, 42, MPI_COMM_WORLD, &st));
    /* Once every receive is done, every send is: the send buffer may be
     * reused after the barrier. */
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        out[i] = -1;
    for (int i = 0; i < N; i++)
        if (in[i] != from * 1000 + i) {
            fail(&v, "element %d is %d, expected %d", i, in[i],
                 from * 1000 + i);
            break;
        }
    if (in[N] != CANARY)
        fail(&v, "wrote past the end of the receive buffer");
    if (st.MPI_SOURCE != from || st.MPI_TAG != 42)
        fail(&v, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    report(&v, "MPI_Request_free on a started MPI_Isend: handle nulled, "
           "message still delivered");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();

    if (world_rank == 0)
        printf("# nonblocking_check on %d rank(s)\n", world_size);

    check_null_requests();
    check_each_method();
    check_outstanding();
    check_two_communicators();
    check_late_rank(NB_IBARRIER);
    check_late_rank(NB_IALLREDUCE);
    check_request_free();

    int status = finish();
    MPI_Finalize();
    return status;
}

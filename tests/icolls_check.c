/*
 * icolls_check.c - the nonblocking v-collectives, gathers, scatters,
 * reduce-scatter and scans: MPI_Igather, MPI_Igatherv, MPI_Iscatter,
 * MPI_Iscatterv, MPI_Iallgatherv, MPI_Ialltoallv, MPI_Ireduce_scatter,
 * MPI_Iscan, MPI_Iexscan.
 *
 * All nine are started one after another and completed together with
 * MPI_Waitall, then each result is compared with values computed here
 * from the ranks and indices alone (v(r, j) = 1000 r + j; uneven counts
 * r + 1 with gaps between the blocks, which must stay untouched), and
 * the whole round is repeated with every root. Then the blocking
 * MPI_Alltoallw with an int or a double block per peer at byte
 * displacements. A plain MPI program: the same output under Open MPI's
 * mpirun.
 */
#include <mpi.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap_harness.h"

#define CANARY (-7)
#define N 9

static int v(int r, int j) { return 1000 * r + j; }

/* Block r holds r + 1 elements at offset r (r + 1) / 2 + r: one element
 * of gap before each block. */
static int count_of(int r) { return r + 1; }
static int displ_of(int r) { return r * (r + 1) / 2 + r + 1; }

static int *ints(int n, int value)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        p[i] = value;
    return p;
}

static void round_with_root(struct verdict *vd, int root)
{
    int n = world_size, me = world_rank, span = displ_of(n) + 1;
    int *counts = ints(n, 0), *displs = ints(n, 0);
    for (int r = 0; r < n; r++) {
        counts[r] = count_of(r);
        displs[r] = displ_of(r);
    }
    /* Alltoallv: rank r sends (r + p) % 3 + 1 elements to p, valued
     * 10000 r + 100 p + j, at 4 elements per peer. */
    int *a_sc = ints(n, 0), *a_sd = ints(n, 0), *a_rc = ints(n, 0),
        *a_rd = ints(n, 0);
    for (int p = 0; p < n; p++) {
        a_sc[p] = (me + p) % 3 + 1;
        a_sd[p] = 4 * p;
        a_rc[p] = (p + me) % 3 + 1;
        a_rd[p] = 4 * p;
    }
    int *a_send = ints(4 * n, 0), *a_recv = ints(4 * n, CANARY);
    for (int p = 0; p < n; p++)
        for (int j = 0; j < a_sc[p]; j++)
            a_send[4 * p + j] = 10000 * me + 100 * p + j;
    int rs_total = n * (n + 1) / 2;

    int mine[N], *g_recv = ints(N * n, CANARY), *gv_recv = ints(span, CANARY);
    for (int j = 0; j < N; j++)
        mine[j] = v(me, j);
    int *mine_v = ints(count_of(me), 0);
    for (int j = 0; j < count_of(me); j++)
        mine_v[j] = v(me, j);
    int *s_send = ints(N * n, 0), *sv_send = ints(span, 0);
    for (int r = 0; r < n; r++) {
        for (int j = 0; j < N; j++)
            s_send[r * N + j] = v(r, j);
        for (int j = 0; j < count_of(r); j++)
            sv_send[displs[r] + j] = v(r, j);
    }
    int *s_recv = ints(N + 1, CANARY), *sv_recv = ints(count_of(me) + 1, CANARY);
    int *agv_recv = ints(span, CANARY);
    int *rs_send = ints(rs_total, 0), *rs_recv = ints(count_of(me) + 1, CANARY);
    for (int g = 0; g < rs_total; g++)
        rs_send[g] = v(me, g);
    int scan_out[N + 1], exscan_out[N + 1];
    for (int j = 0; j <= N; j++)
        scan_out[j] = exscan_out[j] = CANARY;

    MPI_Request reqs[9];
    MPI_Comm w = MPI_COMM_WORLD;
    check_rc(vd, "MPI_Igather", MPI_Igather(mine, N, MPI_INT, g_recv, N,
                                            MPI_INT, root, w, &reqs[0]));
    check_rc(vd, "MPI_Igatherv",
             MPI_Igatherv(mine_v, count_of(me), MPI_INT, gv_recv, counts,
                          displs, MPI_INT, root, w, &reqs[1]));
    check_rc(vd, "MPI_Iscatter", MPI_Iscatter(s_send, N, MPI_INT, s_recv, N,
                                              MPI_INT, root, w, &reqs[2]));
    check_rc(vd, "MPI_Iscatterv",
             MPI_Iscatterv(sv_send, counts, displs, MPI_INT, sv_recv,
                           count_of(me), MPI_INT, root, w, &reqs[3]));
    check_rc(vd, "MPI_Iallgatherv",
             MPI_Iallgatherv(mine_v, count_of(me), MPI_INT, agv_recv, counts,
                             displs, MPI_INT, w, &reqs[4]));
    check_rc(vd, "MPI_Ialltoallv",
             MPI_Ialltoallv(a_send, a_sc, a_sd, MPI_INT, a_recv, a_rc, a_rd,
                            MPI_INT, w, &reqs[5]));
    check_rc(vd, "MPI_Ireduce_scatter",
             MPI_Ireduce_scatter(rs_send, rs_recv, counts, MPI_INT, MPI_SUM, w,
                                 &reqs[6]));
    check_rc(vd, "MPI_Iscan", MPI_Iscan(mine, scan_out, N, MPI_INT, MPI_SUM,
                                        w, &reqs[7]));
    check_rc(vd, "MPI_Iexscan", MPI_Iexscan(mine, exscan_out, N, MPI_INT,
                                            MPI_SUM, w, &reqs[8]));
    check_rc(vd, "MPI_Waitall", MPI_Waitall(9, reqs, MPI_STATUSES_IGNORE));

    int bad = 0;
    for (int r = 0; me == root && r < n; r++)
        for (int j = 0; j < N; j++)
            bad += g_recv[r * N + j] != v(r, j);
    if (bad)
        fail(vd, "root %d: MPI_Igather gave %d wrong elements", root, bad);
    for (int i = 0; me == root && i < span; i++) {
        int r = 0;
        while (r + 1 < n && displs[r + 1] <= i)
            r++;
        int j = i - displs[r];
        int want = i >= displs[r] && j < counts[r] ? v(r, j) : CANARY;
        if (gv_recv[i] != want || agv_recv[i] != want)
            bad++;
    }
    if (bad)
        fail(vd, "root %d: MPI_Igatherv or MPI_Iallgatherv wrong (or a gap "
             "written)", root);
    for (int i = 0; me != root && i < span; i++) {
        int r = 0;
        while (r + 1 < n && displs[r + 1] <= i)
            r++;
        int j = i - displs[r];
        int want = i >= displs[r] && j < counts[r] ? v(r, j) : CANARY;
        bad += agv_recv[i] != want;
    }
    for (int j = 0; j < N; j++)
        bad += s_recv[j] != v(me, j);
    for (int j = 0; j < count_of(me); j++)
        bad += sv_recv[j] != v(me, j);
    bad += s_recv[N] != CANARY || sv_recv[count_of(me)] != CANARY;
    if (bad)
        fail(vd, "root %d: MPI_Iscatter/MPI_Iscatterv/MPI_Iallgatherv wrong "
             "on rank %d", root, me);
    for (int p = 0; p < n; p++)
        for (int j = 0; j < 4; j++) {
            int want = j < a_rc[p] ? 10000 * p + 100 * me + j : CANARY;
            bad += a_recv[4 * p + j] != want;
        }
    if (bad)
        fail(vd, "MPI_Ialltoallv wrong on rank %d", me);
    for (int i = 0; i < count_of(me); i++) {
        int g = me * (me + 1) / 2 + i;
        bad += rs_recv[i] != 1000 * (n * (n - 1) / 2) + n * g;
    }
    bad += rs_recv[count_of(me)] != CANARY;
    if (bad)
        fail(vd, "MPI_Ireduce_scatter wrong on rank %d", me);
    for (int j = 0; j < N; j++) {
        bad += scan_out[j] != 1000 * (me * (me + 1) / 2) + (me + 1) * j;
        if (me > 0)
            bad += exscan_out[j] != 1000 * ((me - 1) * me / 2) + me * j;
    }
    bad += scan_out[N] != CANARY || exscan_out[N] != CANARY;
    if (bad)
        fail(vd, "MPI_Iscan or MPI_Iexscan wrong on rank %d", me);

    free(counts); free(displs); free(a_sc); free(a_sd); free(a_rc);
    free(a_rd); free(a_send); free(a_recv); free(g_recv); free(gv_recv);
    free(mine_v); free(s_send); free(sv_send); free(s_recv); free(sv_recv);
    free(agv_recv); free(rs_send); free(rs_recv);
}

/* Rank r sends (r + p) % 3 + 1 items to p, ints where r + p is even and
 * doubles where it is odd, valued 10000 r + 100 p + j, 32 bytes apart. */
static void check_alltoallw(void)
{
    struct verdict vd = {""};
    int n = world_size, me = world_rank;
    int *sc = ints(n, 0), *sd = ints(n, 0), *rc = ints(n, 0), *rd = ints(n, 0);
    MPI_Datatype *st = malloc((size_t)n * sizeof(*st));
    MPI_Datatype *rt = malloc((size_t)n * sizeof(*rt));
    char *send = calloc((size_t)n, 32), *recv = malloc((size_t)n * 32);
    for (int i = 0; i < n * 32; i++)
        recv[i] = 0x55;
    for (int p = 0; p < n; p++) {
        bool ints_block = (me + p) % 2 == 0;
        sc[p] = rc[p] = (me + p) % 3 + 1;
        sd[p] = rd[p] = 32 * p;
        st[p] = rt[p] = ints_block ? MPI_INT : MPI_DOUBLE;
        for (int j = 0; j < sc[p]; j++) {
            int value = 10000 * me + 100 * p + j;
            if (ints_block)
                ((int *)(send + 32 * p))[j] = value;
            else
                ((double *)(send + 32 * p))[j] = value;
        }
    }
    check_rc(&vd, "MPI_Alltoallw", MPI_Alltoallw(send, sc, sd, st, recv, rc,
                                                 rd, rt, MPI_COMM_WORLD));
    int bad = 0;
    for (int p = 0; p < n; p++)
        for (int j = 0; j < rc[p]; j++) {
            int want = 10000 * p + 100 * me + j;
            if ((me + p) % 2 == 0)
                bad += ((int *)(recv + 32 * p))[j] != want;
            else
                bad += ((double *)(recv + 32 * p))[j] != want;
        }
    if (bad)
        fail(&vd, "MPI_Alltoallw: %d wrong items on rank %d", bad, me);
    report(&vd, "MPI_Alltoallw with int and double blocks at byte "
           "displacements");
    free(sc); free(sd); free(rc); free(rd); free(st); free(rt); free(send);
    free(recv);
}

/* A nonblocking allreduce left open across a blocking broadcast (from
 * each root in turn) and a blocking allreduce: MPI orders collectives by
 * when they start, so each must meet its own kind on every rank, however
 * the threads that run them are scheduled. */
static void check_open_across_blocking(void)
{
    struct verdict v = {""};
    int size = world_size, rank = world_rank;
    for (int it = 0; it < 200; it++) {
        int a = rank + it, s = -1, root = it % size;
        int b = rank == root ? 1000 + it : -1, c = rank, t = -1;
        MPI_Request r;
        check_rc(&v, "MPI_Iallreduce",
                 MPI_Iallreduce(&a, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                &r));
        /* Odd ranks let the nonblocking call start running first, even
         * ones go straight on. */
        if (rank % 2 == 1)
            usleep(300);
        check_rc(&v, "MPI_Bcast",
                 MPI_Bcast(&b, 1, MPI_INT, root, MPI_COMM_WORLD));
        check_rc(&v, "MPI_Allreduce",
                 MPI_Allreduce(&c, &t, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        check_rc(&v, "MPI_Wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (s != size * (size - 1) / 2 + size * it || b != 1000 + it ||
            t != size * (size - 1) / 2) {
            fail(&v, "round %d: iallreduce %d, bcast %d, allreduce %d", it,
                 s, b, t);
            break;
        }
    }
    report(&v, "an iallreduce open across a blocking bcast and allreduce, "
               "200 rounds");
}

/* Three broadcasts of an indexed type from rank 0 (one nonblocking) on
 * a duplicate that rank 0 frees at once while the others, 20 ms late,
 * are still to take them: a root may leave a communicator as soon as its
 * broadcasts return. */
static void check_bcast_then_free(void)
{
    struct verdict v = {""};
    int rank = world_rank;
    int idx[5];
    for (int i = 0; i < 5; i++)
        idx[i] = 2 * i;
    MPI_Datatype every_other;
    check_rc(&v, "MPI_Type_create_indexed_block",
             MPI_Type_create_indexed_block(5, 1, idx, MPI_INT, &every_other));
    check_rc(&v, "MPI_Type_commit", MPI_Type_commit(&every_other));
    for (int round = 0; round < 5 && v.detail[0] == '\0'; round++) {
        MPI_Comm dup;
        check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        if (rank != 0)
            usleep(20000);
        for (int k = 0; k < 3; k++) {
            int buf[10];
            for (int i = 0; i < 10; i++)
                buf[i] = rank == 0 ? 100 * k + i : -1;
            MPI_Request r;
            if (k == 1) {
                check_rc(&v, "MPI_Ibcast",
                         MPI_Ibcast(buf, 1, every_other, 0, dup, &r));
                check_rc(&v, "MPI_Wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else {
                check_rc(&v, "MPI_Bcast",
                         MPI_Bcast(buf, 1, every_other, 0, dup));
            }
            for (int i = 0; i < 10; i++) {
                int want = rank == 0 || i % 2 == 0 ? 100 * k + i : -1;
                if (buf[i] != want) {
                    fail(&v, "round %d, broadcast %d: element %d is %d, "
                         "want %d", round, k, i, buf[i], want);
                    break;
                }
            }
        }
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
    }
    MPI_Type_free(&every_other);
    report(&v, "three bcasts on a duplicate its root frees at once, the "
               "others 20 ms late, 5 rounds");
}

/* A user op on pairs of ints: the first summed, the second the maximum. */
static void sum_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[2 * i] += a[2 * i];
        if (a[2 * i + 1] > b[2 * i + 1])
            b[2 * i + 1] = a[2 * i + 1];
    }
}

/* MPI lets a program free the op and the datatype of a nonblocking
 * reduction before it completes; the call must still run with them.
 * Ranks other than 0 start 20 ms late, so rank 0's call waits queued
 * while its op and type are freed. */
static void check_free_before_wait(void)
{
    struct verdict v = {""};
    int rank = world_rank, n = world_size;
    for (int round = 0; round < 3; round++) {
        MPI_Datatype pair;
        MPI_Op op;
        check_rc(&v, "MPI_Type_contiguous",
                 MPI_Type_contiguous(2, MPI_INT, &pair));
        check_rc(&v, "MPI_Type_commit", MPI_Type_commit(&pair));
        check_rc(&v, "MPI_Op_create", MPI_Op_create(sum_max, 1, &op));
        int in[8], out[8];
        for (int i = 0; i < 4; i++) {
            in[2 * i] = rank + i;
            in[2 * i + 1] = 10 * rank + i;
            out[2 * i] = out[2 * i + 1] = -1;
        }
        if (rank != 0)
            usleep(20000);
        MPI_Request r[2];
        int red[8];
        check_rc(&v, "MPI_Iallreduce",
                 MPI_Iallreduce(in, out, 4, pair, op, MPI_COMM_WORLD, &r[0]));
        check_rc(&v, "MPI_Ireduce",
                 MPI_Ireduce(in, red, 4, pair, op, n - 1, MPI_COMM_WORLD,
                             &r[1]));
        check_rc(&v, "MPI_Op_free", MPI_Op_free(&op));
        check_rc(&v, "MPI_Type_free", MPI_Type_free(&pair));
        if (op != MPI_OP_NULL || pair != MPI_DATATYPE_NULL)
            fail(&v, "the freed handles were not set to null");
        check_rc(&v, "MPI_Waitall", MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++) {
            int sum = n * (n - 1) / 2 + n * i, most = 10 * (n - 1) + i;
            if (out[2 * i] != sum || out[2 * i + 1] != most ||
                (rank == n - 1 &&
                 (red[2 * i] != sum || red[2 * i + 1] != most))) {
                fail(&v, "round %d, pair %d: %d %d, expected %d %d", round, i,
                     out[2 * i], out[2 * i + 1], sum, most);
                break;
            }
        }
    }
    report(&v, "an iallreduce and an ireduce whose user op and datatype "
               "are freed before the wait, 3 rounds");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (world_rank == 0)
        printf("# icolls_check on %d rank(s)\n", world_size);
    struct verdict vd = {""};
    for (int root = 0; root < world_size; root++)
        round_with_root(&vd, root);
    report(&vd, "nine nonblocking collectives outstanding together "
           "(gather(v), scatter(v), allgatherv, alltoallv, reduce_scatter, "
           "scan, exscan), every root, uneven counts with gaps");
    check_alltoallw();
    check_open_across_blocking();
    check_bcast_then_free();
    check_free_before_wait();
    int status = finish();
    MPI_Finalize();
    return status;
}

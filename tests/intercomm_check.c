/*
 * intercomm_check.c - intercommunicators.
 *
 * The world splits into a lower group (ranks below size/2) and an upper
 * one; MPI_Intercomm_create joins them. Every expected value is
 * computed here from world ranks alone:
 * - the local and remote groups, sizes, ranks; MPI_Comm_test_inter;
 * - point-to-point across (wildcard receives name the sender's rank in
 *   the remote group; probes and matched probes too);
 * - MPI_Intercomm_merge both ways round; MPI_Comm_split and
 *   MPI_Comm_create of an intercommunicator;
 * - every blocking collective: Barrier, Bcast and Reduce from each root
 *   of each group (MPI_ROOT, MPI_PROC_NULL), Gather(v), Scatter(v),
 *   Allgather(v), Alltoall(v, w), Allreduce, Reduce_scatter(_block), on
 *   the intercommunicator and on its duplicate; nine nonblocking ones
 *   outstanding at once;
 * - errors: a root or a rank beyond the remote group, the calls that
 *   take one kind of communicator given the other.
 * At np 1 there is no second group: the checks that need one are
 * skipped and the error checks run. A plain MPI program: the same
 * output under Open MPI's mpirun.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap_harness.h"

static int half;            /* the upper group's first world rank */
static int upper;           /* 0: this rank is in the lower group */
static int lsize, rsize, lrank;

/* World rank of rank r of the remote (or local) group. */
static int remote_world(int r)
{
    return upper ? r : half + r;
}

static MPI_Comm make_inter(struct verdict *v)
{
    MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    check_rc(v, "MPI_Comm_split", MPI_Comm_split(MPI_COMM_WORLD, upper, 0,
                                                 &local));
    check_rc(v, "MPI_Intercomm_create",
             MPI_Intercomm_create(local, 0, MPI_COMM_WORLD,
                                  upper ? 0 : half, 77, &inter));
    MPI_Comm_free(&local);
    return inter;
}

static void check_shape(MPI_Comm inter)
{
    struct verdict v = {""};
    int flag = -1, size = -1, rank = -1, rs = -1;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &size);
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rs);
    if (flag != 1 || size != lsize || rank != lrank || rs != rsize)
        fail(&v, "test_inter %d size %d rank %d remote size %d, want 1 %d "
             "%d %d", flag, size, rank, rs, lsize, lrank, rsize);
    MPI_Group world, remote, local;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Comm_remote_group(inter, &remote);
    MPI_Comm_group(inter, &local);
    for (int r = 0; r < rsize; r++) {
        int w = -1;
        MPI_Group_translate_ranks(remote, 1, &r, world, &w);
        if (w != remote_world(r))
            fail(&v, "remote rank %d is world rank %d, want %d", r, w,
                 remote_world(r));
    }
    int gs = -1, gr = -1;
    MPI_Group_size(local, &gs);
    MPI_Group_rank(local, &gr);
    if (gs != lsize || gr != lrank)
        fail(&v, "local group size %d rank %d", gs, gr);
    MPI_Group_free(&world);
    MPI_Group_free(&remote);
    MPI_Group_free(&local);
    report(&v, "intercommunicator: sizes, ranks, local and remote groups");
}

static void check_p2p(MPI_Comm inter)
{
    struct verdict v = {""};
    /* An exchange between rank 0 of each group, before the wildcard
     * receives below, which would take its message. */
    if (lrank == 0) {
        int mine = world_rank, theirs = -1;
        MPI_Status st;
        check_rc(&v, "MPI_Sendrecv",
                 MPI_Sendrecv(&mine, 1, MPI_INT, 0, 5, &theirs, 1, MPI_INT,
                              0, 5, inter, &st));
        if (theirs != remote_world(0) || st.MPI_SOURCE != 0)
            fail(&v, "Sendrecv got %d from %d", theirs, st.MPI_SOURCE);
    }
    /* Every rank sends one message to each remote rank, tagged with its
     * own local rank; wildcard receives must say the same rank. */
    int *out = malloc(sizeof(int) * (size_t)rsize);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)rsize);
    for (int r = 0; r < rsize; r++) {
        out[r] = world_rank * 1000 + r;
        check_rc(&v, "MPI_Isend", MPI_Isend(&out[r], 1, MPI_INT, r, lrank,
                                            inter, &reqs[r]));
    }
    for (int i = 0; i < rsize; i++) {
        MPI_Status st;
        int got = -1;
        if (i % 2 == 0) {
            check_rc(&v, "MPI_Probe", MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                                inter, &st));
            check_rc(&v, "MPI_Recv", MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE,
                                              st.MPI_TAG, inter, &st));
        } else {
            MPI_Message m;
            check_rc(&v, "MPI_Mprobe", MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                                  inter, &m, &st));
            check_rc(&v, "MPI_Mrecv", MPI_Mrecv(&got, 1, MPI_INT, &m, &st));
        }
        if (st.MPI_SOURCE != st.MPI_TAG || st.MPI_SOURCE < 0 ||
            st.MPI_SOURCE >= rsize)
            fail(&v, "a message tagged %d came from rank %d", st.MPI_TAG,
                 st.MPI_SOURCE);
        else if (got != remote_world(st.MPI_SOURCE) * 1000 + lrank)
            fail(&v, "from remote rank %d got %d", st.MPI_SOURCE, got);
    }
    check_rc(&v, "MPI_Waitall", MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE));
    free(out);
    free(reqs);
    report(&v, "point-to-point across groups: ranks, wildcards, probes");
}

static void check_merge(MPI_Comm inter)
{
    for (int flip = 0; flip < 2; flip++) {
        struct verdict v = {""};
        MPI_Comm merged = MPI_COMM_NULL;
        int high = flip ? !upper : upper;
        check_rc(&v, "MPI_Intercomm_merge", MPI_Intercomm_merge(inter, high,
                                                                &merged));
        int rank = -1, size = -1, sum = -1, flag = -1;
        if (merged != MPI_COMM_NULL) {
            MPI_Comm_rank(merged, &rank);
            MPI_Comm_size(merged, &size);
            MPI_Comm_test_inter(merged, &flag);
            check_rc(&v, "MPI_Allreduce",
                     MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM,
                                   merged));
        }
        /* high = false first: flipped, the upper group leads. */
        int want = !flip ? world_rank
                         : (upper ? lrank : (world_size - half) + lrank);
        if (rank != want || size != world_size || flag != 0 ||
            sum != world_size * (world_size - 1) / 2)
            fail(&v, "rank %d size %d inter %d sum %d, want rank %d", rank,
                 size, flag, sum, want);
        if (merged != MPI_COMM_NULL)
            MPI_Comm_free(&merged);
        report(&v, "MPI_Intercomm_merge, %s group first",
               flip ? "upper" : "lower");
    }
}

#define COUNT 5

static void check_rooted(MPI_Comm inter, const char *what)
{
    struct verdict v = {""};
    int buf[COUNT], sendbuf[COUNT], out[COUNT];
    for (int g = 0; g < 2; g++) {
        int gsize = g ? world_size - half : half;
        for (int root = 0; root < gsize; root++) {
            int mine = upper == g;
            int rootarg = mine ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL)
                               : root;
            int rootworld = g ? half + root : root;
            /* Bcast. */
            for (int e = 0; e < COUNT; e++)
                buf[e] = mine && lrank == root ? rootworld * 100 + e : -1;
            check_rc(&v, "MPI_Bcast", MPI_Bcast(buf, COUNT, MPI_INT, rootarg,
                                                inter));
            for (int e = 0; e < COUNT; e++) {
                int want = !mine || lrank == root ? rootworld * 100 + e : -1;
                if (buf[e] != want)
                    fail(&v, "Bcast root %d of group %d: [%d] %d, want %d",
                         root, g, e, buf[e], want);
            }
            /* Reduce: the root gets the sum over the other group. */
            for (int e = 0; e < COUNT; e++) {
                sendbuf[e] = world_rank + e;
                out[e] = -1;
            }
            check_rc(&v, "MPI_Reduce", MPI_Reduce(sendbuf, out, COUNT,
                                                  MPI_INT, MPI_SUM, rootarg,
                                                  inter));
            if (rootarg == MPI_ROOT) {
                for (int e = 0; e < COUNT; e++) {
                    int want = 0;
                    for (int r = 0; r < rsize; r++)
                        want += remote_world(r) + e;
                    if (out[e] != want)
                        fail(&v, "Reduce at root %d: [%d] %d, want %d", root,
                             e, out[e], want);
                }
            }
            /* Gather (2 ints per rank) and Gatherv (r + 1 ints, the
             * blocks in reverse order). */
            int two[2] = { world_rank, 7 };
            int *all = malloc(sizeof(int) * (size_t)(3 * rsize * rsize + 2));
            int *counts = malloc(sizeof(int) * (size_t)rsize);
            int *displs = malloc(sizeof(int) * (size_t)rsize);
            for (int r = 0, at = 0; r < rsize; r++) {
                counts[r] = r + 1;
                at += r + 1;
                displs[r] = rsize * (rsize + 1) / 2 - at;
            }
            for (int i = 0; i < 3 * rsize * rsize + 2; i++)
                all[i] = -1;
            check_rc(&v, "MPI_Gather", MPI_Gather(two, 2, MPI_INT, all, 2,
                                                  MPI_INT, rootarg, inter));
            if (rootarg == MPI_ROOT)
                for (int r = 0; r < rsize; r++)
                    if (all[2 * r] != remote_world(r) || all[2 * r + 1] != 7)
                        fail(&v, "Gather at root %d: block %d is %d %d",
                             root, r, all[2 * r], all[2 * r + 1]);
            int vsend[64];
            for (int e = 0; e < lrank + 1 && e < 64; e++)
                vsend[e] = world_rank * 10 + e;
            check_rc(&v, "MPI_Gatherv",
                     MPI_Gatherv(vsend, lrank + 1, MPI_INT, all, counts,
                                 displs, MPI_INT, rootarg, inter));
            if (rootarg == MPI_ROOT)
                for (int r = 0; r < rsize; r++)
                    for (int e = 0; e <= r; e++)
                        if (all[displs[r] + e] != remote_world(r) * 10 + e)
                            fail(&v, "Gatherv at root %d: rank %d [%d] %d",
                                 root, r, e, all[displs[r] + e]);
            /* Scatter and Scatterv: block r for remote rank r. */
            for (int r = 0; r < rsize; r++) {
                all[2 * r] = rootworld * 1000 + r;
                all[2 * r + 1] = -r;
            }
            int got[64];
            got[0] = got[1] = -1;
            check_rc(&v, "MPI_Scatter", MPI_Scatter(all, 2, MPI_INT, got, 2,
                                                    MPI_INT, rootarg, inter));
            if (!mine && (got[0] != rootworld * 1000 + lrank ||
                          got[1] != -lrank))
                fail(&v, "Scatter from root %d: %d %d", root, got[0],
                     got[1]);
            for (int r = 0; r < rsize; r++)
                for (int e = 0; e <= r; e++)
                    all[displs[r] + e] = rootworld * 100 + r * 10 + e;
            check_rc(&v, "MPI_Scatterv",
                     MPI_Scatterv(all, counts, displs, MPI_INT, got,
                                  mine ? 0 : lrank + 1, MPI_INT, rootarg,
                                  inter));
            if (!mine)
                for (int e = 0; e <= lrank; e++)
                    if (got[e] != rootworld * 100 + lrank * 10 + e)
                        fail(&v, "Scatterv from root %d: [%d] %d", root, e,
                             got[e]);
            free(all);
            free(counts);
            free(displs);
        }
    }
    report(&v, "%s: Bcast, Reduce, Gather(v), Scatter(v) from every root",
           what);
}

static void check_all(MPI_Comm inter, const char *what)
{
    struct verdict v = {""};
    check_rc(&v, "MPI_Barrier", MPI_Barrier(inter));
    /* Allreduce: the sum and the max over the other group. */
    int in[2] = { world_rank, world_rank * 3 }, res[2] = { -1, -1 };
    check_rc(&v, "MPI_Allreduce", MPI_Allreduce(in, res, 2, MPI_INT, MPI_SUM,
                                                inter));
    int sum = 0;
    for (int r = 0; r < rsize; r++)
        sum += remote_world(r);
    if (res[0] != sum || res[1] != 3 * sum)
        fail(&v, "Allreduce sum %d %d, want %d %d", res[0], res[1], sum,
             3 * sum);
    check_rc(&v, "MPI_Allreduce", MPI_Allreduce(in, res, 1, MPI_INT, MPI_MAX,
                                                inter));
    if (res[0] != remote_world(rsize - 1))
        fail(&v, "Allreduce max %d", res[0]);
    /* Allgather and Allgatherv (remote rank r gives r + 1 ints). */
    int *all = calloc((size_t)(rsize * (rsize + 2) + 2), sizeof(int));
    int *counts = malloc(sizeof(int) * (size_t)rsize);
    int *displs = malloc(sizeof(int) * (size_t)rsize);
    int mine[64];
    for (int e = 0; e < 64; e++)
        mine[e] = world_rank * 10 + e;
    check_rc(&v, "MPI_Allgather", MPI_Allgather(mine, 2, MPI_INT, all, 2,
                                                MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        if (all[2 * r] != remote_world(r) * 10 ||
            all[2 * r + 1] != remote_world(r) * 10 + 1)
            fail(&v, "Allgather block %d: %d %d", r, all[2 * r],
                 all[2 * r + 1]);
    for (int r = 0, at = 0; r < rsize; at += r + 2, r++) {
        counts[r] = r + 1;
        displs[r] = at;     /* a gap of one after each block */
    }
    check_rc(&v, "MPI_Allgatherv",
             MPI_Allgatherv(mine, lrank + 1, MPI_INT, all, counts, displs,
                            MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        for (int e = 0; e <= r; e++)
            if (all[displs[r] + e] != remote_world(r) * 10 + e)
                fail(&v, "Allgatherv rank %d [%d] %d", r, e,
                     all[displs[r] + e]);
    /* Alltoall: the block for remote rank r says who sent it to whom. */
    int *sb = malloc(sizeof(int) * (size_t)(4 * rsize));
    int *rb = malloc(sizeof(int) * (size_t)(4 * rsize));
    for (int r = 0; r < rsize; r++)
        sb[r] = world_rank * 100 + r;
    check_rc(&v, "MPI_Alltoall", MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT,
                                              inter));
    for (int r = 0; r < rsize; r++)
        if (rb[r] != remote_world(r) * 100 + lrank)
            fail(&v, "Alltoall from remote rank %d: %d", r, rb[r]);
    /* Alltoallv: (sender's local rank + receiver's) % 3 + 1 ints. */
    int *sc = malloc(sizeof(int) * (size_t)rsize * 4);
    int *sd = sc + rsize, *rc = sc + 2 * rsize, *rd = sc + 3 * rsize;
    for (int r = 0, sat = 0, rat = 0; r < rsize; r++) {
        sc[r] = (lrank + r) % 3 + 1;
        rc[r] = (r + lrank) % 3 + 1;
        sd[r] = sat;
        rd[r] = rat;
        sat += sc[r];
        rat += rc[r];
        for (int e = 0; e < sc[r]; e++)
            sb[sd[r] + e] = world_rank * 100 + r * 10 + e;
    }
    check_rc(&v, "MPI_Alltoallv", MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc,
                                                rd, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        for (int e = 0; e < rc[r]; e++)
            if (rb[rd[r] + e] != remote_world(r) * 100 + lrank * 10 + e)
                fail(&v, "Alltoallv from %d [%d]: %d", r, e, rb[rd[r] + e]);
    /* Alltoallw: the same in bytes, blocks in reverse order. */
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)rsize);
    for (int r = 0; r < rsize; r++) {
        types[r] = MPI_INT;
        sd[r] *= (int)sizeof(int);
        rd[r] = (int)sizeof(int) * (rsize - 1 - r) * 3;
    }
    check_rc(&v, "MPI_Alltoallw", MPI_Alltoallw(sb, sc, sd, types, rb, rc, rd,
                                                types, inter));
    for (int r = 0; r < rsize; r++)
        for (int e = 0; e < rc[r]; e++) {
            int got = rb[rd[r] / (int)sizeof(int) + e];
            if (got != remote_world(r) * 100 + lrank * 10 + e)
                fail(&v, "Alltoallw from %d [%d]: %d", r, e, got);
        }
    /* Reduce_scatter_block: the vectors are lsize * rsize long in both
     * groups, each rank keeps rsize of the other group's sum. */
    int total = lsize * rsize;
    int *vec = malloc(sizeof(int) * (size_t)total);
    int *part = malloc(sizeof(int) * (size_t)(rsize + 2));
    for (int i = 0; i < total; i++)
        vec[i] = world_rank + i;
    check_rc(&v, "MPI_Reduce_scatter_block",
             MPI_Reduce_scatter_block(vec, part, rsize, MPI_INT, MPI_SUM,
                                      inter));
    for (int e = 0; e < rsize; e++)
        if (part[e] != sum + rsize * (lrank * rsize + e))
            fail(&v, "Reduce_scatter_block [%d] %d", e, part[e]);
    /* Reduce_scatter: rank 0 keeps one more, the last one less. */
    int *keep = malloc(sizeof(int) * (size_t)lsize);
    for (int l = 0; l < lsize; l++)
        keep[l] = rsize + (lsize > 1 ? (l == 0) - (l == lsize - 1) : 0);
    check_rc(&v, "MPI_Reduce_scatter",
             MPI_Reduce_scatter(vec, part, keep, MPI_INT, MPI_SUM, inter));
    int from = 0;
    for (int l = 0; l < lrank; l++)
        from += keep[l];
    for (int e = 0; e < keep[lrank]; e++)
        if (part[e] != sum + rsize * (from + e))
            fail(&v, "Reduce_scatter [%d] %d", e, part[e]);
    free(keep);
    free(vec);
    free(part);
    free(types);
    free(sc);
    free(sb);
    free(rb);
    free(all);
    free(counts);
    free(displs);
    report(&v, "%s: Barrier, Allreduce, Allgather(v), Alltoall(v, w), "
           "Reduce_scatter(_block)", what);
}

/* MPI_Comm_split of an intercommunicator by parity of local rank, keys
 * reversed, and MPI_Comm_create with each local group reversed: the
 * new groups are checked by an Allgather of world ranks across. */
static void check_split_create(MPI_Comm inter)
{
    for (int create = 0; create < 2; create++) {
        if (create && on_open_mpi && world_size > 2) {
            /* Open MPI 4.1.4 makes it, then hangs in its first
             * collective (ranks reordered; in order, it works). */
            report_skip("Open MPI hangs on it", "MPI_Comm_create of an "
                        "intercommunicator, groups reversed");
            continue;
        }
        struct verdict v = {""};
        MPI_Comm sub = MPI_COMM_NULL;
        int color = create ? 0 : lrank % 2;
        int want_remote[64], nr = 0, want_rank = 0, nl = 0;
        for (int r = rsize - 1; r >= 0; r--)
            if (create || r % 2 == color)
                want_remote[nr++] = remote_world(r);
        for (int l = lsize - 1; l >= 0; l--) {
            if (!create && l % 2 != color)
                continue;
            if (l == lrank)
                want_rank = nl;
            nl++;
        }
        if (create) {
            MPI_Group local, reversed;
            int *order = malloc(sizeof(int) * (size_t)lsize);
            for (int l = 0; l < lsize; l++)
                order[l] = lsize - 1 - l;
            MPI_Comm_group(inter, &local);
            MPI_Group_incl(local, lsize, order, &reversed);
            check_rc(&v, "MPI_Comm_create",
                     MPI_Comm_create(inter, reversed, &sub));
            MPI_Group_free(&local);
            MPI_Group_free(&reversed);
            free(order);
        } else {
            check_rc(&v, "MPI_Comm_split",
                     MPI_Comm_split(inter, color, -lrank, &sub));
        }
        if (nr == 0) {
            if (sub != MPI_COMM_NULL)
                fail(&v, "color %d has no remote ranks, yet a communicator "
                     "came", color);
        } else if (sub == MPI_COMM_NULL) {
            fail(&v, "MPI_COMM_NULL where %d remote ranks share color %d",
                 nr, color);
        } else {
            int flag = 0, size = -1, rank = -1, rs = -1;
            MPI_Comm_test_inter(sub, &flag);
            MPI_Comm_size(sub, &size);
            MPI_Comm_rank(sub, &rank);
            MPI_Comm_remote_size(sub, &rs);
            int got[64];
            check_rc(&v, "MPI_Allgather",
                     MPI_Allgather(&world_rank, 1, MPI_INT, got, 1, MPI_INT,
                                   sub));
            if (!flag || size != nl || rank != want_rank || rs != nr)
                fail(&v, "inter %d size %d rank %d remote %d, want %d %d %d",
                     flag, size, rank, rs, nl, want_rank, nr);
            else
                for (int r = 0; r < nr; r++)
                    if (got[r] != want_remote[r])
                        fail(&v, "remote rank %d is world rank %d, want %d",
                             r, got[r], want_remote[r]);
            MPI_Comm_free(&sub);
        }
        report(&v, "%s", create
                   ? "MPI_Comm_create of an intercommunicator, groups reversed"
                   : "MPI_Comm_split of an intercommunicator by parity");
    }
}

/* Nonblocking collectives, several outstanding at once, completed
 * together: the same answers as the blocking ones. */
static void check_nonblocking(MPI_Comm inter, const char *what)
{
    struct verdict v = {""};
    MPI_Request reqs[9];
    int sum = 0;
    for (int r = 0; r < rsize; r++)
        sum += remote_world(r);
    /* Rank 0 of the lower group is the root of the rooted ones. */
    int rootarg = upper ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    int red = -1, bc = upper ? -1 : 4242, got_scatter = -1;
    int *gath = malloc(sizeof(int) * (size_t)(rsize + 1));
    int *scat = malloc(sizeof(int) * (size_t)(rsize + 1));
    int *all = malloc(sizeof(int) * (size_t)(rsize + 1));
    int *a2a_in = malloc(sizeof(int) * (size_t)(rsize + 1));
    int *a2a_out = malloc(sizeof(int) * (size_t)(rsize + 1));
    int *vec = malloc(sizeof(int) * (size_t)(lsize * rsize + 1));
    int *part = malloc(sizeof(int) * (size_t)(rsize + 1));
    for (int r = 0; r < rsize; r++) {
        gath[r] = all[r] = a2a_out[r] = -1;
        scat[r] = 500 + r;
        a2a_in[r] = world_rank * 100 + r;
    }
    for (int i = 0; i < lsize * rsize; i++)
        vec[i] = world_rank + i;
    check_rc(&v, "MPI_Ibarrier", MPI_Ibarrier(inter, &reqs[0]));
    check_rc(&v, "MPI_Iallreduce",
             MPI_Iallreduce(&world_rank, &red, 1, MPI_INT, MPI_SUM, inter,
                            &reqs[1]));
    check_rc(&v, "MPI_Ibcast", MPI_Ibcast(&bc, 1, MPI_INT, rootarg, inter,
                                          &reqs[2]));
    check_rc(&v, "MPI_Iallgather",
             MPI_Iallgather(&world_rank, 1, MPI_INT, all, 1, MPI_INT, inter,
                            &reqs[3]));
    check_rc(&v, "MPI_Ialltoall",
             MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, inter,
                           &reqs[4]));
    check_rc(&v, "MPI_Igather",
             MPI_Igather(&world_rank, 1, MPI_INT, gath, 1, MPI_INT, rootarg,
                         inter, &reqs[5]));
    check_rc(&v, "MPI_Iscatter",
             MPI_Iscatter(scat, 1, MPI_INT, &got_scatter, 1, MPI_INT, rootarg,
                          inter, &reqs[6]));
    int reduced = -1;
    check_rc(&v, "MPI_Ireduce",
             MPI_Ireduce(&world_rank, &reduced, 1, MPI_INT, MPI_MAX, rootarg,
                         inter, &reqs[7]));
    check_rc(&v, "MPI_Ireduce_scatter_block",
             MPI_Ireduce_scatter_block(vec, part, rsize, MPI_INT, MPI_SUM,
                                       inter, &reqs[8]));
    check_rc(&v, "MPI_Waitall", MPI_Waitall(9, reqs, MPI_STATUSES_IGNORE));
    if (red != sum)
        fail(&v, "Iallreduce %d, want %d", red, sum);
    if (bc != 4242 && !(lrank != 0 && !upper))
        fail(&v, "Ibcast %d", bc);
    for (int r = 0; r < rsize; r++) {
        if (all[r] != remote_world(r))
            fail(&v, "Iallgather [%d] %d", r, all[r]);
        if (a2a_out[r] != remote_world(r) * 100 + lrank)
            fail(&v, "Ialltoall [%d] %d", r, a2a_out[r]);
        if (rootarg == MPI_ROOT && gath[r] != remote_world(r))
            fail(&v, "Igather [%d] %d", r, gath[r]);
    }
    if (upper && got_scatter != 500 + lrank)
        fail(&v, "Iscatter %d", got_scatter);
    if (rootarg == MPI_ROOT && reduced != remote_world(rsize - 1))
        fail(&v, "Ireduce %d", reduced);
    for (int e = 0; e < rsize; e++)
        if (part[e] != sum + rsize * (lrank * rsize + e))
            fail(&v, "Ireduce_scatter_block [%d] %d", e, part[e]);
    free(gath);
    free(scat);
    free(all);
    free(a2a_in);
    free(a2a_out);
    free(vec);
    free(part);
    report(&v, "%s: nine nonblocking collectives outstanding at once",
           what);
}

/* MPI_Comm_free of an intercommunicator with a receive pending on it:
 * the lower group's ranks free their copy first, and the upper group's
 * matching ranks send only after that, then free theirs. */
static void check_free_pending(void)
{
    struct verdict v = {""};
    MPI_Comm inter = make_inter(&v);
    enum { N = 300 };
    int got[N], sent[N];
    for (int i = 0; i < N; i++) {
        got[i] = -1;
        sent[i] = world_rank * 1000 + i;
    }
    /* Ranks of the lower half pair with the upper rank of their index. */
    bool paired = lrank < (upper ? half : world_size - half);
    MPI_Request req = MPI_REQUEST_NULL;
    if (!upper && paired)
        check_rc(&v, "MPI_Irecv",
                 MPI_Irecv(got, N, MPI_INT, lrank, 8, inter, &req));
    if (!upper)
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&inter));
    check_rc(&v, "MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    if (upper) {
        if (paired)
            check_rc(&v, "MPI_Send",
                     MPI_Send(sent, N, MPI_INT, lrank, 8, inter));
        check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&inter));
    }
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; !upper && paired && i < N; i++)
        if (got[i] != (half + lrank) * 1000 + i) {
            fail(&v, "[%d] = %d after the free", i, got[i]);
            break;
        }
    report(&v, "MPI_Comm_free of an intercommunicator with a receive "
           "pending");
}

static void expect_class(struct verdict *v, const char *what, int rc,
                         int want)
{
    if (error_class(rc) != want)
        fail(v, "%s: error class %d, want %d", what, error_class(rc), want);
}

static void check_errors(MPI_Comm inter)
{
    struct verdict v = {""};
    int x = 0, flag = -1;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    if (flag != 0)
        fail(&v, "MPI_COMM_WORLD tests as an intercommunicator");
    /* Open MPI 4.1 checks neither of these two. */
    if (!on_open_mpi)
        expect_class(&v, "MPI_Comm_remote_size(MPI_COMM_WORLD)",
                     MPI_Comm_remote_size(MPI_COMM_WORLD, &x), MPI_ERR_COMM);
    MPI_Comm out;
    if (!on_open_mpi)
        expect_class(&v, "MPI_Intercomm_create with itself as remote leader",
                     MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD,
                                          world_rank, 1, &out), MPI_ERR_RANK);
    if (inter != MPI_COMM_NULL) {
        expect_class(&v, "MPI_Bcast with root = remote size",
                     MPI_Bcast(&x, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT);
        expect_class(&v, "MPI_Send to rank = remote size",
                     MPI_Send(&x, 1, MPI_INT, rsize, 0, inter), MPI_ERR_RANK);
        expect_class(&v, "MPI_Scan on an intercommunicator",
                     MPI_Scan(&x, &flag, 1, MPI_INT, MPI_SUM, inter),
                     MPI_ERR_COMM);
        MPI_Comm bad = MPI_COMM_NULL;
        /* Open MPI 4.1 does not check that one group agrees on high. */
        if (!on_open_mpi && lsize > 1) {
            int rc = MPI_Intercomm_merge(inter, lrank == 0, &bad);
            expect_class(&v, "MPI_Intercomm_merge with mixed values of high",
                         rc, MPI_ERR_ARG);
            if (rc == MPI_SUCCESS)
                MPI_Comm_free(&bad);
        } else if (!on_open_mpi) {
            /* The other group's check fails this rank's call too. */
            int rc = MPI_Intercomm_merge(inter, 0, &bad);
            if (world_size > 2)
                expect_class(&v, "MPI_Intercomm_merge where the other "
                             "group mixes values of high", rc, MPI_ERR_ARG);
            else if (rc == MPI_SUCCESS)
                MPI_Comm_free(&bad);
        }
        int dims[1] = { lsize }, periods[1] = { 0 };
        expect_class(&v, "MPI_Cart_create on an intercommunicator",
                     MPI_Cart_create(inter, 1, dims, periods, 0, &bad),
                     MPI_ERR_COMM);

        expect_class(&v, "MPI_Intercomm_create on an intercommunicator",
                     MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 1,
                                          &bad), MPI_ERR_COMM);
    }
    report(&v, "errors: bad roots and ranks, the wrong kind of communicator");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();
    if (world_rank == 0)
        printf("# intercomm_check on %d rank(s)\n", world_size);
    half = world_size / 2;
    upper = world_rank >= half;
    lsize = upper ? world_size - half : half;
    rsize = world_size - lsize;
    lrank = upper ? world_rank - half : world_rank;
    MPI_Comm inter = MPI_COMM_NULL;
    if (world_size < 2) {
        report_skip("one rank makes one group", "intercommunicator checks");
    } else {
        struct verdict v = {""};
        inter = make_inter(&v);
        report(&v, "MPI_Intercomm_create of the lower and upper halves");
        check_shape(inter);
        check_p2p(inter);
        check_merge(inter);
        check_split_create(inter);
        check_rooted(inter, "intercommunicator");
        check_all(inter, "intercommunicator");
        check_nonblocking(inter, "intercommunicator");
        struct verdict d = {""};
        MPI_Comm dup = MPI_COMM_NULL;
        check_rc(&d, "MPI_Comm_dup", MPI_Comm_dup(inter, &dup));
        report(&d, "MPI_Comm_dup of an intercommunicator");
        if (dup != MPI_COMM_NULL) {
            struct verdict c = {""};
            int same = -1, other = -1;
            MPI_Comm_compare(inter, dup, &same);
            MPI_Comm_compare(inter, MPI_COMM_WORLD, &other);
            if (same != MPI_CONGRUENT || other != MPI_UNEQUAL)
                fail(&c, "compare with its duplicate %d, with world %d",
                     same, other);
            report(&c, "MPI_Comm_compare of intercommunicators");
            check_shape(dup);
            check_rooted(dup, "its duplicate");
            check_all(dup, "its duplicate");
            check_nonblocking(dup, "its duplicate");
            MPI_Comm_free(&dup);
        }
        check_free_pending();
    }
    check_errors(inter);
    if (inter != MPI_COMM_NULL)
        MPI_Comm_free(&inter);
    int status = finish();
    MPI_Finalize();
    return status;
}

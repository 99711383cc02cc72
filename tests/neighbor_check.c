/*
 * neighbor_check.c - graph topologies and the neighbourhood collectives.
 *
 * Every expected value is computed here from the rank and the size
 * alone:
 * - MPI_Graph_create on a ring with chords, read back whole and per node;
 * - MPI_Dist_graph_create_adjacent (weighted, repeated edges at small
 *   sizes) and MPI_Dist_graph_create (edges named by other ranks), read
 *   back;
 * - MPI_Neighbor_allgather(v) and _alltoall(v, w), blocking and not, on
 *   a periodic ring (where at size 1 and 2 both neighbours are one rank,
 *   so a block must land by the direction it travelled), a non-periodic
 *   2-D grid (MPI_PROC_NULL slots keep their contents), and the graphs
 *   above, with a strided type;
 * - MPI_ERR_TOPOLOGY, MPI_ERR_ARG, MPI_ERR_RANK and MPI_ERR_COUNT (where
 *   Open MPI 4.1 answers otherwise, or accepts a bad graph, its answer
 *   passes there).
 * A plain MPI program: the same output under Open MPI's mpirun.
 */
#include <mpi.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap_harness.h"

/* mpi.h's MPI_UNWEIGHTED is a small constant pointer where an array is
 * declared; GCC takes it for a zero-sized region. */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define SENTINEL (-7)

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* The value rank s sends to its k-th destination, element e. */
static int value(int s, int k, int e)
{
    return s * 10000 + k * 100 + e;
}

/* Ring of every rank, each node also joined to the ones two away (a
 * symmetric graph, as the neighbourhood collectives need): neighbours of
 * r are r+1, r-1, r+2, r-2, those that differ from r and each other. */
static int ring_neighbors(int r, int n, int *out)
{
    int cand[4] = { mod(r + 1, n), mod(r - 1, n), mod(r + 2, n),
                    mod(r - 2, n) }, k = 0;
    for (int i = 0; i < 4; i++) {
        bool dup = cand[i] == r;
        for (int j = 0; j < k; j++)
            dup = dup || out[j] == cand[i];
        if (!dup)
            out[k++] = cand[i];
    }
    return k;
}

static void check_graph(void)
{
    struct verdict v = {""};
    int n = world_size;
    int *index = malloc(sizeof(int) * (size_t)n);
    int *edges = malloc(sizeof(int) * 4 * (size_t)n);
    int total = 0;
    for (int r = 0; r < n; r++) {
        total += ring_neighbors(r, n, edges + total);
        index[r] = total;
    }
    MPI_Comm g = MPI_COMM_NULL;
    check_rc(&v, "MPI_Graph_create",
             MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    if (g != MPI_COMM_NULL) {
        int status = -1, nnodes = -1, nedges = -1;
        MPI_Topo_test(g, &status);
        if (status != MPI_GRAPH)
            fail(&v, "MPI_Topo_test says %d, not MPI_GRAPH", status);
        check_rc(&v, "MPI_Graphdims_get", MPI_Graphdims_get(g, &nnodes,
                                                            &nedges));
        if (nnodes != n || nedges != total)
            fail(&v, "MPI_Graphdims_get: %d nodes, %d edges; expected %d, "
                 "%d", nnodes, nedges, n, total);
        int *gi = malloc(sizeof(int) * (size_t)n);
        int *ge = malloc(sizeof(int) * 4 * (size_t)n);
        check_rc(&v, "MPI_Graph_get", MPI_Graph_get(g, n, total, gi, ge));
        if (memcmp(gi, index, sizeof(int) * (size_t)n) != 0 ||
            memcmp(ge, edges, sizeof(int) * (size_t)total) != 0)
            fail(&v, "MPI_Graph_get does not give back index and edges");
        for (int r = 0; r < n; r++) {
            int want[4], k = ring_neighbors(r, n, want), got[4], cnt = -1;
            check_rc(&v, "MPI_Graph_neighbors_count",
                     MPI_Graph_neighbors_count(g, r, &cnt));
            check_rc(&v, "MPI_Graph_neighbors",
                     MPI_Graph_neighbors(g, r, 4, got));
            if (cnt != k || memcmp(got, want, sizeof(int) * (size_t)k) != 0)
                fail(&v, "node %d: %d neighbours, expected %d", r, cnt, k);
        }
        /* A graph's neighbours are its sources and destinations. */
        int me = world_rank, want[4], k = ring_neighbors(me, n, want);
        int recv[4] = { SENTINEL, SENTINEL, SENTINEL, SENTINEL };
        check_rc(&v, "MPI_Neighbor_allgather",
                 MPI_Neighbor_allgather(&me, 1, MPI_INT, recv, 1, MPI_INT,
                                        g));
        for (int i = 0; i < k; i++)
            if (recv[i] != want[i])
                fail(&v, "neighbour %d gave %d, expected %d", i, recv[i],
                     want[i]);
        MPI_Comm dup;
        check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(g, &dup));
        int dnodes = -1, dedges = -1;
        check_rc(&v, "MPI_Graphdims_get",
                 MPI_Graphdims_get(dup, &dnodes, &dedges));
        if (dnodes != n || dedges != total)
            fail(&v, "MPI_Comm_dup lost the graph");
        MPI_Comm_free(&dup);
        free(gi);
        free(ge);
        MPI_Comm_free(&g);
    } else {
        fail(&v, "MPI_Graph_create gave MPI_COMM_NULL to a node");
    }
    /* A graph of fewer nodes than ranks leaves the others out. */
    MPI_Comm small = MPI_COMM_NULL;
    int one_index[1] = { 0 }, no_edges[1] = { -1 };
    check_rc(&v, "MPI_Graph_create",
             MPI_Graph_create(MPI_COMM_WORLD, 1, one_index, no_edges, 0,
                              &small));
    if ((world_rank == 0) != (small != MPI_COMM_NULL))
        fail(&v, "a one-node graph: rank %d got %s", world_rank,
             small == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (small != MPI_COMM_NULL)
        MPI_Comm_free(&small);
    free(index);
    free(edges);
    report(&v, "MPI_Graph_create: a ring with chords read back whole and "
           "per node, kept by MPI_Comm_dup, neighbours gathered");
}

/* Sources r-1, r-2 and destinations r+1, r+2 (weighted): at size 1 and
 * 2 the same rank twice, matched in list order. */
static MPI_Comm make_adjacent(struct verdict *v)
{
    int n = world_size, r = world_rank;
    int src[2] = { mod(r - 1, n), mod(r - 2, n) };
    int dst[2] = { mod(r + 1, n), mod(r + 2, n) };
    int sw[2] = { 3, 4 }, dw[2] = { 5, 6 };
    MPI_Comm g = MPI_COMM_NULL;
    check_rc(v, "MPI_Dist_graph_create_adjacent",
             MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2,
                                            dst, dw, MPI_INFO_NULL, 0, &g));
    return g;
}

static void check_dist_graph(void)
{
    struct verdict v = {""};
    int n = world_size, r = world_rank;
    MPI_Comm g = make_adjacent(&v);
    if (g == MPI_COMM_NULL) {
        report(&v, "MPI_Dist_graph_create_adjacent");
        return;
    }
    int status = -1, in = -1, out = -1, weighted = -1;
    MPI_Topo_test(g, &status);
    check_rc(&v, "MPI_Dist_graph_neighbors_count",
             MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    int src[2], dst[2], sw[2], dw[2];
    check_rc(&v, "MPI_Dist_graph_neighbors",
             MPI_Dist_graph_neighbors(g, 2, src, sw, 2, dst, dw));
    if (status != MPI_DIST_GRAPH || in != 2 || out != 2 || !weighted ||
        src[0] != mod(r - 1, n) || src[1] != mod(r - 2, n) ||
        dst[0] != mod(r + 1, n) || dst[1] != mod(r + 2, n) || sw[0] != 3 ||
        sw[1] != 4 || dw[0] != 5 || dw[1] != 6)
        fail(&v, "read back: topo %d, degrees %d/%d, weighted %d, sources "
             "%d %d, destinations %d %d", status, in, out, weighted, src[0],
             src[1], dst[0], dst[1]);

    /* Alltoallv: destination k gets 1 + (r + k) % 3 values; from source
     * j (rank r-1-j, for which this rank is destination j) they come. */
    int scounts[2], sdispls[2], rcounts[2], rdispls[2], sbuf[6], rbuf[8];
    for (int k = 0, at = 0; k < 2; k++) {
        scounts[k] = 1 + (r + k) % 3;
        sdispls[k] = at;
        for (int e = 0; e < scounts[k]; e++)
            sbuf[at + e] = value(r, k, e);
        at += scounts[k];
    }
    for (int j = 0, at = 1; j < 2; j++) {
        rcounts[j] = 1 + (mod(r - 1 - j, n) + j) % 3;
        rdispls[j] = at;            /* a gap before each block */
        at += rcounts[j] + 1;
    }
    for (int i = 0; i < 8; i++)
        rbuf[i] = SENTINEL;
    check_rc(&v, "MPI_Neighbor_alltoallv",
             MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf,
                                    rcounts, rdispls, MPI_INT, g));
    for (int j = 0; j < 2; j++) {
        int s = mod(r - 1 - j, n);
        for (int e = 0; e < rcounts[j]; e++)
            if (rbuf[rdispls[j] + e] != value(s, j, e))
                fail(&v, "alltoallv: source %d element %d is %d, expected "
                     "%d", j, e, rbuf[rdispls[j] + e], value(s, j, e));
        if (rbuf[rdispls[j] - 1] != SENTINEL)
            fail(&v, "alltoallv wrote the gap before block %d", j);
    }

    /* Ialltoallw with a strided type: block k is every other int. */
    MPI_Datatype every_other;
    MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int wsend[12], wrecv[12];
    for (int i = 0; i < 12; i++) {
        wsend[i] = value(r, i / 6, i % 6);
        wrecv[i] = SENTINEL;
    }
    int ones[2] = { 1, 1 };
    MPI_Aint wdispls[2] = { 0, 6 * sizeof(int) };
    MPI_Datatype types[2] = { every_other, every_other };
    MPI_Request req;
    check_rc(&v, "MPI_Ineighbor_alltoallw",
             MPI_Ineighbor_alltoallw(wsend, ones, wdispls, types, wrecv, ones,
                                     wdispls, types, g, &req));
    check_rc(&v, "MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < 2; j++) {
        int s = mod(r - 1 - j, n);
        for (int e = 0; e < 6; e++) {
            int want = e % 2 == 0 ? value(s, j, e) : SENTINEL;
            if (wrecv[6 * j + e] != want)
                fail(&v, "alltoallw: block %d item %d is %d, expected %d", j,
                     e, wrecv[6 * j + e], want);
        }
    }
    MPI_Type_free(&every_other);
    MPI_Comm_free(&g);
    report(&v, "MPI_Dist_graph_create_adjacent: neighbours and weights read "
           "back, MPI_Neighbor_alltoallv with gaps, MPI_Ineighbor_alltoallw "
           "of a strided type");
}

/* Rank r names the edges of node r+1: to r+2 and to r+3 (so each rank's
 * edges come from another rank); unweighted. */
static void check_dist_graph_general(void)
{
    struct verdict v = {""};
    int n = world_size, r = world_rank;
    int node = mod(r + 1, n), degree = 2;
    int targets[2] = { mod(r + 2, n), mod(r + 3, n) };
    MPI_Comm g = MPI_COMM_NULL;
    check_rc(&v, "MPI_Dist_graph_create",
             MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &node, &degree, targets,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    if (g == MPI_COMM_NULL) {
        report(&v, "MPI_Dist_graph_create");
        return;
    }
    int in = -1, out = -1, weighted = -1;
    check_rc(&v, "MPI_Dist_graph_neighbors_count",
             MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    int src[2] = { -1, -1 }, dst[2] = { -1, -1 };
    check_rc(&v, "MPI_Dist_graph_neighbors",
             MPI_Dist_graph_neighbors(g, 2, src, MPI_UNWEIGHTED, 2, dst,
                                      MPI_UNWEIGHTED));
    /* Node r's out-edges go to r+1 and r+2; its in-edges come from r-1
     * and r-2. MPI leaves the order open: compare as sets. */
    int want_dst[2] = { mod(r + 1, n), mod(r + 2, n) };
    int want_src[2] = { mod(r - 1, n), mod(r - 2, n) };
    bool same_dst = (dst[0] == want_dst[0] && dst[1] == want_dst[1]) ||
                    (dst[0] == want_dst[1] && dst[1] == want_dst[0]);
    bool same_src = (src[0] == want_src[0] && src[1] == want_src[1]) ||
                    (src[0] == want_src[1] && src[1] == want_src[0]);
    if (in != 2 || out != 2 || weighted || !same_dst || !same_src)
        fail(&v, "degrees %d/%d weighted %d, sources %d %d, destinations "
             "%d %d", in, out, weighted, src[0], src[1], dst[0], dst[1]);
    /* Gathered values follow the sources' order as read back. */
    int me = r * 7 + 1, got[2] = { SENTINEL, SENTINEL };
    check_rc(&v, "MPI_Neighbor_allgather",
             MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, g));
    for (int j = 0; j < 2; j++)
        if (got[j] != src[j] * 7 + 1)
            fail(&v, "from source %d (rank %d): %d, expected %d", j, src[j],
                 got[j], src[j] * 7 + 1);
    MPI_Comm_free(&g);
    report(&v, "MPI_Dist_graph_create: each rank's edges named by another "
           "rank reach both ends; gathered in the order read back");
}

/* A periodic ring: neighbour 0 is r-1, neighbour 1 is r+1; what r-1 sent
 * forward (its block 1) arrives in slot 0, what r+1 sent back (block 0)
 * in slot 1 -- also where r-1 and r+1 are one rank, or r itself. */
static void check_ring(void)
{
    struct verdict v = {""};
    int n = world_size, r = world_rank, dims[1] = { n }, periods[1] = { 1 };
    MPI_Comm ring;
    check_rc(&v, "MPI_Cart_create",
             MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int send[4] = { value(r, 0, 0), value(r, 0, 1), value(r, 1, 0),
                    value(r, 1, 1) };
    int recv[4] = { SENTINEL, SENTINEL, SENTINEL, SENTINEL };
    check_rc(&v, "MPI_Neighbor_alltoall",
             MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, ring));
    int back = mod(r - 1, n), forth = mod(r + 1, n);
    int want[4] = { value(back, 1, 0), value(back, 1, 1), value(forth, 0, 0),
                    value(forth, 0, 1) };
    if (memcmp(recv, want, sizeof(want)) != 0)
        fail(&v, "alltoall got %d %d %d %d, expected %d %d %d %d", recv[0],
             recv[1], recv[2], recv[3], want[0], want[1], want[2], want[3]);
    /* Two nonblocking gathers in flight at once. */
    int a = r, b = -r, ga[2] = { SENTINEL, SENTINEL },
        gb[2] = { SENTINEL, SENTINEL };
    MPI_Request reqs[2];
    check_rc(&v, "MPI_Ineighbor_allgather",
             MPI_Ineighbor_allgather(&a, 1, MPI_INT, ga, 1, MPI_INT, ring,
                                     &reqs[0]));
    check_rc(&v, "MPI_Ineighbor_allgather",
             MPI_Ineighbor_allgather(&b, 1, MPI_INT, gb, 1, MPI_INT, ring,
                                     &reqs[1]));
    check_rc(&v, "MPI_Waitall", MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    if (ga[0] != back || ga[1] != forth || gb[0] != -back || gb[1] != -forth)
        fail(&v, "two gathers in flight: %d %d and %d %d", ga[0], ga[1],
             gb[0], gb[1]);
    MPI_Comm_free(&ring);
    report(&v, "a periodic ring: MPI_Neighbor_alltoall lands each block by "
           "the way it went, two MPI_Ineighbor_allgather in flight");
}

/* A non-periodic 2-D grid: slots of MPI_PROC_NULL neighbours keep their
 * contents; allgatherv places blocks at the displacements. */
static void check_grid(void)
{
    struct verdict v = {""};
    int dims[2] = { 0, 0 }, periods[2] = { 0, 0 };
    MPI_Dims_create(world_size, 2, dims);
    MPI_Comm grid;
    check_rc(&v, "MPI_Cart_create",
             MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    int r = world_rank, row = r / dims[1], col = r % dims[1];
    /* Back and forth along rows, then along columns. */
    int nb[4] = { row > 0 ? r - dims[1] : MPI_PROC_NULL,
                  row < dims[0] - 1 ? r + dims[1] : MPI_PROC_NULL,
                  col > 0 ? r - 1 : MPI_PROC_NULL,
                  col < dims[1] - 1 ? r + 1 : MPI_PROC_NULL };
    int counts[4] = { 2, 2, 2, 2 }, displs[4] = { 6, 0, 3, 9 };
    int mine[2] = { r, r + 100 }, got[12];
    for (int i = 0; i < 12; i++)
        got[i] = SENTINEL;
    check_rc(&v, "MPI_Neighbor_allgatherv",
             MPI_Neighbor_allgatherv(mine, 2, MPI_INT, got, counts, displs,
                                     MPI_INT, grid));
    for (int i = 0; i < 4; i++) {
        int w0 = nb[i] == MPI_PROC_NULL ? SENTINEL : nb[i];
        int w1 = nb[i] == MPI_PROC_NULL ? SENTINEL : nb[i] + 100;
        if (got[displs[i]] != w0 || got[displs[i] + 1] != w1)
            fail(&v, "slot %d (neighbour %d): %d %d", i, nb[i],
                 got[displs[i]], got[displs[i] + 1]);
    }
    MPI_Comm_free(&grid);
    report(&v, "a %dx%d grid without wrap: MPI_Neighbor_allgatherv, edge "
           "slots untouched", dims[0], dims[1]);
}

static void check_errors(void)
{
    struct verdict v = {""};
    int x = 0, y[8];
    /* Open MPI 4.1 answers MPI_ERR_INTERN here. */
    int cls = error_class(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1,
                                                 MPI_INT, MPI_COMM_WORLD));
    if (cls != MPI_ERR_TOPOLOGY && !(on_open_mpi && cls == MPI_ERR_INTERN))
        fail(&v, "a neighbourhood collective without a topology is not "
             "MPI_ERR_TOPOLOGY");
    int index[1] = { 1 }, edges[1] = { 5 };
    MPI_Comm g = MPI_COMM_NULL;
    /* Open MPI 4.1 makes the graph. */
    cls = error_class(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0,
                                       &g));
    if (cls != MPI_ERR_ARG && !(on_open_mpi && cls == MPI_SUCCESS))
        fail(&v, "an edge to a node that is not in the graph is not "
             "MPI_ERR_ARG");
    if (g != MPI_COMM_NULL)
        MPI_Comm_free(&g);
    int bad[1] = { world_size };
    /* Open MPI 4.1: MPI_ERR_ARG. */
    cls = error_class(MPI_Dist_graph_create_adjacent(
        MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
        MPI_INFO_NULL, 0, &g));
    if (cls != MPI_ERR_RANK && !(on_open_mpi && cls == MPI_ERR_ARG))
        fail(&v, "a source past the communicator is not MPI_ERR_RANK");
    int dims[1] = { world_size }, periods[1] = { 1 }, nn = 0, ne = 0;
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    if (error_class(MPI_Graphdims_get(ring, &nn, &ne)) != MPI_ERR_TOPOLOGY)
        fail(&v, "MPI_Graphdims_get of a grid is not MPI_ERR_TOPOLOGY");
    if (error_class(MPI_Neighbor_alltoall(y, -1, MPI_INT, y, 1, MPI_INT,
                                          ring)) != MPI_ERR_COUNT)
        fail(&v, "a negative count is not MPI_ERR_COUNT");
    MPI_Comm_free(&ring);
    report(&v, "MPI_ERR_TOPOLOGY, MPI_ERR_ARG, MPI_ERR_RANK and "
           "MPI_ERR_COUNT for bad graphs and calls");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();
    if (world_rank == 0)
        printf("# neighbor_check on %d rank(s)\n", world_size);
    check_graph();
    check_dist_graph();
    check_dist_graph_general();
    check_ring();
    check_grid();
    check_errors();
    int status = finish();
    MPI_Finalize();
    return status;
}

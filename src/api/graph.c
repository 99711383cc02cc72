/* Graph topologies: MPI_Graph_create and the calls that read a graph
 * communicator, the distributed graphs (MPI_Dist_graph_create and
 * _adjacent) and theirs. core/graph.c keeps the graph; the neighbourhood
 * collectives (api/neighbor.c) move data along it. Like Cartesian ones, a
 * graph communicator is an MPI_Comm_split of its parent: pdmpi does not
 * reorder ranks. */
#include <limits.h>
#include <stdlib.h>

#include "api/api.h"
#include "core/graph.h"

#pragma weak MPI_Graph_create = PMPI_Graph_create
#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
#pragma weak MPI_Graph_get = PMPI_Graph_get
#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
#pragma weak MPI_Graph_map = PMPI_Graph_map
#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors

/* comm is usable and has a graph topology, distributed or not as asked. */
static int pd_check_graph(MPI_Comm comm, const char *call, bool distributed)
{
    PD_CHECK(pd_check_comm(comm, call));
    const struct pd_graph *g = comm->state->graph;
    if (g == NULL || g->distributed != distributed)
        return pd_raise(comm, call, MPI_ERR_TOPOLOGY, "%s has no %s topology "
                        "(made by %s)", pd_comm_label(comm),
                        distributed ? "distributed graph" : "graph",
                        distributed ? "MPI_Dist_graph_create or "
                                      "MPI_Dist_graph_create_adjacent"
                                    : "MPI_Graph_create");
    return MPI_SUCCESS;
}

/* A graph of nnodes nodes (at most comm's size): index non-decreasing
 * from 0, every edge a node. */
static int pd_check_graph_args(MPI_Comm comm, const char *call, int nnodes,
                               const int *index, const int *edges)
{
    if (nnodes < 0 || nnodes > comm->size)
        return pd_raise(comm, call, MPI_ERR_ARG, "nnodes %d is not between 0 "
                        "and the size of %s (%d)", nnodes,
                        pd_comm_label(comm), comm->size);
    if (nnodes > 0 && index == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i > 0 ? index[i - 1] : 0))
            return pd_raise(comm, call, MPI_ERR_ARG, "index[%d] is %d, less "
                            "than the %d before it (index counts the edges "
                            "up to each node)", i, index[i],
                            i > 0 ? index[i - 1] : 0);
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    if (nedges > 0 && edges == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "edges is NULL");
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return pd_raise(comm, call, MPI_ERR_ARG, "edges[%d] is %d, not a "
                            "node of the graph (0..%d)", e, edges[e],
                            nnodes - 1);
    return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                      const int edges[], int reorder, MPI_Comm *comm_graph)
{
    static const char call[] = "MPI_Graph_create";
    (void)reorder;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm_old, call));
    PD_CHECK(pd_check_intra(comm_old, call, "comm_old"));
    if (comm_graph == NULL)
        return pd_raise(comm_old, call, MPI_ERR_ARG, "comm_graph is NULL");
    PD_CHECK(pd_check_graph_args(comm_old, call, nnodes, index, edges));
    int rank = comm_old->rank;
    return pd_topo_comm(call, comm_old, rank < nnodes ? 0 : MPI_UNDEFINED,
                        rank, NULL, pd_graph_new(nnodes, index, edges, rank),
                        comm_graph);
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
                   const int edges[], int *newrank)
{
    static const char call[] = "MPI_Graph_map";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (newrank == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "newrank is NULL");
    PD_CHECK(pd_check_graph_args(comm, call, nnodes, index, edges));
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char call[] = "MPI_Graphdims_get";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_graph(comm, call, false));
    if (nnodes == NULL || nedges == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        nnodes == NULL ? "nnodes" : "nedges");
    *nnodes = comm->state->graph->nnodes;
    *nedges = comm->state->graph->nedges;
    return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                   int edges[])
{
    static const char call[] = "MPI_Graph_get";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_graph(comm, call, false));
    const struct pd_graph *g = comm->state->graph;
    if (maxindex < 0 || maxedges < 0)
        return pd_raise(comm, call, MPI_ERR_ARG, "maxindex %d and maxedges "
                        "%d must not be negative", maxindex, maxedges);
    int ni = maxindex < g->nnodes ? maxindex : g->nnodes;
    int ne = maxedges < g->nedges ? maxedges : g->nedges;
    if ((ni > 0 && index == NULL) || (ne > 0 && edges == NULL))
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        ni > 0 && index == NULL ? "index" : "edges");
    for (int i = 0; i < ni; i++)
        index[i] = g->index[i];
    for (int e = 0; e < ne; e++)
        edges[e] = g->edges[e];
    return MPI_SUCCESS;
}

/* rank is a node of comm's graph. */
static int pd_check_node(MPI_Comm comm, const char *call, int rank)
{
    if (rank < 0 || rank >= comm->state->graph->nnodes)
        return pd_raise(comm, call, MPI_ERR_RANK, "rank %d is not a node of "
                        "the graph (0..%d)", rank,
                        comm->state->graph->nnodes - 1);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char call[] = "MPI_Graph_neighbors_count";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_graph(comm, call, false));
    PD_CHECK(pd_check_node(comm, call, rank));
    if (nneighbors == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "nneighbors is NULL");
    int first;
    *nneighbors = pd_graph_degree(comm->state->graph->index, rank, &first);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                         int neighbors[])
{
    static const char call[] = "MPI_Graph_neighbors";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_graph(comm, call, false));
    PD_CHECK(pd_check_node(comm, call, rank));
    const struct pd_graph *g = comm->state->graph;
    int first, degree = pd_graph_degree(g->index, rank, &first);
    int n = maxneighbors < degree ? maxneighbors : degree;
    if (maxneighbors < 0)
        return pd_raise(comm, call, MPI_ERR_ARG, "maxneighbors is %d "
                        "(negative)", maxneighbors);
    if (n > 0 && neighbors == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "neighbors is NULL");
    for (int i = 0; i < n; i++)
        neighbors[i] = g->edges[first + i];
    return MPI_SUCCESS;
}

/* Weights as MPI passes them: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY (a
 * weighted graph where this side has no edges), or degree non-negative
 * ints. *weighted says which; *list is the array, NULL for the others. */
static int pd_check_weights(MPI_Comm comm, const char *call, const int *w,
                            int degree, const char *what, bool *weighted,
                            const int **list)
{
    *weighted = w != MPI_UNWEIGHTED;
    *list = NULL;
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY) {
        if (w == MPI_WEIGHTS_EMPTY && degree > 0)
            return pd_raise(comm, call, MPI_ERR_ARG, "%s is "
                            "MPI_WEIGHTS_EMPTY for %d edges", what, degree);
        return MPI_SUCCESS;
    }
    if (degree > 0 && w == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL (not "
                        "MPI_UNWEIGHTED)", what);
    for (int i = 0; i < degree; i++)
        if (w[i] < 0)
            return pd_raise(comm, call, MPI_ERR_ARG, "%s[%d] is %d "
                            "(negative)", what, i, w[i]);
    *list = w;
    return MPI_SUCCESS;
}

/* degree ranks of comm at ranks (the array present when degree > 0). */
static int pd_check_ranks(MPI_Comm comm, const char *call, const int *ranks,
                          int degree, const char *what)
{
    if (degree < 0)
        return pd_raise(comm, call, MPI_ERR_ARG, "the degree of %s is %d "
                        "(negative)", what, degree);
    if (degree > 0 && ranks == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < degree; i++)
        if (ranks[i] < 0 || ranks[i] >= comm->size)
            return pd_raise(comm, call, MPI_ERR_RANK, "%s[%d] is %d, not a "
                            "rank of %s (size %d)", what, i, ranks[i],
                            pd_comm_label(comm), comm->size);
    return MPI_SUCCESS;
}

/* A communicator of every rank of comm carrying g (which it takes). */
static int pd_dist_graph_comm(const char *call, MPI_Comm comm,
                              struct pd_graph *g, bool weighted,
                              MPI_Comm *out)
{
    if (g != NULL)
        g->weighted = weighted;
    return pd_topo_comm(call, comm, 0, comm->rank, NULL, g, out);
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                    const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[],
                                    const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create_adjacent";
    (void)info;
    (void)reorder;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm_old, call));
    PD_CHECK(pd_check_intra(comm_old, call, "comm_old"));
    if (comm_dist_graph == NULL)
        return pd_raise(comm_old, call, MPI_ERR_ARG,
                        "comm_dist_graph is NULL");
    PD_CHECK(pd_check_ranks(comm_old, call, sources, indegree, "sources"));
    PD_CHECK(pd_check_ranks(comm_old, call, destinations, outdegree,
                            "destinations"));
    bool in_weighted, out_weighted;
    const int *in_w, *out_w;
    PD_CHECK(pd_check_weights(comm_old, call, sourceweights, indegree,
                              "sourceweights", &in_weighted, &in_w));
    PD_CHECK(pd_check_weights(comm_old, call, destweights, outdegree,
                              "destweights", &out_weighted, &out_w));
    if (in_weighted != out_weighted)
        return pd_raise(comm_old, call, MPI_ERR_ARG, "one of sourceweights "
                        "and destweights is MPI_UNWEIGHTED and the other "
                        "not");
    return pd_dist_graph_comm(call, comm_old,
                              pd_dist_graph_new(indegree, sources, in_w,
                                                outdegree, destinations,
                                                out_w),
                              in_weighted, comm_dist_graph);
}

/* One edge of a distributed graph on its way to the rank that keeps it:
 * its source (an out-edge there) or its destination (an in-edge). */
struct pd_edge_note {
    int incoming;       /* 1: at the destination, 0: at the source */
    int from, to, weight;
};

/* Each rank's edges, from any rank, to the two ranks they join: every
 * rank learns its own in- and out-edges, in the order of the ranks that
 * named them and of their lists (MPI leaves that order open). */
static int pd_dist_graph_gather(const char *call, MPI_Comm comm, int n,
                                const int *nodes, const int *degrees,
                                const int *targets, const int *weights,
                                struct pd_edge_note **mine, int *nmine)
{
    int size = comm->size, rc = MPI_ERR_NO_MEM;
    int *counts = calloc((size_t)size * 4, sizeof(int));
    if (counts == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    int *sendcounts = counts, *recvcounts = counts + size,
        *sdispls = counts + 2 * size, *rdispls = counts + 3 * size;
    size_t nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += (size_t)degrees[i];
    struct pd_edge_note *out = malloc((nedges > 0 ? 2 * nedges : 1) *
                                      sizeof(*out));
    *mine = NULL;
    if (out == NULL)
        goto fail;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            sendcounts[nodes[i]]++;
            sendcounts[targets[e]]++;
        }
    for (int r = 1; r < size; r++)
        sdispls[r] = sdispls[r - 1] + sendcounts[r - 1];
    int *fill = calloc((size_t)size, sizeof(int));
    if (fill == NULL)
        goto fail;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int w = weights != NULL ? weights[e] : 1;
            int s = nodes[i], d = targets[e];
            out[sdispls[s] + fill[s]++] = (struct pd_edge_note){ 0, s, d, w };
            out[sdispls[d] + fill[d]++] = (struct pd_edge_note){ 1, s, d, w };
        }
    free(fill);
    size_t one = sizeof(struct pd_edge_note);
    struct pd_coll c = { .kind = PD_COLL_ALLTOALLV, .comm = comm,
                         .sendbuf = sendcounts, .recvbuf = recvcounts,
                         .send = { NULL, NULL, sizeof(int) },
                         .recv = { NULL, NULL, sizeof(int) }, .root = -1,
                         .signature = pd_type_signature(MPI_INT) };
    rc = pd_api_coll(call, &c, &(struct pd_agree){
        NULL, sizeof(int), sizeof(int) * (size_t)size, NULL, NULL, NULL },
        NULL);
    if (rc != MPI_SUCCESS)
        goto out;
    *nmine = 0;
    for (int r = 0; r < size; r++) {
        rdispls[r] = *nmine;
        *nmine += recvcounts[r];
    }
    *mine = malloc((size_t)(*nmine > 0 ? *nmine : 1) * one);
    if (*mine == NULL)
        goto fail;
    c = (struct pd_coll){ .kind = PD_COLL_ALLTOALLV, .comm = comm,
                          .sendbuf = out, .recvbuf = *mine,
                          .send = { sendcounts, sdispls, one },
                          .recv = { recvcounts, rdispls, one }, .root = -1,
                          .signature = pd_type_signature(MPI_INT) };
    rc = pd_api_coll(call, &c, &(struct pd_agree){
        NULL, PD_CALL_ANY_BYTES, (size_t)*nmine * one, NULL, NULL, NULL },
        NULL);
    goto out;
fail:
    rc = pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
out:
    if (rc != MPI_SUCCESS) {
        free(*mine);
        *mine = NULL;
    }
    free(sendcounts);
    free(out);
    return rc;
}

/* This rank's neighbourhood from the edges it was sent. */
static struct pd_graph *pd_dist_graph_from(int me,
                                           const struct pd_edge_note *notes,
                                           int n)
{
    int *ranks = malloc((size_t)(n > 0 ? 2 * n : 2) * sizeof(int));
    int *w = ranks != NULL ? ranks + (n > 0 ? n : 1) : NULL;
    if (ranks == NULL)
        return NULL;
    /* In-edges first, then out-edges, each in arrival order. */
    int nin = 0, nout = 0;
    for (int i = 0; i < n; i++)
        if (notes[i].incoming && notes[i].to == me) {
            ranks[nin] = notes[i].from;
            w[nin++] = notes[i].weight;
        }
    for (int i = 0; i < n; i++)
        if (!notes[i].incoming && notes[i].from == me) {
            ranks[nin + nout] = notes[i].to;
            w[nin + nout++] = notes[i].weight;
        }
    struct pd_graph *g = pd_dist_graph_new(nin, ranks, w, nout, ranks + nin,
                                           w + nin);
    free(ranks);
    return g;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[],
                           const int degrees[], const int targets[],
                           const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Dist_graph_create";
    (void)info;
    (void)reorder;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm_old, call));
    PD_CHECK(pd_check_intra(comm_old, call, "comm_old"));
    if (newcomm == NULL)
        return pd_raise(comm_old, call, MPI_ERR_ARG, "newcomm is NULL");
    PD_CHECK(pd_check_ranks(comm_old, call, nodes, n, "nodes"));
    if (n > 0 && degrees == NULL)
        return pd_raise(comm_old, call, MPI_ERR_ARG, "degrees is NULL");
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return pd_raise(comm_old, call, MPI_ERR_ARG, "degrees[%d] is %d "
                            "(negative)", i, degrees[i]);
        nedges += degrees[i];
        if (nedges > INT_MAX / 2)
            return pd_raise(comm_old, call, MPI_ERR_ARG, "more than %d "
                            "edges", INT_MAX / 2);
    }
    PD_CHECK(pd_check_ranks(comm_old, call, targets, (int)nedges, "targets"));
    bool weighted;
    const int *w;
    PD_CHECK(pd_check_weights(comm_old, call, weights, (int)nedges, "weights",
                              &weighted, &w));
    struct pd_edge_note *mine = NULL;
    int nmine = 0;
    PD_CHECK(pd_dist_graph_gather(call, comm_old, n, nodes, degrees, targets,
                                  w, &mine, &nmine));
    struct pd_graph *g = pd_dist_graph_from(comm_old->rank, mine, nmine);
    free(mine);
    return pd_dist_graph_comm(call, comm_old, g, weighted, newcomm);
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree,
                                    int *outdegree, int *weighted)
{
    static const char call[] = "MPI_Dist_graph_neighbors_count";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_graph(comm, call, true));
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "indegree, outdegree or "
                        "weighted is NULL");
    const struct pd_graph *g = comm->state->graph;
    *indegree = g->indegree;
    *outdegree = g->outdegree;
    *weighted = g->weighted;
    return MPI_SUCCESS;
}

/* Up to max of n ranks (and their weights where w is an array). */
static int pd_copy_neighbors(MPI_Comm comm, const char *call, int max,
                             const int *from, const int *from_w, int n,
                             int *ranks, int *w, const char *what)
{
    if (max < 0)
        return pd_raise(comm, call, MPI_ERR_ARG, "max%s is %d (negative)",
                        what, max);
    int k = max < n ? max : n;
    if (k > 0 && ranks == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "the %s array is NULL",
                        what);
    bool weights = w != NULL && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < k; i++) {
        ranks[i] = from[i];
        if (weights)
            w[i] = from_w[i];
    }
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
    static const char call[] = "MPI_Dist_graph_neighbors";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_graph(comm, call, true));
    const struct pd_graph *g = comm->state->graph;
    PD_CHECK(pd_copy_neighbors(comm, call, maxindegree, g->sources,
                               g->source_weights, g->indegree, sources,
                               sourceweights, "indegree"));
    return pd_copy_neighbors(comm, call, maxoutdegree, g->destinations,
                             g->dest_weights, g->outdegree, destinations,
                             destweights, "outdegree");
}

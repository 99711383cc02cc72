/*
 * Graph topologies: MPI_Graph_create's whole graph (every rank's
 * neighbours, index and edges as the program gave them) and
 * MPI_Dist_graph_create's per-rank view (the ranks this one receives
 * from and sends to, with weights). Either way the neighbourhood
 * collectives read one thing: this rank's sources and destinations, in
 * order. Kept on the communicator's state; copied by MPI_Comm_dup.
 */
#ifndef PD_CORE_GRAPH_H
#define PD_CORE_GRAPH_H

#include <stdbool.h>

struct pd_graph {
    bool distributed;       /* made by MPI_Dist_graph_create(_adjacent) */
    /* MPI_Graph_create: node i's neighbours are
     * edges[index[i-1] .. index[i]) (index[-1] being 0). */
    int nnodes, nedges;
    int *index, *edges;
    /* This rank's neighbourhood: it receives from sources, sends to
     * destinations (a graph's neighbours, both). */
    int indegree, outdegree;
    int *sources, *destinations;
    int *source_weights, *dest_weights;     /* 1 each when unweighted */
    bool weighted;
};

/* MPI_Graph_create's graph as seen by rank (rank >= nnodes: no
 * neighbours); NULL when out of memory. */
struct pd_graph *pd_graph_new(int nnodes, const int *index, const int *edges,
                              int rank);
/* A distributed graph's view of one rank; weights NULL: unweighted (each
 * 1). NULL when out of memory. */
struct pd_graph *pd_dist_graph_new(int indegree, const int *sources,
                                   const int *source_weights, int outdegree,
                                   const int *destinations,
                                   const int *dest_weights);
struct pd_graph *pd_graph_copy(const struct pd_graph *graph);
void pd_graph_free(struct pd_graph *graph);

/* Node's neighbours in a graph of index (nnodes entries): their count
 * and where they start in edges. */
int pd_graph_degree(const int *index, int node, int *first);

#endif

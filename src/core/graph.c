#include <stdlib.h>

#include "core/graph.h"

/* n ints of from (NULL, or each `fill` where from is NULL); at least one
 * so that a zero-length array is not NULL. */
static int *pd_ints(int n, const int *from, int fill)
{
    int *a = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (a == NULL)
        return NULL;
    for (int i = 0; i < n; i++)
        a[i] = from != NULL ? from[i] : fill;
    return a;
}

int pd_graph_degree(const int *index, int node, int *first)
{
    *first = node > 0 ? index[node - 1] : 0;
    return index[node] - *first;
}

struct pd_graph *pd_dist_graph_new(int indegree, const int *sources,
                                   const int *source_weights, int outdegree,
                                   const int *destinations,
                                   const int *dest_weights)
{
    struct pd_graph *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    g->distributed = true;
    g->indegree = indegree;
    g->outdegree = outdegree;
    g->weighted = source_weights != NULL || dest_weights != NULL;
    g->sources = pd_ints(indegree, sources, 0);
    g->destinations = pd_ints(outdegree, destinations, 0);
    g->source_weights = pd_ints(indegree, source_weights, 1);
    g->dest_weights = pd_ints(outdegree, dest_weights, 1);
    g->index = pd_ints(0, NULL, 0);
    g->edges = pd_ints(0, NULL, 0);
    if (g->sources == NULL || g->destinations == NULL ||
        g->source_weights == NULL || g->dest_weights == NULL ||
        g->index == NULL || g->edges == NULL) {
        pd_graph_free(g);
        return NULL;
    }
    return g;
}

struct pd_graph *pd_graph_new(int nnodes, const int *index, const int *edges,
                              int rank)
{
    int first = 0, degree = 0;
    if (rank < nnodes)
        degree = pd_graph_degree(index, rank, &first);
    /* A graph's neighbours are both where a rank sends and where it
     * receives from. */
    struct pd_graph *g = pd_dist_graph_new(degree, edges + first, NULL, degree,
                                           edges + first, NULL);
    if (g == NULL)
        return NULL;
    g->distributed = false;
    g->nnodes = nnodes;
    g->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    free(g->index);
    free(g->edges);
    g->index = pd_ints(nnodes, index, 0);
    g->edges = pd_ints(g->nedges, edges, 0);
    if (g->index == NULL || g->edges == NULL) {
        pd_graph_free(g);
        return NULL;
    }
    return g;
}

struct pd_graph *pd_graph_copy(const struct pd_graph *graph)
{
    struct pd_graph *g = pd_dist_graph_new(
        graph->indegree, graph->sources,
        graph->weighted ? graph->source_weights : NULL, graph->outdegree,
        graph->destinations, graph->weighted ? graph->dest_weights : NULL);
    if (g == NULL)
        return NULL;
    g->distributed = graph->distributed;
    g->weighted = graph->weighted;
    g->nnodes = graph->nnodes;
    g->nedges = graph->nedges;
    free(g->index);
    free(g->edges);
    g->index = pd_ints(graph->nnodes, graph->index, 0);
    g->edges = pd_ints(graph->nedges, graph->edges, 0);
    if (g->index == NULL || g->edges == NULL) {
        pd_graph_free(g);
        return NULL;
    }
    return g;
}

void pd_graph_free(struct pd_graph *graph)
{
    if (graph == NULL)
        return;
    free(graph->index);
    free(graph->edges);
    free(graph->sources);
    free(graph->destinations);
    free(graph->source_weights);
    free(graph->dest_weights);
    free(graph);
}

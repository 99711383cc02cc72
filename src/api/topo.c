/* Cartesian topologies: MPI_Dims_create, MPI_Cart_create and the calls
 * that read a Cartesian communicator (coords, rank, shift, sub, get,
 * map), MPI_Topo_test. The grid's arithmetic is core/cart.c's; a new
 * Cartesian communicator is an MPI_Comm_split of its parent (ranks keep
 * their order: pdmpi does not reorder). */
#include <stdlib.h>

#include "api/api.h"
#include "core/cart.h"
#include "core/graph.h"
#include "service/comm_create.h"

#pragma weak MPI_Dims_create = PMPI_Dims_create
#pragma weak MPI_Cart_create = PMPI_Cart_create
#pragma weak MPI_Cart_coords = PMPI_Cart_coords
#pragma weak MPI_Cart_rank = PMPI_Cart_rank
#pragma weak MPI_Cart_shift = PMPI_Cart_shift
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
#pragma weak MPI_Cart_get = PMPI_Cart_get
#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
#pragma weak MPI_Cart_map = PMPI_Cart_map
#pragma weak MPI_Topo_test = PMPI_Topo_test

/* comm is a usable communicator with a Cartesian topology. */
static int pd_check_cart(MPI_Comm comm, const char *call)
{
    PD_CHECK(pd_check_comm(comm, call));
    if (comm->state->cart == NULL)
        return pd_raise(comm, call, MPI_ERR_TOPOLOGY, "%s has no Cartesian "
                        "topology (made by MPI_Cart_create or MPI_Cart_sub)",
                        pd_comm_label(comm));
    return MPI_SUCCESS;
}

/* ndims dimensions of dims (each > 0) making a grid of at most size. */
static int pd_check_grid(MPI_Comm comm, const char *call, int ndims,
                         const int *dims, const int *periods, long *cells)
{
    /* Error classes as Open MPI's: a grid that is too large or has a
     * negative number of dimensions is MPI_ERR_ARG. */
    if (ndims < 0)
        return pd_raise(comm, call, MPI_ERR_ARG, "ndims is %d (negative)",
                        ndims);
    if (ndims > 0 && (dims == NULL || periods == NULL))
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        dims == NULL ? "dims" : "periods");
    for (int d = 0; d < ndims; d++)
        if (dims[d] <= 0)
            return pd_raise(comm, call, MPI_ERR_DIMS, "dims[%d] is %d (a "
                            "dimension needs at least one rank)", d, dims[d]);
    *cells = pd_cart_size(ndims, dims);
    if (*cells < 0 || *cells > comm->size)
        return pd_raise(comm, call, MPI_ERR_ARG, "the grid has more ranks "
                        "than the communicator's %d", comm->size);
    return MPI_SUCCESS;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char call[] = "MPI_Dims_create";
    PD_CHECK(pd_check_active(call));
    if (nnodes <= 0 || ndims < 0)
        return pd_raise(NULL, call, MPI_ERR_DIMS, "nnodes %d and ndims %d "
                        "must be positive and non-negative", nnodes, ndims);
    if (ndims > 0 && dims == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "dims is NULL");
    if (pd_dims_create(nnodes, ndims, dims) != 0)
        return pd_raise(NULL, call, MPI_ERR_DIMS, "the set entries of dims "
                        "(none negative) must divide nnodes %d", nnodes);
    return MPI_SUCCESS;
}

int pd_topo_comm(const char *call, MPI_Comm comm, int color, int key,
                 struct pd_cart *cart, struct pd_graph *graph, MPI_Comm *out)
{
    struct pd_fail fail;
    if (cart == NULL && graph == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    if (pd_comm_split(comm, color, key, out, &fail) != MPI_SUCCESS) {
        pd_cart_free(cart);
        pd_graph_free(graph);
        return pd_raise_fail(comm, call, &fail);
    }
    if (*out == MPI_COMM_NULL) {
        pd_cart_free(cart);
        pd_graph_free(graph);
    } else {
        (*out)->state->cart = cart;
        (*out)->state->graph = graph;
    }
    return MPI_SUCCESS;
}

/* The grid's ranks of comm (the first cells, in order) as a new
 * communicator carrying cart; the others get MPI_COMM_NULL. */
static int pd_cart_comm(const char *call, MPI_Comm comm, int color, int key,
                        struct pd_cart *cart, MPI_Comm *out)
{
    if (cart == NULL)
        return pd_raise(comm, call, MPI_ERR_NO_MEM, "out of memory");
    return pd_topo_comm(call, comm, color, key, cart, NULL, out);
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                     const int periods[], int reorder, MPI_Comm *comm_cart)
{
    static const char call[] = "MPI_Cart_create";
    (void)reorder;
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm_old, call));
    PD_CHECK(pd_check_intra(comm_old, call, "comm_old"));
    if (comm_cart == NULL)
        return pd_raise(comm_old, call, MPI_ERR_ARG, "comm_cart is NULL");
    long cells;
    PD_CHECK(pd_check_grid(comm_old, call, ndims, dims, periods, &cells));
    int rank = comm_old->rank;
    return pd_cart_comm(call, comm_old, rank < cells ? 0 : MPI_UNDEFINED,
                        rank, pd_cart_new(ndims, dims, periods), comm_cart);
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[],
                  const int periods[], int *newrank)
{
    static const char call[] = "MPI_Cart_map";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (newrank == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "newrank is NULL");
    long cells;
    PD_CHECK(pd_check_grid(comm, call, ndims, dims, periods, &cells));
    *newrank = comm->rank < cells ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Cart_sub";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_cart(comm, call));
    const struct pd_cart *cart = comm->state->cart;
    if ((cart->ndims > 0 && remain_dims == NULL) || newcomm == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        newcomm == NULL ? "newcomm" : "remain_dims");
    int n = cart->ndims;
    int coords[n > 0 ? n : 1], dims[n > 0 ? n : 1], periods[n > 0 ? n : 1];
    pd_cart_coords(cart, comm->rank, coords);
    /* Ranks that agree on the dropped coordinates share a sub-grid; in
     * it, row-major order over the kept ones is the parent's order. */
    int color = 0, kept = 0;
    for (int d = 0; d < n; d++) {
        if (remain_dims[d]) {
            dims[kept] = cart->dims[d];
            periods[kept++] = cart->periods[d];
        } else {
            color = color * cart->dims[d] + coords[d];
        }
    }
    return pd_cart_comm(call, comm, color, comm->rank,
                        pd_cart_new(kept, dims, periods), newcomm);
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char call[] = "MPI_Cart_coords";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_cart(comm, call));
    const struct pd_cart *cart = comm->state->cart;
    if (rank < 0 || rank >= comm->size)
        return pd_raise(comm, call, MPI_ERR_RANK, "rank %d is not a rank of "
                        "the grid (size %d)", rank, comm->size);
    if (maxdims < cart->ndims || (cart->ndims > 0 && coords == NULL))
        return pd_raise(comm, call, MPI_ERR_ARG, "coords must hold the "
                        "grid's %d dimensions (maxdims %d%s)", cart->ndims,
                        maxdims, coords == NULL ? ", coords NULL" : "");
    pd_cart_coords(cart, rank, coords);
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char call[] = "MPI_Cart_rank";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_cart(comm, call));
    const struct pd_cart *cart = comm->state->cart;
    if ((cart->ndims > 0 && coords == NULL) || rank == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        rank == NULL ? "rank" : "coords");
    int r = pd_cart_rank(cart, coords);
    if (r < 0)
        return pd_raise(comm, call, MPI_ERR_ARG, "the coordinates lie "
                        "outside a non-periodic dimension of the grid");
    *rank = r;
    return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
                    int *rank_dest)
{
    static const char call[] = "MPI_Cart_shift";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_cart(comm, call));
    const struct pd_cart *cart = comm->state->cart;
    if (direction < 0 || direction >= cart->ndims)
        return pd_raise(comm, call, MPI_ERR_ARG, "direction %d is not a "
                        "dimension of the grid (0..%d)", direction,
                        cart->ndims - 1);
    if (rank_source == NULL || rank_dest == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        rank_source == NULL ? "rank_source" : "rank_dest");
    pd_cart_shift(cart, comm->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                  int coords[])
{
    static const char call[] = "MPI_Cart_get";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_cart(comm, call));
    const struct pd_cart *cart = comm->state->cart;
    if (maxdims < cart->ndims)
        return pd_raise(comm, call, MPI_ERR_ARG, "maxdims %d is less than "
                        "the grid's %d dimensions", maxdims, cart->ndims);
    if (cart->ndims > 0 && (dims == NULL || periods == NULL || coords == NULL))
        return pd_raise(comm, call, MPI_ERR_ARG, "dims, periods or coords "
                        "is NULL");
    for (int d = 0; d < cart->ndims; d++) {
        dims[d] = cart->dims[d];
        periods[d] = cart->periods[d];
    }
    pd_cart_coords(cart, comm->rank, coords);
    return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char call[] = "MPI_Cartdim_get";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_cart(comm, call));
    if (ndims == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "ndims is NULL");
    *ndims = comm->state->cart->ndims;
    return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    static const char call[] = "MPI_Topo_test";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (status == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "status is NULL");
    const struct pd_graph *graph = comm->state->graph;
    *status = comm->state->cart != NULL ? MPI_CART
            : graph == NULL             ? MPI_UNDEFINED
            : graph->distributed        ? MPI_DIST_GRAPH
                                        : MPI_GRAPH;
    return MPI_SUCCESS;
}

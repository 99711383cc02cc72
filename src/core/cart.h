/*
 * Cartesian topologies: a communicator's ranks laid out row-major on a
 * grid of ndims dimensions, each periodic or not (MPI_Cart_create), and
 * the arithmetic on it -- coordinates, ranks, shifts, MPI_Dims_create's
 * balanced factoring. Kept on the communicator's state; copied by
 * MPI_Comm_dup.
 */
#ifndef PD_CORE_CART_H
#define PD_CORE_CART_H

#include <stdbool.h>

struct pd_cart {
    int ndims;
    int *dims;
    bool *periods;
};

/* A grid of dims[0..ndims) (periods alike); NULL when out of memory. */
struct pd_cart *pd_cart_new(int ndims, const int *dims, const int *periods);
struct pd_cart *pd_cart_copy(const struct pd_cart *cart);
void pd_cart_free(struct pd_cart *cart);
/* How many ranks the grid has; -1 past INT_MAX (or a dimension < 0). */
long pd_cart_size(int ndims, const int *dims);

void pd_cart_coords(const struct pd_cart *cart, int rank, int *coords);
/* The rank at coords (periodic dimensions wrap); -1 when a coordinate
 * of a non-periodic dimension lies outside it. */
int pd_cart_rank(const struct pd_cart *cart, const int *coords);
/* MPI_Cart_shift from rank: the ranks disp steps back and forth along
 * dimension dir, MPI_PROC_NULL past a non-periodic edge. */
void pd_cart_shift(const struct pd_cart *cart, int rank, int dir, int disp,
                   int *source, int *dest);

/* MPI_Dims_create: fill the zero entries of dims[0..ndims) so that the
 * product is nnodes, as balanced as possible, in non-increasing order;
 * -1 when the set entries do not divide nnodes (or one is negative). */
int pd_dims_create(int nnodes, int ndims, int *dims);

#endif

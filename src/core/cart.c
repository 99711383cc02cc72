#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/cart.h"

struct pd_cart *pd_cart_new(int ndims, const int *dims, const int *periods)
{
    struct pd_cart *cart = calloc(1, sizeof(*cart));
    if (cart == NULL)
        return NULL;
    cart->ndims = ndims;
    cart->dims = malloc((size_t)(ndims > 0 ? ndims : 1) * sizeof(int));
    cart->periods = malloc((size_t)(ndims > 0 ? ndims : 1) * sizeof(bool));
    if (cart->dims == NULL || cart->periods == NULL) {
        pd_cart_free(cart);
        return NULL;
    }
    for (int d = 0; d < ndims; d++) {
        cart->dims[d] = dims[d];
        cart->periods[d] = periods[d] != 0;
    }
    return cart;
}

struct pd_cart *pd_cart_copy(const struct pd_cart *cart)
{
    int *periods = malloc((size_t)(cart->ndims > 0 ? cart->ndims : 1) *
                          sizeof(int));
    if (periods == NULL)
        return NULL;
    for (int d = 0; d < cart->ndims; d++)
        periods[d] = cart->periods[d];
    struct pd_cart *copy = pd_cart_new(cart->ndims, cart->dims, periods);
    free(periods);
    return copy;
}

void pd_cart_free(struct pd_cart *cart)
{
    if (cart == NULL)
        return;
    free(cart->dims);
    free(cart->periods);
    free(cart);
}

long pd_cart_size(int ndims, const int *dims)
{
    long size = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return -1;
        size *= dims[d];
        if (size > INT_MAX)
            return -1;
    }
    return size;
}

void pd_cart_coords(const struct pd_cart *cart, int rank, int *coords)
{
    /* Row-major: the last dimension varies fastest. */
    for (int d = cart->ndims - 1; d >= 0; d--) {
        coords[d] = rank % cart->dims[d];
        rank /= cart->dims[d];
    }
}

int pd_cart_rank(const struct pd_cart *cart, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < cart->ndims; d++) {
        int c = coords[d], n = cart->dims[d];
        if (c < 0 || c >= n) {
            if (!cart->periods[d])
                return -1;
            c = (c % n + n) % n;
        }
        rank = rank * n + c;
    }
    return rank;
}

void pd_cart_shift(const struct pd_cart *cart, int rank, int dir, int disp,
                   int *source, int *dest)
{
    int coords[cart->ndims > 0 ? cart->ndims : 1];
    pd_cart_coords(cart, rank, coords);
    int mine = coords[dir];
    /* disp may be any int: step in long so it cannot overflow. */
    long n = cart->dims[dir];
    long to = (long)mine + disp, from = (long)mine - disp;
    bool periodic = cart->periods[dir];
    if (periodic || (to >= 0 && to < n)) {
        coords[dir] = (int)(((to % n) + n) % n);
        *dest = pd_cart_rank(cart, coords);
    } else {
        *dest = MPI_PROC_NULL;
    }
    if (periodic || (from >= 0 && from < n)) {
        coords[dir] = (int)(((from % n) + n) % n);
        *source = pd_cart_rank(cart, coords);
    } else {
        *source = MPI_PROC_NULL;
    }
}

static int pd_descending(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

int pd_dims_create(int nnodes, int ndims, int *dims)
{
    long fixed = 1;
    int free_dims = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return -1;
        if (dims[d] == 0)
            free_dims++;
        else
            fixed *= dims[d];
        if (fixed > INT_MAX)
            return -1;
    }
    if (fixed == 0 || nnodes % fixed != 0)
        return -1;
    int rest = (int)(nnodes / fixed);
    if (free_dims == 0)
        return rest == 1 ? 0 : -1;
    int share[free_dims];
    for (int i = 0; i < free_dims; i++)
        share[i] = 1;
    /* The prime factors, largest first, each to the smallest share so far:
     * the shares stay as close to each other as factoring allows. */
    int primes[32], nprimes = 0;
    for (int p = 2; (long)p * p <= rest; p++)
        while (rest % p == 0) {
            primes[nprimes++] = p;
            rest /= p;
        }
    if (rest > 1)
        primes[nprimes++] = rest;
    for (int i = nprimes - 1; i >= 0; i--) {
        int smallest = 0;
        for (int j = 1; j < free_dims; j++)
            if (share[j] < share[smallest])
                smallest = j;
        share[smallest] *= primes[i];
    }
    qsort(share, (size_t)free_dims, sizeof(int), pd_descending);
    for (int d = 0, i = 0; d < ndims; d++)
        if (dims[d] == 0)
            dims[d] = share[i++];
    return 0;
}

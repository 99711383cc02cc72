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

/*
 * The most balanced grid: k factors of n, largest first, as
 * pd_more_balanced orders them (least spread first). A greedy share of
 * the prime factors misses it (72 in two dimensions: 12 x 6, where 9 x 8
 * exists), so this is a search of the divisors, depth first, each
 * level's factor no larger than the one before, cut off where it cannot
 * beat the best so far.
 */
struct pd_grid_search {
    int k;
    const int *divs;            /* the divisors of the whole, ascending */
    int ndivs;
    int best_spread;            /* INT_MAX: none yet */
    int best[32];
    int try[32];
};

/* The largest x with x^e <= n (e >= 1). */
static int pd_iroot(int n, int e)
{
    if (e == 1)
        return n;
    int x = 1;          /* below 2^16 from here: n < 2^31 */
    for (int step = 1 << 15; step > 0; step >>= 1) {
        long c = x + step, p = 1;
        int i;
        for (i = 0; i < e && p <= n / c; i++)
            p *= c;
        if (i == e)
            x = (int)c;
    }
    return x;
}

/* Whether grid a (factors largest first) is more balanced than b: the
 * smaller spread, largest less smallest; where alike, the larger
 * smallest; then the same of the factors between, inward. */
static bool pd_more_balanced(const int *a, const int *b, int k)
{
    for (int lo = 0, hi = k - 1; lo < hi; lo++, hi--) {
        int sa = a[lo] - a[hi], sb = b[lo] - b[hi];
        if (sa != sb)
            return sa < sb;
        if (a[hi] != b[hi])
            return a[hi] > b[hi];
    }
    return false;
}

/* Factors idx.. of the trial, making n, none above cap. */
static void pd_grid_fill(struct pd_grid_search *s, int idx, int n, int cap)
{
    int left = s->k - idx;
    if (left == 1) {
        if (n > cap)
            return;
        s->try[idx] = n;
        if (s->best_spread == INT_MAX ||
            pd_more_balanced(s->try, s->best, s->k)) {
            s->best_spread = s->try[0] - n;
            memcpy(s->best, s->try, (size_t)s->k * sizeof(int));
        }
        return;
    }
    /* This factor, the largest of the rest, is at least the left-th
     * root of n; the smallest of the rest is then at most the
     * (left-1)-th root of n / f, so the spread is at least the first
     * factor less that, which only grows with f. */
    int low = pd_iroot(n, left);
    for (int i = 0; i < s->ndivs && s->divs[i] <= cap; i++) {
        int f = s->divs[i];
        if (f < low || n % f != 0)
            continue;
        int first = idx > 0 ? s->try[0] : f;
        if ((long)first - pd_iroot(n / f, left - 1) > s->best_spread)
            break;
        s->try[idx] = f;
        pd_grid_fill(s, idx + 1, n / f, f);
    }
}

/* The divisors of n ascending into divs (room for 2048: a number below
 * 2^31 has at most 1600); their count. */
static int pd_divisors(int n, int *divs)
{
    int lo = 0, hi = 0, high[1024];
    for (int d = 1; (long)d * d <= n; d++)
        if (n % d == 0) {
            divs[lo++] = d;
            if (d != n / d)
                high[hi++] = n / d;
        }
    while (hi > 0)
        divs[lo++] = high[--hi];
    return lo;
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
    /* No more than 31 factors above 1 make a number below 2^31: past
     * that many, the rest are 1. */
    int searched = free_dims < 31 ? free_dims : 31;
    int divs[2048];
    struct pd_grid_search search = { .k = searched, .divs = divs,
                                     .best_spread = INT_MAX };
    search.ndivs = pd_divisors(rest, divs);
    pd_grid_fill(&search, 0, rest, rest);
    for (int d = 0, i = 0; d < ndims; d++)
        if (dims[d] == 0) {
            dims[d] = i < searched ? search.best[i] : 1;
            i++;
        }
    return 0;
}

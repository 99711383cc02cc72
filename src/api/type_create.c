/* The datatype constructors: every derived type MPI defines, each one
 * block list handed to core/datatype.c, its arguments kept for
 * MPI_Type_get_contents. */
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mpi1.h"
#include "core/attr.h"

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
#pragma weak MPI_Type_vector = PMPI_Type_vector
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
#pragma weak MPI_Type_hvector = PMPI_Type_hvector
#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
#pragma weak MPI_Type_struct = PMPI_Type_struct
#pragma weak MPI_Type_indexed = PMPI_Type_indexed
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
#pragma weak MPI_Type_dup = PMPI_Type_dup
#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer

/* What every constructor checks first. */
static int pd_check_new(const char *call, int count, MPI_Datatype *newtype)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_count(NULL, call, count, "count"));
    if (newtype == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "newtype is NULL");
    return MPI_SUCCESS;
}

/* A type the constructor may build on: any valid one, committed or not. */
static int pd_check_old(const char *call, MPI_Datatype type, const char *what)
{
    return pd_check_type(NULL, call, type, what);
}

static int pd_check_array(const char *call, const void *array, int count,
                          const char *what)
{
    if (array == NULL && count > 0)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int pd_check_blocklens(const char *call, const int *lens, int count)
{
    PD_CHECK(pd_check_array(call, lens, count, "array_of_blocklengths"));
    for (int i = 0; i < count; i++)
        if (lens[i] < 0)
            return pd_raise(NULL, call, MPI_ERR_ARG,
                            "array_of_blocklengths[%d] is negative (%d)", i,
                            lens[i]);
    return MPI_SUCCESS;
}

/* Hand t (or why it is NULL) to the caller with its contents recorded. */
static int pd_type_made(const char *call, struct ompi_datatype_t *t,
                        int combiner, int ni, const int *ints, int na,
                        const MPI_Aint *aints, int nd,
                        MPI_Datatype const *types, MPI_Datatype *newtype)
{
    if (t == NULL && errno == EOVERFLOW)
        return pd_raise(NULL, call, MPI_ERR_ARG, "the new type's size or "
                        "bounds exceed what an MPI_Aint holds");
    if (t == NULL ||
        pd_type_set_contents(t, combiner, ni, ints, na, aints, nd,
                             (struct ompi_datatype_t *const *)types) != 0) {
        if (t != NULL)
            pd_type_release(t);
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    }
    *newtype = t;
    return MPI_SUCCESS;
}

/* A byte displacement of disp items of extent e, or false past MPI_Aint. */
static bool pd_items(long disp, ptrdiff_t e, ptrdiff_t *out)
{
    long r;
    if (__builtin_mul_overflow(disp, (long)e, &r))
        return false;
    *out = r;
    return true;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_contiguous";
    PD_CHECK(pd_check_new(call, count, newtype));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    struct pd_type_block b = { 0, (size_t)count, oldtype };
    errno = 0;
    return pd_type_made(call, pd_type_new_blocks(&b, 1, 1, 0, false),
                        MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1,
                        &oldtype, newtype);
}

static int pd_vector(const char *call, int count, int blocklength,
                     ptrdiff_t stride_bytes, MPI_Datatype oldtype,
                     MPI_Datatype *newtype, int combiner, const int *ints,
                     int ni, const MPI_Aint *aints, int na)
{
    struct pd_type_block b = { 0, (size_t)blocklength, oldtype };
    errno = 0;
    return pd_type_made(call,
                        pd_type_new_blocks(&b, 1, (size_t)count, stride_bytes,
                                           false),
                        combiner, ni, ints, na, aints, 1, &oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride,
                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_vector";
    PD_CHECK(pd_check_new(call, count, newtype));
    PD_CHECK(pd_check_count(NULL, call, blocklength, "blocklength"));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    ptrdiff_t bytes;
    if (!pd_items(stride, pd_type_extent(oldtype), &bytes))
        return pd_raise(NULL, call, MPI_ERR_ARG, "a stride of %d items of "
                        "%td bytes exceeds MPI_Aint", stride,
                        pd_type_extent(oldtype));
    int ints[3] = { count, blocklength, stride };
    return pd_vector(call, count, blocklength, bytes, oldtype, newtype,
                     MPI_COMBINER_VECTOR, ints, 3, NULL, 0);
}

static int pd_hvector(const char *call, int count, int blocklength,
                      MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    PD_CHECK(pd_check_new(call, count, newtype));
    PD_CHECK(pd_check_count(NULL, call, blocklength, "blocklength"));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    int ints[2] = { count, blocklength };
    return pd_vector(call, count, blocklength, (ptrdiff_t)stride, oldtype,
                     newtype, MPI_COMBINER_HVECTOR, ints, 2, &stride, 1);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return pd_hvector("MPI_Type_create_hvector", count, blocklength, stride,
                      oldtype, newtype);
}

/* MPI-1's names (api/mpi1.h) for the h- forms and struct: the same types,
 * described by the same combiners. */
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return pd_hvector("MPI_Type_hvector", count, blocklength, stride,
                      oldtype, newtype);
}

/* The indexed family: block i is lens[i] (or len) items at idispls[i]
 * items or adispls[i] bytes; types[i] or oldtype. */
struct pd_indexed {
    const char *call;
    int count;
    const int *lens;            /* NULL: len for every block */
    int len;
    const int *idispls;         /* NULL: adispls */
    const MPI_Aint *adispls;
    const MPI_Datatype *types;  /* a struct's; else oldtype for every
                                   block */
    MPI_Datatype oldtype;
    bool structured;            /* MPI_Type_create_struct: types, which
                                   may be NULL when count is 0 */
};

static int pd_indexed_type(const struct pd_indexed *x,
                           struct ompi_datatype_t **t)
{
    struct pd_type_block *b = calloc(x->count ? (size_t)x->count : 1,
                                     sizeof(*b));
    if (b == NULL)
        return pd_raise(NULL, x->call, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < x->count; i++) {
        MPI_Datatype type = x->structured ? x->types[i] : x->oldtype;
        b[i].type = type;
        b[i].blocklen = (size_t)(x->lens != NULL ? x->lens[i] : x->len);
        if (x->idispls == NULL)
            b[i].disp = (ptrdiff_t)x->adispls[i];
        else if (!pd_items(x->idispls[i], pd_type_extent(type), &b[i].disp)) {
            free(b);
            return pd_raise(NULL, x->call, MPI_ERR_ARG, "displacement %d "
                            "(%d items) exceeds MPI_Aint", i, x->idispls[i]);
        }
    }
    errno = 0;
    *t = pd_type_new_blocks(b, (size_t)x->count, 1, 0, x->structured);
    free(b);
    return MPI_SUCCESS;
}

static int pd_indexed(const struct pd_indexed *x, int combiner,
                      const int *ints, int ni, MPI_Datatype *newtype)
{
    const char *call = x->call;
    PD_CHECK(pd_check_new(call, x->count, newtype));
    if (x->lens != NULL || x->count == 0)
        PD_CHECK(pd_check_blocklens(call, x->lens, x->count));
    else
        PD_CHECK(pd_check_count(NULL, call, x->len, "blocklength"));
    PD_CHECK(pd_check_array(call, x->idispls != NULL ? (const void *)x->idispls
                                                     : (const void *)x->adispls,
                            x->count, "array_of_displacements"));
    if (x->structured) {
        PD_CHECK(pd_check_array(call, x->types, x->count, "array_of_types"));
        for (int i = 0; i < x->count; i++)
            PD_CHECK(pd_check_old(call, x->types[i], "array_of_types[i]"));
    } else {
        PD_CHECK(pd_check_old(call, x->oldtype, "oldtype"));
    }
    struct ompi_datatype_t *t = NULL;
    PD_CHECK(pd_indexed_type(x, &t));
    int na = x->idispls == NULL ? x->count : 0;
    return pd_type_made(call, t, combiner, ni, ints, na, x->adispls,
                        x->structured ? x->count : 1,
                        x->structured ? x->types : &x->oldtype, newtype);
}

/* ints[] of the indexed constructors: count, then the arrays named. */
static int *pd_ints(int count, const int *a, int na, const int *b, int nb,
                    int *n)
{
    *n = 1 + na + nb;
    int *ints = malloc((size_t)*n * sizeof(int));
    if (ints == NULL)
        return NULL;
    ints[0] = count;
    if (na > 0)
        memcpy(ints + 1, a, (size_t)na * sizeof(int));
    if (nb > 0)
        memcpy(ints + 1 + na, b, (size_t)nb * sizeof(int));
    return ints;
}

static int pd_indexed_with_ints(const struct pd_indexed *x, int combiner,
                                const int *a, int na, const int *b, int nb,
                                MPI_Datatype *newtype)
{
    if (x->count < 0 || (a == NULL && na > 0) || (b == NULL && nb > 0))
        return pd_indexed(x, combiner, NULL, 0, newtype);  /* reports it */
    int n;
    int *ints = pd_ints(x->count, a, na, b, nb, &n);
    if (ints == NULL)
        return pd_raise(NULL, x->call, MPI_ERR_NO_MEM, "out of memory");
    int rc = pd_indexed(x, combiner, ints, n, newtype);
    free(ints);
    return rc;
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    struct pd_indexed x = { "MPI_Type_indexed", count, array_of_blocklengths,
                            0, array_of_displacements, NULL, NULL, oldtype,
                            false };
    return pd_indexed_with_ints(&x, MPI_COMBINER_INDEXED,
                                array_of_blocklengths, count,
                                array_of_displacements, count, newtype);
}

/* Blocks of items of oldtype (types[i] for a struct: oldtype NULL) at
 * byte displacements, under call's name. */
static int pd_hindexed(const char *call, int count, const int lens[],
                       const MPI_Aint displs[], const MPI_Datatype types[],
                       MPI_Datatype oldtype, int combiner,
                       MPI_Datatype *newtype)
{
    struct pd_indexed x = { call, count, lens, 0, NULL, displs, types,
                            oldtype, combiner == MPI_COMBINER_STRUCT };
    return pd_indexed_with_ints(&x, combiner, lens, count, NULL, 0, newtype);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return pd_hindexed("MPI_Type_create_hindexed", count,
                       array_of_blocklengths, array_of_displacements, NULL,
                       oldtype, MPI_COMBINER_HINDEXED, newtype);
}

int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                       MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return pd_hindexed("MPI_Type_hindexed", count, array_of_blocklengths,
                       array_of_displacements, NULL, oldtype,
                       MPI_COMBINER_HINDEXED, newtype);
}

int PMPI_Type_create_indexed_block(int count, int blocklength,
                                   const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct pd_indexed x = { "MPI_Type_create_indexed_block", count, NULL,
                            blocklength, array_of_displacements, NULL, NULL,
                            oldtype, false };
    return pd_indexed_with_ints(&x, MPI_COMBINER_INDEXED_BLOCK, &blocklength,
                                1, array_of_displacements, count, newtype);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    struct pd_indexed x = { "MPI_Type_create_hindexed_block", count, NULL,
                            blocklength, NULL, array_of_displacements, NULL,
                            oldtype, false };
    return pd_indexed_with_ints(&x, MPI_COMBINER_HINDEXED_BLOCK, &blocklength,
                                1, NULL, 0, newtype);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[],
                            MPI_Datatype *newtype)
{
    return pd_hindexed("MPI_Type_create_struct", count, array_of_blocklengths,
                       array_of_displacements, array_of_types, NULL,
                       MPI_COMBINER_STRUCT, newtype);
}

int PMPI_Type_struct(int count, int array_of_blocklengths[],
                     MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return pd_hindexed("MPI_Type_struct", count, array_of_blocklengths,
                       array_of_displacements, array_of_types, NULL,
                       MPI_COMBINER_STRUCT, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb,
                             MPI_Aint extent, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_resized";
    PD_CHECK(pd_check_new(call, 0, newtype));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    MPI_Aint aints[2] = { lb, extent };
    errno = 0;
    return pd_type_made(call, pd_type_new_resized(oldtype, lb, extent),
                        MPI_COMBINER_RESIZED, 0, NULL, 2, aints, 1, &oldtype,
                        newtype);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_dup";
    PD_CHECK(pd_check_new(call, 0, newtype));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    errno = 0;
    PD_CHECK(pd_type_made(call, pd_type_new_dup(oldtype), MPI_COMBINER_DUP, 0,
                          NULL, 0, NULL, 1, &oldtype, newtype));
    /* The duplicate gets what the original's attributes' copy callbacks
     * give it. */
    struct pd_fail fail;
    if (pd_attr_copy_all(PD_ATTR_TYPE, oldtype, *newtype, &fail) != 0) {
        pd_attr_delete_all(PD_ATTR_TYPE, *newtype);
        pd_type_release(*newtype);
        *newtype = MPI_DATATYPE_NULL;
        return pd_raise_fail(NULL, call, &fail);
    }
    return MPI_SUCCESS;
}

/*
 * Subarrays and distributed arrays: per dimension, the runs of indices
 * this process holds; the type is those runs nested from the fastest
 * dimension out, resized to the whole array.
 */
struct pd_run {
    long start, len;
};

/* Nest one dimension's runs around inner (items of stride bytes). */
static struct ompi_datatype_t *pd_nest(const struct pd_run *runs, int n,
                                       ptrdiff_t stride,
                                       const struct ompi_datatype_t *inner)
{
    struct pd_type_block *b = calloc(n ? (size_t)n : 1, sizeof(*b));
    if (b == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        b[i] = (struct pd_type_block){ (ptrdiff_t)runs[i].start * stride,
                                       (size_t)runs[i].len, inner };
    /* Each run is len items of inner abutting: stride is inner's extent. */
    struct ompi_datatype_t *t = pd_type_new_blocks(b, (size_t)n, 1, 0, false);
    free(b);
    return t;
}

/* The array type of ndims dimensions of gsizes items of oldtype (order:
 * MPI_ORDER_C or _FORTRAN), holding runs[d][0..nruns[d]) of dimension d. */
static struct ompi_datatype_t *pd_array_type(int ndims, const int *gsizes,
                                             int order,
                                             struct pd_run *const *runs,
                                             const int *nruns,
                                             MPI_Datatype oldtype)
{
    struct ompi_datatype_t *t = oldtype;
    ptrdiff_t stride = (ptrdiff_t)pd_type_extent(oldtype);
    for (int k = 0; k < ndims; k++) {
        /* Fastest first: the last dimension in C order, the first in
         * Fortran order. */
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        /* inner's items abut as a whole dimension: resize to it. */
        struct ompi_datatype_t *item =
            k == 0 ? t : pd_type_new_resized(t, 0, stride);
        if (k > 0)
            pd_type_release(t);
        if (item == NULL)
            return NULL;
        struct ompi_datatype_t *next = pd_nest(runs[d], nruns[d],
                                               stride, item);
        if (k > 0)
            pd_type_release(item);
        if (next == NULL)
            return NULL;
        t = next;
        long s;
        if (__builtin_mul_overflow((long)stride, (long)gsizes[d], &s)) {
            pd_type_release(t);
            errno = EOVERFLOW;
            return NULL;
        }
        stride = s;
    }
    /* The whole array's extent, from its start. */
    struct ompi_datatype_t *whole = pd_type_new_resized(t, 0, stride);
    if (t != oldtype)
        pd_type_release(t);
    return whole;
}

static int pd_check_order(const char *call, int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return pd_raise(NULL, call, MPI_ERR_ARG, "order is %d, neither "
                        "MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    return MPI_SUCCESS;
}

/* Runs storage for ndims dimensions of up to gsizes[d] runs each. */
static struct pd_run **pd_runs_new(int ndims, const int *most)
{
    struct pd_run **runs = calloc((size_t)ndims + 1, sizeof(*runs));
    if (runs == NULL)
        return NULL;
    for (int d = 0; d < ndims; d++)
        if ((runs[d] = calloc((size_t)(most[d] > 0 ? most[d] : 1),
                              sizeof(**runs))) == NULL) {
            for (int e = 0; e < d; e++)
                free(runs[e]);
            free(runs);
            return NULL;
        }
    return runs;
}

static void pd_runs_free(struct pd_run **runs, int ndims)
{
    for (int d = 0; d < ndims; d++)
        free(runs[d]);
    free(runs);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[],
                              const int array_of_starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_subarray";
    PD_CHECK(pd_check_new(call, ndims, newtype));
    if (ndims < 1)
        return pd_raise(NULL, call, MPI_ERR_DIMS, "ndims is %d", ndims);
    PD_CHECK(pd_check_array(call, array_of_sizes, ndims, "array_of_sizes"));
    PD_CHECK(pd_check_array(call, array_of_subsizes, ndims,
                            "array_of_subsizes"));
    PD_CHECK(pd_check_array(call, array_of_starts, ndims, "array_of_starts"));
    PD_CHECK(pd_check_order(call, order));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    for (int d = 0; d < ndims; d++) {
        int size = array_of_sizes[d], sub = array_of_subsizes[d],
            start = array_of_starts[d];
        if (size < 1 || sub < 1 || sub > size || start < 0 ||
            start > size - sub)
            return pd_raise(NULL, call, MPI_ERR_ARG, "dimension %d: size %d, "
                            "subsize %d, start %d do not describe a subarray "
                            "(need 1 <= subsize <= size, 0 <= start <= "
                            "size - subsize)", d, size, sub, start);
    }
    int one[ndims];
    struct pd_run run_of[ndims];
    struct pd_run *runs[ndims];
    for (int d = 0; d < ndims; d++) {
        one[d] = 1;
        run_of[d] = (struct pd_run){ array_of_starts[d], array_of_subsizes[d] };
        runs[d] = &run_of[d];
    }
    errno = 0;
    struct ompi_datatype_t *t =
        pd_array_type(ndims, array_of_sizes, order, runs, one, oldtype);
    int n;
    int *ints = pd_ints(ndims, array_of_sizes, ndims, array_of_subsizes,
                        ndims, &n);
    int *all = ints == NULL ? NULL : realloc(ints, (size_t)(n + ndims + 1) *
                                                       sizeof(int));
    if (all == NULL) {
        free(ints);
        if (t != NULL)
            pd_type_release(t);
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    }
    memcpy(all + n, array_of_starts, (size_t)ndims * sizeof(int));
    all[n + ndims] = order;
    int rc = pd_type_made(call, t, MPI_COMBINER_SUBARRAY, n + ndims + 1, all,
                          0, NULL, 1, &oldtype, newtype);
    free(all);
    return rc;
}

/* Dimension d of a darray: the runs of indices process coordinate c of
 * p holds, of g items distributed as distrib with argument darg. */
static int pd_darray_runs(const char *call, int d, int g, int distrib,
                          int darg, int p, int c, struct pd_run *runs,
                          int *n)
{
    *n = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if (p != 1)
            return pd_raise(NULL, call, MPI_ERR_ARG, "dimension %d is not "
                            "distributed but array_of_psizes[%d] is %d", d,
                            d, p);
        runs[(*n)++] = (struct pd_run){ 0, g };
        return MPI_SUCCESS;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        if (b < 1 || b * p < g)
            return pd_raise(NULL, call, MPI_ERR_ARG, "dimension %d: blocks "
                            "of %ld on %d processes cannot hold %d items", d,
                            b, p, g);
        long start = b * c, len = g - start < b ? g - start : b;
        if (len > 0)
            runs[(*n)++] = (struct pd_run){ start, len };
        return MPI_SUCCESS;
    }
    if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (b < 1)
            return pd_raise(NULL, call, MPI_ERR_ARG, "dimension %d: a cyclic "
                            "block of %ld", d, b);
        for (long j = b * c; j < g; j += b * p)
            runs[(*n)++] = (struct pd_run){ j, g - j < b ? g - j : b };
        return MPI_SUCCESS;
    }
    return pd_raise(NULL, call, MPI_ERR_ARG, "array_of_distribs[%d] is %d, "
                    "not an MPI_DISTRIBUTE_ constant", d, distrib);
}

int PMPI_Type_create_darray(int size, int rank, int ndims,
                            const int array_of_gsizes[],
                            const int array_of_distribs[],
                            const int array_of_dargs[],
                            const int array_of_psizes[], int order,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_create_darray";
    PD_CHECK(pd_check_new(call, ndims, newtype));
    if (ndims < 1)
        return pd_raise(NULL, call, MPI_ERR_DIMS, "ndims is %d", ndims);
    PD_CHECK(pd_check_array(call, array_of_gsizes, ndims, "array_of_gsizes"));
    PD_CHECK(pd_check_array(call, array_of_distribs, ndims,
                            "array_of_distribs"));
    PD_CHECK(pd_check_array(call, array_of_dargs, ndims, "array_of_dargs"));
    PD_CHECK(pd_check_array(call, array_of_psizes, ndims, "array_of_psizes"));
    PD_CHECK(pd_check_order(call, order));
    PD_CHECK(pd_check_old(call, oldtype, "oldtype"));
    long procs = 1;
    for (int d = 0; d < ndims; d++) {
        if (array_of_gsizes[d] < 1 || array_of_psizes[d] < 1)
            return pd_raise(NULL, call, MPI_ERR_ARG, "dimension %d: gsize %d, "
                            "psize %d (both must be positive)", d,
                            array_of_gsizes[d], array_of_psizes[d]);
        procs *= array_of_psizes[d];
        if (procs > INT_MAX)
            break;
    }
    if (procs != size)
        return pd_raise(NULL, call, MPI_ERR_ARG, "the process grid has %ld "
                        "processes, size is %d", procs, size);
    if (rank < 0 || rank >= size)
        return pd_raise(NULL, call, MPI_ERR_RANK, "rank %d is not in [0, %d)",
                        rank, size);
    struct pd_run **runs = pd_runs_new(ndims, array_of_gsizes);
    int nruns[ndims];
    if (runs == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    /* The process grid is row-major whatever the array's order. */
    int rest = rank;
    for (int d = ndims - 1; d >= 0; d--) {
        int c = rest % array_of_psizes[d];
        rest /= array_of_psizes[d];
        int rc = pd_darray_runs(call, d, array_of_gsizes[d],
                                array_of_distribs[d], array_of_dargs[d],
                                array_of_psizes[d], c, runs[d], &nruns[d]);
        if (rc != MPI_SUCCESS) {
            pd_runs_free(runs, ndims);
            return rc;
        }
    }
    errno = 0;
    struct ompi_datatype_t *t =
        pd_array_type(ndims, array_of_gsizes, order, runs, nruns, oldtype);
    pd_runs_free(runs, ndims);
    int n = 3 + 4 * ndims + 1;
    int *ints = malloc((size_t)n * sizeof(int));
    if (ints == NULL) {
        if (t != NULL)
            pd_type_release(t);
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    const int *arrays[4] = { array_of_gsizes, array_of_distribs,
                             array_of_dargs, array_of_psizes };
    for (int a = 0; a < 4; a++)
        memcpy(ints + 3 + a * ndims, arrays[a], (size_t)ndims * sizeof(int));
    ints[n - 1] = order;
    int rc = pd_type_made(call, t, MPI_COMBINER_DARRAY, n, ints, 0, NULL, 1,
                          &oldtype, newtype);
    free(ints);
    return rc;
}

/*
 * The Fortran 90 parameterized types: the smallest predefined type with
 * at least precision p and exponent range r (MPI_UNDEFINED: any), as a
 * type whose envelope names the F90 combiner and (p, r). The standard
 * makes the result predefined: the program never frees it, so each
 * (combiner, p, r) is made once and kept until MPI_Finalize.
 */
struct pd_f90_type {
    int combiner, p, r;
    MPI_Datatype type;
    struct pd_f90_type *next;
};
static struct pd_f90_type *pd_f90_types;
static pthread_mutex_t pd_f90_lock = PTHREAD_MUTEX_INITIALIZER;

static int pd_f90(const char *call, int combiner, int p, int r,
                  MPI_Datatype t, MPI_Datatype *newtype)
{
    PD_CHECK(pd_check_new(call, 0, newtype));
    if (t == MPI_DATATYPE_NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "no predefined type has "
                        "precision %d and range %d", p, r);
    pthread_mutex_lock(&pd_f90_lock);
    for (struct pd_f90_type *f = pd_f90_types; f != NULL; f = f->next)
        if (f->combiner == combiner && f->p == p && f->r == r) {
            *newtype = f->type;
            pthread_mutex_unlock(&pd_f90_lock);
            return MPI_SUCCESS;
        }
    struct pd_f90_type *f = calloc(1, sizeof(*f));
    int ints[2] = { p, r };
    bool integer = combiner == MPI_COMBINER_F90_INTEGER;
    errno = 0;
    int rc = f == NULL ? pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory")
           : pd_type_made(call, pd_type_new_dup(t), combiner,
                          integer ? 1 : 2, integer ? &ints[1] : ints, 0,
                          NULL, 0, NULL, &f->type);
    if (rc == MPI_SUCCESS) {
        f->type->permanent = true;
        f->combiner = combiner;
        f->p = p;
        f->r = r;
        f->next = pd_f90_types;
        pd_f90_types = f;
        *newtype = f->type;
    } else {
        free(f);
    }
    pthread_mutex_unlock(&pd_f90_lock);
    return rc;
}

void pd_f90_types_free_all(void)
{
    pthread_mutex_lock(&pd_f90_lock);
    while (pd_f90_types != NULL) {
        struct pd_f90_type *next = pd_f90_types->next;
        pd_attr_delete_all(PD_ATTR_TYPE, pd_f90_types->type);
        pd_type_release(pd_f90_types->type);
        free(pd_f90_types);
        pd_f90_types = next;
    }
    pthread_mutex_unlock(&pd_f90_lock);
}

/* Which of three sizes holds precision p and range r. */
static int pd_f90_size(int p, int r)
{
    bool any_p = p == MPI_UNDEFINED, any_r = r == MPI_UNDEFINED;
    if ((any_p || p <= 6) && (any_r || r <= 37))
        return 4;
    if ((any_p || p <= 15) && (any_r || r <= 307))
        return 8;
    if ((any_p || p <= 33) && (any_r || r <= 4931))
        return 16;
    return 0;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    int size = pd_f90_size(p, r);
    return pd_f90("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r,
                  size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8
                  : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL, newtype);
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    int size = pd_f90_size(p, r);
    return pd_f90("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p,
                  r, size == 4 ? MPI_COMPLEX8 : size == 8 ? MPI_COMPLEX16
                  : size == 16 ? MPI_COMPLEX32 : MPI_DATATYPE_NULL, newtype);
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    MPI_Datatype t = r == MPI_UNDEFINED || r <= 2 ? MPI_INTEGER1
                   : r <= 4 ? MPI_INTEGER2 : r <= 9 ? MPI_INTEGER4
                   : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    return pd_f90("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER,
                  MPI_UNDEFINED, r, t, newtype);
}

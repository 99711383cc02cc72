/* Reduction operations: identities, validity per datatype, kernels. */
#ifndef PD_CORE_OP_H
#define PD_CORE_OP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/datatype.h"

enum pd_op_id {
    PD_OP_NULL = 0,
    PD_OP_MAX, PD_OP_MIN, PD_OP_SUM, PD_OP_PROD,
    PD_OP_LAND, PD_OP_BAND, PD_OP_LOR, PD_OP_BOR, PD_OP_LXOR, PD_OP_BXOR,
    PD_OP_MAXLOC, PD_OP_MINLOC, PD_OP_REPLACE, PD_OP_NO_OP,
    PD_OP_COUNT,
};

/*
 * out[i] = a[i] (op) b[i] for n elements; out may alias a or b.
 * Kernels are plain loops over typed arrays so the compiler vectorizes
 * them; the order of operands is fixed so every rank that reduces the
 * same inputs in the same order gets the same bits.
 */
typedef void (*pd_reduce_fn)(void *out, const void *a, const void *b, size_t n);

struct ompi_op_t;

bool pd_op_is_valid(const struct ompi_op_t *op);
const char *pd_op_name(const struct ompi_op_t *op);

/* The kernel for (op, type), or NULL when the MPI standard does not
 * define op on that type (the caller reports MPI_ERR_OP). */
pd_reduce_fn pd_op_kernel(const struct ompi_op_t *op,
                          const struct ompi_datatype_t *type);

#endif

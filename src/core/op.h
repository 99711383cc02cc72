/* Reduction operations: identities, validity per datatype, kernels. */
#ifndef PD_CORE_OP_H
#define PD_CORE_OP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/elem.h"
#include "core/datatype.h"

struct ompi_op_t;
struct ompi_datatype_t;

/* How to reduce items of one datatype with one op: the kernel works on
 * elems_per_item elements of elem_size bytes per datatype item. */
struct pd_reduction {
    pd_reduce_fn fn;
    const void *ctx;                /* kernel state: this struct, for user ops */
    bool commutative;
    bool average;                   /* MPIX_OP_AVG: divide the sum by size */
    enum pd_elem_kind elem_kind;    /* predefined ops: the kernel's element */
    size_t elem_size;
    size_t elems_per_item;
    void (*user_fn)(void *, void *, int *, struct ompi_datatype_t **);
    struct ompi_datatype_t *user_type;
};

bool pd_op_is_valid(const struct ompi_op_t *op);
bool pd_op_is_predefined(const struct ompi_op_t *op);
/* A reference to a user op, for a call that runs it after the caller may
 * have freed it (a nonblocking reduction); predefined ops are not
 * counted. NULL is ignored. */
void pd_op_retain(struct ompi_op_t *op);
void pd_op_release(struct ompi_op_t *op);
const char *pd_op_name(const struct ompi_op_t *op);

/* Fill *r for (op, type). False when the MPI standard does not define op
 * on that type (the caller reports MPI_ERR_OP). r must stay where it is
 * while the kernel runs: user ops point ctx at it. */
bool pd_op_reduction(const struct ompi_op_t *op, struct ompi_datatype_t *type,
                     struct pd_reduction *r);

/* MPIX_OP_AVG's last step: divide n elements of kind by divisor. */
void pd_reduction_average(const struct pd_reduction *r, void *buf,
                          size_t items, int divisor);
/* The same for bytes of packed elements (whole elements: a piece of a
 * result that may cut items apart). */
void pd_reduction_average_bytes(const struct pd_reduction *r, void *buf,
                                size_t bytes, int divisor);

/* Reduce the kernel elements of one item count times: out = a (op) b. */
void pd_reduce_items(const struct pd_reduction *r, void *out, const void *a,
                     const void *b, size_t items);

#endif

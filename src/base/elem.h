/*
 * What the reduction kernels and every backend share about data: the
 * element kinds (one per machine representation), the predefined ops,
 * and the kernel signature. Datatypes and ops (core/) map onto these;
 * backends and device libraries map these onto their own enums.
 */
#ifndef PD_BASE_ELEM_H
#define PD_BASE_ELEM_H

#include <stddef.h>

/* How one element is laid out in memory: selects the reduction kernel. */
enum pd_elem_kind {
    PD_EK_NONE = 0,
    PD_EK_I8, PD_EK_I16, PD_EK_I32, PD_EK_I64,
    PD_EK_U8, PD_EK_U16, PD_EK_U32, PD_EK_U64,
    PD_EK_F32, PD_EK_F64, PD_EK_FLD,
    PD_EK_CF32, PD_EK_CF64, PD_EK_CFLD,
    PD_EK_BOOL,
    PD_EK_LOGICAL8, PD_EK_LOGICAL16, PD_EK_LOGICAL32, PD_EK_LOGICAL64,
    PD_EK_F16, PD_EK_BF16,
    PD_EK_COUNT,
};

enum pd_op_id {
    PD_OP_NULL = 0,
    PD_OP_MAX, PD_OP_MIN, PD_OP_SUM, PD_OP_PROD,
    PD_OP_LAND, PD_OP_BAND, PD_OP_LOR, PD_OP_BOR, PD_OP_LXOR, PD_OP_BXOR,
    PD_OP_MAXLOC, PD_OP_MINLOC, PD_OP_REPLACE, PD_OP_NO_OP,
    PD_OP_AVG,                      /* pdmpi's MPIX_OP_AVG */
    PD_OP_COUNT,
    PD_OP_USER = PD_OP_COUNT,       /* made by MPI_Op_create */
};

/*
 * out[i] = a[i] (op) b[i] for n elements; out may alias a or b. ctx is
 * the kernel's own state (NULL for predefined ops; the user function and
 * datatype for MPI_Op_create's ops).
 * Kernels are plain loops over typed arrays so the compiler vectorizes
 * them; the order of operands is fixed so every rank that reduces the
 * same inputs in the same order gets the same bits.
 */
typedef void (*pd_reduce_fn)(void *out, const void *a, const void *b, size_t n,
                             const void *ctx);

/* "MPI_SUM", "float32" ... for messages that compare two calls. */
const char *pd_op_id_name(unsigned op);
const char *pd_elem_kind_name(unsigned kind);

#endif

/* Kernel tables behind pd_op_kernel (core/op.c). */
#ifndef PD_CORE_REDUCE_KERNELS_H
#define PD_CORE_REDUCE_KERNELS_H

#include "core/datatype.h"
#include "core/op.h"

pd_reduce_fn pd_kernel_lookup(enum pd_elem_kind kind, enum pd_op_id op);
pd_reduce_fn pd_loc_kernel_lookup(enum pd_type_id type, enum pd_op_id op);

/* buf[i] /= divisor for n elements of kind (integers truncate toward
 * zero; fp16/bf16 divide in fp32 and round to nearest-even). */
void pd_divide_elements(void *buf, size_t n, enum pd_elem_kind kind,
                        int divisor);

#endif

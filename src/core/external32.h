/*
 * "external32" (MPI 13.5.2): every predefined element big-endian in the
 * size the standard's table gives it, which is not always its size here
 * (MPI_LONG is 4 bytes there, MPI_WCHAR 2, long double a 16-byte IEEE
 * quad). These convert a type's packed stream (core/typemap.h) to that
 * form and back, element by element in stream order.
 */
#ifndef PD_CORE_EXTERNAL32_H
#define PD_CORE_EXTERNAL32_H

#include <stddef.h>
#include <stdint.h>

struct ompi_datatype_t;

/* Why a conversion stopped: the type whose elements have no external32
 * form here, or one whose value does not fit its external32 size. */
struct pd_x32_fail {
    const struct ompi_datatype_t *type;
    int64_t value;              /* out of range: the value */
    int out_of_range;           /* 0: no external32 form */
};

/* The external32 bytes of count items of type; -1 with *why set. */
int pd_x32_size(const struct ompi_datatype_t *type, size_t count,
                size_t *bytes, struct pd_x32_fail *why);
/* count items' packed stream at native to their external32 form at ext
 * (pd_x32_size bytes); -1 with *why set. */
int pd_x32_pack(const struct ompi_datatype_t *type, size_t count,
                const void *native, void *ext, struct pd_x32_fail *why);
/* Back: count items' external32 form to their packed stream; -1 with
 * *why set (no external32 form). */
int pd_x32_unpack(const struct ompi_datatype_t *type, size_t count,
                  const void *ext, void *native, struct pd_x32_fail *why);

#endif

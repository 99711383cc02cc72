/* Datatype identities and properties (predefined types only for now). */
#ifndef PD_CORE_DATATYPE_H
#define PD_CORE_DATATYPE_H

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "base/elem.h"

/* Extent of the C struct MPI's pair types describe ({value, index}). */
#define PD_PAIR_EXTENT(a, b) sizeof(struct { a v; b i; })

/* Classes as the MPI standard groups types for reduction ops (MPI-3.1
 * section 5.9.2), plus MPI_CHAR, which Open MPI -- and so the OSU
 * benchmarks' default -- treats as a C integer for arithmetic ops. */
enum pd_type_class {
    PD_TC_NONE = 0,     /* no predefined op applies */
    PD_TC_C_INT,
    PD_TC_F_INT,
    PD_TC_FLOAT,
    PD_TC_LOGICAL,
    PD_TC_COMPLEX,
    PD_TC_BYTE,
    PD_TC_CHAR,
    PD_TC_PAIR,
};

enum pd_type_id {
#define PD_TYPE(sym, id, size, extent, name, cls, ek) id,
#include "core/datatype_list.h"
#undef PD_TYPE
    PD_TYPE_COUNT,
    PD_T_DERIVED = PD_TYPE_COUNT,   /* made by MPI_Type_contiguous & co. */
};

struct ompi_datatype_t;

/* True for a valid datatype handle that can describe data (not
 * MPI_DATATYPE_NULL, MPI_LB/UB, or a freed type). */
bool pd_type_is_valid(const struct ompi_datatype_t *type);
/* Class and element kind are those of the type's predefined base. */
enum pd_type_class pd_type_class_of(const struct ompi_datatype_t *type);
enum pd_elem_kind pd_type_elem_kind(const struct ompi_datatype_t *type);
/* What the ranks of one collective compare of their types where the bytes
 * alone would match (MPI_INT against MPI_FLOAT): the element kind, with
 * signed and unsigned integers of one size (and MPI_BYTE, the chars)
 * alike, so only data that would change meaning counts as a mismatch. */
enum pd_elem_kind pd_type_signature(const struct ompi_datatype_t *type);
size_t pd_type_extent(const struct ompi_datatype_t *type);
size_t pd_type_size(const struct ompi_datatype_t *type);
const char *pd_type_name(const struct ompi_datatype_t *type);
bool pd_type_is_predefined(const struct ompi_datatype_t *type);

/* A derived type: count copies of old, each stride_bytes apart (equal to
 * old's extent for a contiguous type). NULL with errno EOVERFLOW when its
 * size or extent exceeds a 64-bit MPI_Count, or ENOMEM. */
struct ompi_datatype_t *pd_type_new_strided(const struct ompi_datatype_t *old,
                                            size_t blocks, size_t blocklen,
                                            long stride_bytes);
void pd_type_release(struct ompi_datatype_t *type);

#endif

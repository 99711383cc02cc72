/* Datatype identities and properties, and the derived types made from them. */
#ifndef PD_CORE_DATATYPE_H
#define PD_CORE_DATATYPE_H

#include <complex.h>
#include <mpi.h>
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
/* The stride between items (MPI_Type_get_extent); negative where
 * MPI_Type_create_resized made it so: item i then lies i strides below
 * the first. */
ptrdiff_t pd_type_extent(const struct ompi_datatype_t *type);
/* The bytes from the lowest to the highest byte that n items touch. */
size_t pd_type_span(const struct ompi_datatype_t *type, size_t n);
size_t pd_type_size(const struct ompi_datatype_t *type);
/* The name messages give a type: its name, or "an unnamed derived
 * datatype" (MPI_Type_get_name reads the name itself). */
const char *pd_type_name(const struct ompi_datatype_t *type);
bool pd_type_is_predefined(const struct ompi_datatype_t *type);

/* Bytes one item packs to: its data, each predefined element as its
 * in-memory bytes (a pair type's padding included). Equal to the extent
 * for a contiguous type, whose data moves as plain bytes. */
size_t pd_type_packed(const struct ompi_datatype_t *type);
size_t pd_type_align(const struct ompi_datatype_t *type);

/* base_id of a type whose elements are not all one predefined type. */
#define PD_BASE_MIXED (-1)
/* The predefined datatype every element of type is (type itself where
 * it is predefined); NULL where its elements are of several. */
struct ompi_datatype_t *pd_type_base(const struct ompi_datatype_t *type);

/* blocklen items of type at disp bytes: one block of a derived type. */
struct pd_type_block {
    ptrdiff_t disp;
    size_t blocklen;
    const struct ompi_datatype_t *type;
};
/* A derived type: reps repetitions, rep_stride bytes apart, of the n
 * blocks; is_struct rounds its extent to its alignment as
 * MPI_Type_create_struct does. NULL with errno EOVERFLOW when a bound or
 * size exceeds a 64-bit MPI_Aint, or ENOMEM. The new type holds no
 * reference to the blocks' types yet: pd_type_set_contents takes them. */
struct ompi_datatype_t *pd_type_new_blocks(const struct pd_type_block *blocks,
                                           size_t n, size_t reps,
                                           ptrdiff_t rep_stride,
                                           bool is_struct);
/* old with lb and extent set (MPI_Type_create_resized). */
struct ompi_datatype_t *pd_type_new_resized(const struct ompi_datatype_t *old,
                                            ptrdiff_t lb, ptrdiff_t extent);
/* A copy of old: same layout, bounds, commit state and name. */
struct ompi_datatype_t *pd_type_new_dup(const struct ompi_datatype_t *old);

/* The constructor's arguments, for MPI_Type_get_envelope/get_contents;
 * keeps a reference to each of types (they outlive their handles). -1:
 * out of memory. */
int pd_type_set_contents(struct ompi_datatype_t *type, int combiner, int ni,
                         const int *ints, int na, const MPI_Aint *aints,
                         int nd, struct ompi_datatype_t *const *types);
int pd_type_combiner(const struct ompi_datatype_t *type);
void pd_type_contents_counts(const struct ompi_datatype_t *type, int *ni,
                             int *na, int *nd);
/* Each derived type returned carries a reference for the caller. */
void pd_type_contents_get(const struct ompi_datatype_t *type, int *ints,
                          MPI_Aint *aints, struct ompi_datatype_t **types);

/* References: a handle is one, each type built on it another. The type
 * goes with the last (predefined types never go). */
void pd_type_retain(struct ompi_datatype_t *type);
void pd_type_release(struct ompi_datatype_t *type);

/* Memory for n items of type in its own layout (scratch for a
 * reduction): the block to free, NULL when out of memory; *items is the
 * address the items start at (the block less true_lb). */
void *pd_type_alloc_items(const struct ompi_datatype_t *type, size_t n,
                          char **items);

/* Adds to *elements the predefined elements in the first bytes of the
 * packed form of items of type (MPI_Get_elements); false when those
 * bytes end inside an element. */
bool pd_type_elements_in(const struct ompi_datatype_t *type, size_t bytes,
                         size_t *elements);

/* The packed bytes the first `elements` predefined elements of items of
 * type take (MPI_Status_set_elements): the inverse of the above. */
size_t pd_type_bytes_of_elements(const struct ompi_datatype_t *type,
                                 size_t elements);

/* The predefined elements of count items of type, in the order of their
 * packed stream, as runs: visit(ctx, t, n) for n elements of t, a
 * predefined type or a derived one of a single predefined base (base_id;
 * packed / base_count bytes each).
 * Stops at, and returns, the first false a visit gives. */
typedef bool (*pd_type_run_fn)(void *ctx, const struct ompi_datatype_t *t,
                               size_t n);
bool pd_type_stream_runs(const struct ompi_datatype_t *type, size_t count,
                         pd_type_run_fn visit, void *ctx);

/* Bytes [from, from + n) of the packed form of items of type at buf
 * (core/typemap.h's engine), out to stream or back from it. */
void pd_type_pack(const struct ompi_datatype_t *type, const void *buf,
                  size_t from, size_t n, void *stream);
void pd_type_unpack(const struct ompi_datatype_t *type, void *buf,
                    size_t from, size_t n, const void *stream);

#endif

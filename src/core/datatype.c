/* Datatype properties, and the derived types built from them. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/objects.h"

struct pd_type_props {
    unsigned char cls;     /* enum pd_type_class */
    unsigned char ek;      /* enum pd_elem_kind */
};

static const struct pd_type_props pd_type_props[PD_TYPE_COUNT] = {
#define PD_TYPE(sym, id, size, extent, name, cls, ek) [id] = { cls, ek },
#include "core/datatype_list.h"
#undef PD_TYPE
};

bool pd_type_is_valid(const struct ompi_datatype_t *type)
{
    if (type == NULL || type->magic != PD_MAGIC_TYPE)
        return false;
    if (type->id == PD_T_DERIVED)
        return true;
    if (type->id <= PD_T_DATATYPE_NULL || type->id >= PD_TYPE_COUNT)
        return false;
    /* MPI_LB, MPI_UB and the placeholder have no data to move. */
    return type->id != PD_T_LB && type->id != PD_T_UB &&
           type->id != PD_T_UNAVAILABLE;
}

bool pd_type_is_predefined(const struct ompi_datatype_t *type)
{
    return type->id != PD_T_DERIVED;
}

enum pd_type_class pd_type_class_of(const struct ompi_datatype_t *type)
{
    return (enum pd_type_class)pd_type_props[type->base_id].cls;
}

enum pd_elem_kind pd_type_elem_kind(const struct ompi_datatype_t *type)
{
    return (enum pd_elem_kind)pd_type_props[type->base_id].ek;
}

enum pd_elem_kind pd_type_signature(const struct ompi_datatype_t *type)
{
    enum pd_elem_kind k = pd_type_elem_kind(type);
    switch (k) {
    case PD_EK_U8:  return PD_EK_I8;
    case PD_EK_U16: return PD_EK_I16;
    case PD_EK_U32: return PD_EK_I32;
    case PD_EK_U64: return PD_EK_I64;
    default:        return k;
    }
}

size_t pd_type_extent(const struct ompi_datatype_t *type)
{
    return type->extent;
}

size_t pd_type_size(const struct ompi_datatype_t *type)
{
    return type->size;
}

const char *pd_type_name(const struct ompi_datatype_t *type)
{
    return type->name;
}

/* a * b + c, or false when it does not fit a signed 64-bit count (the
 * largest MPI_Count and MPI_Aint). */
static bool pd_mul_add(size_t a, size_t b, size_t c, size_t *out)
{
    size_t p;
    return !__builtin_mul_overflow(a, b, &p) &&
           !__builtin_add_overflow(p, c, out) && *out <= (size_t)INT64_MAX;
}

struct ompi_datatype_t *pd_type_new_strided(const struct ompi_datatype_t *old,
                                            size_t blocks, size_t blocklen,
                                            long stride_bytes)
{
    size_t block_bytes, elems, size, base_count, extent = 0;
    size_t stride = stride_bytes >= 0 ? (size_t)stride_bytes
                                      : (size_t)0 - (size_t)stride_bytes;
    if (!pd_mul_add(blocklen, old->extent, 0, &block_bytes) ||
        !pd_mul_add(blocks, blocklen, 0, &elems) ||
        !pd_mul_add(elems, old->size, 0, &size) ||
        !pd_mul_add(elems, old->base_count, 0, &base_count) ||
        (blocks > 0 &&
         !pd_mul_add(blocks - 1, stride, block_bytes, &extent))) {
        errno = EOVERFLOW;
        return NULL;
    }
    struct ompi_datatype_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->magic = PD_MAGIC_TYPE;
    t->id = PD_T_DERIVED;
    t->size = size;
    t->base_id = old->base_id;
    t->base_count = base_count;
    /* Blocks abut exactly when the stride is one block: then the type is
     * plain elements end to end, whatever constructor made it. */
    t->contiguous = old->contiguous &&
                    (blocks <= 1 || stride_bytes == (long)block_bytes);
    t->extent = extent;
    t->committed = false;
    return t;
}

void pd_type_release(struct ompi_datatype_t *type)
{
    pd_handle_forget(PD_HANDLE_TYPE, type);
    type->magic = PD_MAGIC_FREED;
    free(type);
}

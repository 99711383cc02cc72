/* Properties of predefined datatypes, read from the one list. */
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
    if (type->id <= PD_T_DATATYPE_NULL || type->id >= PD_TYPE_COUNT)
        return false;
    /* MPI_LB, MPI_UB and the placeholder have no data to move. */
    return type->id != PD_T_LB && type->id != PD_T_UB &&
           type->id != PD_T_UNAVAILABLE;
}

enum pd_type_class pd_type_class_of(const struct ompi_datatype_t *type)
{
    return (enum pd_type_class)pd_type_props[type->id].cls;
}

enum pd_elem_kind pd_type_elem_kind(const struct ompi_datatype_t *type)
{
    return (enum pd_elem_kind)pd_type_props[type->id].ek;
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

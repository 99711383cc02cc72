/* Which predefined op applies to which datatype, and with what kernel. */
#include "core/objects.h"
#include "core/reduce_kernels.h"

bool pd_op_is_valid(const struct ompi_op_t *op)
{
    return op != NULL && op->magic == PD_MAGIC_OP && op->id > PD_OP_NULL &&
           op->id < PD_OP_COUNT;
}

const char *pd_op_name(const struct ompi_op_t *op)
{
    return op->name;
}

/* The MPI standard's table of allowed (op, type class) pairs
 * (MPI-3.1 section 5.9.2), with MPI_CHAR allowed wherever C integers are
 * for arithmetic, as Open MPI does. */
static bool pd_op_allows(enum pd_op_id op, enum pd_type_class cls)
{
    switch (op) {
    case PD_OP_MAX:
    case PD_OP_MIN:
        return cls == PD_TC_C_INT || cls == PD_TC_F_INT ||
               cls == PD_TC_FLOAT || cls == PD_TC_CHAR;
    case PD_OP_SUM:
    case PD_OP_PROD:
        return cls == PD_TC_C_INT || cls == PD_TC_F_INT ||
               cls == PD_TC_FLOAT || cls == PD_TC_COMPLEX ||
               cls == PD_TC_CHAR;
    case PD_OP_LAND:
    case PD_OP_LOR:
    case PD_OP_LXOR:
        return cls == PD_TC_C_INT || cls == PD_TC_LOGICAL;
    case PD_OP_BAND:
    case PD_OP_BOR:
    case PD_OP_BXOR:
        return cls == PD_TC_C_INT || cls == PD_TC_F_INT || cls == PD_TC_BYTE;
    case PD_OP_MAXLOC:
    case PD_OP_MINLOC:
        return cls == PD_TC_PAIR;
    default:
        return false;
    }
}

pd_reduce_fn pd_op_kernel(const struct ompi_op_t *op,
                          const struct ompi_datatype_t *type)
{
    enum pd_op_id id = (enum pd_op_id)op->id;
    if (!pd_op_allows(id, pd_type_class_of(type)))
        return NULL;
    if (id == PD_OP_MAXLOC || id == PD_OP_MINLOC)
        return pd_loc_kernel_lookup((enum pd_type_id)type->id, id);
    return pd_kernel_lookup(pd_type_elem_kind(type), id);
}

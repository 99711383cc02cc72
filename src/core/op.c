/* Which predefined op applies to which datatype, and with what kernel. */
#include <stdlib.h>
#include <string.h>

#include "core/objects.h"
#include "core/reduce_kernels.h"

bool pd_op_is_valid(const struct ompi_op_t *op)
{
    return op != NULL && op->magic == PD_MAGIC_OP && op->id > PD_OP_NULL &&
           op->id <= PD_OP_USER;
}

bool pd_op_is_predefined(const struct ompi_op_t *op)
{
    return op->id != PD_OP_USER;
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
    case PD_OP_AVG:
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

/* MPI_User_function computes inoutvec = invec (op) inoutvec; kernels
 * compute out = a (op) b with a the earlier operand, out possibly equal
 * to a or b. */
static void pd_user_kernel(void *out, const void *a, const void *b, size_t n,
                           const void *ctx)
{
    const struct pd_reduction *r = ctx;
    int len = (int)n;
    struct ompi_datatype_t *type = r->user_type;
    size_t bytes = n * r->elem_size;
    if (out == b) {
        r->user_fn((void *)a, out, &len, &type);
        return;
    }
    if (out != a) {
        memcpy(out, b, bytes);
        r->user_fn((void *)a, out, &len, &type);
        return;
    }
    void *tmp = malloc(bytes);
    if (tmp == NULL)
        abort(); /* no way to report from inside a kernel */
    memcpy(tmp, b, bytes);
    r->user_fn((void *)a, tmp, &len, &type);
    memcpy(out, tmp, bytes);
    free(tmp);
}

bool pd_op_reduction(const struct ompi_op_t *op, struct ompi_datatype_t *type,
                     struct pd_reduction *r)
{
    memset(r, 0, sizeof(*r));
    if (op->id == PD_OP_USER) {
        /* The user's function sees whole items of the user's datatype. */
        r->fn = pd_user_kernel;
        r->ctx = r;
        r->commutative = op->commutative;
        r->elem_size = type->extent;
        r->elems_per_item = 1;
        r->user_fn = op->user_fn;
        r->user_type = type;
        return true;
    }
    enum pd_op_id id = (enum pd_op_id)op->id;
    if (!pd_op_allows(id, pd_type_class_of(type)))
        return false;
    if (id == PD_OP_MAXLOC || id == PD_OP_MINLOC)
        r->fn = pd_loc_kernel_lookup((enum pd_type_id)type->base_id, id);
    else if (id == PD_OP_AVG)
        r->fn = pd_kernel_lookup(pd_type_elem_kind(type), PD_OP_SUM);
    else
        r->fn = pd_kernel_lookup(pd_type_elem_kind(type), id);
    r->average = id == PD_OP_AVG;
    r->elem_kind = pd_type_elem_kind(type);
    if (r->fn == NULL)
        return false;
    /* Predefined kernels work element by element on the base type. */
    r->commutative = true;
    r->elem_size = type->extent / (type->base_count ? type->base_count : 1);
    r->elems_per_item = type->base_count;
    return true;
}

void pd_reduction_average(const struct pd_reduction *r, void *buf,
                          size_t items, int divisor)
{
    pd_divide_elements(buf, items * r->elems_per_item, r->elem_kind, divisor);
}

void pd_reduce_items(const struct pd_reduction *r, void *out, const void *a,
                     const void *b, size_t items)
{
    r->fn(out, a, b, items * r->elems_per_item, r->ctx);
}

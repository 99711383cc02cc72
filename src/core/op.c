/* Which predefined op applies to which datatype, and with what kernel. */
#include <stdlib.h>
#include <string.h>

#include "core/objects.h"
#include "core/reduce_kernels.h"

bool pd_op_is_valid(const struct ompi_op_t *op)
{
    return op != NULL && op->magic == PD_MAGIC_OP && op->id > PD_OP_NULL &&
           op->id <= PD_OP_USER && !op->user_freed;
}

void pd_op_retain(struct ompi_op_t *op)
{
    if (op != NULL && op->id == PD_OP_USER)
        __atomic_add_fetch(&op->refs, 1, __ATOMIC_RELAXED);
}

void pd_op_release(struct ompi_op_t *op)
{
    if (op == NULL || op->id != PD_OP_USER ||
        __atomic_sub_fetch(&op->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    op->magic = PD_MAGIC_FREED;
    free(op);
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
 * (MPI-3.1 section 5.9.2), with MPI_CHAR allowed wherever C integers
 * are, as Open MPI and MPICH allow it (MPICH's own test suite reduces
 * MPI_CHAR by the logical and bitwise ops). */
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
        return cls == PD_TC_C_INT || cls == PD_TC_LOGICAL ||
               cls == PD_TC_CHAR;
    case PD_OP_BAND:
    case PD_OP_BOR:
    case PD_OP_BXOR:
        return cls == PD_TC_C_INT || cls == PD_TC_F_INT ||
               cls == PD_TC_BYTE || cls == PD_TC_CHAR;
    case PD_OP_MAXLOC:
    case PD_OP_MINLOC:
        return cls == PD_TC_PAIR;
    default:
        return false;
    }
}

/* The user's function sees items in the datatype's own layout; a
 * non-contiguous type's packed operands are unpacked for it into a
 * scratch buffer of n items (data from offset -true_lb), and back. */
static void *pd_user_layout(const struct ompi_datatype_t *t, size_t n,
                            const void *packed, char **items)
{
    char *mem = pd_type_alloc_items(t, n, items);
    if (mem == NULL)
        abort(); /* no way to report from inside a kernel */
    if (packed != NULL)
        pd_type_unpack(t, *items, 0, n * t->packed, packed);
    return mem;
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
    if (!type->contiguous) {
        char *ia, *ib;
        void *ma = pd_user_layout(type, n, a, &ia);
        void *mb = pd_user_layout(type, n, b, &ib);
        r->user_fn(ia, ib, &len, &type);
        pd_type_pack(type, ib, 0, n * type->packed, out);
        free(ma);
        free(mb);
        return;
    }
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
    if (op->id == PD_OP_USER) {
        /* The user's function sees whole items of the user's datatype. */
        *r = (struct pd_reduction){
            .fn = pd_user_kernel, .ctx = r,
            .commutative = op->commutative, .elem_size = type->packed,
            .elems_per_item = 1, .user_fn = op->user_fn, .user_type = type,
        };
        return true;
    }
    enum pd_op_id id = (enum pd_op_id)op->id;
    if (!pd_op_allows(id, pd_type_class_of(type)))
        return false;
    enum pd_elem_kind kind = pd_type_elem_kind(type);
    pd_reduce_fn fn;
    if (id == PD_OP_MAXLOC || id == PD_OP_MINLOC)
        fn = pd_loc_kernel_lookup((enum pd_type_id)type->base_id, id);
    else
        fn = pd_kernel_lookup(kind, id == PD_OP_AVG ? PD_OP_SUM : id);
    if (fn == NULL)
        return false;
    /* Predefined kernels work element by element on the base type. Set
     * field by field: this runs twice on every reduction's path. */
    size_t per = type->base_count;
    r->fn = fn;
    r->ctx = NULL;
    r->commutative = true;
    r->average = id == PD_OP_AVG;
    r->elem_kind = kind;
    r->elem_size = per > 1 ? type->packed / per : type->packed;
    r->elems_per_item = per;
    r->user_fn = NULL;
    r->user_type = NULL;
    return true;
}

void pd_reduction_average(const struct pd_reduction *r, void *buf,
                          size_t items, int divisor)
{
    pd_divide_elements(buf, items * r->elems_per_item, r->elem_kind, divisor);
}

void pd_reduction_average_bytes(const struct pd_reduction *r, void *buf,
                                size_t bytes, int divisor)
{
    pd_divide_elements(buf, bytes / r->elem_size, r->elem_kind, divisor);
}

void pd_reduce_items(const struct pd_reduction *r, void *out, const void *a,
                     const void *b, size_t items)
{
    r->fn(out, a, b, items * r->elems_per_item, r->ctx);
}

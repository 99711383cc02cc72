/* User-defined reduction operations. */
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "core/handles.h"

#pragma weak MPI_Op_create = PMPI_Op_create
#pragma weak MPI_Op_free = PMPI_Op_free
#pragma weak MPI_Op_commutative = PMPI_Op_commutative

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    static const char call[] = "MPI_Op_create";
    PD_CHECK(pd_check_active(call));
    if (user_fn == NULL || op == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        user_fn == NULL ? "user_fn" : "op");
    struct ompi_op_t *o = calloc(1, sizeof(*o));
    if (o == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    o->magic = PD_MAGIC_OP;
    o->id = PD_OP_USER;
    snprintf(o->name, sizeof(o->name), "user op %p", (void *)user_fn);
    o->user_fn = user_fn;
    o->commutative = commute != 0;
    o->refs = 1;
    *op = o;
    return MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op *op)
{
    static const char call[] = "MPI_Op_free";
    PD_CHECK(pd_check_active(call));
    if (op == NULL || !pd_op_is_valid(*op))
        return pd_raise(NULL, call, MPI_ERR_OP, "not a valid op");
    if (pd_op_is_predefined(*op))
        return pd_raise(NULL, call, MPI_ERR_OP,
                        "%s is predefined and cannot be freed", (*op)->name);
    pd_handle_forget(PD_HANDLE_OP, *op);
    /* A nonblocking reduction still queued keeps it until it has run. */
    (*op)->user_freed = true;
    pd_op_release(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char call[] = "MPI_Op_commutative";
    PD_CHECK(pd_check_active(call));
    if (!pd_op_is_valid(op))
        return pd_raise(NULL, call, MPI_ERR_OP, "not a valid op");
    if (commute == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "commute is NULL");
    *commute = op->commutative;
    return MPI_SUCCESS;
}

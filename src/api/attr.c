/* Attribute caching on communicators and datatypes, and the predefined
 * copy/delete callbacks that mpi.h names (MPI_COMM_DUP_FN & co.). */
#include "api/api.h"
#include "core/attr.h"

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
/* MPI-1's names for the communicator calls, deprecated since MPI-2.0 and
 * still in mpi.h: the same calls, under the name the program used. */
#pragma weak MPI_Keyval_create = PMPI_Keyval_create
#pragma weak MPI_Keyval_free = PMPI_Keyval_free
#pragma weak MPI_Attr_put = PMPI_Attr_put
#pragma weak MPI_Attr_get = PMPI_Attr_get
#pragma weak MPI_Attr_delete = PMPI_Attr_delete

static int pd_comm_create_keyval(const char *call,
                                 MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                 MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                 int *comm_keyval, void *extra_state)
{
    PD_CHECK(pd_check_active(call));
    if (comm_keyval == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "comm_keyval is NULL");
    if (pd_keyval_create(PD_ATTR_COMM, comm_copy_attr_fn, comm_delete_attr_fn,
                         extra_state, comm_keyval) != 0)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                            int *comm_keyval, void *extra_state)
{
    return pd_comm_create_keyval("MPI_Comm_create_keyval", comm_copy_attr_fn,
                                 comm_delete_attr_fn, comm_keyval,
                                 extra_state);
}

/* MPI_Copy_function and MPI_Delete_function have the shapes of the
 * communicator's callbacks. */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn,
                       MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return pd_comm_create_keyval("MPI_Keyval_create", copy_fn, delete_fn,
                                 keyval, extra_state);
}

static int pd_comm_free_keyval(const char *call, int *comm_keyval)
{
    PD_CHECK(pd_check_active(call));
    if (comm_keyval == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "comm_keyval is NULL");
    if (pd_keyval_free(PD_ATTR_COMM, *comm_keyval) != 0)
        return pd_raise(NULL, call, MPI_ERR_KEYVAL,
                        "%d is not a keyval made by MPI_Comm_create_keyval",
                        *comm_keyval);
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return pd_comm_free_keyval("MPI_Comm_free_keyval", comm_keyval);
}

int PMPI_Keyval_free(int *keyval)
{
    return pd_comm_free_keyval("MPI_Keyval_free", keyval);
}

static int pd_comm_set_attr(const char *call, MPI_Comm comm, int comm_keyval,
                            void *attribute_val)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (!pd_keyval_is_user(PD_ATTR_COMM, comm_keyval))
        return pd_raise(comm, call, MPI_ERR_KEYVAL,
                        pd_keyval_is_predefined(comm_keyval)
                            ? "keyval %d is predefined and read-only"
                            : "%d is not a valid keyval", comm_keyval);
    struct pd_fail fail;
    if (pd_attr_set(PD_ATTR_COMM, comm, comm_keyval, attribute_val, &fail) !=
        MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return pd_comm_set_attr("MPI_Comm_set_attr", comm, comm_keyval,
                            attribute_val);
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return pd_comm_set_attr("MPI_Attr_put", comm, keyval, attribute_val);
}

static int pd_comm_get_attr(const char *call, MPI_Comm comm, int comm_keyval,
                            void *attribute_val, int *flag)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (attribute_val == NULL || flag == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "%s is NULL",
                        flag == NULL ? "flag" : "attribute_val");
    if (!pd_keyval_is_predefined(comm_keyval) &&
        !pd_keyval_is_known(PD_ATTR_COMM, comm_keyval))
        return pd_raise(comm, call, MPI_ERR_KEYVAL, "%d is not a valid keyval",
                        comm_keyval);
    /* attribute_val is really a void **: the C binding's quirk. */
    pd_attr_get(PD_ATTR_COMM, comm, comm_keyval, (void **)attribute_val,
                flag);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val,
                       int *flag)
{
    return pd_comm_get_attr("MPI_Comm_get_attr", comm, comm_keyval,
                            attribute_val, flag);
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return pd_comm_get_attr("MPI_Attr_get", comm, keyval, attribute_val,
                            flag);
}

static int pd_comm_delete_attr(const char *call, MPI_Comm comm,
                               int comm_keyval)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    if (!pd_keyval_is_known(PD_ATTR_COMM, comm_keyval))
        return pd_raise(comm, call, MPI_ERR_KEYVAL, "%d is not a valid keyval",
                        comm_keyval);
    struct pd_fail fail;
    if (pd_attr_delete(PD_ATTR_COMM, comm, comm_keyval, &fail) !=
        MPI_SUCCESS)
        return pd_raise_fail(comm, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return pd_comm_delete_attr("MPI_Comm_delete_attr", comm, comm_keyval);
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return pd_comm_delete_attr("MPI_Attr_delete", comm, keyval);
}

/* Datatype attributes: the same machinery, keyvals of their own kind. */
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn,
                            int *type_keyval, void *extra_state)
{
    static const char call[] = "MPI_Type_create_keyval";
    PD_CHECK(pd_check_active(call));
    if (type_keyval == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "type_keyval is NULL");
    if (pd_keyval_create(PD_ATTR_TYPE,
                         (MPI_Comm_copy_attr_function *)(void (*)(void))
                             type_copy_attr_fn,
                         (MPI_Comm_delete_attr_function *)(void (*)(void))
                             type_delete_attr_fn,
                         extra_state, type_keyval) != 0)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Type_free_keyval(int *type_keyval)
{
    static const char call[] = "MPI_Type_free_keyval";
    PD_CHECK(pd_check_active(call));
    if (type_keyval == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "type_keyval is NULL");
    if (pd_keyval_free(PD_ATTR_TYPE, *type_keyval) != 0)
        return pd_raise(NULL, call, MPI_ERR_KEYVAL,
                        "%d is not a keyval made by MPI_Type_create_keyval",
                        *type_keyval);
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* A valid datatype (predefined ones carry attributes too) and one of
 * MPI_Type_create_keyval's keyvals: live to set an attribute, freed too
 * to read or delete one (core/attr.h). */
static int pd_check_type_attr(const char *call, MPI_Datatype type,
                              int keyval, bool setting)
{
    PD_CHECK(pd_check_type(NULL, call, type, "datatype"));
    if (setting ? !pd_keyval_is_user(PD_ATTR_TYPE, keyval)
                : !pd_keyval_is_known(PD_ATTR_TYPE, keyval))
        return pd_raise(NULL, call, MPI_ERR_KEYVAL, "%d is not a keyval made "
                        "by MPI_Type_create_keyval", keyval);
    return MPI_SUCCESS;
}

int PMPI_Type_set_attr(MPI_Datatype type, int type_keyval,
                       void *attribute_val)
{
    static const char call[] = "MPI_Type_set_attr";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type_attr(call, type, type_keyval, true));
    struct pd_fail fail;
    if (pd_attr_set(PD_ATTR_TYPE, type, type_keyval, attribute_val, &fail) !=
        MPI_SUCCESS)
        return pd_raise_fail(NULL, call, &fail);
    return MPI_SUCCESS;
}

int PMPI_Type_get_attr(MPI_Datatype type, int type_keyval,
                       void *attribute_val, int *flag)
{
    static const char call[] = "MPI_Type_get_attr";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type_attr(call, type, type_keyval, false));
    if (attribute_val == NULL || flag == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        flag == NULL ? "flag" : "attribute_val");
    pd_attr_get(PD_ATTR_TYPE, type, type_keyval, (void **)attribute_val,
                flag);
    return MPI_SUCCESS;
}

int PMPI_Type_delete_attr(MPI_Datatype type, int type_keyval)
{
    static const char call[] = "MPI_Type_delete_attr";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type_attr(call, type, type_keyval, false));
    struct pd_fail fail;
    if (pd_attr_delete(PD_ATTR_TYPE, type, type_keyval, &fail) != MPI_SUCCESS)
        return pd_raise_fail(NULL, call, &fail);
    return MPI_SUCCESS;
}

/* The predefined callbacks: "don't copy", "copy the value", "nothing to
 * delete", for communicators, datatypes, windows and the MPI-1 names. */
int OMPI_C_MPI_COMM_NULL_COPY_FN(MPI_Comm comm, int keyval, void *extra,
                                 void *in, void *out, int *flag)
{
    (void)comm; (void)keyval; (void)extra; (void)in; (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_COMM_DUP_FN(MPI_Comm comm, int keyval, void *extra, void *in,
                           void *out, int *flag)
{
    (void)comm; (void)keyval; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *value,
                                   void *extra)
{
    (void)comm; (void)keyval; (void)value; (void)extra;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_NULL_COPY_FN(MPI_Comm comm, int keyval, void *extra, void *in,
                            void *out, int *flag)
{
    return OMPI_C_MPI_COMM_NULL_COPY_FN(comm, keyval, extra, in, out, flag);
}

int OMPI_C_MPI_DUP_FN(MPI_Comm comm, int keyval, void *extra, void *in,
                      void *out, int *flag)
{
    return OMPI_C_MPI_COMM_DUP_FN(comm, keyval, extra, in, out, flag);
}

int OMPI_C_MPI_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *value,
                              void *extra)
{
    return OMPI_C_MPI_COMM_NULL_DELETE_FN(comm, keyval, value, extra);
}

int OMPI_C_MPI_TYPE_NULL_COPY_FN(MPI_Datatype type, int keyval, void *extra,
                                 void *in, void *out, int *flag)
{
    (void)type; (void)keyval; (void)extra; (void)in; (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_TYPE_DUP_FN(MPI_Datatype type, int keyval, void *extra,
                           void *in, void *out, int *flag)
{
    (void)type; (void)keyval; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_TYPE_NULL_DELETE_FN(MPI_Datatype type, int keyval, void *value,
                                   void *extra)
{
    (void)type; (void)keyval; (void)value; (void)extra;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_WIN_NULL_COPY_FN(MPI_Win win, int keyval, void *extra,
                                void *in, void *out, int *flag)
{
    (void)win; (void)keyval; (void)extra; (void)in; (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_WIN_DUP_FN(MPI_Win win, int keyval, void *extra, void *in,
                          void *out, int *flag)
{
    (void)win; (void)keyval; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int OMPI_C_MPI_WIN_NULL_DELETE_FN(MPI_Win win, int keyval, void *value,
                                  void *extra)
{
    (void)win; (void)keyval; (void)value; (void)extra;
    return MPI_SUCCESS;
}

/* Datatypes: queries, and the derived types pdmpi can describe. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "core/attr.h"

#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_size_x = PMPI_Type_size_x
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
#pragma weak MPI_Type_vector = PMPI_Type_vector
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
#pragma weak MPI_Type_dup = PMPI_Type_dup
#pragma weak MPI_Type_commit = PMPI_Type_commit
#pragma weak MPI_Type_free = PMPI_Type_free
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
#pragma weak MPI_Get_count = PMPI_Get_count

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    static const char call[] = "MPI_Type_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (size == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "size is NULL");
    size_t bytes = pd_type_size(datatype);
    /* Too large for an int: MPI_Type_size_x tells the size. */
    *size = bytes > INT_MAX ? MPI_UNDEFINED : (int)bytes;
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    static const char call[] = "MPI_Type_size_x";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (size == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "size is NULL");
    *size = (MPI_Count)pd_type_size(datatype);    /* at most INT64_MAX */
    return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    static const char call[] = "MPI_Type_get_name";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (type_name == NULL || resultlen == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        type_name == NULL ? "type_name" : "resultlen");
    snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", pd_type_name(datatype));
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char call[] = "MPI_Type_set_name";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (type_name == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "type_name is NULL");
    if (pd_type_is_predefined(datatype))
        return pd_raise(NULL, call, MPI_ERR_TYPE,
                        "%s is predefined; its name cannot change",
                        datatype->name);
    snprintf(datatype->name, sizeof(datatype->name), "%s", type_name);
    return MPI_SUCCESS;
}

static int pd_new_strided(const char *call, MPI_Datatype oldtype, int count,
                          int blocklength, long stride_bytes,
                          MPI_Datatype *newtype)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_count(NULL, call, count, "count"));
    PD_CHECK(pd_check_count(NULL, call, blocklength, "blocklength"));
    PD_CHECK(pd_check_type(NULL, call, oldtype, "oldtype"));
    if (newtype == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "newtype is NULL");
    errno = 0;
    *newtype = pd_type_new_strided(oldtype, (size_t)count, (size_t)blocklength,
                                   stride_bytes);
    if (*newtype == NULL && errno == EOVERFLOW)
        return pd_raise(NULL, call, MPI_ERR_ARG,
                        "%d blocks of %d x %s: the new type's size or extent "
                        "exceeds what MPI_Count holds", count, blocklength,
                        pd_type_name(oldtype));
    if (*newtype == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    long stride = oldtype != NULL && pd_type_is_valid(oldtype)
                      ? (long)pd_type_extent(oldtype) : 0;
    return pd_new_strided("MPI_Type_contiguous", oldtype, count, 1, stride,
                          newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride,
                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    long extent = oldtype != NULL && pd_type_is_valid(oldtype)
                      ? (long)pd_type_extent(oldtype) : 0, bytes;
    if (__builtin_mul_overflow((long)stride, extent, &bytes))
        return pd_raise(NULL, "MPI_Type_vector", MPI_ERR_ARG,
                        "a stride of %d x %ld bytes exceeds MPI_Aint", stride,
                        extent);
    return pd_new_strided("MPI_Type_vector", oldtype, count, blocklength,
                          bytes, newtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return pd_new_strided("MPI_Type_create_hvector", oldtype, count,
                          blocklength, (long)stride, newtype);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char call[] = "MPI_Type_dup";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, oldtype, "oldtype"));
    if (newtype == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "newtype is NULL");
    *newtype = pd_type_new_strided(oldtype, 1, 1, (long)pd_type_extent(oldtype));
    if (*newtype == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    /* A duplicate is committed if its original was, and gets what the
     * original's attributes' copy callbacks give it. */
    (*newtype)->committed = oldtype->committed;
    struct pd_fail fail;
    if (pd_attr_copy_all(PD_ATTR_TYPE, oldtype, *newtype, &fail) != 0) {
        pd_attr_delete_all(PD_ATTR_TYPE, *newtype);
        pd_type_release(*newtype);
        *newtype = MPI_DATATYPE_NULL;
        return pd_raise_fail(NULL, call, &fail);
    }
    return MPI_SUCCESS;
}

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    static const char call[] = "MPI_Type_commit";
    PD_CHECK(pd_check_active(call));
    if (datatype == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "datatype is NULL");
    PD_CHECK(pd_check_type(NULL, call, *datatype, "datatype"));
    (*datatype)->committed = true;
    return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype *datatype)
{
    static const char call[] = "MPI_Type_free";
    PD_CHECK(pd_check_active(call));
    if (datatype == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "datatype is NULL");
    PD_CHECK(pd_check_type(NULL, call, *datatype, "datatype"));
    if (pd_type_is_predefined(*datatype))
        return pd_raise(NULL, call, MPI_ERR_TYPE,
                        "%s is predefined and cannot be freed",
                        (*datatype)->name);
    int rc = pd_attr_delete_all(PD_ATTR_TYPE, *datatype) == 0
                 ? MPI_SUCCESS
                 : pd_raise(NULL, call, MPI_ERR_OTHER, "a delete callback of "
                            "one of its attributes failed");
    pd_type_release(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return rc;
}

/* The four extent queries: every type pdmpi describes starts at 0 and
 * its true extent is its extent. */
static int pd_extent(const char *call, MPI_Datatype type, bool lb_set,
                     bool extent_set, const char *lb_name,
                     const char *extent_name, MPI_Count *lb,
                     MPI_Count *extent)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, type, "datatype"));
    if (!lb_set || !extent_set)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        !lb_set ? lb_name : extent_name);
    *lb = 0;
    *extent = (MPI_Count)pd_type_extent(type);
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_Count l = 0, e = 0;
    int rc = pd_extent("MPI_Type_get_extent", datatype, lb != NULL,
                       extent != NULL, "lb", "extent", &l, &e);
    if (rc == MPI_SUCCESS) {
        *lb = (MPI_Aint)l;
        *extent = (MPI_Aint)e;
    }
    return rc;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
                              MPI_Aint *true_extent)
{
    MPI_Count l = 0, e = 0;
    int rc = pd_extent("MPI_Type_get_true_extent", datatype, true_lb != NULL,
                       true_extent != NULL, "true_lb", "true_extent", &l, &e);
    if (rc == MPI_SUCCESS) {
        *true_lb = (MPI_Aint)l;
        *true_extent = (MPI_Aint)e;
    }
    return rc;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
                           MPI_Count *extent)
{
    return pd_extent("MPI_Type_get_extent_x", datatype, lb != NULL,
                     extent != NULL, "lb", "extent", lb, extent);
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    return pd_extent("MPI_Type_get_true_extent_x", datatype, true_lb != NULL,
                     true_extent != NULL, "true_lb", "true_extent", true_lb,
                     true_extent);
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    static const char call[] = "MPI_Get_count";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (status == NULL || count == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        status == NULL ? "status" : "count");
    size_t size = pd_type_size(datatype);
    if (size == 0)
        *count = 0;
    else if (status->_ucount % size != 0)
        *count = MPI_UNDEFINED;
    else if (status->_ucount / size > INT_MAX)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(status->_ucount / size);
    return MPI_SUCCESS;
}

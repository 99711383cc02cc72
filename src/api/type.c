/* Datatypes: queries, names, commit and free, counts in a status. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/mpi1.h"
#include "core/attr.h"

#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_size_x = PMPI_Type_size_x
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Type_commit = PMPI_Type_commit
#pragma weak MPI_Type_free = PMPI_Type_free
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
#pragma weak MPI_Type_extent = PMPI_Type_extent
#pragma weak MPI_Type_lb = PMPI_Type_lb
#pragma weak MPI_Type_ub = PMPI_Type_ub
#pragma weak MPI_Get_count = PMPI_Get_count
#pragma weak MPI_Get_elements = PMPI_Get_elements
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
#pragma weak MPI_Type_match_size = PMPI_Type_match_size

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
    snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", datatype->name);
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
    /* Predefined types too, as Open MPI allows: the name is this
     * process's alone. */
    snprintf(datatype->name, sizeof(datatype->name), "%s", type_name);
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
    if (pd_type_is_predefined(*datatype) || (*datatype)->permanent)
        return pd_raise(NULL, call, MPI_ERR_TYPE,
                        "%s is predefined and cannot be freed",
                        (*datatype)->name);
    int rc = pd_attr_delete_all(PD_ATTR_TYPE, *datatype) == 0
                 ? MPI_SUCCESS
                 : pd_raise(NULL, call, MPI_ERR_OTHER, "a delete callback of "
                            "one of its attributes failed");
    /* Types built on it, and communication under way, keep it alive. */
    pd_type_release(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return rc;
}

/* The four extent queries. */
static int pd_extent(const char *call, MPI_Datatype type, bool true_bounds,
                     bool lb_set, bool extent_set, MPI_Count *lb,
                     MPI_Count *extent)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, type, "datatype"));
    if (!lb_set || !extent_set)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        !lb_set ? (true_bounds ? "true_lb" : "lb")
                                : (true_bounds ? "true_extent" : "extent"));
    *lb = true_bounds ? (MPI_Count)type->true_lb : (MPI_Count)type->lb;
    *extent = true_bounds ? (MPI_Count)type->true_extent
                          : (MPI_Count)pd_type_extent(type);
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_Count l = 0, e = 0;
    int rc = pd_extent("MPI_Type_get_extent", datatype, false, lb != NULL,
                       extent != NULL, &l, &e);
    if (rc == MPI_SUCCESS) {
        *lb = (MPI_Aint)l;
        *extent = (MPI_Aint)e;
    }
    return rc;
}

/* MPI-1's extent queries (api/mpi1.h), one bound each. */
enum pd_bound { PD_BOUND_LB, PD_BOUND_UB, PD_BOUND_EXTENT };

static int pd_mpi1_bound(const char *call, MPI_Datatype type,
                         enum pd_bound which, MPI_Aint *out, const char *what)
{
    MPI_Count lb = 0, extent = 0;
    PD_CHECK(pd_extent(call, type, false, true, true, &lb, &extent));
    if (out == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL", what);
    *out = (MPI_Aint)(which == PD_BOUND_LB   ? lb
                      : which == PD_BOUND_UB ? lb + extent
                                             : extent);
    return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype type, MPI_Aint *extent)
{
    return pd_mpi1_bound("MPI_Type_extent", type, PD_BOUND_EXTENT, extent,
                         "extent");
}

int PMPI_Type_lb(MPI_Datatype type, MPI_Aint *lb)
{
    return pd_mpi1_bound("MPI_Type_lb", type, PD_BOUND_LB, lb, "lb");
}

int PMPI_Type_ub(MPI_Datatype mtype, MPI_Aint *ub)
{
    return pd_mpi1_bound("MPI_Type_ub", mtype, PD_BOUND_UB, ub, "ub");
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
                              MPI_Aint *true_extent)
{
    MPI_Count l = 0, e = 0;
    int rc = pd_extent("MPI_Type_get_true_extent", datatype, true,
                       true_lb != NULL, true_extent != NULL, &l, &e);
    if (rc == MPI_SUCCESS) {
        *true_lb = (MPI_Aint)l;
        *true_extent = (MPI_Aint)e;
    }
    return rc;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
                           MPI_Count *extent)
{
    return pd_extent("MPI_Type_get_extent_x", datatype, false, lb != NULL,
                     extent != NULL, lb, extent);
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    return pd_extent("MPI_Type_get_true_extent_x", datatype, true,
                     true_lb != NULL, true_extent != NULL, true_lb,
                     true_extent);
}

/* A status's byte count is of packed bytes (pd_type_packed), which is
 * what the items of a datatype take on the wire. */
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    static const char call[] = "MPI_Get_count";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (status == NULL || count == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        status == NULL ? "status" : "count");
    size_t packed = pd_type_packed(datatype);
    if (packed == 0)
        *count = 0;
    else if (status->_ucount % packed != 0)
        *count = MPI_UNDEFINED;
    else if (status->_ucount / packed > INT_MAX)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(status->_ucount / packed);
    return MPI_SUCCESS;
}

/* Predefined elements in a status's bytes of datatype: whole items'
 * elements, and those of a last partial item (MPI_UNDEFINED when the
 * bytes end inside an element). */
static int pd_elements(const char *call, const MPI_Status *status,
                       MPI_Datatype type, bool set, MPI_Count *elements)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, type, "datatype"));
    if (status == NULL || !set)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        status == NULL ? "status" : "count");
    size_t n = 0;
    *elements = pd_type_elements_in(type, status->_ucount, &n)
                    ? (MPI_Count)n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype,
                      int *count)
{
    MPI_Count n = 0;
    int rc = pd_elements("MPI_Get_elements", status, datatype, count != NULL,
                         &n);
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count *count)
{
    return pd_elements("MPI_Get_elements_x", status, datatype, count != NULL,
                       count);
}

/* A status as if count elements of datatype were received (generalized
 * requests' query callbacks use it). */
static int pd_set_elements(const char *call, MPI_Status *status,
                           MPI_Datatype type, MPI_Count count)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, type, "datatype"));
    if (status == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "status is NULL");
    if (count < 0)
        return pd_raise(NULL, call, MPI_ERR_COUNT, "count is negative (%lld)",
                        (long long)count);
    status->_ucount = pd_type_bytes_of_elements(type, (size_t)count);
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype,
                             int count)
{
    return pd_set_elements("MPI_Status_set_elements", status, datatype, count);
}

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype,
                               MPI_Count count)
{
    return pd_set_elements("MPI_Status_set_elements_x", status, datatype,
                           count);
}

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    static const char call[] = "MPI_Status_set_cancelled";
    PD_CHECK(pd_check_active(call));
    if (status == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "status is NULL");
    status->_cancelled = flag != 0;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
                           int *num_addresses, int *num_datatypes,
                           int *combiner)
{
    static const char call[] = "MPI_Type_get_envelope";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (num_integers == NULL || num_addresses == NULL ||
        num_datatypes == NULL || combiner == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "an output argument is NULL");
    pd_type_contents_counts(datatype, num_integers, num_addresses,
                            num_datatypes);
    *combiner = pd_type_combiner(datatype);
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                           int max_addresses, int max_datatypes,
                           int array_of_integers[],
                           MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[])
{
    static const char call[] = "MPI_Type_get_contents";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (pd_type_combiner(datatype) == MPI_COMBINER_NAMED)
        return pd_raise(NULL, call, MPI_ERR_TYPE, "%s is predefined: it has "
                        "no contents", datatype->name);
    int ni, na, nd;
    pd_type_contents_counts(datatype, &ni, &na, &nd);
    if (max_integers < ni || max_addresses < na || max_datatypes < nd)
        return pd_raise(NULL, call, MPI_ERR_ARG, "the arrays hold %d, %d, %d "
                        "entries; the type has %d, %d, %d", max_integers,
                        max_addresses, max_datatypes, ni, na, nd);
    if ((ni > 0 && array_of_integers == NULL) ||
        (na > 0 && array_of_addresses == NULL) ||
        (nd > 0 && array_of_datatypes == NULL))
        return pd_raise(NULL, call, MPI_ERR_ARG, "an output array is NULL");
    pd_type_contents_get(datatype, array_of_integers, array_of_addresses,
                         array_of_datatypes);
    return MPI_SUCCESS;
}

/* The Fortran type of a class and size, as Open MPI answers. */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char call[] = "MPI_Type_match_size";
    PD_CHECK(pd_check_active(call));
    if (datatype == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "datatype is NULL");
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (typeclass == MPI_TYPECLASS_REAL)
        t = size == 4 ? MPI_REAL : size == 8 ? MPI_DOUBLE_PRECISION
          : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL;
    else if (typeclass == MPI_TYPECLASS_INTEGER)
        t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2
          : size == 4 ? MPI_INTEGER : size == 8 ? MPI_INTEGER8
          : MPI_DATATYPE_NULL;
    else if (typeclass == MPI_TYPECLASS_COMPLEX)
        t = size == 8 ? MPI_COMPLEX : size == 16 ? MPI_DOUBLE_COMPLEX
          : size == 32 ? MPI_COMPLEX32 : MPI_DATATYPE_NULL;
    else
        return pd_raise(NULL, call, MPI_ERR_ARG, "typeclass %d is not an "
                        "MPI_TYPECLASS_ constant", typeclass);
    if (t == MPI_DATATYPE_NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "no type of that class has "
                        "%d bytes", size);
    *datatype = t;
    return MPI_SUCCESS;
}

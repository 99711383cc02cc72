/* Datatype queries. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_get_name = PMPI_Type_get_name

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    static const char call[] = "MPI_Type_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    if (size == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "size is NULL");
    *size = (int)pd_type_size(datatype);
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

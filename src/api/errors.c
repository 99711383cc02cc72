/* Error codes to classes and text. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

#pragma weak MPI_Error_string = PMPI_Error_string
#pragma weak MPI_Error_class = PMPI_Error_class

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL)
        return MPI_ERR_ARG;
    if (pd_error_class_is_valid(errorcode))
        snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s",
                 pd_error_class_name(errorcode),
                 pd_error_class_text(errorcode));
    else
        snprintf(string, MPI_MAX_ERROR_STRING, "unknown error code %d",
                 errorcode);
    *resultlen = (int)strlen(string);
    return pd_error_class_is_valid(errorcode) ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* pdmpi defines no error codes beyond the classes yet, so a code is its
 * own class. */
int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (errorclass == NULL || !pd_error_class_is_valid(errorcode))
        return MPI_ERR_ARG;
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

/* Handle conversions: MPI_X_c2f gives a handle's integer (Fortran) name,
 * MPI_X_f2c the handle an integer names (core/handles.h), for
 * communicators, datatypes, groups, ops, error handlers, requests, infos
 * and messages; MPI_Status_c2f/f2c copy a status to and from integers.
 * A handle that is not one of its kind converts to -1; an integer that
 * names no handle converts to the kind's null handle. */
#include <string.h>

#include "api/api.h"
#include "core/handles.h"
#include "service/request.h"

#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
#pragma weak MPI_Type_c2f = PMPI_Type_c2f
#pragma weak MPI_Type_f2c = PMPI_Type_f2c
#pragma weak MPI_Group_c2f = PMPI_Group_c2f
#pragma weak MPI_Group_f2c = PMPI_Group_f2c
#pragma weak MPI_Op_c2f = PMPI_Op_c2f
#pragma weak MPI_Op_f2c = PMPI_Op_f2c
#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
#pragma weak MPI_Request_c2f = PMPI_Request_c2f
#pragma weak MPI_Request_f2c = PMPI_Request_f2c
#pragma weak MPI_Info_c2f = PMPI_Info_c2f
#pragma weak MPI_Info_f2c = PMPI_Info_f2c
#pragma weak MPI_Message_c2f = PMPI_Message_c2f
#pragma weak MPI_Message_f2c = PMPI_Message_f2c
#pragma weak MPI_File_c2f = PMPI_File_c2f
#pragma weak MPI_File_f2c = PMPI_File_f2c
#pragma weak MPI_Status_c2f = PMPI_Status_c2f
#pragma weak MPI_Status_f2c = PMPI_Status_f2c

static MPI_Fint pd_c2f(enum pd_handle_kind kind, void *handle, bool valid)
{
    return valid ? (MPI_Fint)pd_handle_c2f(kind, handle) : -1;
}

static void *pd_f2c(enum pd_handle_kind kind, MPI_Fint value, void *null)
{
    void *handle = pd_handle_f2c(kind, (int)value);
    return handle != NULL ? handle : null;
}

MPI_Fint PMPI_Comm_c2f(MPI_Comm comm)
{
    return pd_c2f(PD_HANDLE_COMM, comm,
                  comm != NULL && comm->magic == PD_MAGIC_COMM);
}

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm)
{
    return pd_f2c(PD_HANDLE_COMM, comm, MPI_COMM_NULL);
}

MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype)
{
    return pd_c2f(PD_HANDLE_TYPE, datatype,
                  datatype != NULL && datatype->magic == PD_MAGIC_TYPE);
}

MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype)
{
    return pd_f2c(PD_HANDLE_TYPE, datatype, MPI_DATATYPE_NULL);
}

MPI_Fint PMPI_Group_c2f(MPI_Group group)
{
    return pd_c2f(PD_HANDLE_GROUP, group,
                  group != NULL && group->magic == PD_MAGIC_GROUP);
}

MPI_Group PMPI_Group_f2c(MPI_Fint group)
{
    return pd_f2c(PD_HANDLE_GROUP, group, MPI_GROUP_NULL);
}

MPI_Fint PMPI_Op_c2f(MPI_Op op)
{
    return pd_c2f(PD_HANDLE_OP, op, op != NULL && op->magic == PD_MAGIC_OP);
}

MPI_Op PMPI_Op_f2c(MPI_Fint op)
{
    return pd_f2c(PD_HANDLE_OP, op, MPI_OP_NULL);
}

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    return pd_c2f(PD_HANDLE_ERRH, errhandler,
                  errhandler != NULL && errhandler->magic == PD_MAGIC_ERRH);
}

MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler)
{
    return pd_f2c(PD_HANDLE_ERRH, errhandler, MPI_ERRHANDLER_NULL);
}

MPI_Fint PMPI_Request_c2f(MPI_Request request)
{
    return pd_c2f(PD_HANDLE_REQUEST, request, pd_request_is_valid(request));
}

MPI_Request PMPI_Request_f2c(MPI_Fint request)
{
    return pd_f2c(PD_HANDLE_REQUEST, request, MPI_REQUEST_NULL);
}

MPI_Fint PMPI_Info_c2f(MPI_Info info)
{
    return pd_c2f(PD_HANDLE_INFO, info,
                  pd_info_is_valid(info));
}

MPI_Info PMPI_Info_f2c(MPI_Fint info)
{
    return pd_f2c(PD_HANDLE_INFO, info, MPI_INFO_NULL);
}

MPI_Fint PMPI_File_c2f(MPI_File file)
{
    return pd_c2f(PD_HANDLE_FILE, file,
                  file != NULL && file->magic == PD_MAGIC_FILE);
}

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    return pd_f2c(PD_HANDLE_FILE, file, MPI_FILE_NULL);
}

MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    return pd_c2f(PD_HANDLE_MESSAGE, message,
                  message != NULL && message->magic == PD_MAGIC_MESSAGE);
}

MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    return pd_f2c(PD_HANDLE_MESSAGE, message, MPI_MESSAGE_NULL);
}

/* A status is the same bytes as integers: Open MPI's MPI_Status is 24
 * bytes, six MPI_Fint. */
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    static const char call[] = "MPI_Status_c2f";
    if (c_status == MPI_STATUS_IGNORE || f_status == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        f_status == NULL ? "f_status" : "c_status");
    memcpy(f_status, c_status, sizeof(*c_status));
    return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    static const char call[] = "MPI_Status_f2c";
    if (f_status == NULL || c_status == MPI_STATUS_IGNORE)
        return pd_raise(NULL, call, MPI_ERR_ARG, "%s is NULL",
                        f_status == NULL ? "f_status" : "c_status");
    memcpy(c_status, f_status, sizeof(*c_status));
    return MPI_SUCCESS;
}

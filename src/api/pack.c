/* The user's side of the pack engine: MPI_Pack, MPI_Unpack,
 * MPI_Pack_size, addresses, and MPI_Reduce_local. pdmpi's packed form is
 * the engine's stream: each predefined element's bytes, in type order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size
#pragma weak MPI_Get_address = PMPI_Get_address
#pragma weak MPI_Reduce_local = PMPI_Reduce_local

/* The arguments MPI_Pack and MPI_Unpack share: count items of type at
 * buf, and the packed area of size bytes with *position inside it. */
static int pd_check_pack(const char *call, MPI_Comm comm, const void *buf,
                         int count, MPI_Datatype type, const void *area,
                         int size, const int *position, size_t *bytes)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, count, "count"));
    PD_CHECK(pd_check_data_type(comm, call, type, "datatype"));
    if (position == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "position is NULL");
    if (size < 0 || *position < 0 || *position > size)
        return pd_raise(comm, call, MPI_ERR_ARG, "position %d is outside "
                        "the packed area of %d bytes", *position, size);
    *bytes = (size_t)count * pd_type_packed(type);
    if (*bytes > (size_t)(size - *position))
        return pd_raise(comm, call, MPI_ERR_TRUNCATE, "%d x %s take %zu "
                        "bytes; the packed area has %d left", count,
                        pd_type_name(type), *bytes, size - *position);
    if (*bytes > 0 && (area == NULL || (buf == NULL && type->contiguous)))
        return pd_raise(comm, call, MPI_ERR_BUFFER, "%s is NULL",
                        area == NULL ? "the packed area" : "the buffer");
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype,
              void *outbuf, int outsize, int *position, MPI_Comm comm)
{
    size_t bytes;
    PD_CHECK(pd_check_pack("MPI_Pack", comm, inbuf, incount, datatype, outbuf,
                           outsize, position, &bytes));
    pd_type_pack(datatype, inbuf, 0, bytes, (char *)outbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
                int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    size_t bytes;
    PD_CHECK(pd_check_pack("MPI_Unpack", comm, outbuf, outcount, datatype,
                           inbuf, insize, position, &bytes));
    pd_type_unpack(datatype, outbuf, 0, bytes,
                   (const char *)inbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
                   int *size)
{
    static const char call[] = "MPI_Pack_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_comm(comm, call));
    PD_CHECK(pd_check_count(comm, call, incount, "incount"));
    PD_CHECK(pd_check_type(comm, call, datatype, "datatype"));
    if (size == NULL)
        return pd_raise(comm, call, MPI_ERR_ARG, "size is NULL");
    size_t bytes = (size_t)incount * pd_type_packed(datatype);
    if (bytes > INT32_MAX)
        return pd_raise(comm, call, MPI_ERR_COUNT, "%d x %s pack to %zu "
                        "bytes, more than an int counts", incount,
                        pd_type_name(datatype), bytes);
    *size = (int)bytes;
    return MPI_SUCCESS;
}

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    static const char call[] = "MPI_Get_address";
    PD_CHECK(pd_check_active(call));
    if (address == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
                      MPI_Datatype datatype, MPI_Op op)
{
    static const char call[] = "MPI_Reduce_local";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_count(NULL, call, count, "count"));
    PD_CHECK(pd_check_data_type(NULL, call, datatype, "datatype"));
    PD_CHECK(pd_check_op(NULL, call, datatype, op));
    PD_CHECK(pd_check_buffer(NULL, call, inbuf, count, datatype, "inbuf"));
    PD_CHECK(pd_check_buffer(NULL, call, inoutbuf, count, datatype,
                             "inoutbuf"));
    struct pd_reduction red;
    pd_op_reduction(op, datatype, &red);
    if (datatype->contiguous) {
        pd_reduce_items(&red, inoutbuf, inbuf, inoutbuf, (size_t)count);
        return MPI_SUCCESS;
    }
    /* The kernels work on packed items. */
    size_t bytes = (size_t)count * pd_type_packed(datatype);
    char *a = malloc(bytes ? bytes : 1), *b = malloc(bytes ? bytes : 1);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory");
    }
    pd_type_pack(datatype, inbuf, 0, bytes, a);
    pd_type_pack(datatype, inoutbuf, 0, bytes, b);
    pd_reduce_items(&red, b, a, b, (size_t)count);
    pd_type_unpack(datatype, inoutbuf, 0, bytes, b);
    free(a);
    free(b);
    return MPI_SUCCESS;
}

/* The user's side of the pack engine: MPI_Pack, MPI_Unpack,
 * MPI_Pack_size, addresses, and MPI_Reduce_local. pdmpi's packed form is
 * the engine's stream: each predefined element's bytes, in type order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mpi1.h"
#include "core/external32.h"
#include "core/scratch.h"

/* MPI_Reduce_local of a non-contiguous type reduces this many packed
 * bytes at a time. */
#define PD_REDUCE_PIECE ((size_t)64 << 10)

#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size
#pragma weak MPI_Get_address = PMPI_Get_address
#pragma weak MPI_Address = PMPI_Address
#pragma weak MPI_Reduce_local = PMPI_Reduce_local
#pragma weak MPI_Pack_external = PMPI_Pack_external
#pragma weak MPI_Unpack_external = PMPI_Unpack_external
#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size

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
    size_t bytes = 0;
    PD_CHECK(pd_check_pack("MPI_Pack", comm, inbuf, incount, datatype, outbuf,
                           outsize, position, &bytes));
    pd_type_pack(datatype, inbuf, 0, bytes, (char *)outbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
                int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    size_t bytes = 0;
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

static int pd_get_address(const char *call, const void *location,
                          MPI_Aint *address)
{
    PD_CHECK(pd_check_active(call));
    if (address == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    return pd_get_address("MPI_Get_address", location, address);
}

int PMPI_Address(void *location, MPI_Aint *address)
{
    return pd_get_address("MPI_Address", location, address);
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
    /* The kernels work on packed items: a piece of the items at a time,
     * so that the two packed operands stay in cache between the pack,
     * the reduction and the unpack, and no copy of the whole buffers is
     * made. */
    size_t packed = pd_type_packed(datatype);
    if (count == 0 || packed == 0)
        return MPI_SUCCESS;
    size_t per = packed >= PD_REDUCE_PIECE ? 1 : PD_REDUCE_PIECE / packed;
    size_t piece = per * packed;
    char *a = pd_scratch_take(piece), *b = pd_scratch_take(piece);
    if (a == NULL || b == NULL) {
        pd_scratch_give(a);
        pd_scratch_give(b);
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory (two "
                        "pieces of %zu bytes)", piece);
    }
    for (size_t done = 0; done < (size_t)count; done += per) {
        size_t n = (size_t)count - done < per ? (size_t)count - done : per;
        size_t from = done * packed, bytes = n * packed;
        pd_type_pack(datatype, inbuf, from, bytes, a);
        pd_type_pack(datatype, inoutbuf, from, bytes, b);
        pd_reduce_items(&red, b, a, b, n);
        pd_type_unpack(datatype, inoutbuf, from, bytes, b);
    }
    pd_scratch_give(a);
    pd_scratch_give(b);
    return MPI_SUCCESS;
}

/*
 * "external32": each predefined element big-endian in the size MPI's
 * table gives it (core/external32.c converts). Types with elements that
 * have none here (half floats, REAL*16, long double where it is neither
 * x87 nor a quad) are refused with those elements named.
 */

/* Why a conversion stopped, raised as call's error. */
static int pd_raise_x32(const char *call, MPI_Datatype type,
                        const struct pd_x32_fail *why)
{
    if (why->out_of_range)
        return pd_raise(NULL, call, MPI_ERR_CONVERSION, "%lld, an element "
                        "of %s, does not fit the size external32 gives %s",
                        (long long)why->value, pd_type_name(type),
                        pd_type_name(why->type));
    return pd_raise(NULL, call, MPI_ERR_UNSUPPORTED_OPERATION,
                    "external32 of %s is not provided: its elements of %s "
                    "have no external32 form here", pd_type_name(type),
                    pd_type_name(why->type));
}

/* datarep is "external32" and count items of type take *bytes in it. */
static int pd_check_datarep(const char *call, const char *datarep,
                            MPI_Datatype type, int count, size_t *bytes)
{
    if (datarep == NULL || strcmp(datarep, "external32") != 0)
        return pd_raise(NULL, call, MPI_ERR_ARG, "datarep is %s%s%s, not "
                        "\"external32\"", datarep ? "\"" : "",
                        datarep ? datarep : "NULL", datarep ? "\"" : "");
    struct pd_x32_fail why;
    if (pd_x32_size(type, (size_t)count, bytes, &why) != 0)
        return pd_raise_x32(call, type, &why);
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount,
                            MPI_Datatype datatype, MPI_Aint *size)
{
    static const char call[] = "MPI_Pack_external_size";
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_count(NULL, call, incount, "incount"));
    PD_CHECK(pd_check_type(NULL, call, datatype, "datatype"));
    size_t bytes = 0;
    PD_CHECK(pd_check_datarep(call, datarep, datatype, incount, &bytes));
    if (size == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "size is NULL");
    *size = (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

/* The shared checks of MPI_Pack_external and MPI_Unpack_external;
 * *bytes: the external32 bytes of the items. */
static int pd_check_external(const char *call, const char *datarep,
                             const void *buf, int count, MPI_Datatype type,
                             const void *area, MPI_Aint size,
                             const MPI_Aint *position, size_t *bytes)
{
    PD_CHECK(pd_check_active(call));
    PD_CHECK(pd_check_count(NULL, call, count, "count"));
    PD_CHECK(pd_check_data_type(NULL, call, type, "datatype"));
    PD_CHECK(pd_check_datarep(call, datarep, type, count, bytes));
    if (position == NULL)
        return pd_raise(NULL, call, MPI_ERR_ARG, "position is NULL");
    if (size < 0 || *position < 0 || *position > size)
        return pd_raise(NULL, call, MPI_ERR_ARG, "position %ld is outside "
                        "the packed area of %ld bytes", (long)*position,
                        (long)size);
    if (*bytes > (size_t)(size - *position))
        return pd_raise(NULL, call, MPI_ERR_TRUNCATE, "%d x %s take %zu "
                        "bytes; the packed area has %ld left", count,
                        pd_type_name(type), *bytes, (long)(size - *position));
    if (*bytes > 0 && (area == NULL || (buf == NULL && type->contiguous)))
        return pd_raise(NULL, call, MPI_ERR_BUFFER, "%s is NULL",
                        area == NULL ? "the packed area" : "the buffer");
    return MPI_SUCCESS;
}

/* Scratch for the packed stream of count items of type, as it is in
 * memory here (*bytes of it), which external32 converts from or to. */
static int pd_native_scratch(const char *call, MPI_Datatype type, int count,
                             size_t *bytes, char **native)
{
    *bytes = (size_t)count * pd_type_packed(type);
    *native = pd_scratch_take(*bytes ? *bytes : 1);
    if (*native == NULL)
        return pd_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory (%zu "
                        "bytes of scratch)", *bytes);
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                       MPI_Aint *position)
{
    static const char call[] = "MPI_Pack_external";
    size_t bytes = 0;
    PD_CHECK(pd_check_external(call, datarep, inbuf, incount, datatype,
                               outbuf, outsize, position, &bytes));
    size_t native_bytes;
    char *native;
    PD_CHECK(pd_native_scratch(call, datatype, incount, &native_bytes,
                               &native));
    pd_type_pack(datatype, inbuf, 0, native_bytes, native);
    struct pd_x32_fail why;
    int rc = pd_x32_pack(datatype, (size_t)incount, native,
                         (char *)outbuf + *position, &why);
    pd_scratch_give(native);
    if (rc != 0)
        return pd_raise_x32(call, datatype, &why);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

int PMPI_Unpack_external(const char datarep[], const void *inbuf,
                         MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    static const char call[] = "MPI_Unpack_external";
    size_t bytes = 0;
    PD_CHECK(pd_check_external(call, datarep, outbuf, outcount, datatype,
                               inbuf, insize, position, &bytes));
    size_t native_bytes;
    char *native;
    PD_CHECK(pd_native_scratch(call, datatype, outcount, &native_bytes,
                               &native));
    struct pd_x32_fail why;
    int rc = pd_x32_unpack(datatype, (size_t)outcount,
                           (const char *)inbuf + *position, native, &why);
    if (rc == 0)
        pd_type_unpack(datatype, outbuf, 0, native_bytes, native);
    pd_scratch_give(native);
    if (rc != 0)
        return pd_raise_x32(call, datatype, &why);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

#include "base/elem.h"

const char *pd_op_id_name(unsigned op)
{
    static const char *const names[] = {
        "no op", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND",
        "MPI_BAND", "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR",
        "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP", "MPIX_OP_AVG",
        "a user op",
    };
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "an op";
}

const char *pd_elem_kind_name(unsigned kind)
{
    static const char *const names[PD_EK_COUNT] = {
        "no element", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "float32", "float64", "long double",
        "complex float32", "complex float64", "complex long double", "bool",
        "logical8", "logical16", "logical32", "logical64", "float16",
        "bfloat16",
    };
    return kind < PD_EK_COUNT ? names[kind] : "an element";
}

/*
 * The MPI-1 functions removed in MPI-3.0 (MPI_Address, MPI_Type_struct,
 * MPI_Errhandler_set, ...). Open MPI's mpi.h declares them only when Open
 * MPI was configured with --enable-mpi1-compatibility, and its libmpi
 * exports them either way, so a program built against such a header can
 * name them: pdmpi implements them beside the calls that replaced them,
 * under their own names. Their prototypes are repeated here under the
 * negation of mpi.h's condition, so each is declared exactly once, and
 * exported (OMPI_DECLSPEC: the library's symbols are hidden otherwise).
 */
#ifndef PD_API_MPI1_H
#define PD_API_MPI1_H

#include <mpi.h>

#if !(!OMPI_OMIT_MPI1_COMPAT_DECLS || OMPI_BUILDING)
typedef void(MPI_Handler_function)(MPI_Comm *, int *, ...);
OMPI_DECLSPEC int PMPI_Address(void *location, MPI_Aint *address);
OMPI_DECLSPEC int PMPI_Errhandler_create(MPI_Handler_function *function,
                                         MPI_Errhandler *errhandler);
OMPI_DECLSPEC int PMPI_Errhandler_get(MPI_Comm comm,
                                      MPI_Errhandler *errhandler);
OMPI_DECLSPEC int PMPI_Errhandler_set(MPI_Comm comm,
                                      MPI_Errhandler errhandler);
OMPI_DECLSPEC int PMPI_Type_extent(MPI_Datatype type, MPI_Aint *extent);
OMPI_DECLSPEC int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                                     MPI_Aint array_of_displacements[],
                                     MPI_Datatype oldtype,
                                     MPI_Datatype *newtype);
OMPI_DECLSPEC int PMPI_Type_hvector(int count, int blocklength,
                                    MPI_Aint stride, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype);
OMPI_DECLSPEC int PMPI_Type_lb(MPI_Datatype type, MPI_Aint *lb);
OMPI_DECLSPEC int PMPI_Type_struct(int count, int array_of_blocklengths[],
                                   MPI_Aint array_of_displacements[],
                                   MPI_Datatype array_of_types[],
                                   MPI_Datatype *newtype);
OMPI_DECLSPEC int PMPI_Type_ub(MPI_Datatype mtype, MPI_Aint *ub);
#endif

#endif

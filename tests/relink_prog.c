/* Built by Open MPI's own mpicc -c, then linked with -lpdmpi: the
 * object file carries Open MPI's relocations against ompi_mpi_* objects
 * and must run unchanged on pdmpi. Prints one line per rank that the
 * test compares with values it computes itself. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    float x = (float)(rank + 1), sum = 0.0f;
    MPI_Allreduce(&x, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int root_value = rank == 0 ? 42 : -1;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long ranks[64] = { 0 };
    long mine = rank;
    MPI_Allgather(&mine, 1, MPI_LONG, ranks, 1, MPI_LONG, MPI_COMM_WORLD);
    long ranks_sum = 0;
    for (int i = 0; i < size && i < 64; i++)
        ranks_sum += ranks[i];

    printf("rank %d of %d: sum %.1f bcast %d gathered %ld\n", rank, size,
           (double)sum, root_value, ranks_sum);
    MPI_Finalize();
    return 0;
}

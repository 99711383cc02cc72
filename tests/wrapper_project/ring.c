/* Each rank passes its rank around the ring and sums the ranks with
 * MPI_Allreduce; both are checked against n(n-1)/2 and the left rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, left_got = -1, sum = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &left_got, 1, MPI_INT, left, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int good = left_got == left && sum == size * (size - 1) / 2;
    printf("ring_c rank %d of %d: %s\n", rank, size, good ? "ok" : "WRONG");
    MPI_Finalize();
    return good ? 0 : 1;
}

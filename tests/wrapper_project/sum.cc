// A sum over the ranks in C++, through the C interface (MPI's C++ bindings were
// removed in MPI-3.0), with a standard container as the buffer.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<double> mine(4, rank + 1.0), total(4, 0.0);
    MPI_Allreduce(mine.data(), total.data(), 4, MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    double want = size * (size + 1) / 2.0;
    bool good = std::accumulate(total.begin(), total.end(), 0.0) == 4 * want;
    std::printf("sum_cxx rank %d of %d: %s\n", rank, size,
                good ? "ok" : "WRONG");
    MPI_Finalize();
    return good ? 0 : 1;
}

/* ring.c - an MPI job with a known imbalance (tests/mpi): rank r does
 * r + 1 units of work per step, then passes a value around the ring
 * (MPI_Sendrecv) and sums over all ranks (MPI_Allreduce).  With 4 ranks
 * the useful time is 1:2:3:4, so the load balance is 2.5 / 4 = 0.625, and
 * rank 0 spends the largest share of its time in MPI, waiting. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

/* One unit of computing (about 10 ms of CPU here). */
__attribute__((noinline)) static double work(int units)
{
    double x = 0;
    for (long i = 0; i < units * 8000000L; i++)
        x += (double)(i % 7) * 0.5;
    return x;
}

int main(int argc, char **argv)
{
    int rank, size, steps = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double total = 0;
    for (int s = 0; s < steps; s++) {
        double mine = work(rank + 1), got = 0, sum = 0;
        MPI_Sendrecv(&mine, 1, MPI_DOUBLE, (rank + 1) % size, 0, &got, 1, MPI_DOUBLE, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(&got, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        total += sum;
    }
    sink = total;
    if (rank == 0)
        printf("ring: %d ranks, %d steps\n", size, steps);
    MPI_Finalize();
    return 0;
}

/* scans.c - MPI_Scan, MPI_Exscan and the reduce-scatters, with known waits
 * (tests/mpi, check-pmpi.py), n ranks, each phase after an MPI_Barrier:
 *   MPI_Scan on the world, rank r entering after (n-1-r) x 50 ms: rank 0
 *   last, so each rank r waits about r x 50 ms for it (early scan);
 *   MPI_Exscan on the world reversed (MPI_Comm_split, key n-1-r: its rank
 *   c is world rank n-1-c), world rank r entering after r x 50 ms: its
 *   rank 0 last again, its rank c waiting about c x 50 ms (taken in world
 *   order, the waits would be none);
 *   MPI_Reduce_scatter_block of one int per rank, rank r entering after
 *   r x 25 ms: every rank waits for the last, rank n-1;
 *   MPI_Reduce_scatter of r+1 ints to rank r;
 * then the nonblocking MPI_Iallreduce (2 doubles), MPI_Ibcast (16 bytes
 * from rank 1) and MPI_Ibarrier, completed by one MPI_Waitall, and an
 * MPI_Barrier after them, whose number must still match on every rank. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

static void nap(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x = rank + 1, y = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    nap(50L * (size - 1 - rank));
    MPI_Scan(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
    MPI_Barrier(MPI_COMM_WORLD);
    nap(50L * rank);
    MPI_Exscan(&x, &y, 1, MPI_DOUBLE, MPI_SUM, rev);

    int *in = calloc((size_t)size * (size_t)(size + 1), sizeof *in), out[64];
    int *counts = malloc(sizeof *counts * (size_t)size);
    for (int i = 0; i < size; i++)
        counts[i] = i + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    nap(25L * rank);
    MPI_Reduce_scatter_block(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double two[2] = {x, x}, sum[2];
    char msg[16] = "scans";
    MPI_Request q[3];
    MPI_Iallreduce(two, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[0]);
    MPI_Ibcast(msg, 16, MPI_CHAR, 1, MPI_COMM_WORLD, &q[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[2]);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    free(in);
    free(counts);
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return y < 0;
}

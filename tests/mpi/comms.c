/* comms.c - collectives and messages in communicators other than the
 * world's (tests/mpi, check-pmpi.py), with 4 ranks:
 *   ranks 0 and 1 first make and use a duplicate of MPI_COMM_SELF, so
 *   that each half below has another number on its two ranks;
 *   MPI_Comm_split by rank % 2: halves {0, 2} and {1, 3};
 *   each half's rank 1 (world 2, 3) sleeps 100 ms, then MPI_Allreduce on
 *   the half: world ranks 0 and 1 wait about 100 ms each;
 *   MPI_Bcast of 16 chars from each half's rank 0;
 *   half rank 0 sends 8 chars to half rank 1 (world 0 -> 2, 1 -> 3);
 *   MPI_Comm_dup of the world, where rank 3 sleeps 50 ms before an
 *   MPI_Barrier: ranks 0, 1, 2 wait about 50 ms each. */
#include <mpi.h>
#include <time.h>

static void nap(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int rank;
    char buf[16] = "comms";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm self, half, dup;
    if (rank < 2) {
        MPI_Comm_dup(MPI_COMM_SELF, &self);
        MPI_Barrier(self);
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hr;
    MPI_Comm_rank(half, &hr);
    if (hr == 1)
        nap(100);
    double x = rank, sum;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, half);
    MPI_Bcast(buf, 16, MPI_CHAR, 0, half);
    if (hr == 0)
        MPI_Send(buf, 8, MPI_CHAR, 1, 5, half);
    else
        MPI_Recv(buf, 16, MPI_CHAR, 0, 5, half, MPI_STATUS_IGNORE);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 3)
        nap(50);
    MPI_Barrier(dup);
    MPI_Finalize();
    return sum == (rank % 2 == 0 ? 2 : 4) ? 0 : 1;
}

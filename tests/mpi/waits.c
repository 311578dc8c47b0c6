/* waits.c - wait states with known answers (tests/mpi, check-pmpi.py):
 * after a first barrier, rank 0 sleeps 200 ms before it sends to rank 1,
 * whose receive is waiting (late sender: about 200 ms at the MPI_Recv);
 * rank 2 sleeps 300 ms before the second barrier, which the others
 * entered at about 0 ms (rank 3) and 200 ms (ranks 0 and 1): wait at
 * collective about 300 + 100 + 100 = 500 ms at that MPI_Barrier. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    char buf[8] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        usleep(200000);
        MPI_Send(buf, 8, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(buf, 8, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* line 21: the late sender's */
    }
    if (rank == 2)
        usleep(300000);
    MPI_Barrier(MPI_COMM_WORLD); /* line 25: the wait at collective's */
    MPI_Finalize();
    return 0;
}

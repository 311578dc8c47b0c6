/* persist.c - persistent requests with known messages and a known wait
 * (tests/mpi, check-pmpi.py), n ranks in a ring: each rank makes an
 * MPI_Send_init of r+1 ints to rank r+1 and an MPI_Recv_init from rank
 * r-1 (modulo n), then 5 steps of MPI_Startall of the two and
 * MPI_Waitall; at step 2 rank 0 sleeps 100 ms before its Startall, so
 * rank 1 waits about 100 ms for that step's message (a late sender); an
 * MPI_Barrier ends each step, so the delay does not pass on round the ring.
 * Then a single MPI_Start of each and MPI_Wait, and MPI_Request_free. */
#include <mpi.h>
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size;
    static int sbuf[64], rbuf[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Request q[2];
    MPI_Send_init(sbuf, rank + 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD, &q[0]);
    MPI_Recv_init(rbuf, 64, MPI_INT, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &q[1]);
    for (int step = 0; step < 5; step++) {
        if (step == 2 && rank == 0) {
            struct timespec t = {0, 100 * 1000000L};
            nanosleep(&t, NULL);
        }
        MPI_Startall(2, q);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD); /* the next step starts together: the wait does not spread */
    }
    MPI_Start(&q[1]);
    MPI_Start(&q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    MPI_Finalize();
    return 0;
}

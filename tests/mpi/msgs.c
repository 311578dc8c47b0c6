/* msgs.c - messages of known sizes and peers (tests/mpi, check-pmpi.py),
 * recorded through libinstr-mpi.  With n ranks, rank r:
 *   MPI_Send    r*100+8 chars to rank r+1, tag r (even ranks send first)
 *   MPI_Recv    from rank r-1, any tag: (r-1)*100+8 chars
 *   MPI_Isend   r+1 ints to rank r+1, tag 100+r; MPI_Irecv from r-1;
 *               both completed by one MPI_Waitall
 *   MPI_Irecv   from r-1, tag 200; MPI_Send 3 doubles to r+1, tag 200;
 *               MPI_Wait on the receive
 *   MPI_Barrier, MPI_Bcast (64 chars from rank 0), MPI_Allreduce (4 doubles)
 *   MPI_Pcontrol(0), MPI_Barrier (not recorded), MPI_Pcontrol(1), MPI_Barrier
 * (ranks counted modulo n). */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    static char buf[4096], rbuf[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Status st;
    memset(buf, rank, sizeof buf);
    if (rank % 2 == 0) {
        MPI_Send(buf, rank * 100 + 8, MPI_CHAR, next, rank, MPI_COMM_WORLD);
        MPI_Recv(rbuf, sizeof rbuf, MPI_CHAR, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(rbuf, sizeof rbuf, MPI_CHAR, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Send(buf, rank * 100 + 8, MPI_CHAR, next, rank, MPI_COMM_WORLD);
    }
    MPI_Request r[2], q;
    MPI_Irecv(rbuf, 256, MPI_INT, prev, 100 + prev, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(buf, rank + 1, MPI_INT, next, 100 + rank, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    double d[4] = {rank, 1, 2, 3}, sum[4];
    MPI_Irecv(rbuf, 64, MPI_DOUBLE, prev, 200, MPI_COMM_WORLD, &q);
    MPI_Send(d, 3, MPI_DOUBLE, next, 200, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(buf, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Allreduce(d, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return sum[0] == size * (size - 1) / 2 ? 0 : 1;
}

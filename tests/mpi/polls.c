/* polls.c - completions by MPI_Test, Testany, Testall, Testsome, Waitany
 * and Waitsome, and the v collectives, with known sizes (tests/mpi,
 * check-pmpi.py).  With n ranks, rank r receives from r-1 and sends to
 * r+1 (modulo n) one message per step, tag = the step:
 *   1  r+1 ints, completed by an MPI_Test loop
 *   2  two messages (tags 2, 3: 8 and 16 bytes), by MPI_Waitany twice
 *   4  r+2 ints, by an MPI_Testall loop over the receive and the send
 *   5  r+3 ints, by an MPI_Waitsome loop over the receive and the send
 *   6  r+4 ints, by an MPI_Testany loop
 *   7  r+5 ints, by an MPI_Testsome loop over the receive and the send
 * then MPI_Gatherv to rank 0 (r+1 ints from rank r), MPI_Scatterv from
 * rank 0 (i+1 ints to rank i), MPI_Allgatherv (r+1 ints from rank r) and
 * MPI_Alltoallv (one int to each rank). */
#include <mpi.h>
#include <stdlib.h>

static int rbuf[256], sbuf[256];

static void pair(int step, int count, int prev, int next, MPI_Request q[2])
{
    MPI_Irecv(rbuf, 256, MPI_INT, prev, step, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(sbuf, count, MPI_INT, next, step, MPI_COMM_WORLD, &q[1]);
}

int main(int argc, char **argv)
{
    int rank, size, flag = 0, idx, out, ids[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request q[2], two[2], sends[2];
    MPI_Status st;

    pair(1, rank + 1, prev, next, q);
    while (!flag)
        MPI_Test(&q[0], &flag, &st);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);

    static int r2[2][64];
    MPI_Irecv(r2[0], 64, MPI_INT, prev, 2, MPI_COMM_WORLD, &two[0]);
    MPI_Irecv(r2[1], 64, MPI_INT, prev, 3, MPI_COMM_WORLD, &two[1]);
    MPI_Isend(sbuf, 2, MPI_INT, next, 2, MPI_COMM_WORLD, &sends[0]);
    MPI_Isend(sbuf + 2, 4, MPI_INT, next, 3, MPI_COMM_WORLD, &sends[1]);
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
    MPI_Waitany(2, two, &idx, &st);
    MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);

    pair(4, rank + 2, prev, next, q);
    for (flag = 0; !flag;)
        MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);

    pair(5, rank + 3, prev, next, q);
    for (int done = 0; done < 2; done += out)
        MPI_Waitsome(2, q, &out, ids, MPI_STATUSES_IGNORE);

    pair(6, rank + 4, prev, next, q);
    for (flag = 0; !flag;)
        MPI_Testany(1, &q[0], &idx, &flag, &st);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);

    pair(7, rank + 5, prev, next, q);
    for (int done = 0; done < 2; done += out)
        MPI_Testsome(2, q, &out, ids, MPI_STATUSES_IGNORE);

    int *counts = malloc(sizeof *counts * (size_t)size), *displs = malloc(sizeof *displs * (size_t)size);
    int *ones = malloc(sizeof *ones * (size_t)size), *at = malloc(sizeof *at * (size_t)size);
    static int all[4096];
    for (int i = 0, d = 0; i < size; d += i + 1, i++) {
        counts[i] = i + 1;
        displs[i] = d;
        ones[i] = 1;
        at[i] = i;
    }
    MPI_Gatherv(sbuf, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(all, counts, displs, MPI_INT, rbuf, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(sbuf, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(sbuf, ones, at, MPI_INT, all, ones, at, MPI_INT, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    free(ones);
    free(at);
    MPI_Finalize();
    return 0;
}

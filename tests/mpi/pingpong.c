/* pingpong.c - the PMPI wrappers' cost per MPI call (docs/mpi.md): ranks
 * 0 and 1 pass 8 bytes back and forth N times (argv[1], default 200000);
 * rank 0 prints the ns per MPI call (each round trip is 2 calls a rank).
 * Run as one rank, it sends 8 bytes to itself N times (MPI_Sendrecv):
 * no waiting for another process, so the wrappers' cost stands out. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 200000;
    char b[8] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (size == 1) {
            MPI_Sendrecv(b, 8, MPI_CHAR, 0, 0, b + 4, 4, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Send(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("pingpong: %d round trips, %.1f ns per MPI call\n", n, t * 1e9 / (size == 1 ? n : 2.0 * n));
    MPI_Finalize();
    return 0;
}

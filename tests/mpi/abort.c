/* abort.c - an MPI job one of whose ranks ends mid-run (tests/mpi): every
 * rank computes a little and meets the others in MPI_Barrier; then rank 2
 * computes some more and ends itself, by MPI_Abort(world, 3) ("abort") or
 * by raising SIGKILL ("kill"), while the others wait for it in a second
 * MPI_Barrier until the launcher ends them.  Known answers: rank 2's
 * record ends in MPI_Abort or raise, called from end_rank; the others' in
 * MPI_Barrier, called from main. */
#include <mpi.h>
#include <signal.h>
#include <string.h>

static volatile double sink;

/* One unit of computing (about 10 ms of CPU here). */
__attribute__((noinline)) static double work(int units)
{
    double x = 0;
    for (long i = 0; i < units * 8000000L; i++)
        x += (double)(i % 7) * 0.5;
    return x;
}

/* Rank 2's end: it does not return. */
__attribute__((noinline)) static void end_rank(const char *how)
{
    if (!strcmp(how, "kill"))
        raise(SIGKILL);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
    int rank;
    const char *how = argc > 1 ? argv[1] : "abort";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sink = work(2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2) {
        sink = work(10);
        end_rank(how);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

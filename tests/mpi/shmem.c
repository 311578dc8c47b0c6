/* shmem.c - a program with a function another communication library
 * could have named, shmem_wait (tests/mpi, prefixes): run as a rank with
 * a launcher's variables set by hand, it computes 1 unit and spins 3 in
 * shmem_wait, so shmem_wait is about 3/4 of its time: MPI time with
 * --mpi-prefixes=+shmem_, useful time without. */
static volatile double sink;

/* units of computing (about 10 ms of CPU each here). */
__attribute__((noinline)) static double spin(int units)
{
    double x = 0;
    for (long i = 0; i < units * 8000000L; i++)
        x += (double)(i % 7) * 0.5;
    return x;
}

__attribute__((noinline)) double shmem_wait(void)
{
    return spin(3);
}

__attribute__((noinline)) static double compute(void)
{
    return spin(1);
}

int main(void)
{
    sink = compute() + shmem_wait();
    return 0;
}

/* plain.c - a program that is not MPI (tests/mpi, launchers): run with a
 * launcher's variables set by hand, it must take itself for that rank. */
__attribute__((noinline)) static int one(int x)
{
    return x + 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    return one(argc) == 2 ? 0 : 1;
}

/* sud-budget - a thread that makes a system call in every interval, far
 * faster than sud's budget: work() calls getppid, N times.  Prints the
 * number of calls made. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long work(void)
{
    return syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000, sum = 0;
    for (long i = 0; i < n; i++)
        sum += work() > 0;
    printf("calls=%ld\n", sum);
    return 0;
}

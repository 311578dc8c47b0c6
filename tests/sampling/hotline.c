/* hotline.c - one hot loop on one known source line (the line marked HOT),
 * for --view lines. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void hot(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) sink += i * i; /* HOT */
}

int main(int argc, char **argv)
{
    double total = argc > 1 ? atof(argv[1]) : 0.3; /* CPU seconds */
    struct timespec ts;
    do {
        hot(1000000);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while (ts.tv_sec + ts.tv_nsec / 1e9 < total);
    return 0;
}

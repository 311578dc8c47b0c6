/* sample-fp-chain: main -> outer -> middle -> inner, built without unwind
 * tables but with frame pointers (tests/sampling/CMakeLists.txt), busy
 * for the seconds of CPU time given (default 0.3) in inner: on a loaded
 * machine too, as many samples as the rate asks.  For fp-chain.py. */
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) double inner(int n)
{
    volatile double x = 1;
    for (int i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

__attribute__((noinline)) double middle(int n)
{
    double s = 0;
    for (int k = 0; k < 10; k++)
        s += inner(n);
    return s;
}

__attribute__((noinline)) double outer(double secs)
{
    double s = 0, t0 = now();
    while (now() - t0 < secs)
        s += middle(100000);
    return s;
}

int main(int argc, char **argv)
{
    return outer(argc > 1 ? atof(argv[1]) : 0.3) > 0 ? 0 : 1;
}

/* One very hot tiny function (tiny), a caller that loops (work) and a
 * leaf that runs long (slow): for threshold= and --suggest-exclude. */
#include <stdlib.h>

#ifdef WITH_OTHER
int other_tiny(int x); /* other.c */
#else
#define other_tiny(x) 0
#endif
volatile int sink;
__attribute__((noinline)) int tiny(int x) { return x * 3 + 1; }
__attribute__((noinline)) long work(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += tiny(i) + other_tiny(i);
    return s;
}
__attribute__((noinline)) long slow(int n)
{
    long s = 0;
    for (int i = 0; i < n * 1000; i++)
        s += i % 7, sink = i;
    return s;
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    sink = (int)(work(n) + slow(n / 100));
    return 0;
}

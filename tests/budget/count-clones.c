/* count-clones.c - count mode and GCC's clones: at -O2, scale is called with
 * k = 3 only, and GCC makes it scale.constprop.0 (IPA-CP); the report
 * folds the clone into scale's row unless --clones=split. */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) long scale(long x, long k)
{
    return x * k + (x >> 3);
}

__attribute__((noinline)) long twice(long x)
{
    return scale(x, 3) + scale(x + 1, 3);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000, s = 0;
    for (long i = 0; i < n; i++)
        s += twice(i);
    printf("%ld\n", s);
    return 0;
}

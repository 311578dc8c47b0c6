/* pure-merge.c - calls the optimiser merges, hoists or removes in the plain
 * build: a function GCC finds const (weight: arithmetic on its argument)
 * and one it finds pure (lookup: reads a table), neither inlined, called
 * with the same argument in loops.  Plain -O2 calls weight 4 times (once
 * per outer iteration, hoisted from the inner loop) and lookup once per
 * outer iteration (two equal calls merged, then hoisted), not 14,400 and
 * 28,800 times.  check-callgrind.py --plain compares the instrumented
 * build's counts with callgrind's on the plain build: the hooks must not
 * stop those optimisations (issue 20). */
#include <stdio.h>

static int table[64];

__attribute__((noinline)) int weight(int x)
{
    int s = 0;
    for (int i = 0; i < 100; i++)
        s += (x * i) ^ (s >> 3);
    return s;
}

__attribute__((noinline)) int lookup(int x)
{
    return table[x & 63] * 3 + x;
}

__attribute__((noinline)) void fill(int seed)
{
    for (int i = 0; i < 64; i++)
        table[i] = seed * i;
}

int main(int argc, char **argv)
{
    (void)argv;
    long total = 0;
    fill(argc);
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 3600; i++)
            total += weight(argc + r) + lookup(argc + r) - lookup(argc + r) / 2;
    printf("%ld\n", total);
    return 0;
}

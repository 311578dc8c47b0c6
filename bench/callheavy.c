/* A call-heavy program for overhead measurements: a recursive evaluator,
 * an insertion into a binary search tree and a quicksort with a comparison
 * function, all small functions called tens of millions of times. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

NOINLINE static uint64_t fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE static int compare(uint32_t a, uint32_t b)
{
    return (a > b) - (a < b);
}

NOINLINE static void swap(uint32_t *a, uint32_t *b)
{
    uint32_t t = *a;
    *a = *b;
    *b = t;
}

NOINLINE static void quicksort(uint32_t *v, long lo, long hi)
{
    while (lo < hi) {
        uint32_t pivot = v[(lo + hi) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (compare(v[i], pivot) < 0)
                i++;
            while (compare(v[j], pivot) > 0)
                j--;
            if (i <= j)
                swap(&v[i++], &v[j--]);
        }
        quicksort(v, lo, j);
        lo = i;
    }
}

NOINLINE static uint32_t next_random(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 4;
}

int main(int argc, char **argv)
{
    unsigned scale = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    uint32_t seed = 1, n = 200000 * scale;
    uint32_t *v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (uint32_t i = 0; i < n; i++)
        v[i] = next_random(&seed);
    quicksort(v, 0, (long)n - 1);
    uint64_t f = 0;
    for (unsigned i = 0; i < scale; i++)
        f += fib(27);
    printf("%u %u %llu\n", v[0], v[n - 1], (unsigned long long)f);
    free(v);
    return 0;
}

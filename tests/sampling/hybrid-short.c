/* hybrid-short.c - built with the plugin: a very short function, short_fn
 * (about a microsecond), called in a loop from caller(), which spends about
 * as long again on its own between calls.  The samples placed on short_fn
 * must match its Elapsed Exclusive share: samples whose kernel time and the
 * hooks' ticks are misaligned by a microsecond land on caller instead. */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void short_fn(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink += i * 3;
}

__attribute__((noinline)) void caller(unsigned long calls, unsigned n)
{
    for (unsigned long c = 0; c < calls; c++) {
        for (unsigned i = 0; i < n; i++)
            sink ^= i * 5;
        short_fn(n);
    }
}

int main(int argc, char **argv)
{
    unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 400000;
    unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 400;
    caller(calls, n);
    return 0;
}

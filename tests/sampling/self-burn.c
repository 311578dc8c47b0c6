/* self-burn: two functions burning CPU 3:1 for Self % (self-pct.py).
 * Built plainly, GCC clones both (heavy: a constant argument,
 * .constprop.N; light: a structure read through a pointer, .isra.N), so
 * the sampled names are the clones' while the instrumented rows are the
 * origins'. */
#include <stdlib.h>

struct cfg {
    unsigned long n;
    unsigned long unused[4];
};

static volatile unsigned sink;

static __attribute__((noinline)) void heavy(unsigned long n, unsigned k)
{
    unsigned x = sink;
    for (unsigned long i = 0; i < k * n; i++)
        x = x * 1103515245u + 12345u;
    sink = x;
}

static __attribute__((noinline)) void light(const struct cfg *c)
{
    unsigned x = sink;
    for (unsigned long i = 0; i < c->n; i++)
        x = x * 1103515245u + 12345u;
    sink = x;
}

int main(int argc, char **argv)
{
    struct cfg c = {argc > 1 ? strtoul(argv[1], 0, 10) : 50000000, {0}};
    for (int k = 0; k < 8; k++) {
        heavy(c.n / 8, 3);
        light(&(struct cfg){c.n / 8, {0}});
    }
    return 0;
}

/* Exact call counts: recursion, a loop, and a function that inlining removes. */
#include <stdio.h>
#include "e2e-util.h"

NOINLINE static unsigned fib(unsigned n)
{
    if (n < 2)
        return n;
    unsigned r = fib(n - 1) + fib(n - 2);
    /* Keeps -O2 from turning the second call into a loop (tail recursion
     * with an accumulator), so the call count is the textbook one. */
    __asm__ volatile("" : "+r"(r));
    return r;
}

NOINLINE static unsigned leaf(unsigned x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

/* Inlined at -O2: with the default after-inlining placement it has no frame. */
static inline __attribute__((always_inline)) unsigned tiny(unsigned x)
{
    return x * 3;
}

UNPROFILED NOINLINE static unsigned hidden(unsigned x)
{
    __asm__ volatile("" : "+r"(x));
    return x ^ 1;
}

int main(void)
{
    unsigned sum = fib(20); /* 21891 calls */
    for (unsigned i = 0; i < 1000; i++)
        sum += leaf(i) + tiny(i) + hidden(i);
    printf("sum=%u\n", sum);
    return 0;
}

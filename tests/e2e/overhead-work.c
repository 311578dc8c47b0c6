/* The workload of the overhead test (overhead.c, check-overhead.py):
 * compiled twice into one program, with the plugin (leaf, caller) and
 * without it (plain_leaf, plain_caller, -DOVERHEAD_PLAIN), so the program
 * times the same code uninstrumented. */
#include "e2e-util.h"

#ifdef OVERHEAD_PLAIN
#define W(name) plain_##name
#else
#define W(name) name
#endif

void W(caller)(unsigned calls);

/* A known cost per call: a short store-dependent loop, no calls inside. */
NOINLINE static void W(leaf)(volatile unsigned *x)
{
    for (unsigned i = 0; i < 150; i++)
        *x += i;
}

/* Many short calls under one caller. */
NOINLINE void W(caller)(unsigned calls)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < calls; i++)
        W(leaf)(&x);
}

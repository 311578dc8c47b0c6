/* The workloads of the overhead test (overhead.c, check-overhead.py):
 * compiled twice into one program, with the plugin (caller, leaf,
 * ilp_caller, ilp_leaf) and without it (the same names with plain_,
 * -DOVERHEAD_PLAIN), so the program times the same code uninstrumented. */
#include "e2e-util.h"

#ifdef OVERHEAD_PLAIN
#define W(name) plain_##name
#else
#define W(name) name
#endif

void W(caller)(unsigned calls);
void W(ilp_caller)(unsigned calls);

/* A loop that waits on its own stores: its cost moves with the machine's
 * state (the core may forward each store to the next load at once, or
 * not), and an out-of-order core runs part of the hooks' work in the
 * shadow of that wait (docs/reading-a-report.md: "Probe overhead"). */
NOINLINE static void W(leaf)(volatile unsigned *x)
{
    for (unsigned i = 0; i < 150; i++)
        *x += i;
}

/* A known cost per call: independent arithmetic, no memory and no chain
 * long enough to hide other work (the hooks' instructions share the
 * core's issue slots with it, as they do with most code). */
NOINLINE static void W(ilp_leaf)(volatile unsigned *x)
{
    unsigned a = *x, b = 1, c = 2, d = 3;
    for (unsigned i = 0; i < 700; i++) {
        a += i;
        b ^= i;
        c += a;
        d ^= b;
        __asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    }
    *x = a + b + c + d;
}

/* Many short calls under one caller. */
NOINLINE void W(caller)(unsigned calls)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < calls; i++)
        W(leaf)(&x);
}

NOINLINE void W(ilp_caller)(unsigned calls)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < calls; i++)
        W(ilp_leaf)(&x);
}

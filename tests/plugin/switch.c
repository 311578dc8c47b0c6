/* switch.c - a program built with -fplugin-arg-instr-switchable: it
 * counts its own calls and prints them, and switches the hooks on for one
 * phase only (check-switch.sh compares the dump with its counts). */
#include <stdio.h>
#include <stdlib.h>

#include <instr/instr.h>

static unsigned long outside_calls, phase_calls, rec_calls;

__attribute__((noinline)) unsigned long outside(unsigned long x)
{
    outside_calls++;
    return x * 2654435761u;
}

__attribute__((noinline)) unsigned long in_phase(unsigned long x)
{
    phase_calls++;
    return x ^ (x >> 3);
}

__attribute__((noinline)) unsigned long rec(unsigned n)
{
    rec_calls++;
    return n < 2 ? n : rec(n - 1) + in_phase(n);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
    unsigned long t = 0;
    for (unsigned i = 0; i < n; i++)
        t += outside(i);
    instr_start();
    for (unsigned i = 0; i < n; i++)
        t += in_phase(i);
    t += rec(50);
    instr_stop();
    for (unsigned i = 0; i < n; i++)
        t += outside(i);
    printf("sum %lu\noutside %lu\nin_phase %lu\nrec %lu\n", t, outside_calls, phase_calls, rec_calls);
    return 0;
}

/* Elapsed vs Application: a sleeping function and a busy one. */
#include <stdio.h>
#include "e2e-util.h"

NOINLINE static void step(volatile unsigned *x)
{
    for (int i = 0; i < 2000; i++)
        *x += i;
}

/* Busy ~50 ms in small steps, so that a rare preemption flags only a step. */
NOINLINE static void spinner(void)
{
    volatile unsigned x = 0;
    uint64_t end = e2e_now_ns() + 50000000u;
    while (e2e_now_ns() < end)
        step(&x);
}

NOINLINE static void sleeper(void)
{
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
}

int main(void)
{
    uint64_t start = e2e_now_ns();
    sleeper();
    spinner();
    printf("main_ns=%llu\n", (unsigned long long)(e2e_now_ns() - start));
    return 0;
}

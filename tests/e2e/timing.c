/* Elapsed vs Application: a sleeping function and a busy one. */
#include <stdio.h>
#include "e2e-util.h"

NOINLINE static void step(volatile unsigned *x)
{
    for (int i = 0; i < 2000; i++)
        *x += i;
}

UNPROFILED static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy ~50 ms in small steps, so that a preemption flags only a step.  On a
 * loaded machine the thread is preempted anyway: its own CPU time is the
 * oracle for its Application time. */
static uint64_t spinner_cpu_ns;
NOINLINE static void spinner(void)
{
    volatile unsigned x = 0;
    uint64_t cpu = thread_cpu_ns();
    uint64_t end = e2e_now_ns() + 50000000u;
    while (e2e_now_ns() < end)
        step(&x);
    spinner_cpu_ns = thread_cpu_ns() - cpu;
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
    printf("spinner_cpu_ns=%llu\n", (unsigned long long)spinner_cpu_ns);
    return 0;
}

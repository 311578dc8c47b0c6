/* Probe-overhead compensation against the uninstrumented truth: the same
 * workload (overhead-work.c) runs uninstrumented (plain_caller) and
 * instrumented (caller), interleaved, REPS times each.  Prints the thread
 * CPU time and wall time the plain runs took: check-overhead.py compares
 * them with caller's Elapsed Inclusive (compensated and --raw). */
#include <stdio.h>
#include <stdlib.h>
#include "e2e-util.h"

#define REPS 20
#define CALLS 5000

void caller(unsigned calls);
void plain_caller(unsigned calls);

UNPROFILED static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

UNPROFILED int main(void)
{
    uint64_t cpu = 0, wall = 0;
    plain_caller(CALLS); /* warm both up; caller's first call registers it */
    caller(CALLS);
    for (int r = 0; r < REPS; r++) {
        uint64_t w0 = e2e_now_ns(), c0 = thread_cpu_ns();
        plain_caller(CALLS);
        uint64_t c1 = thread_cpu_ns(), w1 = e2e_now_ns();
        cpu += c1 - c0;
        wall += w1 - w0;
        caller(CALLS);
    }
    /* plain_calls: the calls the plain times cover (the warm-up is not timed);
     * calls: the instrumented ones (the warm-up is recorded). */
    printf("plain_cpu_ns=%llu plain_wall_ns=%llu plain_calls=%u calls=%u caller_calls=%u\n",
           (unsigned long long)cpu, (unsigned long long)wall, REPS * CALLS, (REPS + 1) * CALLS, REPS + 1);
    return 0;
}

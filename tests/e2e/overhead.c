/* Probe-overhead compensation against the uninstrumented truth: each
 * workload (overhead-work.c) runs uninstrumented (plain_caller,
 * plain_ilp_caller) and instrumented (caller, ilp_caller), interleaved,
 * REPS times each.  Prints the thread CPU time and wall time the plain
 * runs took: check-overhead.py compares them with the callers' Elapsed
 * Inclusive (compensated and --raw). */
#include <stdio.h>
#include <stdlib.h>
#include "e2e-util.h"

#define REPS 20
#define CALLS 5000
#define ILP_CALLS 1000

void caller(unsigned calls);
void plain_caller(unsigned calls);
void ilp_caller(unsigned calls);
void plain_ilp_caller(unsigned calls);

UNPROFILED static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One workload: its plain run timed (CPU and wall), its instrumented run
 * recorded. */
UNPROFILED static void one(void (*plain)(unsigned), void (*instr)(unsigned), unsigned calls, uint64_t *cpu,
                           uint64_t *wall)
{
    uint64_t w0 = e2e_now_ns(), c0 = thread_cpu_ns();
    plain(calls);
    uint64_t c1 = thread_cpu_ns(), w1 = e2e_now_ns();
    *cpu += c1 - c0;
    *wall += w1 - w0;
    instr(calls);
}

UNPROFILED int main(void)
{
    uint64_t cpu = 0, wall = 0, ilp_cpu = 0, ilp_wall = 0;
    /* warm all up; each caller's first call registers it */
    plain_caller(CALLS);
    caller(CALLS);
    plain_ilp_caller(ILP_CALLS);
    ilp_caller(ILP_CALLS);
    for (int r = 0; r < REPS; r++) {
        one(plain_caller, caller, CALLS, &cpu, &wall);
        one(plain_ilp_caller, ilp_caller, ILP_CALLS, &ilp_cpu, &ilp_wall);
    }
    /* plain_calls: the calls the plain times cover (the warm-up is not timed);
     * calls: the instrumented ones (the warm-up is recorded). */
    printf("plain_cpu_ns=%llu plain_wall_ns=%llu plain_calls=%u calls=%u caller_calls=%u "
           "ilp_plain_cpu_ns=%llu ilp_plain_wall_ns=%llu ilp_plain_calls=%u ilp_calls=%u\n",
           (unsigned long long)cpu, (unsigned long long)wall, REPS * CALLS, (REPS + 1) * CALLS, REPS + 1,
           (unsigned long long)ilp_cpu, (unsigned long long)ilp_wall, REPS * ILP_CALLS, (REPS + 1) * ILP_CALLS);
    return 0;
}

/* CPU Inclusive against the thread's own CPU clock, on a machine loaded by
 * competing busy threads: a busy loop with no calls inside (preempted
 * within one interval), the same work in short calls (many intervals, some
 * preempted), and a sleep (off the CPU). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "e2e-util.h"

#define COMPETITORS 3 /* with this thread, four runnable threads on one CPU */

static atomic_int stop;

UNPROFILED static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

UNPROFILED static void *compete(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        __asm__ volatile("" ::: "memory");
    return NULL;
}

/* About 100 ms of CPU work with no call inside: one interval from entry to
 * exit, preempted many times. */
NOINLINE static unsigned busy_loop(unsigned n)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < n; i++)
        x += i;
    return x;
}

NOINLINE static void step(volatile unsigned *x)
{
    for (int i = 0; i < 200000; i++)
        *x += (unsigned)i;
}

/* The same work in 500 calls: many intervals, the preempted ones flagged.
 * Few events, so the runtime's own work (chunk switches, charged to
 * nobody but inside the program's measurement) stays negligible. */
NOINLINE static unsigned busy_calls(void)
{
    volatile unsigned x = 0;
    for (int i = 0; i < 500; i++)
        step(&x);
    return x;
}

NOINLINE static void sleeper(void)
{
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
}

/* This thread and (by inheritance) its competitors on one CPU, the first
 * this process may use: preempted whatever the machine's size or load. */
UNPROFILED static void one_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            CPU_ZERO(&set);
            CPU_SET(c, &set);
            sched_setaffinity(0, sizeof set, &set);
            return;
        }
}

int main(void)
{
    one_cpu();
    pthread_t t[COMPETITORS];
    for (int i = 0; i < COMPETITORS; i++)
        pthread_create(&t[i], NULL, compete, NULL);
    uint64_t c0 = thread_cpu_ns();
    busy_loop(100000000u);
    uint64_t c1 = thread_cpu_ns();
    busy_calls();
    uint64_t c2 = thread_cpu_ns();
    atomic_store(&stop, 1);
    for (int i = 0; i < COMPETITORS; i++)
        pthread_join(t[i], NULL);
    sleeper();
    printf("busy_loop_cpu_ns=%llu\n", (unsigned long long)(c1 - c0));
    printf("busy_calls_cpu_ns=%llu\n", (unsigned long long)(c2 - c1));
    return 0;
}

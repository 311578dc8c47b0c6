/* Application time against an independent oracle: the thread's own
 * getrusage(RUSAGE_THREAD) context-switch counts and CLOCK_THREAD_CPUTIME_ID,
 * read around each call of interest (check-app-oracle.py compares them with
 * the flags of the call's intervals in the dump).
 *
 * Phase A: a noise thread hammers system calls on the other CPU while this
 * thread (pinned) alternates short spins (no system call, no switch unless
 * the machine preempts it) and sleeps (always a switch).  Phase B: a
 * competitor spins on this thread's CPU while it spins longer (preempted
 * now and then).  Prints one line per call: phase, kind, switches
 * (voluntary + involuntary), thread CPU ns, wall ns, and the thread's
 * switch count at the call's first and last read (a switch between one
 * call's last read and the next one's first is in no call's count). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define UNPROFILED __attribute__((no_instrument_function))

#define SPINS_A 300
#define SLEEPS_A 100
#define SPINS_B 12

NOINLINE void spin_work(unsigned long iters)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < iters; i++)
        x += i;
}

NOINLINE void sleep_work(void)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

struct call {
    char phase, kind;
    long switches, s0, s1;
    long long cpu_ns, wall_ns;
};
static struct call calls[SPINS_A + SLEEPS_A + SPINS_B];
static int ncalls;
static volatile int stop_noise, stop_competitor;

UNPROFILED static long long ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

UNPROFILED static long switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* One call of interest, the oracle read outside it.  The switch counts
 * innermost: the CPU clock read is a system call, and a switch during it
 * happens outside the call (the hooks place it there, rightly), so it must
 * be outside the two counts too. */
UNPROFILED static void measured(char phase, char kind, unsigned long iters)
{
    struct call *c = &calls[ncalls++];
    long long c0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
    long s0 = switches();
    if (kind == 's')
        spin_work(iters);
    else
        sleep_work();
    long s1 = switches();
    long long w1 = ns(CLOCK_MONOTONIC), c1 = ns(CLOCK_THREAD_CPUTIME_ID);
    *c = (struct call){phase, kind, s1 - s0, s0, s1, c1 - c0, w1 - w0};
}

UNPROFILED static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

UNPROFILED static void *noise(void *arg)
{
    pin(*(int *)arg);
    while (!stop_noise)
        getppid();
    return NULL;
}

UNPROFILED static void *competitor(void *arg)
{
    pin(*(int *)arg);
    while (!stop_competitor)
        __asm__ volatile("" ::: "memory");
    return NULL;
}

/* Spin iterations that take about us microseconds here (the same loop,
 * not recorded). */
UNPROFILED static void spin_plain(unsigned long iters)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < iters; i++)
        x += i;
}

UNPROFILED static unsigned long iters_for(long long us)
{
    long long t0 = ns(CLOCK_THREAD_CPUTIME_ID);
    spin_plain(1000000);
    long long t = ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    return (unsigned long)(1000000.0 * us * 1000 / (t > 0 ? t : 1));
}

UNPROFILED int main(void)
{
    int me = 0, other = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
    pin(me);
    unsigned long short_iters = iters_for(100), long_iters = iters_for(10000);
    /* Not measured: the thread's first hook creates its recording state
     * and the first call of a function registers it, runtime work (it may
     * block: a switch the oracle would count) that the report cuts out of
     * every value. */
    spin_work(short_iters);
    sleep_work();
    pthread_t th;
    pthread_create(&th, NULL, noise, &other);
    for (int i = 0; i < SPINS_A + SLEEPS_A; i++)
        measured('A', i % 4 == 3 ? 'z' : 's', short_iters);
    stop_noise = 1;
    pthread_join(th, NULL);
    pthread_create(&th, NULL, competitor, &me);
    for (int i = 0; i < SPINS_B; i++)
        measured('B', 's', long_iters);
    stop_competitor = 1;
    pthread_join(th, NULL);
    printf("cpus %ld\nwarmup 2\n", sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 0; i < ncalls; i++)
        printf("call %d %c %c %ld %lld %lld %ld %ld\n", i, calls[i].phase, calls[i].kind, calls[i].switches,
               calls[i].cpu_ns, calls[i].wall_ns, calls[i].s0, calls[i].s1);
    return 0;
}

/* sampler-lost.c - built with the plugin, run with INSTR_SAMPLE: two
 * threads, one after the other, each spinning SECONDS (argv[1], default 1)
 * of its CPU time in one call, without a chunk switch, so their rings are
 * drained only at their end.  The first gets a large ring (the runtime's
 * budget for them), the second the smallest (64 KiB: 2,730 samples), which
 * a fast rate overflows: its losses are known only at its end
 * (runtime/sampler.c, last_lost).  spin_a's samples are what spin_b's
 * samples and losses should add up to. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 1.0;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Inlined with a different tag in each: two functions the compiler
 * cannot fold into one. */
static inline __attribute__((always_inline)) void spin(unsigned long tag)
{
    double end = cpu_s() + seconds;
    do {
        for (unsigned long i = 0; i < 1000000; i++)
            sink += i * i + tag;
    } while (cpu_s() < end);
}

__attribute__((noinline)) void spin_a(void)
{
    spin(1);
}

__attribute__((noinline)) void spin_b(void)
{
    spin(3);
}

static void *run_a(void *arg)
{
    (void)arg;
    spin_a();
    return NULL;
}

static void *run_b(void *arg)
{
    (void)arg;
    spin_b();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = atof(argv[1]);
    pthread_t t;
    if (pthread_create(&t, NULL, run_a, NULL) || pthread_join(t, NULL))
        return 1;
    if (pthread_create(&t, NULL, run_b, NULL) || pthread_join(t, NULL))
        return 1;
    return 0;
}

/* primes: a small C program worth profiling.
 *
 * Two worker threads count primes in two ranges with different algorithms
 * (trial division vs. a sieve), the main thread sleeps while it waits and
 * then prints a summary sorted with qsort.  In the report, compare Elapsed
 * and Application time: waiting (sleep, join) is Elapsed but not Application.
 *
 * instr instruments after inlining, so a function the optimiser inlines has
 * no frame of its own.  The workers' helpers are kept out of line here
 * (OUT_OF_LINE) so the example shows them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OUT_OF_LINE __attribute__((noinline))

struct job {
    const char *name;
    uint32_t lo, hi;
    uint32_t count;
};

OUT_OF_LINE static int is_prime(uint32_t n)
{
    if (n < 2)
        return 0;
    for (uint32_t d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

OUT_OF_LINE static uint32_t count_by_division(uint32_t lo, uint32_t hi)
{
    uint32_t count = 0;
    for (uint32_t n = lo; n < hi; n++)
        count += is_prime(n);
    return count;
}

OUT_OF_LINE static uint32_t count_by_sieve(uint32_t lo, uint32_t hi)
{
    uint8_t *composite = calloc(hi, 1);
    uint32_t count = 0;
    if (!composite)
        return 0;
    for (uint32_t p = 2; (uint64_t)p * p < hi; p++)
        if (!composite[p])
            for (uint32_t m = p * p; m < hi; m += p)
                composite[m] = 1;
    for (uint32_t n = lo < 2 ? 2 : lo; n < hi; n++)
        count += !composite[n];
    free(composite);
    return count;
}

static void *division_worker(void *arg)
{
    struct job *job = arg;
    pthread_setname_np(pthread_self(), "division");
    job->count = count_by_division(job->lo, job->hi);
    return NULL;
}

static void *sieve_worker(void *arg)
{
    struct job *job = arg;
    pthread_setname_np(pthread_self(), "sieve");
    for (int round = 0; round < 20; round++)
        job->count = count_by_sieve(job->lo, job->hi);
    return NULL;
}

static void wait_a_little(void)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static int by_count(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    return (x->count > y->count) - (x->count < y->count);
}

int main(void)
{
    struct job jobs[2] = {{"division", 0, 300000, 0}, {"sieve", 0, 3000000, 0}};
    pthread_t t[2];
    pthread_create(&t[0], NULL, division_worker, &jobs[0]);
    pthread_create(&t[1], NULL, sieve_worker, &jobs[1]);
    wait_a_little();
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    qsort(jobs, 2, sizeof jobs[0], by_count);
    for (int i = 0; i < 2; i++)
        printf("%-8s primes below %u: %u\n", jobs[i].name, jobs[i].hi, jobs[i].count);
    return 0;
}

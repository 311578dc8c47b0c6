/* Wall Inclusive: one function run by 4 threads at once.  Each thread
 * enters it, waits there for the others (a barrier), then sleeps to one
 * shared deadline: the function is on 4 stacks at once for nearly all its
 * time, so its Elapsed Inclusive, summed over the threads, is about 4
 * times its Wall Inclusive, whatever the machine's load (no CPU needed). */
#include <pthread.h>
#include <stdio.h>
#include "e2e-util.h"

#define THREADS 4

static pthread_barrier_t barrier;
static struct timespec deadline;

NOINLINE static void crunch(void)
{
    pthread_barrier_wait(&barrier);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL))
        ;
}

static void *worker(void *arg)
{
    (void)arg;
    crunch();
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    uint64_t start = e2e_now_ns();
    uint64_t end = start + 500000000u; /* 500 ms after the start, the same for all */
    deadline.tv_sec = (time_t)(end / 1000000000u);
    deadline.tv_nsec = (long)(end % 1000000000u);
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("main_ns=%llu\n", (unsigned long long)(e2e_now_ns() - start));
    return 0;
}

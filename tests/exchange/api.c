/* api.c - the public event/counter API (include/instr/instr.h) end to end:
 * marks and counters before main, in main, in a thread, and after exit
 * has begun.  Built with the plugin (recorded) and without it (must link,
 * run and record nothing).  Prints what it did, for check-consumers.py. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <instr/instr.h>

#define FRAMES 5

static volatile int sink;

__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n * 1000; i++)
        sink += i;
}

__attribute__((constructor)) static void early(void)
{
    instr_event("before main");
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < FRAMES; i++) {
        instr_event("Worker Tick");
        instr_counter("worker depth", -i);
        work(1);
    }
    return NULL;
}

static void late(void)
{
    instr_event("at exit");
}

int main(void)
{
    atexit(late);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL))
        return 1;
    for (int i = 0; i < FRAMES; i++) {
        instr_event("Frame Start");
        instr_counter("queue depth", i * 10);
        work(2);
    }
    pthread_join(t, NULL);
    printf("frames %d\n", FRAMES);
    return 0;
}

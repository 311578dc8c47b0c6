/* blocked-exit.c - a thread blocked in the kernel when the process ends
 * (issue 20 §2): the worker computes a little, then waits on a condition
 * nobody signals; main sleeps 1 s and calls exit().  The worker's open
 * frames are closed at the end, and its wait must count neither as
 * Application nor as CPU time (check-blocked-exit.py).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go;
__attribute__((noinline)) int work(int x) { return x * 3 + 1; }
__attribute__((noinline)) void *worker(void *arg)
{
    (void)arg;
    int s = 0;
    for (int i = 0; i < 1000; i++) s += work(i);
    pthread_mutex_lock(&m);
    while (!go)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return (void *)(long)s;
}
int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    sleep(1);
    exit(0);
}

/* Two named threads with exact call counts, and a forked child. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "e2e-util.h"

NOINLINE static unsigned work(unsigned x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

static void *worker(void *arg)
{
    unsigned n = (unsigned)(uintptr_t)arg, sum = 0;
    char name[16];
    snprintf(name, sizeof name, "worker-%u", n);
    pthread_setname_np(pthread_self(), name);
    for (unsigned i = 0; i < 1000 * n; i++)
        sum += work(i);
    return (void *)(uintptr_t)sum;
}

NOINLINE static void child_work(void)
{
    for (unsigned i = 0; i < 7; i++)
        work(i);
}

int main(void)
{
    pthread_t t[2];
    for (unsigned i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (unsigned i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        return 0;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status));
    return 0;
}

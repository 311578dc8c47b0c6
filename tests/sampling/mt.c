/* mt.c - threads, fork and exec: a busy thread, a sleeping thread, and a
 * forked child that spins, then execs itself and spins again. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_thread(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_for(double cpu_s)
{
    double t0 = cpu_thread();
    while (cpu_thread() - t0 < cpu_s)
        for (int i = 0; i < 10000; i++)
            sink += (unsigned long)i * i;
}

__attribute__((noinline)) static void *busy_thread(void *a)
{
    (void)a;
    spin_for(0.3);
    return NULL;
}

__attribute__((noinline)) static void *sleepy_thread(void *a)
{
    (void)a;
    struct timespec ts = {0, 400000000};
    nanosleep(&ts, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) { /* after exec */
        spin_for(0.2);
        return 0;
    }
    pthread_t a, b;
    pthread_create(&a, NULL, busy_thread, NULL);
    pthread_setname_np(a, "busy");
    pthread_create(&b, NULL, sleepy_thread, NULL);
    pthread_setname_np(b, "sleepy");
    pid_t p = fork();
    if (p == 0) {
        spin_for(0.1); /* the forked image, before its exec */
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(127);
    }
    spin_for(0.2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* small-dumps.c - processes that make few calls, for check-small-dumps.py:
 * each mode prints the calls it made of work() ("work N"), so the checker
 * compares the report with the program's own count.
 *   hello           one call, exit(0)
 *   fork N          N children, each 3 calls; even ones _exit(0), odd ones exit(5)
 *   threads N       N threads of 3 calls each, joined
 *   wait            3 calls, "ready", then waits to be killed
 *   big N           N calls (a dump of several MB) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void work(unsigned long i)
{
    sink += i;
}

static void *thread_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        work((unsigned long)i);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hello";
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (!strcmp(mode, "hello")) {
        work(1);
        printf("work 1\n");
    } else if (!strcmp(mode, "fork")) {
        printf("work %ld\n", 3 * n);
        fflush(stdout);
        for (long c = 0; c < n; c++) {
            pid_t pid = fork();
            if (pid == 0) {
                for (int i = 0; i < 3; i++)
                    work((unsigned long)i);
                if (c % 2)
                    exit(5);
                _exit(0);
            }
            waitpid(pid, NULL, 0);
        }
    } else if (!strcmp(mode, "threads")) {
        pthread_t t[64];
        if (n > 64)
            n = 64;
        for (long i = 0; i < n; i++)
            pthread_create(&t[i], NULL, thread_main, NULL);
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        printf("work %ld\n", 3 * n);
    } else if (!strcmp(mode, "wait")) {
        for (int i = 0; i < 3; i++)
            work((unsigned long)i);
        printf("work 3\nready\n");
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(mode, "big")) {
        for (long i = 0; i < n; i++)
            work((unsigned long)i);
        printf("work %ld\n", n);
    }
    return 0;
}

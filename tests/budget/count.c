/* count.c - known call counts for the plugin's mode=count (check-count.sh):
 * 4 threads and main call mid, which calls leaf twice; then 2 more threads,
 * after the first 4 ended (their stacks and the runtime's entries are used
 * again); one indirect call; a forked child that counts on its own. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define AGAIN 2
#define PER_THREAD 100000

volatile long sink;

__attribute__((noipa)) int leaf(int x)
{
    return x * 3 + 1;
}

__attribute__((noipa)) int mid(int x)
{
    return leaf(x) + leaf(x + 1);
}

__attribute__((noipa)) void *worker(void *arg)
{
    long s = 0;
    for (int i = 0; i < PER_THREAD; i++)
        s += mid(i);
    sink += s;
    return arg;
}

int (*volatile through)(int) = leaf;

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, NULL))
            return 1;
    for (int i = 0; i < 1000; i++)
        sink += mid(i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < AGAIN; i++)
        if (pthread_create(&t[i], NULL, worker, NULL))
            return 1;
    for (int i = 0; i < AGAIN; i++)
        pthread_join(t[i], NULL);
    sink += through(5);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 7; i++)
            sink += mid(i);
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

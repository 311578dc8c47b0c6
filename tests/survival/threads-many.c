/* threads-many.c - a thread-per-task program: N short threads, two alive
 * at a time, each making 2,000 calls of a small function.  Its report must
 * cost time linear (n log n) in the threads, not quadratic (issue 22 §4):
 * check-threads-many.py times the report of two sizes.
 * Usage: threads-many N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

__attribute__((noinline)) static void tick(unsigned i)
{
    sink += i;
}

static void *task(void *arg)
{
    for (unsigned i = 0; i < 2000; i++)
        tick(i + (unsigned)(size_t)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < n; i += 2) {
        pthread_t a, b;
        if (pthread_create(&a, NULL, task, (void *)i) != 0)
            return 1;
        int two = i + 1 < n && pthread_create(&b, NULL, task, (void *)(i + 1)) == 0;
        pthread_join(a, NULL);
        if (two)
            pthread_join(b, NULL);
    }
    printf("threads %ld calls %ld\n", n, n * 2000);
    return 0;
}

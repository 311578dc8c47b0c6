/* Calls into uninstrumented code: each must appear as its own frame under
 * the function that made the call, with exact call counts.  The program
 * prints what it cannot know in advance (qsort's comparisons). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static unsigned compares;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;

NOINLINE static void do_writes(void)
{
    for (int i = 0; i < 10; i++)
        if (write(1, "w\n", 2) != 2)
            abort();
}

NOINLINE static void do_allocs(void)
{
    for (int i = 0; i < 100; i++) {
        void *volatile p = malloc(64 + (size_t)i);
        free(p);
    }
}

NOINLINE static int cmp(const void *a, const void *b)
{
    compares++;
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

NOINLINE static void sort_it(void)
{
    unsigned v[200];
    for (unsigned i = 0; i < 200; i++)
        v[i] = (i * 7919u) % 211u;
    qsort(v, 200, sizeof v[0], cmp);
}

NOINLINE static void *locker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        for (int k = 0; k < 200; k++)
            shared += (unsigned long)k; /* hold it a while: contention */
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

NOINLINE static void contend(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, locker, NULL);
    pthread_create(&b, NULL, locker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}

NOINLINE static int twice(int x)
{
    __asm__ volatile("" : "+r"(x));
    return 2 * x;
}

int (*volatile op)(int) = twice;

NOINLINE static int apply(void)
{
    int s = 0;
    for (int i = 0; i < 50; i++)
        s += op(i); /* an indirect call to an instrumented function: one frame */
    return s;
}

int main(void)
{
    do_writes();
    do_allocs();
    sort_it();
    contend();
    int s = apply();
    printf("compares=%u sum=%d\n", compares, s);
    return 0;
}

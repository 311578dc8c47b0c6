/* count-atomic.c - why count mode counts per thread: the cost of the
 * increment a counter at every entry and call site needs, plain (one
 * thread's own copy: what mode=count does) against `lock add` (one shared
 * counter, exact across threads), in the same call-heavy loop.
 *
 *   bench-count-atomic [calls-millions] [threads]
 * prints ns per call for: no counter, plain increments, lock add. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long c_fn[2], c_edge[2]; /* [0] plain, [1] atomic */

#define NOINLINE __attribute__((noinline, noclone))
#define PLAIN(x) ((x)++)
#define LOCKED(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)
#define NONE(x) ((void)0)

#define VARIANT(name, INC, i)                                                                      \
    NOINLINE static int name##_leaf(int x)                                                         \
    {                                                                                              \
        INC(c_fn[i]);                                                                              \
        return x * 3 + 1;                                                                          \
    }                                                                                              \
    NOINLINE static int name##_mid(int x)                                                          \
    {                                                                                              \
        INC(c_fn[i]);                                                                              \
        INC(c_edge[i]);                                                                            \
        int a = name##_leaf(x);                                                                    \
        INC(c_edge[i]);                                                                            \
        return a + name##_leaf(a);                                                                 \
    }                                                                                              \
    static void *name##_run(void *n)                                                               \
    {                                                                                              \
        long s = 0;                                                                                \
        for (long k = 0; k < (long)n; k++)                                                         \
            s += name##_mid((int)k);                                                               \
        return (void *)s;                                                                          \
    }

VARIANT(none, NONE, 0)
VARIANT(plain, PLAIN, 0)
VARIANT(locked, LOCKED, 1)

static double run(void *(*fn)(void *), long iters, int threads)
{
    struct timespec t0, t1;
    pthread_t t[64];
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, fn, (void *)iters);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    return ns / (iters * 3.0); /* three calls per iteration, per thread */
}

int main(int argc, char **argv)
{
    long iters = (argc > 1 ? atol(argv[1]) : 30) * 1000000L / 3;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (threads < 1 || threads > 64)
        return 1;
    for (int r = 0; r < 3; r++) {
        double n = run(none_run, iters, threads), p = run(plain_run, iters, threads),
               l = run(locked_run, iters, threads);
        printf("threads %d: ns per call: none %.2f  plain increments %.2f (+%.2f)  lock add %.2f (+%.2f)\n",
               threads, n, p, p - n, l, l - n);
    }
    return 0;
}

/* waits.c - a function that waits three ways (a pipe read released by
 * another thread, a contended mutex, a sleep) and computes once, each about
 * 30 ms; check-waits.py compares its report's Elapsed and Application
 * values.  lock_wait() wraps pthread_mutex_lock so that the pattern test
 * works without call-site frames.  compute() is preempted when the machine
 * is busy: it prints its on-CPU time, the oracle for its Application time. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define WAIT_NS 30000000L

static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int holding;

static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static void *helper(void *arg)
{
    (void)arg;
    sleep_ns(WAIT_NS);
    (void)!write(fds[1], "x", 1); /* releases reader() */
    pthread_mutex_lock(&mu);
    holding = 1;
    sleep_ns(WAIT_NS); /* lock_wait() waits for this */
    pthread_mutex_unlock(&mu);
    return NULL;
}

__attribute__((noinline)) void reader(void)
{
    char c;
    (void)!read(fds[0], &c, 1);
}

__attribute__((noinline)) void lock_wait(void)
{
    pthread_mutex_lock(&mu);
    pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) void sleeper(void)
{
    sleep_ns(WAIT_NS);
}

static long compute_oncpu_ns, lock_wait_ns;
/* compute's longest loop turns (wall ns), longest first: a flagged interval
 * of compute is one turn, and a turn the host stole the CPU in (steal time,
 * which the thread's CPU clock counts on a VM) is long. */
#define TURNS 16
static long longest_turn_ns[TURNS];

static void note_turn(long ns)
{
    int i = TURNS - 1;
    if (ns <= longest_turn_ns[i])
        return;
    for (; i > 0 && longest_turn_ns[i - 1] < ns; i--)
        longest_turn_ns[i] = longest_turn_ns[i - 1];
    longest_turn_ns[i] = ns;
}

__attribute__((noinline)) double compute(void)
{
    struct timespec t0, t1, prev, c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    volatile double x = 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    prev = t0;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        note_turn((t1.tv_sec - prev.tv_sec) * 1000000000L + (t1.tv_nsec - prev.tv_nsec));
        prev = t1;
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < WAIT_NS);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    compute_oncpu_ns = (c1.tv_sec - c0.tv_sec) * 1000000000L + (c1.tv_nsec - c0.tv_nsec);
    return x;
}

__attribute__((noinline)) void work(void)
{
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
    reader();
    while (!holding)
        ;
    /* How long the lock was still held when we got here depends on when
     * this thread ran again: measured, the oracle for lock_wait's time. */
    struct timespec l0, l1;
    clock_gettime(CLOCK_MONOTONIC, &l0);
    lock_wait();
    clock_gettime(CLOCK_MONOTONIC, &l1);
    lock_wait_ns = (l1.tv_sec - l0.tv_sec) * 1000000000L + (l1.tv_nsec - l0.tv_nsec);
    sleeper();
    compute();
    pthread_join(t, NULL);
}

int main(void)
{
    if (pipe(fds))
        return 1;
    work();
    printf("compute_oncpu_ns=%ld\n", compute_oncpu_ns); /* the oracles for check-waits.py */
    printf("lock_wait_ns=%ld\n", lock_wait_ns);
    printf("compute_turns_ns=");
    for (int i = 0; i < TURNS; i++)
        printf("%s%ld", i ? "," : "", longest_turn_ns[i]);
    printf("\n");
    return 0;
}

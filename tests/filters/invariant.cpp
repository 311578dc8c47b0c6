/* invariant.cpp - the program the filters' invariant test runs (check.py):
 * every instrumented function counts its own calls, so the test can hold
 * the report to "calls recorded + calls counted as filtered = calls made"
 * under each filter, trigger and switch.  It makes calls of every length
 * around the INSTR_MIN_DURATION thresholds the test uses, from two worker
 * threads while the main thread switches INSTR_TRIGGER on and off, from
 * a signal handler, across
 * longjmp and C++ exceptions, in a fork child; then it runs a long tail, so
 * that a frame left open is charged far more than any real call.
 *
 *   invariant CHILD-COUNTS [storm]
 *
 * prints "made NAME N" for each function and "tail_ns N"; the fork child
 * writes its own calls (made after the fork) to CHILD-COUNTS.  With
 * "storm", a thread sends the workers SIGUSR2 300 times, 100 us apart,
 * while they run (INSTR_SIGNAL's switch). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FUNCTIONS(X)                                                                          \
    X(main) X(leaf) X(varied) X(mid) X(handler) X(stopper) X(deep) X(jumper) X(jump_home)     \
        X(thrower) X(catcher) X(worker) X(toggle_on) X(toggle_off) X(forker) X(storm)         \
            X(ns_since) X(tail)
#define ENUM(f) F_##f,
#define NAME(f) #f,
enum { FUNCTIONS(ENUM) NF };
static const char *const names[NF] = {FUNCTIONS(NAME)};
static unsigned long made[NF];
#define COUNT(f) __atomic_fetch_add(&made[F_##f], 1, __ATOMIC_RELAXED)

static volatile long sink;
static volatile int workers_done, storm_on;
static jmp_buf home;
static pthread_t workers[2];

__attribute__((noinline)) void leaf(int i)
{
    COUNT(leaf);
    sink += i;
}

/* From a few ns to about a microsecond: both sides of the thresholds. */
__attribute__((noinline)) void varied(int i)
{
    COUNT(varied);
    for (int k = 0; k < (i % 64) * 12; k++)
        sink += k;
}

__attribute__((noinline)) void mid(int i)
{
    COUNT(mid);
    leaf(i);
    varied(i);
}

__attribute__((noinline)) void handler(int sig)
{
    COUNT(handler);
    leaf(sig);
}

__attribute__((noinline)) void stopper(void) { COUNT(stopper); }

__attribute__((noinline)) void deep(int i)
{
    COUNT(deep);
    leaf(i);
    longjmp(home, 1);
}

/* Entered with recording on (an :on trigger), it leaves by longjmp after
 * stopper's return switched recording off. */
__attribute__((noinline)) void jumper(int i)
{
    COUNT(jumper);
    stopper();
    mid(i);
    deep(i);
}

__attribute__((noinline)) void jump_home(int i)
{
    COUNT(jump_home);
    if (!setjmp(home))
        jumper(i);
    leaf(i);
}

__attribute__((noinline)) void thrower(int i)
{
    COUNT(thrower);
    leaf(i);
    if (i % 2)
        throw i;
}

__attribute__((noinline)) void catcher(int i)
{
    COUNT(catcher);
    try {
        thrower(i);
    } catch (int) {
        leaf(i);
    }
}

__attribute__((noinline)) void *worker(void *arg)
{
    COUNT(worker);
    for (int i = 0; i < 6000 || storm_on; i++) /* through the storm */
        mid(i + (int)(long)arg);
    return NULL;
}

__attribute__((noinline)) void toggle_on(void) { COUNT(toggle_on); }
__attribute__((noinline)) void toggle_off(void) { COUNT(toggle_off); }

__attribute__((noinline)) void *storm(void *arg)
{
    COUNT(storm);
    (void)arg;
    for (int i = 0; i < 300; i++) { /* at the workers, which are in hooks half the time */
        pthread_kill(workers[i % 2], SIGUSR2);
        usleep(100);
    }
    storm_on = 0;
    return NULL;
}

/* The child counts what it calls after the fork, and leaves by _exit:
 * main's and forker's frames stay open in its dump. */
__attribute__((noinline)) void forker(const char *child_counts)
{
    COUNT(forker);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned long before[NF];
        memcpy(before, made, sizeof made);
        for (int i = 0; i < 500; i++)
            mid(i);
        FILE *f = fopen(child_counts, "w");
        if (f) {
            for (int k = 0; k < NF; k++)
                fprintf(f, "made %s %lu\n", names[k], made[k] - before[k]);
            fclose(f);
        }
        _exit(0);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

__attribute__((noinline)) static long ns_since(const struct timespec *a)
{
    COUNT(ns_since);
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a->tv_sec) * 1000000000L + (b.tv_nsec - a->tv_nsec);
}

/* 300 ms of the program's own time, after everything else. */
__attribute__((noinline)) long tail(void)
{
    COUNT(tail);
    struct timespec a;
    clock_gettime(CLOCK_MONOTONIC, &a);
    while (ns_since(&a) < 300000000L)
        for (int k = 0; k < 1000; k++)
            sink += k;
    return ns_since(&a);
}

int main(int argc, char **argv)
{
    COUNT(main);
    if (argc < 2)
        return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);

    for (int i = 0; i < 3000; i++)
        mid(i);
    for (int i = 0; i < 50; i++)
        raise(SIGUSR1);
    for (int i = 0; i < 200; i++)
        catcher(i);
    for (int i = 0; i < 20; i++)
        jump_home(i);

    /* Two workers while the main thread switches the triggers. */
    pthread_t *th = workers, st;
    storm_on = argc > 2 && !strcmp(argv[2], "storm");
    for (long k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, worker, (void *)k);
    if (storm_on)
        pthread_create(&st, NULL, storm, NULL);
    struct timespec a;
    clock_gettime(CLOCK_MONOTONIC, &a);
    while (!workers_done) {
        toggle_on();
        leaf(1);
        toggle_off();
        if (ns_since(&a) > 20000000L) /* then at least 20 ms of toggles */
            workers_done = !pthread_tryjoin_np(th[0], NULL) && !pthread_join(th[1], NULL);
    }
    if (argc > 2 && !strcmp(argv[2], "storm"))
        pthread_join(st, NULL);

    forker(argv[1]);
    long t = tail();
    for (int k = 0; k < NF; k++)
        printf("made %s %lu\n", names[k], made[k]);
    printf("tail_ns %ld\n", t);
    return 0;
}

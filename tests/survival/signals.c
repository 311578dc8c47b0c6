/* signals.c - survival cases for signals, stderr and the detectors
 * (issue 14 items 4-7, 10b, 15, 16), one per argv[1]; check-signals.py
 * runs them instrumented and plain.  Lines "# key value" carry what the
 * program counted itself, for the checker to compare with the report. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void step(unsigned long i)
{
    sink += i;
    __asm__ volatile("" ::: "memory");
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void timer_us(long us)
{
    struct itimerval it = {{0, us}, {0, us}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static void on_signal(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

/* One second of step() calls while SIGALRM runs handler every us. */
static void steps_under_timer(void (*handler)(int), long us)
{
    on_signal(SIGALRM, handler);
    timer_us(us);
    double t0 = mono_s();
    while (mono_s() - t0 < 1.0)
        for (unsigned j = 0; j < 1000; j++)
            step(j);
    signal(SIGALRM, SIG_IGN);
    timer_us(0);
}

/* ---- quiet / data: the runtime's lines and the program's stderr -------- */

static int case_quiet(void)
{
    for (unsigned long i = 0; i < 1000; i++)
        step(i);
    printf("ok\n");
    return 0;
}

static int case_data(void)
{
    for (unsigned long i = 0; i < 1000; i++)
        step(i);
    fputs("data\n", stderr);
    printf("ok\n");
    return 0;
}

/* ---- handler-calls: instrumented calls inside a 10 kHz SIGALRM handler -- */

static volatile unsigned long in_handler_calls;

NOINLINE void in_handler(void)
{
    in_handler_calls++;
    __asm__ volatile("" ::: "memory");
}

NOINLINE void on_alarm(int sig)
{
    (void)sig;
    in_handler();
    in_handler();
}

static int case_handler_calls(void)
{
    steps_under_timer(on_alarm, 100);
    printf("# in_handler %lu\n", in_handler_calls);
    printf("ok %d\n", in_handler_calls > 100);
    return 0;
}

/* ---- siglongjmp out of an asynchronous handler ------------------------- */

static sigjmp_buf jump_back;
static volatile int jumps;

NOINLINE void jumping_handler(int sig)
{
    (void)sig;
    jumps++;
    siglongjmp(jump_back, 1);
}

NOINLINE void after_jumps(unsigned long i)
{
    sink ^= i;
    __asm__ volatile("" ::: "memory");
}

static int case_siglongjmp_async(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = jumping_handler;
    sigaction(SIGALRM, &sa, NULL);
    sigsetjmp(jump_back, 1);
    if (jumps < 300) {
        timer_us(200);
        for (;;)
            step(1);
    }
    /* Stop the timer from the handler's side: no alarm after this line. */
    signal(SIGALRM, SIG_IGN);
    timer_us(0);
    signal(SIGALRM, SIG_IGN);
    for (unsigned long i = 0; i < 10000; i++)
        after_jumps(i);
    printf("jumps %d\n", jumps);
    return 0;
}

/* ---- cpu-busy: a CPU-bound main beside competing busy threads ---------- */

static volatile int stop_spinners;

static void *spinner(void *arg)
{
    (void)arg;
    while (!stop_spinners)
        __asm__ volatile("" ::: "memory");
    return NULL;
}

NOINLINE void cpu_main(double seconds)
{
    double t0 = mono_s();
    while (mono_s() - t0 < seconds)
        for (unsigned j = 0; j < 2000; j++)
            step(j);
}

static int case_cpu_busy(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, spinner, NULL);
    uint64_t c0 = thread_cpu_ns();
    cpu_main(1.5);
    uint64_t c1 = thread_cpu_ns();
    stop_spinners = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    printf("# cpu_main_cpu_ns %llu\n", (unsigned long long)(c1 - c0));
    printf("ok\n");
    return 0;
}

/* ---- nested-handlers: a handler interrupted by another handler --------- */

static volatile unsigned long inner_calls;

NOINLINE void inner_work(void)
{
    inner_calls++;
    __asm__ volatile("" ::: "memory");
}

NOINLINE void on_usr2(int sig)
{
    (void)sig;
    inner_work();
}

NOINLINE void on_usr1(int sig)
{
    (void)sig;
    inner_work();
    raise(SIGUSR2); /* delivered at once, inside this handler */
    inner_work();
}

NOINLINE void on_alarm_nest(int sig)
{
    (void)sig;
    raise(SIGUSR1);
}

static int case_nested_handlers(void)
{
    on_signal(SIGUSR2, on_usr2);
    on_signal(SIGUSR1, on_usr1);
    steps_under_timer(on_alarm_nest, 200);
    printf("# inner_work %lu\n", inner_calls);
    printf("ok\n");
    return 0;
}

/* ---- chained-handlers: handlers delivered one after another ----------- */

/* Each handler of a burst runs until the timer's next signal is pending,
 * so it is delivered as this one returns, before the interrupted code runs
 * again: the chain a loaded machine makes by descheduling handlers.  When
 * the first of a burst interrupted a hook, every handler's hooks wait for
 * that hook: 60 handlers of 10 events each. */
#define CHAIN_BURST 60u
static volatile unsigned long chained;

/* Waits (at most 10 ms) until SIGALRM is pending; not instrumented, so the
 * handler's hooks are its own two calls only. */
__attribute__((no_instrument_function)) NOINLINE static void wait_next_alarm(void)
{
    sigset_t pending;
    double t0 = mono_s();
    do
        sigpending(&pending);
    while (!sigismember(&pending, SIGALRM) && mono_s() - t0 < 0.01);
}

NOINLINE void on_alarm_chain(int sig)
{
    (void)sig;
    inner_work();
    inner_work();
    if (chained++ % (2 * CHAIN_BURST) < CHAIN_BURST)
        wait_next_alarm(); /* between bursts the loop runs */
}

static int case_chained_handlers(void)
{
    steps_under_timer(on_alarm_chain, 200);
    printf("# inner_work %lu\n", inner_calls);
    printf("# handlers %lu\n", chained);
    printf("ok\n");
    return 0;
}

static const struct {
    const char *name;
    int (*run)(void);
} cases[] = {
    {"quiet", case_quiet},
    {"data", case_data},
    {"handler-calls", case_handler_calls},
    {"siglongjmp-async", case_siglongjmp_async},
    {"cpu-busy", case_cpu_busy},
    {"nested-handlers", case_nested_handlers},
    {"chained-handlers", case_chained_handlers},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name))
            return cases[i].run();
    fprintf(stderr, "usage: %s CASE\n", argv[0]);
    return 2;
}

/* A program with its own CPU profiler, as gperftools does it: an
 * ITIMER_PROF timer and a SIGPROF handler.  Every interval the signal lands
 * in is flagged (kind signal), so by default it leaves Application time;
 * instr-report --os-events without signal keeps it.
 *
 * leaf is one interval longer than the timer's period (it spins until
 * SIGNALS_PER_CALL signals have landed in it, whatever the kernel's tick
 * makes of the 1 ms asked): the case where the profiler takes nearly all
 * of a function's Application time.  A CPU-time timer fires at the
 * scheduler's tick, where a loaded machine also preempts the thread, so
 * there most of these intervals are flagged sched too and stay out either
 * way.  So a second phase sends the same SIGPROF from a wall-clock timer
 * (timer_create on CLOCK_MONOTONIC: a high-resolution timer, not at the
 * tick) into many short calls of step: those intervals are flagged by the
 * signal alone, and --os-events without signal gives them back whatever
 * the load.  Prints the signals (all, in leaf, in step) and leaf's calls
 * that reached their count. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "e2e-util.h"

#define CALLS 20
#define SIGNALS_PER_CALL 3
#define MAX_ITERS 400000000u /* a bound on one call (about 0.2 s here) if signals stop */
#define STEPS 2000           /* short calls (about 50 us each here) under the wall-clock timer */

static volatile sig_atomic_t in_leaf, in_step, signals, signals_in_leaf, signals_in_step;

UNPROFILED static void on_prof(int sig)
{
    (void)sig;
    signals++;
    signals_in_leaf += in_leaf;
    signals_in_step += in_step;
}

/* CPU work with no call inside: one interval per call. */
NOINLINE static int leaf(void)
{
    volatile unsigned x = 0;
    int start = signals_in_leaf;
    in_leaf = 1;
    for (unsigned i = 0; i < MAX_ITERS && signals_in_leaf - start < SIGNALS_PER_CALL; i++)
        x += i;
    in_leaf = 0;
    return signals_in_leaf - start >= SIGNALS_PER_CALL;
}

/* A short call with no call inside. */
NOINLINE static void step(void)
{
    volatile unsigned x = 0;
    in_step = 1;
    for (unsigned i = 0; i < 200000u; i++)
        x += i;
    in_step = 0;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}}; /* 1 kHz of CPU time, as profilers ask */
    setitimer(ITIMER_PROF, &it, NULL);
    int full = 0;
    for (int i = 0; i < CALLS; i++)
        full += leaf();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);

    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGPROF;
    timer_t timer;
    int have_timer = timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0;
    if (have_timer) {
        struct itimerspec ms = {{0, 1000000}, {0, 1000000}};
        timer_settime(timer, 0, &ms, NULL);
    }
    for (int i = 0; i < STEPS; i++)
        step();
    if (have_timer)
        timer_delete(timer);
    printf("signals=%d signals_in_leaf=%d full_calls=%d calls=%d signals_in_step=%d\n", (int)signals,
           (int)signals_in_leaf, full, CALLS, (int)signals_in_step);
    return 0;
}

/* A program with its own CPU profiler, as gperftools does it: an
 * ITIMER_PROF timer and a SIGPROF handler.  Every interval the signal lands
 * in is flagged (kind signal), so by default it leaves Application time;
 * instr-report --os-events without signal keeps it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include "e2e-util.h"

static volatile sig_atomic_t in_leaf, signals, signals_in_leaf;

UNPROFILED static void on_prof(int sig)
{
    (void)sig;
    signals++;
    signals_in_leaf += in_leaf;
}

/* About 1 ms of CPU work, no call inside: one interval per call. */
NOINLINE static unsigned leaf(void)
{
    volatile unsigned x = 0;
    in_leaf = 1;
    for (unsigned i = 0; i < 1000000u; i++)
        x += i;
    in_leaf = 0;
    return x;
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
    for (int i = 0; i < 400; i++)
        leaf();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("signals=%d signals_in_leaf=%d\n", (int)signals, (int)signals_in_leaf);
    return 0;
}

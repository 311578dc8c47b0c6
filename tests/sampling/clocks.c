/* clocks.c - programs for instr-sample's own cases (issue 22 §3):
 *   clocks clocks SECONDS   reads the time in a loop (gettimeofday and
 *                           clock_gettime: the vDSO) for SECONDS of CPU;
 *   clocks daemon SECONDS   daemonizes (fork, setsid, fork; the first two
 *                           processes exit at once) and the daemon spins
 *                           SECONDS of CPU, then writes "done" to the file
 *                           named by CLOCKS_DONE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void read_clocks(void)
{
    struct timeval tv;
    struct timespec ts;
    for (int i = 0; i < 1000; i++) {
        gettimeofday(&tv, NULL);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += (unsigned long)tv.tv_usec + (unsigned long)ts.tv_nsec;
    }
}

__attribute__((noinline)) static void daemon_spin(void)
{
    for (unsigned long i = 0; i < 1000000; i++)
        sink += i * i;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clocks";
    double secs = argc > 2 ? atof(argv[2]) : 0.5;
    if (!strcmp(mode, "clocks")) {
        while (cpu_now() < secs)
            read_clocks();
        /* The same line every run: the test compares it with the plain run's. */
        printf("clocks read\n");
        return 0;
    }
    if (!strcmp(mode, "daemon")) {
        fflush(stdout);
        if (fork() != 0)
            return 0;
        setsid();
        if (fork() != 0)
            _exit(0);
        while (cpu_now() < secs)
            daemon_spin();
        const char *done = getenv("CLOCKS_DONE");
        FILE *f = done ? fopen(done, "w") : NULL;
        if (f) {
            fputs("done\n", f);
            fclose(f);
        }
        return 0;
    }
    return 2;
}

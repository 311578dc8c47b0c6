/* forks.c - processes for the fork tests: the parent spins in parent_work,
 * then forks 3 children that each spin in child_work; the last child then
 * execs this program again ("exec"), which spins in exec_work.  Built twice:
 * plain (instr-sample) and with the plugin (INSTR_SAMPLE, the hybrid).
 * Each spin is measured in the thread's CPU time, so every process has a
 * known amount of CPU time to sample. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_thread(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Inlined into each work function: its samples are its own (exclusive). */
static inline __attribute__((always_inline)) void spin(double cpu_s)
{
    double t0 = cpu_thread();
    while (cpu_thread() - t0 < cpu_s)
        for (int i = 0; i < 20000; i++)
            sink += (unsigned long)i * i;
}


__attribute__((noinline)) void parent_work(void) { spin(0.15); }
__attribute__((noinline)) void child_work(void) { spin(0.15); }
__attribute__((noinline)) void exec_work(void) { spin(0.15); }

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "exec")) {
        exec_work();
        return 0;
    }
    parent_work();
    pid_t kids[3];
    for (int k = 0; k < 3; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            child_work();
            if (k == 2) {
                execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
                _exit(127);
            }
            exit(0);
        }
    }
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        int st;
        ok &= kids[k] > 0 && waitpid(kids[k], &st, 0) == kids[k] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    return ok ? 0 : 1;
}

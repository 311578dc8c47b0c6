/* child-rusage: runs PROGRAM and writes to OUT its wall time and the CPU
 * time it used (user, system), in seconds to the microsecond: what
 * /usr/bin/time -f "%e %U %S" says to the hundredth (bench/sample-overhead.py:
 * the program's own cost under a profiler, 0.5 % of a 2-s run being one
 * hundredth).
 *   child-rusage OUT PROGRAM [ARGS...] */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: child-rusage OUT PROGRAM [ARGS...]\n");
        return 2;
    }
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0)
        return perror("fork"), 125;
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return perror("wait4"), 125;
    double wall = now() - t0;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return perror(argv[1]), 125;
    fprintf(f, "%.6f %.6f %.6f\n", wall, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

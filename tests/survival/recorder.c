/* recorder.c - programs for the recording-path survival cases (issue 14:
 * items 8, 9, 10, 10a, 14, 17), run by check-recorder.py beside the same
 * source built without the plugin (the oracle).  Every mode calls work() a
 * known number of times; lines starting with '#' carry run-dependent values. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))

static volatile int sink;

KEEP int work(int x)
{
    sink = x;
    return x * 3 + 1;
}

static int work_n(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += work(i);
    return s;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One busy thread: its own wall time, measured around busy_body. */
KEEP void busy_body(int n)
{
    work_n(n);
}

static uint64_t walls[64];

static void *busy(void *arg)
{
    int i = (int)(intptr_t)arg;
    uint64_t t0 = now_ns();
    busy_body(atoi(getenv("RECORDER_CALLS") ? getenv("RECORDER_CALLS") : "3000000"));
    walls[i] = now_ns() - t0;
    return NULL;
}

KEEP void thread_body(void)
{
    work_n(1000);
}

static void *plain_thread(void *arg)
{
    (void)arg;
    thread_body();
    return NULL;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "lots")) {
        int n = getenv("RECORDER_CALLS") ? atoi(getenv("RECORDER_CALLS")) : 2000000;
        work_n(n);
        printf("made %d calls\n", n);
        return 0;
    }
    if (!strcmp(m, "chroot") && argc > 2) {
        /* A privileged program that locks itself up and drops root: the
         * dump must go on (item 9). */
        work_n(1000);
        if (chroot(argv[2]) || chdir("/"))
            return 97;
        if (setgid(65534) || setuid(65534))
            return 98;
        work_n(300000);
        printf("confined\n");
        return 0;
    }
    if (!strcmp(m, "fork-exec") && argc > 2) {
        /* Children that fork and exec at once (item 10). */
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            pid_t p = fork();
            if (p == 0) {
                work_n(10);
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
            }
            int st;
            if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
                return 96;
        }
        work_n(100);
        printf("%d children\n", n);
        return 0;
    }
    if (!strcmp(m, "stop-fork")) {
        /* Calls past the dump's limit, then a child (issue 38 §4): the
         * child's own dump records its calls again. */
        work_n(getenv("RECORDER_CALLS") ? atoi(getenv("RECORDER_CALLS")) : 100000);
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            work_n(1000);
            exit(0);
        }
        int st;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
            return 96;
        printf("child recorded\n");
        return 0;
    }
    if (!strcmp(m, "preempt")) {
        /* 8 busy threads on fewer cores (item 10a): each measures its own
         * wall time. */
        int n = 8;
        pthread_t th[8];
        for (int i = 0; i < n; i++)
            pthread_create(&th[i], NULL, busy, (void *)(intptr_t)i);
        for (int i = 0; i < n; i++)
            pthread_join(th[i], NULL);
        uint64_t sum = 0, least = UINT64_MAX;
        for (int i = 0; i < n; i++) {
            sum += walls[i];
            if (walls[i] < least)
                least = walls[i];
        }
        printf("# wall_sum_ns %llu\n# wall_min_ns %llu\n", (unsigned long long)sum,
               (unsigned long long)least);
        printf("%d threads\n", n);
        return 0;
    }
    if (!strcmp(m, "address-space")) {
        /* A program under a lowered RLIMIT_AS (item 8): a large malloc,
         * then threads started after lowering the limit further. */
        void *p = malloc(100u << 20);
        if (!p) {
            printf("malloc failed\n");
            return 1;
        }
        memset(p, 1, 4096);
        free(p);
        pthread_t th[5];
        for (int i = 0; i < 5; i++)
            if (pthread_create(&th[i], NULL, plain_thread, NULL))
                return 95;
        for (int i = 0; i < 5; i++)
            pthread_join(th[i], NULL);
        work_n(100);
        printf("5 threads\n");
        return 0;
    }
    fprintf(stderr, "recorder: unknown mode %s\n", m);
    return 2;
}

/* address-space.c - programs under a low RLIMIT_AS (issue 14 item 8), run
 * by check-address-space.py beside the same source built without the
 * plugin.  The runtime must take address space as it uses it: what the
 * program can allocate uninstrumented it can allocate instrumented, its
 * threads record, and what cannot be recorded is counted.
 *
 *   malloc N       (run under `ulimit -v`) malloc N MiB, touch it, free it
 *   threads        lower RLIMIT_AS to VmSize + 5 x (stack + 1 MiB), then
 *                  start 5 threads with 256 KiB stacks
 *   tight          give 5 threads stacks of their own, then lower RLIMIT_AS
 *                  to VmSize: the threads need no new mapping, the
 *                  runtime's state for them cannot get one
 *   vm N           N threads alive (each mallocs once); prints VmPeak and
 *                  VmSize (kB)
 *
 * Each thread calls work() 1000 times, main 100 times. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define KEEP __attribute__((noinline, noclone))
#define STACK (256u << 10)

static volatile int sink;

KEEP int work(int x)
{
    sink = x;
    return x * 3 + 1;
}

static void work_n(int n)
{
    for (int i = 0; i < n; i++)
        work(i);
}

/* /proc/self/status field in kB, -1 if missing. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t l = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, l) && line[l] == ':')
            v = atol(line + l + 1);
    if (f)
        fclose(f);
    return v;
}

static int lower_as(size_t extra)
{
    long kb = status_kb("VmSize");
    struct rlimit r = {(rlim_t)kb * 1024 + extra, (rlim_t)kb * 1024 + extra};
    return kb < 0 || setrlimit(RLIMIT_AS, &r);
}

KEEP void thread_body(void)
{
    work_n(1000);
}

static pthread_barrier_t hold;
static int holding;

static void *thread_main(void *arg)
{
    (void)arg;
    if (holding) {
        /* Threads that allocate, as most do: both builds then have the
         * thread's malloc arena, and VmSize compares the runtime alone. */
        void *volatile p = malloc(64);
        free(p);
    }
    thread_body();
    if (holding)
        pthread_barrier_wait(&hold); /* alive while main reads its VmSize */
    if (holding)
        pthread_barrier_wait(&hold);
    return NULL;
}

static int run_threads(int n, void *stacks)
{
    pthread_t th[64];
    for (int i = 0; i < n; i++) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        if (stacks)
            pthread_attr_setstack(&a, (char *)stacks + (size_t)i * STACK, STACK);
        else
            pthread_attr_setstacksize(&a, STACK);
        int rc = pthread_create(&th[i], &a, thread_main, NULL);
        pthread_attr_destroy(&a);
        if (rc) {
            printf("pthread_create failed\n");
            return 95;
        }
    }
    if (holding) {
        pthread_barrier_wait(&hold);
        printf("# VmPeak %ld\n# VmSize %ld\n", status_kb("VmPeak"), status_kb("VmSize"));
        pthread_barrier_wait(&hold);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    int rc;
    work_n(100);
    if (!strcmp(m, "malloc") && argc > 2) {
        size_t n = (size_t)atoi(argv[2]) << 20;
        char *p = malloc(n);
        if (!p) {
            printf("malloc failed\n");
            return 1;
        }
        for (size_t i = 0; i < n; i += 4096)
            p[i] = 1;
        free(p);
        printf("malloc %s MiB ok\n", argv[2]);
        return 0;
    }
    if (!strcmp(m, "threads")) {
        if (lower_as(5 * (STACK + (1u << 20))))
            return 97;
        if ((rc = run_threads(5, NULL)))
            return rc;
        printf("5 threads\n");
        return 0;
    }
    if (!strcmp(m, "tight")) {
        void *stacks = mmap(NULL, 5 * STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (stacks == MAP_FAILED || lower_as(0))
            return 97;
        if ((rc = run_threads(5, stacks)))
            return rc;
        printf("5 threads\n");
        return 0;
    }
    if (!strcmp(m, "vm") && argc > 2) {
        int n = atoi(argv[2]);
        if (n < 1 || n > 64)
            return 2;
        holding = 1;
        pthread_barrier_init(&hold, NULL, (unsigned)n + 1);
        if ((rc = run_threads(n, NULL)))
            return rc;
        printf("%d threads\n", n);
        return 0;
    }
    fprintf(stderr, "address-space: unknown mode %s\n", m);
    return 2;
}

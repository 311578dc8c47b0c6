/* split.c - 70/30 CPU split: heavy() directly, light() as qsort's comparator
 * (qsort is libc code, built without frame pointers). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void heavy(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}

static unsigned long work_per_cmp = 200;

__attribute__((noinline)) static int light(const void *a, const void *b)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < work_per_cmp; i++)
        s += i ^ (unsigned long)a;
    sink += s;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double total = argc > 1 ? atof(argv[1]) : 1.0; /* CPU seconds */
    static int arr[2000];
    double t_heavy = 0, t_light = 0;
    unsigned seed = 1;
    while (t_heavy + t_light < total) {
        /* keep the split at 70/30 of measured CPU time */
        double t0 = cpu_now();
        if (t_heavy <= 0.7 / 0.3 * t_light) {
            heavy(2000000);
            t_heavy += cpu_now() - t0;
        } else {
            for (int i = 0; i < 2000; i++)
                arr[i] = (int)(seed = seed * 1103515245u + 12345u);
            qsort(arr, 2000, sizeof arr[0], light);
            t_light += cpu_now() - t0;
        }
    }
    printf("heavy %.3f light %.3f\n", t_heavy, t_light);
    return 0;
}

/* progress.c - see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void instr_progress_start(struct instr_progress *p, uint64_t total)
{
    p->total = total;
    p->done = 0;
    p->start = p->last = now();
    p->tty = isatty(2);
    p->shown = 0;
}

void instr_progress_add(void *ctx, uint64_t bytes)
{
    struct instr_progress *p = ctx;
    p->done += bytes;
    if (!p->tty)
        return;
    double t = now();
    if (t - p->start < 1.0 || t - p->last < 0.1)
        return;
    p->last = t;
    double frac = p->total ? (double)p->done / (double)p->total : 0;
    if (frac > 1)
        frac = 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    double eta = frac > 0 ? (t - p->start) * (1 - frac) / frac : 0;
    fprintf(stderr, "\rinstr-report: reading [%s] %3.0f%% %.1f of %.1f MiB, %.0f s left ", bar, frac * 100,
            (double)p->done / 1048576.0, (double)p->total / 1048576.0, eta);
    p->shown = 1;
}

void instr_progress_end(struct instr_progress *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = 0;
}

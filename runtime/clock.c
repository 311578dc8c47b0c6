/* clock.c - CLOCK_MONOTONIC and the calibration pairs (ticks against it). */
#include <stdint.h>
#include <time.h>

#include "internal.h"

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t instr__mono_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}

/* Ticks read on both sides of the clocks; the midpoint is the best estimate
 * of when the clocks were read (vDSO calls, no errno change).  The narrowest
 * of a few tries: a process's first clock_gettime faults its vDSO data page
 * in (measured ~100 us in a nested VM), and a midpoint that far from the
 * read shifts every sample the tools convert with this pair (hybrid
 * samples are CLOCK_MONOTONIC ns) by tens of microseconds. */
void instr__clock_pair(uint64_t *tsc, uint64_t *mono_ns, uint64_t *real_ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4 && best > 2000; i++) {
        uint64_t t0 = instr__tsc();
        uint64_t m = ns_of(CLOCK_MONOTONIC);
        uint64_t r = real_ns ? ns_of(CLOCK_REALTIME) : 0;
        uint64_t t1 = instr__tsc();
        if (t1 - t0 >= best)
            continue;
        best = t1 - t0;
        *tsc = t0 + (t1 - t0) / 2;
        *mono_ns = m;
        if (real_ns)
            *real_ns = r;
    }
}

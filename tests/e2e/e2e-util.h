/* Helpers shared by the end-to-end test programs (compiled with the plugin,
 * so they are instrumented too unless marked). */
#ifndef E2E_UTIL_H
#define E2E_UTIL_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define UNPROFILED __attribute__((no_instrument_function))

UNPROFILED static inline uint64_t e2e_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy for ms milliseconds without system calls (clock_gettime is vDSO). */
UNPROFILED static inline void e2e_spin_ms(unsigned ms)
{
    uint64_t end = e2e_now_ns() + (uint64_t)ms * 1000000u;
    while (e2e_now_ns() < end)
        __asm__ volatile("" ::: "memory");
}
#endif

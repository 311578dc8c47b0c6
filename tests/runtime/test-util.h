/* test-util.h - what the runtime-level C tests share: typed checks, fake
 * function descriptors with the hook ABI's layout, and a TSC spin.
 * Checks return 1 from the calling function; 77 means skipped. */
#ifndef INSTR_TEST_UTIL_H
#define INSTR_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hook-abi.h"

#define SKIP 77

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    a_, #b, b_);                                                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || strcmp(a_, b_)) {                                                               \
            fprintf(stderr, "%s:%d: %s\n   is: %s\n want: %s\n", __FILE__, __LINE__, #a,           \
                    a_ ? a_ : "(null)", b_);                                                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* A function descriptor as the plugin emits it: id, abi, flags, reserved,
 * then "name\0file\0line". */
struct fake_desc {
    uint32_t id;
    uint8_t abi, flags;
    uint16_t reserved;
    char names[40];
} __attribute__((aligned(8)));
#define FAKE_DESC(name, file, line, flags)                                                         \
    {0, INSTR_HOOK_ABI_VERSION, (flags), 0, name "\0" file "\0" line}

static double test_tsc_per_ns;

/* Measures the TSC rate over 20 ms, for spin_ns. */
static inline void calibrate(void)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t c0 = __builtin_ia32_rdtsc();
    do
        clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000000L);
    uint64_t c1 = __builtin_ia32_rdtsc();
    test_tsc_per_ns = (double)(c1 - c0) / ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec));
}

/* Busy for ns nanoseconds without a system call. */
static inline void spin_ns(uint64_t ns)
{
    uint64_t end = __builtin_ia32_rdtsc() + (uint64_t)(ns * test_tsc_per_ns);
    while (__builtin_ia32_rdtsc() < end)
        __builtin_ia32_pause();
}

#endif

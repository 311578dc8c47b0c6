/* bare-recorder.c - the reference every instrumenting profiler is measured
 * against: a runtime whose hooks only read the TSC and store 16 bytes into
 * a per-thread buffer that is thrown away (no detection, no dump, no stack).
 * Bound through the same plugin binding as libinstr-rt.so (instr__bind), so
 * the difference between the two is what instr's runtime adds; or linked
 * into a -finstrument-functions build (the __cyg_profile_func_* hooks
 * below), the floor of bench/run-real.py. */
#include <stdint.h>
#include <stdlib.h>

#include "hook-abi.h"

#define RING_WORDS (1u << 16) /* 512 KiB per thread, reused */

static __thread uint64_t *ring __attribute__((tls_model("initial-exec")));
static __thread uint32_t pos __attribute__((tls_model("initial-exec")));

static inline void record(const void *what)
{
    uint64_t *r = ring;
    if (__builtin_expect(!r, 0) && !(r = ring = calloc(RING_WORDS, sizeof *r)))
        return;
    uint32_t i = pos;
    r[i] = __builtin_ia32_rdtsc();
    r[i + 1] = (uintptr_t)what;
    pos = (i + 2) & (RING_WORDS - 1);
}

static void hook(struct instr_fn_desc *d, void *cfa)
{
    (void)cfa;
    record(d);
}

static void nothing(struct instr_fn_desc *d, void *cfa)
{
    (void)d;
    (void)cfa;
}

__attribute__((visibility("default"))) int instr__bind(instr_hook_fn *table, unsigned slots, unsigned abi)
{
    if (abi != INSTR_HOOK_ABI_VERSION || slots < INSTR_SLOT_COUNT)
        return -1;
    for (unsigned i = 0; i < INSTR_SLOT_COUNT; i++)
        table[i] = nothing;
    /* enter, exit, call, return: every hook that marks an interval */
    table[INSTR_SLOT_ENTER] = table[INSTR_SLOT_EXIT] = hook;
    table[INSTR_SLOT_CALL] = table[INSTR_SLOT_RETURN] = hook;
    return 0;
}

/* -finstrument-functions binding (bench/run-real.py links this file into
 * the program; compiled without the flag itself). */
__attribute__((visibility("default"), no_instrument_function)) void
__cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    record(fn);
}

__attribute__((visibility("default"), no_instrument_function)) void
__cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    record(fn);
}

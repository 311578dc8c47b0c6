/* detectors-absent.c (aarch64) - the detector backends x86-64 has and this
 * architecture does not, as backends whose start-up says why.
 *
 * sud: Syscall User Dispatch, and the SIGSYS handler's register work, are
 * x86-64 code here (arm64 kernels of this project's time do not offer it);
 * rdpmc: the x86 instruction reading a kernel-mode instruction counter.
 * detector.c's table names every backend on every architecture, so
 * INSTR_DETECTOR=sud is answered with the reason (auto skips them without
 * a word: the header's detail has room for the reasons that matter), and
 * the hot path's check
 * reads the same words: the SUD selector rests at BLOCK and rdpmc stays
 * off, so neither ever fires. */
#include <linux/perf_event.h>
#include <stdio.h>

#include "detector.h"

__thread volatile uint8_t instr__sud_state[2] __attribute__((tls_model("initial-exec"))) = {
    INSTR__SUD_BLOCK, 0};
__thread uintptr_t instr__sud_alt[2] __attribute__((tls_model("initial-exec")));
__thread uint64_t instr__sud_spent __attribute__((tls_model("initial-exec")));
int instr__rdpmc_on;

static int x86_only(char *why, size_t n, const char *name)
{
    snprintf(why, n, "%s off: x86-64 only", name);
    return -1;
}

static int sud_init(char *why, size_t n)
{
    return x86_only(why, n, "sud");
}

static int rdpmc_init(char *why, size_t n)
{
    return x86_only(why, n, "rdpmc");
}

static void never_thread(struct instr__thread *t)
{
    (void)t;
}

uint8_t instr__sud_rest_alt(void)
{
    return INSTR__SUD_BLOCK;
}

unsigned instr__sud_fired(struct instr__thread *t)
{
    (void)t;
    instr__sud_state[0] = INSTR__SUD_BLOCK;
    return 0;
}

void instr__sud_altstack(struct instr__thread *t)
{
    (void)t;
}

void instr__sud_resume(struct instr__thread *t)
{
    (void)t;
}

uint64_t instr__sud_conflicts(void)
{
    return 0;
}

uint64_t instr__rdpmc_read(const volatile struct perf_event_mmap_page *pc)
{
    (void)pc;
    return 0;
}

const struct instr__detector_ops instr__det_sud = {
    .name = "sud",
    .id = INSTR_DETECTOR_SUD,
    .init = sud_init,
    .thread = never_thread,
    .absent = 1,
};

const struct instr__detector_ops instr__det_rdpmc = {
    .name = "rdpmc",
    .id = INSTR_DETECTOR_RDPMC,
    .init = rdpmc_init,
    .thread = never_thread,
    .absent = 1,
};

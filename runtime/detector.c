/* detector.c - choosing the transition detector (INSTR_DETECTOR). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "detector.h"

struct instr__detector_info instr__detector;

void instr__detector_init(void)
{
    const char *want = secure_getenv("INSTR_DETECTOR");
    if (want && !strcmp(want, "none")) {
        instr__detector_none_init(&instr__detector, "none (INSTR_DETECTOR=none)");
        return;
    }
    if (want && *want && strcmp(want, "auto") && strcmp(want, "rseq_cs"))
        instr__say("unknown INSTR_DETECTOR=", want, ", using auto", "");
    if (instr__detector_rseq_init(&instr__detector) == 0)
        return;
    /* rseq_init left its reason in detail. */
    char why[128];
    memcpy(why, instr__detector.detail, sizeof why);
    instr__detector_none_init(&instr__detector, why);
}

void instr__detector_thread(struct instr__thread *t)
{
    if (instr__detector.kind == INSTR_DETECTOR_RSEQ_CS)
        instr__detector_rseq_thread(t);
    else
        instr__detector_none_thread(t);
}

void instr__detector_thread_end(struct instr__thread *t)
{
    if (instr__detector.kind == INSTR_DETECTOR_RSEQ_CS)
        instr__detector_rseq_thread_end(t);
    instr__detector_none_thread(t);
}

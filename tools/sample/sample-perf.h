/* sample-perf.h - the kernel side of instr-sample: per-CPU CPU-clock
 * sampling events on a task (inherited by its threads and children,
 * enabled at its exec) and the draining of their rings, records in time
 * order.  Library code: never prints or exits. */
#ifndef INSTR_SAMPLE_PERF_H
#define INSTR_SAMPLE_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct instr_sampler;

struct instr_sampler_config {
    pid_t pid;            /* the task (stopped before its exec) */
    uint64_t period_ns;   /* CPU-clock ns between samples */
    uint64_t stack_bytes; /* user stack copied per sample */
    int fp_chain;         /* also the kernel's frame-pointer call chain */
};

/* perf_event_open refused for lack of permission (paranoid, seccomp), or
 * absent (instr_sampler_present). */
#define INSTR_SAMPLER_NOT_ALLOWED (-100)

/* 0, or INSTR_SAMPLER_NOT_ALLOWED when this kernel has no perf_event_open
 * at all (ENOSYS: built without perf events, or qemu-user, which does not
 * pass the call on); err says so.  Asked before the program is started. */
int instr_sampler_present(char *err, size_t errlen);
/* 0, INSTR_SAMPLER_NOT_ALLOWED or another negative code; err says why
 * (and, when not allowed, the fix). */
int instr_sampler_open(struct instr_sampler **sp, const struct instr_sampler_config *c, char *err, size_t errlen);
/* Waits up to ms for a ring to fill past its watermark. */
void instr_sampler_wait(struct instr_sampler *s, int ms);
/* Hands every record waiting in the rings to fn (a perf_event_header and
 * its body, contiguous), ordered by time. */
void instr_sampler_drain(struct instr_sampler *s, void (*fn)(void *ctx, const uint8_t *rec, size_t size), void *ctx);
/* The events' CPU-clock total (ns), inherited tasks included. */
uint64_t instr_sampler_total(struct instr_sampler *s);
void instr_sampler_close(struct instr_sampler *s);

#endif

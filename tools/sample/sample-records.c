/* sample-records.c - the perf records of instr-sample's rings, one at a
 * time in time order (instr_sampler_drain): a sample is unwound (DWARF CFI,
 * else the kernel's frame-pointer chain) and written to its process's
 * dump; MMAP2, COMM, FORK, EXIT, READ and LOST records keep the processes,
 * threads and mappings of sample-dumps.c up to date. */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sample-session.h"

#define MAX_FRAMES 512

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void on_sample(struct instr_ssession *s, const uint8_t *r, size_t size)
{
    /* ip, pid tid, time, callchain (--fp-chain), regs_user, stack_user (our
     * sample_type order) */
    const uint8_t *p = r + 8, *end = r + size;
    if (end - p < 24 + (s->fp_chain ? 8 : 0))
        return;
    uint64_t ip = rd64(p);
    uint32_t pid = rd32(p + 8), tid = rd32(p + 12);
    uint64_t t = rd64(p + 16);
    p += 24;
    uint64_t nr = 0;
    if (s->fp_chain) {
        nr = rd64(p);
        p += 8;
    }
    if (nr > (uint64_t)(end - p) / 8)
        return;
    const uint8_t *chain = p;
    p += nr * 8;
    if (end - p < 8)
        return;
    uint64_t abi = rd64(p);
    p += 8;
    struct instr_usample us = {0};
    int have_regs = abi != PERF_SAMPLE_REGS_ABI_NONE;
    if (have_regs) {
        if (end - p < 8 * INSTR_UREGS)
            return;
        memcpy(us.regs, p, 8 * INSTR_UREGS);
        p += 8 * INSTR_UREGS;
    }
    uint64_t ssize = 0;
    if (end - p >= 8) {
        ssize = rd64(p);
        p += 8;
        if (ssize > (uint64_t)(end - p) || (ssize && end - p < (ptrdiff_t)(ssize + 8)))
            return;
        us.stack = p;
        us.stack_size = ssize ? rd64(p + ssize) : 0; /* dyn_size: the bytes actually copied */
        if (us.stack_size > ssize)
            us.stack_size = ssize;
    }
    struct instr_sproc *pr = instr_ss_proc(s, pid, 1);
    if (!pr || pr->closed)
        return;
    if (!instr_ss_ip_mapped(pr, ip) && !pr->maps_read)
        instr_ss_read_proc_maps(s, pr);
    if (!pr->unw && instr_unwinder_new(&pr->unw) < 0)
        pr->unw = NULL;
    if (instr_ss_open_dump(s, pr) < 0)
        return;
    struct instr_sthread *th = instr_ss_thread(pr, tid, 1);
    if (!th)
        return;
    uint64_t frames[MAX_FRAMES];
    size_t n = 0;
    int trunc = 1;
    unsigned flags = 0;
    if (have_regs && pr->unw) {
        us.maps = pr->maps;
        us.nmaps = pr->nmaps;
        n = instr_unwind(pr->unw, &us, frames, MAX_FRAMES, &trunc);
    }
    /* The kernel's frame-pointer chain when CFI gave nothing past the leaf. */
    size_t nfp = 0;
    for (uint64_t i = 0; i < nr; i++)
        if (rd64(chain + 8 * i) < PERF_CONTEXT_MAX)
            nfp++;
    if (n <= 1 && nfp > 1) {
        n = 0;
        for (uint64_t i = 0; i < nr && n < MAX_FRAMES; i++) {
            uint64_t a = rd64(chain + 8 * i);
            if (a < PERF_CONTEXT_MAX)
                frames[n++] = a;
        }
        flags |= INSTR_STACK_FP;
        s->unwind_fail++;
    } else if (n == 0) {
        frames[n++] = ip;
    }
    if (trunc && !(flags & INSTR_STACK_FP))
        flags |= INSTR_STACK_TRUNCATED;
    if (instr_writer_sample(pr->w, th->index, t, INSTR_SAMPLE_STACK, 1, flags, frames, n) == 0) {
        pr->samples++;
        s->samples++;
    }
}

void instr_ss_record(void *ctx, const uint8_t *r, size_t size)
{
    struct instr_ssession *s = ctx;
    uint32_t type = rd32(r);
    uint16_t misc = (uint16_t)(rd32(r + 4) & 0xffff);
    /* sample_id_all trailer of side-band records: pid, tid, time */
    uint32_t spid = size >= 24 ? rd32(r + size - 16) : 0, stid = size >= 24 ? rd32(r + size - 12) : 0;
    uint64_t t = size >= 24 ? rd64(r + size - 8) : instr_ss_now();
    switch (type) {
    case PERF_RECORD_SAMPLE:
        on_sample(s, r, size);
        break;
    case PERF_RECORD_MMAP2: {
        if (size < 8 + 64 + 1)
            return;
        uint32_t pid = rd32(r + 8);
        uint64_t addr = rd64(r + 16), len = rd64(r + 24), pgoff = rd64(r + 32);
        const char *name = (const char *)r + 8 + 64;
        size_t maxlen = size - 8 - 64 - 16;
        if (!memchr(name, 0, maxlen))
            return;
        struct instr_sproc *p = instr_ss_proc(s, pid, 1);
        if (p && p->exe_pending && name[0] == '/') {
            snprintf(p->exe, sizeof p->exe, "%s", name);
            p->exe_pending = 0;
        }
        if (p)
            instr_ss_add_map(s, p, addr, addr + len, pgoff, name, t);
        break;
    }
    case PERF_RECORD_COMM: {
        uint32_t pid = rd32(r + 8), tid = rd32(r + 12);
        const char *name = (const char *)r + 16;
        if (size < 16 + 16 + 1 || !memchr(name, 0, size - 16 - 16))
            return;
        struct instr_sproc *p = instr_ss_proc(s, pid, 1);
        if (!p)
            return;
        if (misc & PERF_RECORD_MISC_COMM_EXEC)
            instr_ss_reset_image(s, p, t);
        struct instr_sthread *th = instr_ss_thread(p, tid, 0);
        if (th) {
            snprintf(th->name, sizeof th->name, "%s", name);
            if (p->w)
                instr_writer_thread(p->w, th->index, tid, th->name);
        }
        break;
    }
    case PERF_RECORD_FORK: {
        uint32_t pid = rd32(r + 8), ppid = rd32(r + 12);
        struct instr_sproc *old = instr_ss_proc(s, pid, 0);
        if (old && old->closed) { /* the pid was reused: a new process */
            old->pid = 0;
            old = NULL;
        }
        if (pid == ppid || old)
            return; /* a new thread: it appears with its first sample */
        struct instr_sproc *parent = instr_ss_proc(s, ppid, 0), *p = instr_ss_proc(s, pid, 1);
        if (!p)
            return;
        p->ppid = ppid;
        p->fork_child = 1;
        p->start_ns = rd64(r + 24);
        if (parent) { /* the child starts with its parent's mappings */
            snprintf(p->exe, sizeof p->exe, "%s", parent->exe);
            for (size_t i = 0; i < parent->nmaps; i++)
                instr_ss_add_map(s, p, parent->maps[i].start, parent->maps[i].end, parent->maps[i].pgoff,
                        parent->maps[i].file->path, 0);
        }
        break;
    }
    case PERF_RECORD_EXIT: {
        uint32_t pid = rd32(r + 8), tid = rd32(r + 16);
        struct instr_sproc *p = instr_ss_proc(s, pid, 0);
        if (p && pid == tid && !p->ended) {
            p->ended = s->round + 1;
            p->end_ns = rd64(r + 24);
        }
        break;
    }
    case PERF_RECORD_READ: {
        uint32_t pid = rd32(r + 8), tid = rd32(r + 12);
        uint64_t v = size >= 24 ? rd64(r + 16) : 0;
        s->read_total += v;
        struct instr_sproc *p = instr_ss_proc(s, pid, 0);
        struct instr_sthread *th = p ? instr_ss_thread(p, tid, 1) : NULL;
        if (th)
            th->cpu_ns += v;
        break;
    }
    case PERF_RECORD_LOST: {
        uint64_t lost = size >= 24 ? rd64(r + 16) : 0;
        s->lost += lost;
        struct instr_sproc *p = instr_ss_proc(s, spid ? spid : (uint32_t)s->child, 1);
        if (!p || p->closed || instr_ss_open_dump(s, p) < 0)
            return;
        struct instr_sthread *th = instr_ss_thread(p, stid ? stid : p->pid, 1);
        if (th)
            instr_writer_sample(p->w, th->index, t, INSTR_SAMPLE_LOST, lost, 0, NULL, 0);
        break;
    }
    default:
        break;
    }
}

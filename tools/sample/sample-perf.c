/* sample-perf.c - per-CPU sampling events and their rings (see sample-perf.h). */
#define _GNU_SOURCE
#include "sample-perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arrays.h"
#include "dump-reader.h" /* error codes */
#include "sample-regs.h"

struct ring {
    int fd;
    uint8_t *base;  /* control page, then data */
    size_t data_size;
};

struct instr_sampler {
    struct ring *rings;
    size_t nrings;
    struct pollfd *pfds;
    uint8_t *buf; /* records of one drain, copied out */
    size_t len, cap;
    struct rec { uint64_t time; size_t off, size; } *recs;
    size_t nrecs, caprecs;
};

static int online_cpus(int *cpus, int max)
{
    int n = 0;
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    if (f) {
        int a, b;
        char sep;
        while (fscanf(f, "%d", &a) == 1) {
            b = a;
            if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%d", &b) == 1)
                fscanf(f, "%c", &sep);
            for (int c = a; c <= b && n < max; c++)
                cpus[n++] = c;
        }
        fclose(f);
    }
    if (!n) {
        long k = sysconf(_SC_NPROCESSORS_CONF);
        for (int c = 0; c < k && n < max; c++)
            cpus[n++] = c;
    }
    return n;
}

static void fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Opens the event on one CPU and maps as big a ring as the locked-memory
 * limit allows (1 MiB, else less).  The kernel wakes instr-sample when a
 * quarter of the ring is waiting (30 samples with 8 KiB stacks, against
 * every other sample with a 16 KiB watermark): each wakeup is work on the
 * program's CPU (an interrupt, and on a VM an exit to the host), and wakes
 * instr-sample beside it.  Lua at 1 kHz, 15 interleaved rounds: the
 * program's CPU +2.2 % over the bare run, against +4.8 % with the 16 KiB
 * watermark.  The 50 ms poll drains long before a ring is full.  0,
 * perf_event_open's errno, or -1 when no ring could be mapped (errno says
 * why). */
static int open_ring(struct ring *r, struct perf_event_attr *a, pid_t pid, int cpu)
{
    for (size_t pages = 256; pages >= 8; pages /= 2) {
        a->wakeup_watermark = (uint32_t)(pages * 4096 / 4);
        int fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
            return errno;
        void *m = mmap(NULL, (pages + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            *r = (struct ring){fd, m, pages * 4096};
            return 0;
        }
        int e = errno;
        close(fd);
        errno = e;
    }
    return -1;
}

int instr_sampler_present(char *err, size_t errlen)
{
    /* No attributes: EFAULT where the call exists, ENOSYS where it does not. */
    if (syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0) < 0 && errno == ENOSYS) {
        fail(err, errlen,
             "perf events are absent here (perf_event_open: %s: a kernel without perf events, or an "
             "emulator such as qemu-user): nothing to sample with",
             strerror(ENOSYS));
        return INSTR_SAMPLER_NOT_ALLOWED;
    }
    return 0;
}

int instr_sampler_open(struct instr_sampler **sp, const struct instr_sampler_config *c, char *err, size_t errlen)
{
    int cpus[1024];
    int n = online_cpus(cpus, 1024);
    struct instr_sampler *s = calloc(1, sizeof *s);
    if (!s || !(s->rings = calloc((size_t)n, sizeof *s->rings)) || !(s->pfds = calloc((size_t)n, sizeof *s->pfds))) {
        fail(err, errlen, "out of memory");
        instr_sampler_close(s);
        return INSTR_ENOMEM;
    }
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = c->period_ns;
    /* The kernel's frame-pointer chain only when asked for: in code built
     * without frame pointers (Debian's, most code) it walks whatever %rbp
     * holds, faulting on the way, for a chain nobody uses.  Lua at 1 kHz,
     * 15 interleaved rounds: the program's CPU +2.9 % over bare with it,
     * +1.65 % without. */
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | (c->fp_chain ? PERF_SAMPLE_CALLCHAIN : 0) |
                    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = INSTR_UREGS_MASK; /* the architecture's (sample-regs.h) */
    a.sample_stack_user = (uint32_t)c->stack_bytes;
    a.disabled = 1;
    a.enable_on_exec = 1;     /* nothing of the child before its exec */
    a.inherit = 1;            /* its threads and forked children */
    a.inherit_stat = 1;       /* an exiting inherited task reports its CPU time (PERF_RECORD_READ) */
    a.exclude_kernel = 1;     /* user code only: also what paranoid 2 allows */
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = 1;
    a.mmap = 1;
    a.mmap2 = 1;              /* executable mappings, with file offsets */
    a.comm = 1;
    a.comm_exec = 1;          /* exec marks a new image */
    a.task = 1;               /* fork and exit */
    a.sample_id_all = 1;      /* side-band records carry pid, tid and time */
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC; /* the dump's tick */
    a.watermark = 1;
    for (int i = 0; i < n; i++) {
        int e = open_ring(&s->rings[s->nrings], &a, c->pid, cpus[i]);
        if (e == ENODEV || e == ENOENT)
            continue; /* a CPU gone offline */
        if (e == EACCES || e == EPERM) {
            FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
            int level = -99;
            if (f) {
                if (fscanf(f, "%d", &level) != 1)
                    level = -99;
                fclose(f);
            }
            if (level > 2)
                fail(err, errlen,
                     "perf events are not allowed here (kernel.perf_event_paranoid=%d); "
                     "fix: sysctl kernel.perf_event_paranoid=2",
                     level);
            else
                fail(err, errlen,
                     "perf events are not allowed here (perf_event_open: %s: a seccomp filter or a container "
                     "forbids it); fix: allow perf_event_open, and sysctl kernel.perf_event_paranoid=2",
                     strerror(e));
            instr_sampler_close(s);
            return INSTR_SAMPLER_NOT_ALLOWED;
        }
        if (e < 0) {
            fail(err, errlen, "cannot map the sample ring: %s (locked-memory limit: ulimit -l, "
                              "kernel.perf_event_mlock_kb)", strerror(errno));
            instr_sampler_close(s);
            return INSTR_EIO;
        }
        if (e) {
            fail(err, errlen, "perf_event_open (CPU %d): %s", cpus[i], strerror(e));
            instr_sampler_close(s);
            return INSTR_EIO;
        }
        s->pfds[s->nrings] = (struct pollfd){s->rings[s->nrings].fd, POLLIN, 0};
        s->nrings++;
    }
    if (!s->nrings) {
        fail(err, errlen, "no CPU to sample on");
        instr_sampler_close(s);
        return INSTR_EIO;
    }
    *sp = s;
    return 0;
}

void instr_sampler_wait(struct instr_sampler *s, int ms)
{
    poll(s->pfds, s->nrings, ms);
}

static int cmp_rec(const void *x, const void *y)
{
    const struct rec *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

static int push(struct instr_sampler *s, const uint8_t *data, size_t dsize, uint64_t pos, size_t size)
{
    uint8_t *b = instr_grow(s->buf, &s->cap, s->len + size, 1, 1 << 20);
    if (!b)
        return -1;
    s->buf = b;
    struct rec *recs = instr_grow(s->recs, &s->caprecs, s->nrecs + 1, sizeof *recs, 4096);
    if (!recs)
        return -1;
    s->recs = recs;
    size_t at = (size_t)(pos % dsize), first = size < dsize - at ? size : dsize - at;
    memcpy(s->buf + s->len, data + at, first);
    memcpy(s->buf + s->len + first, data, size - first);
    const uint8_t *r = s->buf + s->len;
    uint32_t type;
    uint64_t time = 0;
    memcpy(&type, r, 4);
    if (type == PERF_RECORD_SAMPLE && size >= 32)
        memcpy(&time, r + 24, 8); /* header, ip, pid/tid, then time */
    else if (size >= 24)
        memcpy(&time, r + size - 8, 8); /* the sample_id trailer ends with time */
    s->recs[s->nrecs++] = (struct rec){time, s->len, size};
    s->len += size;
    return 0;
}

void instr_sampler_drain(struct instr_sampler *s, void (*fn)(void *ctx, const uint8_t *rec, size_t size), void *ctx)
{
    s->len = s->nrecs = 0;
    for (size_t i = 0; i < s->nrings; i++) {
        struct ring *r = &s->rings[i];
        struct perf_event_mmap_page *pg = (void *)r->base;
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
        const uint8_t *data = r->base + 4096;
        while (tail + sizeof(struct perf_event_header) <= head) {
            struct perf_event_header h;
            size_t at = (size_t)(tail % r->data_size);
            uint8_t hb[sizeof h];
            for (size_t k = 0; k < sizeof h; k++)
                hb[k] = data[(at + k) % r->data_size];
            memcpy(&h, hb, sizeof h);
            if (h.size < sizeof h || tail + h.size > head)
                break;
            if (push(s, data, r->data_size, tail, h.size) < 0)
                break;
            tail += h.size;
        }
        __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
    }
    if (s->nrecs > 1)
        qsort(s->recs, s->nrecs, sizeof *s->recs, cmp_rec);
    for (size_t i = 0; i < s->nrecs; i++)
        fn(ctx, s->buf + s->recs[i].off, s->recs[i].size);
}

uint64_t instr_sampler_total(struct instr_sampler *s)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->nrings; i++) {
        uint64_t v;
        if (read(s->rings[i].fd, &v, sizeof v) == (ssize_t)sizeof v)
            total += v;
    }
    return total;
}

void instr_sampler_close(struct instr_sampler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nrings; i++) {
        if (s->rings[i].base)
            munmap(s->rings[i].base, s->rings[i].data_size + 4096);
        close(s->rings[i].fd);
    }
    free(s->rings);
    free(s->pfds);
    free(s->buf);
    free(s->recs);
    free(s);
}

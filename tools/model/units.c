/* units.c - units and the formatting of values and header facts shared by
 * the writers; the one tick -> nanosecond conversion. */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

const char instr_no_app_reason[] =
    "not available: the input format has no kernel-transition data (no detector ran)";

double instr_ticks_ns(const struct instr_dump *d, uint64_t ticks)
{
    return d->tick_hz > 0 ? (double)ticks * 1e9 / d->tick_hz : NAN;
}

static double pct_of(uint64_t x, uint64_t total)
{
    return total ? 100.0 * (double)x / (double)total : 0;
}

void instr_values_pct(const struct instr_values *v, const struct instr_values *total, double pct[4], double cpu[2])
{
    pct[0] = pct_of(v->ei, total->ei);
    pct[1] = pct_of(v->ee, total->ei);
    pct[2] = pct_of(v->ai, total->ai);
    pct[3] = pct_of(v->ae, total->ai);
    cpu[0] = pct_of(v->ci, total->ci);
    cpu[1] = pct_of(v->ce, total->ci);
}

void instr_values_add4(struct instr_values *v, double ns[4], const struct instr_dump *d, uint64_t ei, uint64_t ee,
                       uint64_t ai, uint64_t ae, uint64_t calls)
{
    v->ei += ei;
    v->ee += ee;
    v->ai += ai;
    v->ae += ae;
    v->calls += calls;
    ns[0] += instr_ticks_ns(d, ei);
    ns[1] += instr_ticks_ns(d, ee);
    ns[2] += instr_ticks_ns(d, ai);
    ns[3] += instr_ticks_ns(d, ae);
}

const char *const instr_unit_names[INSTR_NUNITS] = {"ticks", "ns", "us", "ms"};

const char *instr_units_name(enum instr_units u)
{
    return instr_unit_names[u];
}

void instr_fmt_value(char *buf, size_t len, uint64_t ticks, double ns, enum instr_units u)
{
    switch (u) {
    case INSTR_UNITS_TICKS:
        snprintf(buf, len, "%" PRIu64, ticks);
        break;
    case INSTR_UNITS_NS:
        snprintf(buf, len, "%.0f", ns);
        break;
    case INSTR_UNITS_US:
        snprintf(buf, len, "%.3f", ns / 1e3);
        break;
    case INSTR_UNITS_MS:
        snprintf(buf, len, "%.3f", ns / 1e6);
        break;
    }
}

const char *instr_basename(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "";
}

void instr_detector_text(const struct instr_dump *d, char *sees, size_t slen, char *unseen, size_t ulen)
{
    unsigned b = d->hdr.detector_sees;
    if (d->hdr.detector == INSTR_DETECTOR_NONE)
        b = 0;
    static const struct {
        unsigned bit;
        const char *seen, *unseen;
    } kinds[] = {
        {INSTR_OS_SCHED, "context switches (preemption, blocking, sleep, migrations)", "context switches"},
        {INSTR_OS_SYSCALL, "system calls", NULL},
        {INSTR_OS_FAULT, "page faults", NULL},
        {INSTR_OS_SIGNAL, "signals", "signals"}, /* rseq_cs: flagged as SCHED */
        {INSTR_OS_IRQ, "hardware interrupts", "hardware interrupts"},
    };
    size_t ns = 0, nu = 0;
    sees[0] = unseen[0] = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *u = kinds[i].unseen;
        if (kinds[i].bit == INSTR_OS_SYSCALL)
            u = (b & INSTR_OS_SCHED) ? "system calls that do not block" : "system calls";
        if (kinds[i].bit == INSTR_OS_FAULT)
            u = (b & INSTR_OS_SCHED) ? "page faults that do not block" : "page faults";
        if (b & kinds[i].bit) {
            if (ns < slen)
                ns += (size_t)snprintf(sees + ns, slen - ns, "%s%s", ns ? ", " : "", kinds[i].seen);
        } else if (nu < ulen) {
            nu += (size_t)snprintf(unseen + nu, ulen - nu, "%s%s", nu ? ", " : "", u);
        }
    }
    if (!sees[0])
        snprintf(sees, slen, "nothing (Application = Elapsed)");
}

const char *instr_detector_set_name(const struct instr_dump *d, char *buf, size_t len)
{
    uint32_t set = d->hdr.detector_set;
    size_t n = 0;
    buf[0] = 0;
    if (!set)
        return instr_detector_name(d->hdr.detector);
    for (uint32_t k = 0; k < 32 && n < len; k++)
        if (set >> k & 1)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", instr_detector_name(k));
    return buf;
}

int instr_dump_exited(const struct instr_dump *d)
{
    return (d->hdr.flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_NO_TRANSITIONS)) == INSTR_DUMP_COMPLETE;
}

int instr_dump_same_process(const struct instr_dump *a, const struct instr_dump *b)
{
    return a->hdr.pid == b->hdr.pid && a->hdr.start_tsc == b->hdr.start_tsc &&
           a->hdr.start_mono_ns == b->hdr.start_mono_ns && a->hdr.start_real_ns == b->hdr.start_real_ns &&
           !strcmp(a->hdr.exe_path, b->hdr.exe_path);
}

int instr_dumps_have_rate(const struct instr_dump *dumps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dumps[i].tick_hz <= 0)
            return 0;
    return 1;
}

/* filter.c - record-time filters: what INSTR_DEPTH, INSTR_MIN_DURATION and
 * INSTR_TRIGGER leave out of the dump (uftrace's -D, -t and -T).
 *
 *   INSTR_DEPTH=N          a thread's frames deeper than N (its first
 *                          recorded frame is depth 1, call-site frames
 *                          count) are not recorded, nor anything they call
 *   INSTR_MIN_DURATION=T   a call that returns within T of its entry (ns,
 *                          or with a unit: 500ns, 20us, 1ms) is taken out
 *                          of the dump again, with everything it called
 *   INSTR_TRIGGER=F:on,G:off,...
 *                          entering F switches recording on, G's return
 *                          switches it off (every thread); with an :on
 *                          trigger the run begins off
 *
 * A call not recorded is its caller's time, as if its body were the
 * caller's: no event marks it.  The hooks still run (the filters are
 * decided in the hooks' slow paths, hooks.c, which every hook of a
 * filtering thread takes: INSTR__FILTERING in its pending bits), so a
 * filtered run costs more per call than an unfiltered one, not less; what
 * it saves is dump size and the report's time.  The header says what the
 * filters were and how many calls each left out (dump-format.h), which
 * the report prints.
 *
 * Triggers are matched at registration, against the mangled name, the
 * demangled one, and the demangled one without its parameters (ns::f for
 * ns::f(int)): the descriptor keeps the result in rt_flags.  A trigger's
 * switch is written as EXT SWITCH on the thread that made it, so the
 * report's recorded windows cover trigger switches as they do
 * instr_start/instr_stop's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

struct instr__filter instr__filter;

#define MAX_TRIGGERS 16

#define NEAREST 3

static struct {
    char name[256];
    uint16_t flags; /* INSTR_FN_RT_* */
    uint8_t matched; /* a function that ran has this name */
    struct {
        unsigned distance; /* edit distance; 0 = no candidate yet */
        char name[64];
    } near[NEAREST];   /* the closest names of functions that ran, for a trigger never matched */
} triggers[MAX_TRIGGERS];
static unsigned ntriggers;

/* Ticks in a nanosecond: the counter's rate where the CPU says it
 * (aarch64), else measured over 2 ms (only INSTR_MIN_DURATION needs it,
 * once). */
static double ticks_per_ns(void)
{
    if (instr__tick_hz())
        return (double)instr__tick_hz() / 1e9;
    uint64_t t0, m0, r0, t1, m1, r1;
    instr__clock_pair(&t0, &m0, &r0);
    struct timespec ts = {0, 2000000};
    while (nanosleep(&ts, &ts))
        ;
    instr__clock_pair(&t1, &m1, &r1);
    return m1 > m0 ? (double)(t1 - t0) / (double)(m1 - m0) : 1.0;
}

/* "500", "500ns", "20us", "1.5ms", "1s": ns, or -1 (also INSTR_PERF_AFTER's,
 * detector-perf.c). */
double instr__parse_ns(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit))
            return v * units[i].ns;
    return -1;
}

static void read_depth(void)
{
    const char *e = secure_getenv("INSTR_DEPTH");
    if (!e || !*e)
        return;
    char *end;
    unsigned long n = strtoul(e, &end, 10);
    if (*end || n == 0 || n > 1000000) {
        instr__say("INSTR_DEPTH=", e, " is not a depth (1, 2, ...)", "; no depth limit");
        return;
    }
    instr__filter.depth = (uint32_t)n;
}

static void read_min_duration(void)
{
    const char *e = secure_getenv("INSTR_MIN_DURATION");
    if (!e || !*e)
        return;
    double ns = instr__parse_ns(e);
    if (ns < 0) {
        instr__say("INSTR_MIN_DURATION=", e, " is not a duration (500ns, 20us, 1ms)",
                   "; every call recorded");
        return;
    }
    instr__filter.min_ticks = (uint64_t)(ns * ticks_per_ns() + 0.5);
}

/* "F:on,G:off": each name with its action. */
static void read_triggers(void)
{
    const char *e = secure_getenv("INSTR_TRIGGER");
    if (!e || !*e)
        return;
    const char *s = e;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const char *colon = memrchr(s, ':', len);
        uint16_t flags = 0;
        if (colon && (size_t)(s + len - colon - 1) == 2 && !strncmp(colon + 1, "on", 2))
            flags = INSTR_FN_RT_TRIGGER_ON;
        else if (colon && (size_t)(s + len - colon - 1) == 3 && !strncmp(colon + 1, "off", 3))
            flags = INSTR_FN_RT_TRIGGER_OFF;
        size_t nlen = colon ? (size_t)(colon - s) : 0;
        if (!flags || nlen == 0 || nlen >= sizeof triggers[0].name || ntriggers == MAX_TRIGGERS) {
            instr__say("INSTR_TRIGGER=", e,
                       ntriggers == MAX_TRIGGERS ? ": more than 16 triggers"
                                                 : ": each trigger is FUNCTION:on or FUNCTION:off",
                       "; no triggers");
            ntriggers = 0;
            return;
        }
        memcpy(triggers[ntriggers].name, s, nlen);
        triggers[ntriggers].name[nlen] = 0;
        triggers[ntriggers].flags = flags;
        ntriggers++;
        s += len + (comma != NULL);
    }
    instr__filter.triggers = ntriggers;
    for (unsigned i = 0; i < ntriggers; i++)
        if (triggers[i].flags & INSTR_FN_RT_TRIGGER_ON)
            instr__filter.starts_off = 1;
}

void instr__filter_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    read_depth();
    read_min_duration();
    read_triggers();
    instr__filter.on = !instr__filter.starts_off;
    instr__filter.any = instr__filter.depth || instr__filter.min_ticks || instr__filter.triggers;
}

/* The recording switch (switch.c) sets the filters' on: it decides, for
 * code the switch cannot turn off, in the hooks' slow path as a trigger's
 * does, once threads filter for it (instr__filter_join). */
void instr__filter_switch(int on)
{
    __atomic_store_n(&instr__filter.on, on, __ATOMIC_RELAXED);
}

/* From now on every thread filters: new threads from their creation, the
 * others from their next hook (the hook tables then point at hooks that
 * join the thread first, hooks.c), this one now. */
void instr__filter_join(void)
{
    if (__atomic_exchange_n(&instr__filter.switched, 1, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&instr__filter.any, 1, __ATOMIC_RELEASE);
    if (instr__rt.header) /* the hook costs measured at start are the fast path's: the report says so */
        __atomic_fetch_or(&instr__rt.header->flags, INSTR_DUMP_SLOW_PATH_JOINED, __ATOMIC_RELEASE);
    struct instr__thread *t = instr__thread_own(instr__tls);
    if (t)
        instr__thread_join_filtering(t);
}

void instr__filter_header(struct instr_dump_header *h)
{
    if ((instr__filter.triggers || instr__filter.switched) && !__atomic_load_n(&instr__filter.on, __ATOMIC_RELAXED))
        h->flags |= INSTR_DUMP_SWITCHED_OFF; /* a trigger has recording off: the windows start off */
    if (instr__filter.switched)
        h->flags |= INSTR_DUMP_SLOW_PATH_JOINED; /* a fork child's dump: its hooks filter from the start */
    h->filter_depth = instr__filter.depth;
    h->filter_min_ticks = instr__filter.min_ticks;
    h->filter_triggers = instr__filter.triggers;
}

/* Whether name (mangled or demangled) is the trigger's name; a demangled
 * one also without its parameters. */
static int names_match(const char *trigger, const char *name)
{
    size_t n = strlen(trigger);
    return !strncmp(trigger, name, n) && (name[n] == 0 || name[n] == '(');
}

/* Levenshtein distance of a and b, each cut to 63 characters. */
static unsigned distance(const char *a, const char *b)
{
    unsigned row[64], la = (unsigned)strnlen(a, 63), lb = (unsigned)strnlen(b, 63);
    for (unsigned j = 0; j <= lb; j++)
        row[j] = j;
    for (unsigned i = 1; i <= la; i++) {
        unsigned diag = row[0], up;
        row[0] = i;
        for (unsigned j = 1; j <= lb; j++) {
            up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* A function that ran, as a candidate for trigger t's nearest names: its
 * demangled name without parameters, else its mangled one. */
static void consider(unsigned t, const char *mangled, const char *demangled)
{
    char name[64];
    const char *src = *demangled ? demangled : mangled;
    size_t n = strcspn(src, "(");
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, src, n);
    name[n] = 0;
    unsigned d = distance(triggers[t].name, name) + 1; /* +1: 0 is "none yet" */
    for (unsigned k = 0; k < NEAREST; k++)
        if (triggers[t].near[k].distance && !strcmp(triggers[t].near[k].name, name))
            return;
    unsigned worst = 0;
    for (unsigned k = 1; k < NEAREST; k++)
        if (!triggers[t].near[worst].distance ? 0
            : !triggers[t].near[k].distance || triggers[t].near[k].distance > triggers[t].near[worst].distance)
            worst = k;
    if (triggers[t].near[worst].distance && triggers[t].near[worst].distance <= d)
        return;
    triggers[t].near[worst].distance = d;
    memcpy(triggers[t].near[worst].name, name, n + 1);
}

/* Called once per function, when it first runs (metadata.c, meta lock
 * held). */
uint16_t instr__filter_fn_flags(const char *mangled, const char *demangled)
{
    uint16_t flags = 0;
    for (unsigned i = 0; i < ntriggers; i++) {
        if (!strcmp(triggers[i].name, mangled) || (*demangled && names_match(triggers[i].name, demangled))) {
            flags |= triggers[i].flags;
            triggers[i].matched = 1;
        } else if (!triggers[i].matched) {
            consider(i, mangled, demangled);
        }
    }
    return flags;
}

void instr__filter_say_unmatched(void)
{
    for (unsigned i = 0; i < ntriggers; i++) {
        if (triggers[i].matched)
            continue;
        char near[3 * 66 + 16] = "";
        size_t n = 0;
        for (unsigned d = 1; d <= 64 && n < sizeof near - 70; d++) /* nearest first */
            for (unsigned k = 0; k < NEAREST; k++)
                if (triggers[i].near[k].distance == d)
                    n += (size_t)snprintf(near + n, sizeof near - n, "%s%s", n ? ", " : "; nearest: ",
                                          triggers[i].near[k].name);
        instr__say("INSTR_TRIGGER: ", triggers[i].name, " never matched a function that ran (its name, mangled or "
                   "demangled without parameters; an inlined function has no entry of its own)", near);
    }
}

/* A thread's counts go to the header when its chunk is full, when it ends,
 * and at the process's end (every live thread: instr__filter_flush_all). */
void instr__filter_flush(struct instr__thread *t)
{
    struct instr_dump_header *h = instr__rt.header;
    if (!h)
        return;
    for (unsigned i = 0; i < INSTR__FILTERED_KINDS; i++) {
        uint64_t n = t->filtered[i];
        if (!n)
            continue;
        t->filtered[i] = 0;
        uint64_t *to = i == INSTR__FILTERED_DEPTH ? &h->filtered_depth
                       : i == INSTR__FILTERED_SHORT ? &h->filtered_short
                                                    : &h->filtered_off;
        __atomic_fetch_add(to, n, __ATOMIC_RELAXED);
    }
}

void instr__filter_flush_all(void)
{
    if (!instr__filter.any)
        return;
    pthread_mutex_lock(&instr__rt.meta_lock);
    for (struct instr__thread *t = instr__rt.threads; t; t = t->next)
        instr__filter_flush(t);
    pthread_mutex_unlock(&instr__rt.meta_lock);
}

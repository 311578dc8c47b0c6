/* export-chrome.c - the Chrome trace event format (JSON object form), for
 * Perfetto UI and chrome://tracing-compatible viewers, from the call
 * timeline (instr_profile_build_timeline).
 *
 *   {"traceEvents": [
 *     {"ph": "M", "name": "process_name" | "thread_name", "pid", "tid", "args": {"name"}},
 *     {"ph": "X", "name", "cat": "function", "pid", "tid", "ts", "dur", "args": {module, file, line}},
 *     {"ph": "i", "s": "t", "name", "pid", "tid", "ts"},            instr_event
 *     {"ph": "C", "name", "pid", "tid", "ts", "args": {"value"}},   instr_counter
 *   ], "displayTimeUnit": "ns", "otherData": {...}}
 *
 * One complete ("X") event per call, written when it closes; ts and dur in
 * microseconds since the session's start with nanosecond decimals.  Large
 * traces: [from, to] keeps what overlaps the range (calls clipped to it),
 * min_dur drops short calls, split_bytes ends a part (a complete file, with
 * the metadata events again) once it holds that many bytes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct cexp {
    FILE *out;
    const struct instr_session *s;
    const struct instr_report_opts *o;
    size_t dump;
    const struct instr_profile *p;
    uint64_t bytes;   /* written to the current part */
    unsigned part;
    int first;        /* no event in the current part yet */
    double *open;     /* open calls' start times (µs) of the current thread */
    size_t nopen, capopen;
    uint32_t thread;
};

static void put(struct cexp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct cexp *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(c->out, fmt, ap);
    va_end(ap);
    if (n > 0)
        c->bytes += (uint64_t)n;
}

static void str(struct cexp *c, const char *s)
{
    long before = ftell(c->out);
    instr_json_str(c->out, s);
    long after = ftell(c->out);
    c->bytes += before >= 0 && after > before ? (uint64_t)(after - before) : strlen(s) + 2;
}

static uint64_t tid_of(const struct cexp *c, uint32_t thread)
{
    return c->p->threads[thread].tid;
}

static void begin_event(struct cexp *c)
{
    put(c, "%s\n", c->first ? "" : ",");
    c->first = 0;
}

static void process_name(struct cexp *c)
{
    const struct instr_dump *d = &c->s->dumps[c->dump];
    begin_event(c);
    put(c, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRIu64 ", \"tid\": 0, \"args\": {\"name\": ",
        d->hdr.pid);
    str(c, instr_basename(d->hdr.exe_path));
    put(c, "}}");
}

static void thread_name(struct cexp *c, uint32_t t)
{
    const struct instr_pthread *th = &c->p->threads[t];
    begin_event(c);
    put(c, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64
           ", \"args\": {\"name\": ", c->p->dump->hdr.pid, th->tid);
    str(c, th->name && th->name[0] ? th->name : "thread");
    put(c, "}}");
}

/* A new part names the process and the threads met so far again (the
 * profile's threads array holds those walked, the current one last). */
static void metadata(struct cexp *c)
{
    process_name(c);
    for (uint32_t t = 0; t < c->p->nthreads; t++)
        thread_name(c, t);
}

/* The first event of a thread: its name. */
static void see_thread(struct cexp *c, uint32_t thread)
{
    if (c->thread == thread)
        return;
    c->thread = thread;
    c->nopen = 0;
    thread_name(c, thread);
}

static void part_end(struct cexp *c)
{
    put(c, "\n], \"displayTimeUnit\": \"ns\", \"otherData\": {\"generator\": \"instr-report\", \"part\": %u}}\n",
        c->part);
}

static void part_begin(struct cexp *c)
{
    c->bytes = 0;
    c->first = 1;
    put(c, "{\"traceEvents\": [");
}

/* After an event: a full part ends and the next begins. */
static int maybe_split(struct cexp *c)
{
    if (!c->o->split_bytes || c->bytes < c->o->split_bytes || !c->o->next_part)
        return 0;
    part_end(c);
    FILE *f = c->o->next_part(c->o->part_ctx, ++c->part);
    if (!f)
        return INSTR_EIO;
    c->out = f;
    part_begin(c);
    metadata(c);
    return 0;
}

static double us(const struct cexp *c, uint64_t tick)
{
    return instr_session_us(c->s, c->dump, tick);
}

static int in_range(const struct cexp *c, double t0, double t1)
{
    return t1 >= c->o->from_us && (c->o->to_us < 0 || t0 <= c->o->to_us);
}

static int on_open(void *ctx, uint32_t thread, uint32_t func, uint64_t tick)
{
    struct cexp *c = ctx;
    (void)func;
    see_thread(c, thread);
    if (c->nopen == c->capopen) {
        size_t nc = c->capopen ? c->capopen * 2 : 64;
        double *a = realloc(c->open, nc * sizeof *a);
        if (!a)
            return INSTR_ENOMEM;
        c->open = a;
        c->capopen = nc;
    }
    c->open[c->nopen++] = us(c, tick);
    return 0;
}

static int on_close(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete)
{
    struct cexp *c = ctx;
    if (!c->nopen)
        return 0;
    double t0 = c->open[--c->nopen], t1 = us(c, tick);
    if (!in_range(c, t0, t1))
        return 0;
    if (t0 < c->o->from_us)
        t0 = c->o->from_us;
    if (c->o->to_us >= 0 && t1 > c->o->to_us)
        t1 = c->o->to_us;
    if (t1 - t0 < c->o->min_dur_us)
        return 0;
    const struct instr_row *r = instr_function_row(c->s, c->s->func_rows[c->dump][func]);
    begin_event(c);
    put(c, "{\"ph\": \"X\", \"name\": ");
    str(c, r->name);
    put(c, ", \"cat\": \"%s\", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64 ", \"ts\": %.3f, \"dur\": %.3f, \"args\": {",
        r->pseudo ? "call" : "function", c->p->dump->hdr.pid, tid_of(c, thread), t0, t1 - t0);
    put(c, "\"module\": ");
    str(c, instr_basename(r->module));
    if (r->file[0]) {
        put(c, ", \"file\": ");
        str(c, r->file);
        put(c, ", \"line\": %" PRIu64, r->line);
    }
    put(c, "%s}}", incomplete ? ", \"incomplete\": true" : "");
    return maybe_split(c);
}

static const char *label_text(const struct cexp *c, uint64_t label)
{
    const struct instr_label *l = instr_dump_label(c->p->dump, label);
    return l ? l->text : "[label]";
}

static int on_mark(void *ctx, uint32_t thread, uint64_t label, uint64_t tick)
{
    struct cexp *c = ctx;
    double t = us(c, tick);
    see_thread(c, thread);
    if (!in_range(c, t, t))
        return 0;
    begin_event(c);
    put(c, "{\"ph\": \"i\", \"s\": \"t\", \"name\": ");
    str(c, label_text(c, label));
    put(c, ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64 ", \"ts\": %.3f}", c->p->dump->hdr.pid, tid_of(c, thread), t);
    return maybe_split(c);
}

static int on_counter(void *ctx, uint32_t thread, uint64_t label, int64_t value, uint64_t tick)
{
    struct cexp *c = ctx;
    double t = us(c, tick);
    see_thread(c, thread);
    if (!in_range(c, t, t))
        return 0;
    begin_event(c);
    put(c, "{\"ph\": \"C\", \"name\": ");
    str(c, label_text(c, label));
    put(c, ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64 ", \"ts\": %.3f, \"args\": {\"value\": %" PRId64 "}}",
        c->p->dump->hdr.pid, tid_of(c, thread), t, value);
    return maybe_split(c);
}

int instr_export_chrome(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    if (!s->have_rate)
        return INSTR_EARG; /* timestamps need a tick rate */
    struct cexp c = {.out = out, .s = s, .o = o, .part = 1};
    struct instr_timeline tl = {&c, on_open, on_close, on_mark, on_counter};
    int rc = 0;
    part_begin(&c);
    for (size_t i = 0; i < s->ndumps && rc == 0; i++) {
        struct instr_profile p;
        char err[600];
        c.dump = i;
        c.p = &p;
        c.thread = UINT32_MAX;
        c.nopen = 0;
        process_name(&c);
        if ((rc = instr_profile_build_timeline(&p, &s->dumps[i], s->exclude, &tl, err, sizeof err)) == 0)
            instr_profile_free(&p);
    }
    part_end(&c);
    if (c.out != out)
        rc = fclose(c.out) != 0 && !rc ? INSTR_EIO : rc;
    free(c.open);
    return rc;
}

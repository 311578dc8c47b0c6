/* export-chrome.c - the Chrome trace event format (JSON object form), for
 * Perfetto UI and chrome://tracing-compatible viewers, from the call
 * timeline (instr_profile_build_timeline).
 *
 *   {"traceEvents": [
 *     {"ph": "M", "name": "process_name" | "thread_name", "pid", "tid", "args": {"name"}},
 *     {"ph": "X", "name", "cat": "function" | "call", "pid", "tid", "ts", "dur"[, "args": {"incomplete"}]},
 *     {"ph": "i", "s": "t", "name", "pid", "tid", "ts"},            instr_event
 *     {"ph": "C", "name", "pid", "tid", "ts", "id": tid, "args": {"value"}},   instr_counter
 *     {"ph": "b" | "e", "cat": "instr", "name": "recording off", "id", "pid", "tid": pid, "ts"},
 *                                  a switchable run's gaps (hook_gaps)
 *     {"ph": "M", "name": "process_sort_index", "pid", "tid", "args": {"sort_index": rank}},
 *     {"ph": "s" | "f", "bp": "e", "cat": "mpi", "name", "id", "pid", "tid", "ts"},
 *                                  a job's messages and collectives (mpi_flows)
 *   ], "displayTimeUnit": "ns", "otherData": {...}}
 *
 * Written compact (no space after ':' or ','; one event a line): the
 * bytes are most of the export's cost.
 *
 * No args on calls: speedscope shows an event's args in its label (and
 * makes a frame per distinct args), and per-call copies of the function's
 * module, file and line made most of the file; they are in the report,
 * the callgrind, pprof and perfetto exports.  The one arg left is the
 * rare "incomplete": true of a frame still open when its thread ended.
 *
 * One complete ("X") event per call, written when it closes; ts and dur in
 * microseconds since the session's start with nanosecond decimals.  Large
 * traces: [from, to] keeps what overlaps the range (calls clipped to it),
 * min_dur drops short calls, split_bytes ends a part (a complete file, with
 * the metadata events again) once it holds that many bytes.
 *
 * Without any of those, a trace of more calls than browser viewers load
 * (CHROME_MAX_CALLS) keeps the longest (thin.h): every call of at least
 * the cut, so no call without its caller, and otherData says so
 * ("thinned").  The calls are first counted into a histogram of their
 * durations in a walk that writes nothing, then written in a second walk;
 * a run whose dumps cannot hold that many calls (instr_thin_may_exceed)
 * is written in one walk, as before.
 *
 * A part opens on its own: the calls open at its edges are repeated there
 * as begin/end pairs.  When a part ends, each open call gets a "B" at its
 * start (unless its "B" opened the part) and an "E" at the split; the next part begins with a "B" at the split for each, and the
 * call's close writes its "E" there instead of an "X":
 *
 *            part 1            |  part 2
 *     main   B ............. E | B ......... E      (main spans the edge)
 *     f        X   X   B ... E | B ... E            (f spans it too)
 *                               split time
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "export-options.h"
#include "mpi-calls.h"
#include "report.h"
#include "thin.h"
#include "writers.h"

/* The calls a trace keeps by default, the longest: what browser viewers
 * load.  The export writes about 100 bytes a call with short names (95 to
 * 100 measured on instrumented C programs; a longer name adds its length),
 * so about 200 MB, under the 256 MB where Perfetto UI and chrome://tracing
 * give up (instr-report's warning), with room for names 50 bytes longer.
 * INSTR_CHROME_MAX_CALLS sets another (a test switch: a small trace past
 * the cap). */
#define CHROME_MAX_CALLS 2000000u

/* ---- its options ---- */

struct chrome_opts {
    struct instr_timeline_opts tl; /* first: --time-range, --min-duration */
    uint64_t split_bytes;          /* --split-size: a part ends once it holds this many bytes (0: one file) */
};

static const struct chrome_opts defaults = {INSTR_TIMELINE_OPTS_DEFAULT, 0};

/* --split-size's bounds, MB.  Each part repeats its process's names and
 * the calls open at its edges, so parts of a few bytes hold one call each
 * (--split-size 0.000001 wrote 22,013 files); and past the top the bytes
 * overflow.  INSTR_CHROME_MIN_SPLIT=BYTES lowers the floor (a test switch:
 * a small trace in several parts). */
#define SPLIT_MIN_MB 1.0
#define SPLIT_MAX_MB 1e6

static int parse_split(void *opts, const char *v)
{
    double mb, floor = SPLIT_MIN_MB;
    const char *e = getenv("INSTR_CHROME_MIN_SPLIT");
    if (e && *e)
        floor = strtod(e, NULL) / 1e6;
    if (instr_opt_double(v, &mb, 0) < 0 || mb <= 0 || mb < floor || mb > SPLIT_MAX_MB)
        return -1;
    ((struct chrome_opts *)opts)->split_bytes = (uint64_t)(mb * 1e6);
    return 0;
}

static const struct instr_option split_opt = {
    "split-size", "MB", "end a file at about MB megabytes (1 to 1000000)\nand go on in FILE.2.json, FILE.3.json... (needs -o FILE)",
    parse_split, INSTR_OPT_NEEDS_FILE};

const struct instr_export_options instr_chrome_options = {
    (const struct instr_option *const[]){&instr_opt_time_range, &instr_opt_min_duration, &split_opt, NULL},
    sizeof(struct chrome_opts), &defaults, NULL};

/* ---- the export ---- */

struct open_call {
    uint64_t tick0; /* start, ticks (µs only when the call is written) */
    uint32_t func;
    int begun;     /* a "B" for it is in the current part: it closes with an "E" */
};

/* The text of a function's X events that does not change from call to
 * call (formatting it per call was most of the export's time). */
struct xcache {
    char *head; /* {"ph": "X", "name": ..., "cat": ..., "pid": P, "tid":  */
    char *tail; /* (nothing since the args went) */
    size_t hlen, tlen;
};

/* The output: bytes gathered in a large buffer and written with one
 * fwrite a megabyte (a vfprintf and three fwrites an event were a third of
 * the export's time); out NULL: a buffer that only grows (xtext). */
#define OUT_CHUNK (1u << 20)
struct obuf {
    char *p;
    size_t len, cap;
    FILE *out;
    int nomem;
};

struct cexp {
    struct obuf ob;
    FILE *out0;       /* the first part's stream (the caller's) */
    const struct instr_dump *dumps; /* the session's */
    size_t ndumps;
    uint64_t flow_id; /* the last flow's (mpi_flows) */
    struct instr_axis axis; /* the processes on one clock (axis.h): from the session's start */
    const struct instr_report_opts *o;
    const struct chrome_opts *co; /* o's export_opts */
    size_t dump;
    double short_ticks; /* calls shorter than this many ticks are below --min-duration for sure */
    const struct instr_profile *p;
    uint64_t bytes;   /* written to the current part */
    unsigned part;
    int first;        /* no event in the current part yet */
    struct open_call *open; /* the current thread's open calls, outermost first */
    size_t nopen, capopen;
    uint32_t thread;
    char **names;     /* per function of the current profile: its name, made when first needed */
    struct xcache *x; /* per function: its X events' fixed text, made when first needed */
    size_t nnames;
    struct instr_thin_hist *hist; /* the counting walk's durations (thinning by default), or NULL */
    uint64_t keep_ns; /* calls shorter than this (dur_ns) are left out by default; 0: none */
    struct instr_thinned thinned; /* what keep_ns left out (calls 0: nothing) */
};

static void flush(struct obuf *b)
{
    if (b->out && b->len)
        fwrite(b->p, 1, b->len, b->out);
    b->len = 0;
}

/* Room for n more bytes at b->p + b->len, or NULL (out of memory). */
static char *room(struct obuf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return b->p + b->len;
    if (b->out)
        flush(b);
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap : b->out ? OUT_CHUNK : 256;
        while (nc < b->len + n)
            nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) {
            b->nomem = 1;
            return NULL;
        }
        b->p = q;
        b->cap = nc;
    }
    return b->p + b->len;
}

/* n bytes written at room()'s pointer. */
static void took(struct cexp *c, size_t n)
{
    c->ob.len += n;
    c->bytes += n;
}

static void put(struct cexp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct cexp *c, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    char *b = n >= 0 ? room(&c->ob, (size_t)n + 1) : NULL;
    if (!b)
        return;
    if ((size_t)n < sizeof small) {
        memcpy(b, small, (size_t)n);
    } else {
        va_start(ap, fmt);
        vsnprintf(b, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    took(c, (size_t)n);
}

/* A JSON string (the escapes are report-json.c's). */
static void str(struct cexp *c, const char *s)
{
    const unsigned char *q = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)q);
    char *b = room(&c->ob, 6 * len + 2), *o = b;
    if (!b)
        return;
    *o++ = '"';
    for (; *q; q++) {
        switch (*q) {
        case '"': *o++ = '\\'; *o++ = '"'; break;
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        default:
            if (*q < 0x20 || *q == 0x7f) {
                static const char hex[] = "0123456789abcdef";
                memcpy(o, "\\u00", 4);
                o[4] = hex[*q >> 4];
                o[5] = hex[*q & 15];
                o += 6;
            } else {
                *o++ = (char)*q; /* UTF-8 passes through */
            }
        }
    }
    *o++ = '"';
    took(c, (size_t)(o - b));
}

static uint64_t tid_of(const struct cexp *c, uint32_t thread)
{
    return c->p->threads[thread].tid;
}

static void begin_event(struct cexp *c)
{
    char *b = room(&c->ob, 2);
    if (!b)
        return;
    b[0] = ',';
    b[1] = '\n';
    took(c, 2 - (size_t)c->first);
    if (c->first)
        b[0] = '\n';
    c->first = 0;
}

static void process_name(struct cexp *c)
{
    const struct instr_dump *d = &c->dumps[c->dump];
    begin_event(c);
    /* tid = pid: the main thread (a tid of 0 made a phantom thread in Perfetto). */
    put(c, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
           ",\"args\":{\"name\":", d->hdr.pid, d->hdr.pid);
    char label[128];
    str(c, instr_process_label(d, label, sizeof label));
    put(c, "}}");
    if (instr_dump_is_rank(d)) { /* ranks in rank order (chrome://tracing; Perfetto orders by activity) */
        begin_event(c);
        put(c, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
               ",\"args\":{\"sort_index\":%d}}", d->hdr.pid, d->hdr.pid, d->hdr.job_rank);
    }
}

static void thread_name(struct cexp *c, uint32_t t)
{
    const struct instr_pthread *th = &c->p->threads[t];
    begin_event(c);
    put(c, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
           ",\"args\":{\"name\":", c->p->dump->hdr.pid, th->tid);
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
    put(c, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"instr-report\",\"part\":%u", c->part);
    const struct instr_thinned *t = &c->thinned;
    if (t->calls)
        put(c, ",\"thinned\":{\"calls\":%" PRIu64 ",\"kept\":%" PRIu64 ",\"min_dur_us\":%.3f,\"max_calls\":%" PRIu64
               ",\"note\":\"the longest calls only, every one of at least min_dur_us; "
               "instr-report --min-duration 0 keeps every call\"}", t->calls, t->kept, (double)t->min_ns / 1e3, t->cap);
    put(c, "}}\n");
}

static void part_begin(struct cexp *c)
{
    c->bytes = 0;
    c->first = 1;
    put(c, "{\"traceEvents\":[");
}

static int in_range(const struct cexp *c, double t0, double t1);
static const char *func_name(struct cexp *c, uint32_t func);
static double us(const struct cexp *c, uint64_t tick);

/* A "B" or "E" of open call k at t (see the top). */
static int edge(struct cexp *c, size_t k, char ph, double t)
{
    const char *name = func_name(c, c->open[k].func);
    if (!name)
        return INSTR_ENOMEM;
    begin_event(c);
    put(c, "{\"ph\":\"%c\",\"name\":", ph);
    str(c, name);
    put(c, ",\"cat\":\"%s\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%.3f}",
        c->p->funcs[c->open[k].func].pseudo ? "call" : "function", c->p->dump->hdr.pid, tid_of(c, c->thread), t);
    return 0;
}

/* A time clipped to the --time-range. */
static double clip(const struct cexp *c, double t)
{
    if (t < c->co->tl.from_us)
        t = c->co->tl.from_us;
    if (c->co->tl.to_us >= 0 && t > c->co->tl.to_us)
        t = c->co->tl.to_us;
    return t;
}

/* After an event at t: a full part ends and the next begins, the calls
 * open across the edge repeated on both sides. */
static int maybe_split(struct cexp *c, double t)
{
    if (!c->co->split_bytes || c->bytes < c->co->split_bytes || !c->o->next_part)
        return 0;
    int rc = 0;
    t = clip(c, t);
    for (size_t k = 0; k < c->nopen && !rc; k++)
        if (!c->open[k].begun)
            rc = edge(c, k, 'B', clip(c, us(c, c->open[k].tick0))); /* opened in this part */
    for (size_t k = c->nopen; k-- > 0 && !rc;)
        rc = edge(c, k, 'E', t);
    if (rc)
        return rc;
    part_end(c);
    FILE *f = c->o->next_part(c->o->part_ctx, ++c->part);
    if (!f)
        return INSTR_EIO;
    flush(&c->ob);
    if (c->ob.out != c->out0)
        fclose(c->ob.out);
    c->ob.out = f;
    part_begin(c);
    metadata(c);
    for (size_t k = 0; k < c->nopen && !rc; k++) {
        c->open[k].begun = 1;
        rc = edge(c, k, 'B', t);
    }
    return rc;
}

/* Microseconds from the session's start (instr_session_us, which cannot be
 * used while the session is being built). */
static double us(const struct cexp *c, uint64_t tick)
{
    /* NAN without a rate, or with no memory for the axis */
    return c->axis.d ? instr_axis_tick_us(&c->axis, c->dumps, c->dump, tick) : NAN;
}

/* The name of a function of the current profile. */
static const char *func_name(struct cexp *c, uint32_t func)
{
    if (func >= c->nnames) {
        /* names and x grow together: the same capacity from the same count */
        size_t nn = c->nnames, nx = c->nnames;
        char **a = instr_grow(c->names, &nn, (size_t)func + 1, sizeof *a, 64);
        if (!a)
            return NULL;
        c->names = a;
        struct xcache *x = instr_grow(c->x, &nx, (size_t)func + 1, sizeof *x, 64);
        if (!x)
            return NULL;
        c->x = x;
        memset(a + c->nnames, 0, (nn - c->nnames) * sizeof *a);
        memset(x + c->nnames, 0, (nn - c->nnames) * sizeof *x);
        c->nnames = nn;
    }
    if (!c->names[func])
        c->names[func] = instr_profile_func_name(c->p, func);
    return c->names[func];
}

static void forget_names(struct cexp *c)
{
    for (size_t i = 0; i < c->nnames; i++) {
        free(c->names[i]);
        free(c->x[i].head);
        free(c->x[i].tail);
    }
    free(c->names);
    free(c->x);
    c->names = NULL;
    c->x = NULL;
    c->nnames = 0;
}

static int in_range(const struct cexp *c, double t0, double t1)
{
    return t1 >= c->co->tl.from_us && (c->co->tl.to_us < 0 || t0 <= c->co->tl.to_us);
}

/* Number formatting for the X events, as printf's %" PRIu64 " and %.3f. */
static char *put_lit(char *b, const char *s)
{
    size_t n = strlen(s);
    memcpy(b, s, n);
    return b + n;
}

/* "00" to "99": two digits a division. */
static const char pairs[] = "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
                            "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

static char *put_u64(char *b, uint64_t v)
{
    char t[24], *e = t + sizeof t, *q = e;
    while (v >= 100) {
        q -= 2;
        memcpy(q, pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    memcpy(b, q, (size_t)(e - q));
    return b + (e - q);
}

static char *put_us(char *b, double us)
{
    double ns = us * 1e3;
    if (!(ns >= 0 && ns < 1e15)) /* negative, huge or NaN: printf's way */
        return b + snprintf(b, 64, "%.3f", us);
    uint64_t v = (uint64_t)llround(ns);
    unsigned frac = (unsigned)(v % 1000);
    b = put_u64(b, v / 1000);
    b[0] = '.';
    b[1] = (char)('0' + frac / 100);
    memcpy(b + 2, pairs + 2 * (frac % 100), 2);
    return b + 4;
}

/* The fixed text of func's X events (struct xcache), made once. */
static const struct xcache *xtext(struct cexp *c, uint32_t func)
{
    const char *name = func_name(c, func);
    if (!name)
        return NULL;
    struct xcache *x = &c->x[func];
    if (x->head)
        return x;
    const struct instr_pfunc *f = &c->p->funcs[func];
    struct obuf real = c->ob;
    uint64_t bytes = c->bytes;
    c->ob = (struct obuf){0};
    put(c, "{\"ph\":\"X\",\"name\":");
    str(c, name);
    put(c, ",\"cat\":\"%s\",\"pid\":%" PRIu64 ",\"tid\":", f->pseudo ? "call" : "function",
        c->p->dump->hdr.pid);
    if (c->ob.nomem || !(x->head = malloc(c->ob.len + 1)))
        goto fail;
    memcpy(x->head, c->ob.p, x->hlen = c->ob.len);
    c->ob.len = 0; /* no args (see the top): an empty tail */
    if (c->ob.nomem || !(x->tail = malloc(c->ob.len + 1)))
        goto fail;
    memcpy(x->tail, c->ob.p, x->tlen = c->ob.len);
    free(c->ob.p);
    c->ob = real;
    c->bytes = bytes;
    return x;
fail:
    free(c->ob.p);
    c->ob = real;
    c->bytes = bytes;
    free(x->head);
    free(x->tail);
    x->head = x->tail = NULL;
    return NULL;
}

static int push_open(struct cexp *c, uint32_t func, uint64_t tick)
{
    if (c->nopen == c->capopen) {
        struct open_call *a = instr_grow(c->open, &c->capopen, c->nopen + 1, sizeof *a, 64);
        if (!a)
            return INSTR_ENOMEM;
        c->open = a;
    }
    c->open[c->nopen++] = (struct open_call){tick, func, 0};
    return 0;
}

static int on_open(void *ctx, uint32_t thread, uint32_t func, uint64_t tick)
{
    struct cexp *c = ctx;
    see_thread(c, thread);
    return push_open(c, func, tick);
}

/* A call's duration in the trace, ns: the difference of its rounded ends
 * (see on_close), what the thinning by default compares.  In doubles: a
 * damaged dump's times may be anything (NaN, huge, backwards). */
static double dur_ns(double t0, double t1)
{
    return round(t1 * 1e3) - round(t0 * 1e3);
}

/* Writes the duration of a call printed at t0 (µs) lasting dur ns, so
 * that a reader adding the printed ts and dur in doubles (JavaScript
 * viewers do: speedscope, Chrome's) gets exactly the double of the
 * printed end, the one a call starting there has as its ts.  Every end
 * is then that double, and calls nest as their ns do: a call's end never
 * passes the next call's start, nor a callee's end its caller's (0.1 +
 * 0.2 > 0.3: the sum of the two decimals alone is a double off in about
 * one call in four, either way).  Most durations print as ns / 1000
 * (put_us); the others as the shortest decimal of the double that sums
 * to the end, within 1e-12 µs of it. */
static char *put_dur(char *b, double t0, double dur)
{
    double v0 = round(t0 * 1e3);
    if (!(v0 >= 0 && v0 < 1e15) || !(dur >= 1 && dur < 1e15))
        return put_us(b, dur / 1e3);
    double a = v0 / 1e3, end = (v0 + dur) / 1e3, d = dur / 1e3;
    if (a + d == end)
        return put_us(b, d);
    /* a + x, rounded, is monotone in x and moves by at most an ulp of end
     * as x moves by one of its own (x <= end): some x sums to end. */
    d = end - a;
    while (a + d > end)
        d = nextafter(d, 0);
    while (a + d < end)
        d = nextafter(d, INFINITY);
    for (int prec = 15; prec < 17; prec++) {
        int n = snprintf(b, 32, "%.*g", prec, d);
        if (a + strtod(b, NULL) == end)
            return b + n;
    }
    return b + snprintf(b, 32, "%.17g", d);
}

/* As a histogram key: 0 for what is no duration. */
static uint64_t dur_key(double ns)
{
    return ns > 0 && ns < 1.8e19 ? (uint64_t)ns : 0;
}

static int on_close(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete)
{
    struct cexp *c = ctx;
    if (!c->nopen)
        return 0;
    struct open_call oc = c->open[--c->nopen];
    /* Most calls of a big run are short: left out by ticks, before any
     * conversion (clipping only shortens a call). */
    if (!oc.begun && (double)(tick - oc.tick0) < c->short_ticks)
        return 0;
    double t0 = us(c, oc.tick0), t1 = us(c, tick);
    if (oc.begun) {
        /* Its "B" opened this part: the "E" closes it, whatever its length. */
        c->open[c->nopen].begun = 0;
        begin_event(c);
        put(c, "{\"ph\":\"E\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%.3f%s}",
            c->p->dump->hdr.pid, tid_of(c, thread), clip(c, t1), incomplete ? ",\"args\":{\"incomplete\":true}" : "");
        return maybe_split(c, t1);
    }
    if (!in_range(c, t0, t1))
        return 0;
    t0 = clip(c, t0);
    t1 = clip(c, t1);
    if (t1 - t0 < c->co->tl.min_dur_us)
        return 0;
    double dur = dur_ns(t0, t1);
    if (dur < (double)c->keep_ns)
        return 0;
    if (c->keep_ns && dur_key(dur) < c->thinned.min_ns)
        c->thinned.min_ns = dur_key(dur);
    const struct xcache *x = xtext(c, func);
    if (!x)
        return INSTR_ENOMEM;
    begin_event(c);
    char *buf = room(&c->ob, x->hlen + x->tlen + 160), *b = buf;
    if (!buf)
        return INSTR_ENOMEM;
    memcpy(b, x->head, x->hlen);
    b += x->hlen;
    b = put_u64(b, tid_of(c, thread));
    b = put_lit(b, ",\"ts\":");
    b = put_us(b, t0);
    b = put_lit(b, ",\"dur\":");
    /* The difference of the rounded ends, not the rounded difference: a
     * call then never overlaps the next one by a rounding (a viewer
     * would nest it), and durations add up to their parent's. */
    b = put_dur(b, t0, dur);
    memcpy(b, x->tail, x->tlen);
    b += x->tlen;
    b = put_lit(b, incomplete ? ",\"args\":{\"incomplete\":true}}" : "}");
    took(c, (size_t)(b - buf));
    return maybe_split(c, t1);
}

static const char *label_text(const struct cexp *c, uint64_t label)
{
    const struct instr_label *l = instr_dump_label(c->p->dump, label);
    return l ? l->text : "[label]";
}

/* The head of a mark or counter event at tick, up to its name; 0 if it
 * is out of the --time-range (nothing written). */
static int instant_head(struct cexp *c, uint32_t thread, uint64_t label, uint64_t tick, const char *ph, double *t)
{
    *t = us(c, tick);
    see_thread(c, thread);
    if (!in_range(c, *t, *t))
        return 0;
    begin_event(c);
    put(c, "{\"ph\":%s,\"name\":", ph);
    str(c, label_text(c, label));
    put(c, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%.3f", c->p->dump->hdr.pid, tid_of(c, thread), *t);
    return 1;
}

static int on_mark(void *ctx, uint32_t thread, uint64_t label, uint64_t tick)
{
    struct cexp *c = ctx;
    double t;
    if (!instant_head(c, thread, label, tick, "\"i\",\"s\":\"t\"", &t))
        return 0;
    put(c, "}");
    return maybe_split(c, t);
}

static int on_counter(void *ctx, uint32_t thread, uint64_t label, int64_t value, uint64_t tick)
{
    struct cexp *c = ctx;
    double t;
    if (!instant_head(c, thread, label, tick, "\"C\"", &t))
        return 0;
    /* "id": viewers key a counter by pid, name and id, not tid: the thread's
     * values get a series of their own ("queue" of each worker). */
    put(c, ",\"id\":%" PRIu64 ",\"args\":{\"value\":%" PRId64 "}}", tid_of(c, thread), value);
    return maybe_split(c, t);
}

/* A dump's walk begins, the walk that counts or the one that writes. */
static int count_begin(void *ctx, size_t dump, const struct instr_profile *p)
{
    struct cexp *c = ctx;
    c->dump = dump;
    c->p = p;
    c->thread = UINT32_MAX;
    c->nopen = 0;
    return 0;
}

static int dump_begin(void *ctx, size_t dump, const struct instr_profile *p)
{
    struct cexp *c = ctx;
    forget_names(c);
    count_begin(c, dump, p);
    /* --min-duration in ticks, a millionth under, and the thinning's cut
     * 2 ns under (a rounded duration is at most 1 ns over the call's): the
     * exact tests follow for the calls above. */
    const struct instr_dump *d = &c->dumps[dump];
    double below = fmax(c->co->tl.min_dur_us * 1e-6 * (1 - 1e-6), ((double)c->keep_ns - 2) * 1e-9);
    c->short_ticks = d->tick_hz > 0 ? below * d->tick_hz : 0;
    process_name(c);
    return 0;
}

/* ---- thinning by default: the walk that counts (writes nothing) ---- */

/* The cap of the thinning by default, or 0: the user chose what to leave
 * out (--time-range, --min-duration, even 0) or asked for parts
 * (--split-size). */
static uint64_t default_cap(const struct chrome_opts *co)
{
    if (co->tl.chosen || co->split_bytes)
        return 0;
    const char *e = getenv("INSTR_CHROME_MAX_CALLS");
    char *end;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
    return v && !*end ? v : CHROME_MAX_CALLS;
}

static int count_open(void *ctx, uint32_t thread, uint32_t func, uint64_t tick)
{
    struct cexp *c = ctx;
    if (c->thread != thread) {
        c->thread = thread;
        c->nopen = 0;
    }
    return push_open(c, func, tick);
}

static int count_close(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete)
{
    struct cexp *c = ctx;
    (void)thread, (void)func, (void)incomplete;
    if (c->nopen) {
        uint64_t tick0 = c->open[--c->nopen].tick0;
        instr_thin_add(c->hist, dur_key(dur_ns(us(c, tick0), us(c, tick))));
    }
    return 0;
}

/* After the counting walk: the cut, if the calls are more than the cap
 * (the shortest call kept is known once they are written). */
static void cut(struct cexp *c, uint64_t cap)
{
    if ((c->keep_ns = instr_thin_cut(c->hist, cap, cap)))
        c->thinned = (struct instr_thinned){c->hist->calls, instr_thin_at_least(c->hist, c->keep_ns), UINT64_MAX, cap};
}

static void start(struct cexp *c, FILE *out, const struct instr_dump *dumps, size_t n,
                  const struct instr_report_opts *o)
{
    *c = (struct cexp){.ob = {.out = out}, .out0 = out, .dumps = dumps, .ndumps = n, .o = o, .part = 1,
                       .co = o->export_opts ? o->export_opts : &defaults};
    if (instr_axis_build(&c->axis, dumps, n) < 0)
        c->ob.nomem = 1;
    part_begin(c);
}

/* A switched run's gaps, where recording was off (the complement of the
 * profile's windows within the process's life): one async slice each,
 * "recording off", on the process (viewers draw it on a process track; readers
 * of calls only, speedscope, ignore it).  After the walk, which is what
 * knows the windows. */
static void hook_gaps(struct cexp *c, const struct instr_session *s)
{
    for (size_t k = 0; k < s->ndumps; k++) {
        const struct instr_profile *p = &s->profiles[k];
        const struct instr_dump *d = &s->dumps[k];
        if (!p->switched_at && !(d->hdr.flags & INSTR_DUMP_SWITCHED_OFF))
            continue;
        c->dump = k;
        uint64_t end = d->hdr.end_tsc ? d->hdr.end_tsc : d->hdr.last_tsc;
        for (size_t i = 0; i < p->nwindows; i++)
            if (p->windows[i].to > end)
                end = p->windows[i].to;
        uint64_t from = d->hdr.start_tsc;
        for (size_t i = 0; i <= p->nwindows; i++) {
            uint64_t to = i < p->nwindows ? p->windows[i].from : end;
            if (to > from) {
                double t0 = us(c, from), t1 = us(c, to);
                if (in_range(c, t0, t1))
                    for (int e = 0; e < 2; e++) {
                        begin_event(c);
                        put(c, "{\"ph\":\"%c\",\"cat\":\"instr\",\"name\":\"recording off\",\"id\":%zu,\"pid\":%" PRIu64
                               ",\"tid\":%" PRIu64 ",\"ts\":%.3f}", e ? 'e' : 'b', i, d->hdr.pid, d->hdr.pid,
                            clip(c, e ? t1 : t0));
                    }
            }
            if (i < p->nwindows)
                from = p->windows[i].to;
        }
    }
}

/* A job's messages and collectives, after the walk, from libinstr-mpi's
 * records (mpi-calls.h, matched by the wait states): a flow arrow from
 * each send's start to its receive's end, and one from the last rank into
 * an N x N collective of MPI_COMM_WORLD to each other rank's exit from it
 * (what the others waited for).  "s" binds to the call-site slice the send
 * began in, "f" ("bp": "e") to the one the receive ended in. */
static int put_flow(void *ctx, const struct instr_mpi_flow *f)
{
    struct cexp *c = ctx;
    double t0 = f->from->start / 1e3, t1 = f->to->end / 1e3;
    if (!in_range(c, t0 < t1 ? t0 : t1, t0 < t1 ? t1 : t0))
        return 0;
    c->flow_id++;
    const struct instr_rec_end {
        const struct instr_mpi_rec *r;
        size_t dump;
        double t;
        const char *ph;
    } ends[2] = {{f->from, f->from_dump, t0, "s"}, {f->to, f->to_dump, t1, "f\",\"bp\":\"e"}};
    for (int k = 0; k < 2; k++) {
        begin_event(c);
        put(c, "{\"ph\":\"%s\",\"cat\":\"mpi\",\"name\":", ends[k].ph);
        str(c, f->name);
        put(c, ",\"id\":%" PRIu64 ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%.3f}", c->flow_id,
            c->dumps[ends[k].dump].hdr.pid, ends[k].r->tid, clip(c, ends[k].t));
    }
    return 0;
}

static int mpi_flows(struct cexp *c, const struct instr_session *s)
{
    c->flow_id = 0;
    return instr_mpi_flows(s, put_flow, c);
}

static int finish(struct cexp *c, FILE *out, int rc)
{
    if (c->thinned.calls) {
        if (c->thinned.min_ns == UINT64_MAX) /* none kept */
            c->thinned.min_ns = c->keep_ns;
        if (c->o->thinned)
            *c->o->thinned = c->thinned;
    }
    part_end(c);
    flush(&c->ob);
    if (c->ob.nomem && !rc)
        rc = INSTR_ENOMEM;
    if (c->ob.out != out)
        rc = fclose(c->ob.out) != 0 && !rc ? INSTR_EIO : rc;
    free(c->ob.p);
    free(c->open);
    forget_names(c);
    instr_axis_free(&c->axis);
    return rc;
}

int instr_export_chrome_walk(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                             const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                             char *err, size_t errlen)
{
    if (!instr_dumps_have_rate(dumps, n)) {
        *wrc = INSTR_EARG; /* timestamps need a tick rate */
        return instr_session_build_excluding(s, dumps, n, x, err, errlen);
    }
    struct cexp c;
    start(&c, out, dumps, n, o);
    struct instr_session_observer obs = {&c, dump_begin, {&c, on_open, on_close, on_mark, on_counter, NULL}};
    uint64_t cap = default_cap(c.co);
    if (!cap || !instr_thin_may_exceed(dumps, n, cap)) {
        int rc = instr_session_build_observed(s, dumps, n, x, &obs, err, errlen);
        int fr = 0;
        if (rc == 0) {
            hook_gaps(&c, s);
            fr = mpi_flows(&c, s);
        }
        *wrc = finish(&c, out, fr);
        return rc;
    }
    /* Perhaps too many calls: the session's walk counts them, a second writes. */
    struct instr_thin_hist hist = {0};
    struct instr_session_observer count = {&c, count_begin, {&c, count_open, count_close, NULL, NULL, NULL}};
    c.hist = &hist;
    int rc = instr_session_build_observed(s, dumps, n, x, &count, err, errlen);
    if (rc == 0)
        cut(&c, cap);
    int wr = rc == 0 ? instr_session_rewalk(s, &obs) : 0;
    if (rc == 0 && wr == 0) {
        hook_gaps(&c, s);
        wr = mpi_flows(&c, s);
    }
    *wrc = finish(&c, out, wr);
    return rc;
}

/* The same from a session already built: its dumps walked again. */
int instr_export_chrome(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    if (!s->have_rate)
        return INSTR_EARG;
    struct cexp c;
    start(&c, out, s->dumps, s->ndumps, o);
    struct instr_session_observer obs = {&c, dump_begin, {&c, on_open, on_close, on_mark, on_counter, NULL}};
    uint64_t cap = default_cap(c.co);
    int rc = 0;
    if (cap && instr_thin_may_exceed(s->dumps, s->ndumps, cap)) {
        struct instr_thin_hist hist = {0};
        struct instr_session_observer count = {&c, count_begin, {&c, count_open, count_close, NULL, NULL, NULL}};
        c.hist = &hist;
        if ((rc = instr_session_rewalk(s, &count)) == 0)
            cut(&c, cap);
    }
    if (!rc && !(rc = instr_session_rewalk(s, &obs))) {
        hook_gaps(&c, s);
        rc = mpi_flows(&c, s);
    }
    return finish(&c, out, rc);
}

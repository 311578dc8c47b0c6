/* import-visualiser.c - the profile-visualiser text format into a dump
 * (see import-visualiser.h for the mapping). */
#define _GNU_SOURCE /* asprintf */
#include "import-visualiser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "dump-reader.h"
#include "dump-writer.h"

#define TICKS_PER_US 1000u    /* the dump's 1 GHz tick rate */
#define MAX_LOCAL_ID (1u << 24) /* function, event and counter ids index arrays */

struct vthread {
    uint64_t vid;    /* the file's thread id */
    uint32_t index;  /* dump thread index */
    uint64_t *fn;    /* function id -> function record id (0 = not declared) */
    size_t nfn;
    uint64_t *ev;    /* event id -> label id (0 = not declared) */
    size_t nev;
    uint64_t *open;  /* function record ids of the open calls, innermost last */
    size_t nopen, capopen;
    uint64_t last;   /* ticks of its latest event */
};

struct importer {
    struct instr_dump_writer *w;
    const char *name;
    struct instr_import_result *r;
    size_t line;
    struct vthread *th;
    size_t nth;
    size_t hit;           /* the thread found last */
    uint64_t *counter;    /* counter id -> label id */
    size_t ncounter;
    uint64_t next_fn, next_label;
    uint32_t next_index;
    int have_cthread;     /* the [counters] thread exists */
    uint32_t cindex;
    uint64_t clast;
    uint64_t max_tick;
};

/* A bad line: noted (the first INSTR_IMPORT_MAX_MESSAGES), counted, skipped.
 * Returns 1 ("line done"), or INSTR_ENOMEM. */
static int bad(struct importer *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct importer *im, const char *fmt, ...)
{
    struct instr_import_result *r = im->r;
    r->bad_lines++;
    if (r->nmessages >= INSTR_IMPORT_MAX_MESSAGES)
        return 1;
    char *why;
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&why, fmt, ap);
    va_end(ap);
    if (len < 0)
        return INSTR_ENOMEM;
    int rc = instr_msgs_add(&r->messages, &r->nmessages, "%s:%zu: %s", im->name, im->line, why);
    free(why);
    return rc < 0 ? rc : 1;
}

/* Parses an unsigned decimal field at *p, ending at a space or the end. */
static int field_u64(const char **p, uint64_t *v)
{
    const char *q = *p;
    uint64_t x = 0;
    if (*q < '0' || *q > '9')
        return -1;
    for (; *q >= '0' && *q <= '9'; q++) {
        if (x > (UINT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*q - '0');
    }
    if (*q && *q != ' ')
        return -1;
    *p = q;
    *v = x;
    return 0;
}

/* The space before the next field: 0, or -1 if the line ended. */
static int sep(const char **p)
{
    if (**p != ' ')
        return -1;
    ++*p;
    return 0;
}

static struct vthread *thread_of(struct importer *im, uint64_t vid)
{
    if (im->hit < im->nth && im->th[im->hit].vid == vid)
        return &im->th[im->hit];
    for (size_t i = 0; i < im->nth; i++)
        if (im->th[i].vid == vid) {
            im->hit = i;
            return &im->th[i];
        }
    return NULL;
}

/* Grows an id-indexed table to hold id. */
static int table_slot(uint64_t **t, size_t *n, uint64_t id)
{
    if (id < *n)
        return 0;
    size_t nn = *n ? *n : 16;
    while (nn <= id)
        nn *= 2;
    uint64_t *a = realloc(*t, nn * sizeof *a);
    if (!a)
        return INSTR_ENOMEM;
    memset(a + *n, 0, (nn - *n) * sizeof *a);
    *t = a;
    *n = nn;
    return 0;
}

static int event(struct importer *im, uint32_t index, uint64_t tick, unsigned kind, unsigned ext, uint64_t arg,
                 int64_t value)
{
    if (tick > im->max_tick)
        im->max_tick = tick;
    return instr_writer_event(im->w, index, tick, 0, 0, kind, ext, arg, value, 0);
}

/* One line (NUL-terminated, no newline).  Returns 0, 1 (bad line, noted)
 * or a negative code. */
static int line(struct importer *im, const char *s)
{
    char type = s[0];
    const char *p = s + 1;
    uint64_t a = 0, b = 0, t = 0;
    int rc;
    if (!type || type == '#')
        return 0;
    if (!strchr("TFSEVYCD", type))
        return bad(im, "unknown record type '%c'", type);
    if (sep(&p) || field_u64(&p, &a))
        return bad(im, "%c: a number expected as its first field", type);
    if (type == 'T') {
        if (sep(&p) || !*p)
            return bad(im, "T %llu: missing label", (unsigned long long)a);
        if (thread_of(im, a))
            return bad(im, "thread %llu declared twice", (unsigned long long)a);
        struct vthread *th = realloc(im->th, (im->nth + 1) * sizeof *th);
        if (!th)
            return INSTR_ENOMEM;
        im->th = th;
        th = &im->th[im->nth++];
        memset(th, 0, sizeof *th);
        th->vid = a;
        th->index = im->next_index++;
        return instr_writer_thread(im->w, th->index, a, p);
    }
    if (type == 'C') {
        if (sep(&p) || !*p)
            return bad(im, "C %llu: missing label", (unsigned long long)a);
        if (a >= MAX_LOCAL_ID)
            return bad(im, "counter id %llu too large (ids are below %u)", (unsigned long long)a, MAX_LOCAL_ID);
        if ((rc = table_slot(&im->counter, &im->ncounter, a)) < 0)
            return rc;
        if (im->counter[a])
            return bad(im, "counter %llu declared twice", (unsigned long long)a);
        im->counter[a] = ++im->next_label;
        return instr_writer_label(im->w, im->counter[a], p);
    }
    if (type == 'D') {
        if (a >= im->ncounter || !im->counter[a])
            return bad(im, "D: counter %llu not declared (C line)", (unsigned long long)a);
        const char *v;
        if (sep(&p) || field_u64(&p, &t) || sep(&p))
            return bad(im, "D: expected 'D counter time value'");
        v = p;
        int neg = *p == '-';
        p += neg;
        if (field_u64(&p, &b) || *p || b > (neg ? 2147483648ull : 2147483647ull))
            return bad(im, "D: value '%s' is not a signed 32-bit integer", v);
        if (t > UINT64_MAX / TICKS_PER_US)
            return bad(im, "time %llu too large", (unsigned long long)t);
        uint64_t tick = t * TICKS_PER_US;
        if (!im->have_cthread) {
            im->have_cthread = 1;
            im->cindex = im->next_index++;
            if ((rc = instr_writer_thread(im->w, im->cindex, 0, "[counters]")) < 0)
                return rc;
        } else if (tick < im->clast) {
            /* Counters of different ids may come out of time order: the
             * [counters] thread has no calls, so a resync is harmless. */
            if ((rc = event(im, im->cindex, im->clast, INSTR_EV_EXT, INSTR_EXT_RESYNC, tick, 0)) < 0)
                return rc;
        }
        im->clast = tick;
        int64_t value = neg ? -(int64_t)b : (int64_t)b;
        return event(im, im->cindex, tick, INSTR_EV_EXT, INSTR_EXT_COUNTER, im->counter[a], value);
    }

    /* F S E V Y: a thread, then an id. */
    struct vthread *th = thread_of(im, a);
    if (!th)
        return bad(im, "%c: thread %llu not declared (T line)", type, (unsigned long long)a);
    if (sep(&p) || field_u64(&p, &b))
        return bad(im, "%c: a %s id expected as the second field", type,
                   type == 'V' || type == 'Y' ? "event" : "function");
    if (b >= MAX_LOCAL_ID)
        return bad(im, "id %llu too large (ids are below %u)", (unsigned long long)b, MAX_LOCAL_ID);
    if (type == 'F' || type == 'V') {
        uint64_t **tab = type == 'F' ? &th->fn : &th->ev;
        size_t *n = type == 'F' ? &th->nfn : &th->nev;
        if (sep(&p) || !*p)
            return bad(im, "%c: missing label", type);
        if ((rc = table_slot(tab, n, b)) < 0)
            return rc;
        if ((*tab)[b])
            return bad(im, "%s %llu of thread %llu declared twice", type == 'F' ? "function" : "event",
                       (unsigned long long)b, (unsigned long long)a);
        if (type == 'F') {
            th->fn[b] = ++im->next_fn;
            return instr_writer_function(im->w, th->fn[b], 1, 0, p, "", NULL);
        }
        th->ev[b] = ++im->next_label;
        return instr_writer_label(im->w, th->ev[b], p);
    }
    if (sep(&p) || field_u64(&p, &t) || *p)
        return bad(im, "%c: expected '%c thread id time'", type, type);
    if (t > UINT64_MAX / TICKS_PER_US)
        return bad(im, "time %llu too large", (unsigned long long)t);
    uint64_t tick = t * TICKS_PER_US;
    if (tick < th->last)
        return bad(im, "time %llu is before thread %llu's previous time %llu", (unsigned long long)t,
                   (unsigned long long)a, (unsigned long long)(th->last / TICKS_PER_US));
    if (type == 'Y') {
        if (b >= th->nev || !th->ev[b])
            return bad(im, "Y: event %llu of thread %llu not declared (V line)", (unsigned long long)b,
                       (unsigned long long)a);
        th->last = tick;
        return event(im, th->index, tick, INSTR_EV_EXT, INSTR_EXT_MARK, th->ev[b], 0);
    }
    if (b >= th->nfn || !th->fn[b])
        return bad(im, "%c: function %llu of thread %llu not declared (F line)", type, (unsigned long long)b,
                   (unsigned long long)a);
    uint64_t id = th->fn[b];
    if (type == 'S') {
        if (th->nopen == th->capopen) {
            size_t nc = th->capopen ? th->capopen * 2 : 16;
            uint64_t *o = realloc(th->open, nc * sizeof *o);
            if (!o)
                return INSTR_ENOMEM;
            th->open = o;
            th->capopen = nc;
        }
        th->open[th->nopen++] = id;
        th->last = tick;
        return event(im, th->index, tick, INSTR_EV_ENTER, 0, id, 0);
    }
    /* E: the innermost open call of the function; calls above it (which
     * the file never ended before it) close with it, as a counted repair. */
    size_t k = th->nopen;
    while (k > 0 && th->open[k - 1] != id)
        k--;
    if (!k)
        return bad(im, "E: function %llu of thread %llu has no open call", (unsigned long long)b,
                   (unsigned long long)a);
    th->last = tick;
    while (th->nopen > k) {
        th->nopen--;
        if ((rc = event(im, th->index, tick, INSTR_EV_EXT, INSTR_EXT_UNWIND, INSTR_UNWIND_MISMATCH, 0)) < 0)
            return rc;
    }
    th->nopen--;
    return event(im, th->index, tick, INSTR_EV_EXIT, 0, 0, 0);
}

int instr_visualiser_sniff(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && buf[e] != '\n')
            e++;
        if (e > i && buf[i] != '#' && buf[i] != '\r')
            return e - i >= 2 && strchr("TFSEVYCD", buf[i]) && buf[i] && buf[i + 1] == ' ';
        i = e + 1;
    }
    return 0;
}

int instr_visualiser_import(const char *buf, size_t len, const char *name, const char *out_path,
                            struct instr_import_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct instr_dump_header h = {0};
    h.flags = INSTR_DUMP_COMPLETE | INSTR_DUMP_TSC_INVARIANT | INSTR_DUMP_NO_TRANSITIONS;
    h.detector = INSTR_DETECTOR_NONE;
    snprintf(h.exe_path, sizeof h.exe_path, "%s", name);
    snprintf(h.detector_detail, sizeof h.detector_detail, "profile-visualiser text: no kernel-transition data");
    struct importer im = {.name = name, .r = r};
    int rc = instr_writer_open(&im.w, out_path, &h, err, errlen);
    if (rc < 0)
        return rc;
    if ((rc = instr_writer_module(im.w, 1, name, 0)) < 0)
        goto out;
    char *ln = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < len && rc >= 0;) {
        size_t e = i;
        while (e < len && buf[e] != '\n')
            e++;
        size_t n = e - i;
        if (n && buf[e - 1] == '\r')
            n--; /* CRLF files */
        im.line++;
        if (n + 1 > cap) {
            char *b = realloc(ln, n + 1);
            if (!b) {
                rc = INSTR_ENOMEM;
                break;
            }
            ln = b;
            cap = n + 1;
        }
        memcpy(ln, buf + i, n);
        ln[n] = 0;
        if (strlen(ln) != n)
            rc = bad(&im, "NUL byte in line");
        else if ((rc = line(&im, ln)) == INSTR_EARG)
            rc = bad(&im, "label too long");
        i = e + 1;
    }
    free(ln);
    if (rc < 0)
        goto out;
    rc = 0;
    /* The profile ends at the latest time of the file; the calibration pair
     * gives 1 GHz even for an empty file. */
    struct instr_dump_header *wh = instr_writer_header(im.w);
    wh->end_tsc = wh->end_mono_ns = im.max_tick;
    wh->last_tsc = wh->last_mono_ns = im.max_tick ? im.max_tick : 1000000000u;
out:
    {
        int crc = instr_writer_close(im.w, rc < 0 ? NULL : err, errlen);
        if (!rc)
            rc = crc;
    }
    if (rc < 0 && rc != INSTR_EIO)
        snprintf(err, errlen, "%s: %s", name, instr_tool_strerror(rc));
    for (size_t i = 0; i < im.nth; i++) {
        free(im.th[i].fn);
        free(im.th[i].ev);
        free(im.th[i].open);
    }
    free(im.th);
    free(im.counter);
    return rc;
}

void instr_import_result_free(struct instr_import_result *r)
{
    for (size_t i = 0; i < r->nmessages; i++)
        free(r->messages[i]);
    free(r->messages);
    memset(r, 0, sizeof *r);
}

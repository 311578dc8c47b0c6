/* export-visualiser.c - the session in the profile-visualiser text format
 * (../shared/spec/visualiser-format.md), from the call timeline
 * (instr_profile_build_timeline), so call-site merging and repairs are
 * those of every other view.
 *
 *   T thread label        declared before the thread's first S or Y; threads
 *                         are numbered across all processes of the session
 *   F thread fn label     per thread, before the function's first S; label =
 *                         the demangled name
 *   S / E thread fn time  each call's start and end
 *   V / Y                 marks (instr_event)
 *   C / D                 counters (instr_counter), ids global
 *
 * Times are microseconds since the session's start, rounded to the
 * nearest; a thread's times never go down (rounding is monotonic).
 *
 * The file is in time order across threads and processes: the visualiser
 * shows a run only up to the last E line in file order, and the walk goes
 * thread after thread.  The lines are written to memory during the walk,
 * then sorted by time, stably (a thread's own lines keep their order; a
 * declaration line takes the time of the line after it, the first use of
 * what it declares).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "writers.h"

struct vlabel {
    uint64_t label; /* dump label id */
    uint32_t id;    /* event (per thread) or counter (global) id in the file */
};

struct vexp {
    FILE *out;                /* the lines in walk order, in memory (buf) */
    FILE *dest;               /* where they go, in time order */
    char *buf;
    size_t len;
    const struct instr_dump *dumps; /* the session's */
    size_t ndumps;
    struct instr_axis axis;   /* the processes on one clock (axis.h): from the session's start */
    size_t dump;
    const struct instr_profile *p;
    uint32_t next_thread;     /* file thread ids */
    uint32_t cur_thread;      /* profile thread index being written, UINT32_MAX = none */
    uint32_t cur_id;          /* its file id */
    int declared;             /* its T line is out */
    uint32_t *fid;            /* profile function -> file function id + 1 for this thread (0 = none) */
    size_t capfid;
    uint32_t nfid;            /* functions declared in this thread */
    struct vlabel *ev;        /* this thread's events */
    size_t nev;
    struct vlabel *ctr;       /* counters of the session */
    size_t nctr;
    size_t ctr_dump_base;     /* first counter of the current dump */
};

/* Microseconds from the session's start (instr_session_us, which cannot be
 * used while the session is being built), rounded. */
static long long us(const struct vexp *v, uint64_t tick)
{
    double t = instr_axis_tick_us(&v->axis, v->dumps, v->dump, tick);
    return isnan(t) || t < 0 ? 0 : llround(t);
}

/* Begins thread th (declares nothing yet). */
static void thread_start(struct vexp *v, uint32_t th)
{
    if (v->cur_thread == th)
        return;
    v->cur_thread = th;
    v->declared = 0;
    v->nfid = 0;
    v->nev = 0;
    if (v->capfid)
        memset(v->fid, 0, v->capfid * sizeof *v->fid);
}

static void declare_thread(struct vexp *v)
{
    if (v->declared)
        return;
    const struct instr_pthread *t = &v->p->threads[v->cur_thread];
    v->cur_id = v->next_thread++;
    v->declared = 1;
    fprintf(v->out, "T %u ", v->cur_id);
    if (v->ndumps > 1)
        fprintf(v->out, "pid %" PRIu64 ": ", v->p->dump->hdr.pid);
    if (t->name && t->name[0])
        fprintf(v->out, "%s\n", t->name);
    else
        fprintf(v->out, "tid %" PRIu64 "\n", t->tid);
}

static const char *label_text(const struct vexp *v, uint64_t label)
{
    const struct instr_label *l = instr_dump_label(v->p->dump, label);
    return l && l->text[0] ? l->text : "[label]";
}

/* Labels may hold newlines: they would end the line. */
static void put_label(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
    fputc('\n', out);
}

/* The file id slot of profile function func in this thread. */
static uint32_t *fid_slot(struct vexp *v, uint32_t func)
{
    if (func >= v->capfid) {
        size_t nc = v->capfid ? v->capfid : 64;
        while (nc <= func)
            nc *= 2;
        uint32_t *a = realloc(v->fid, nc * sizeof *a);
        if (!a)
            return NULL;
        memset(a + v->capfid, 0, (nc - v->capfid) * sizeof *a);
        v->fid = a;
        v->capfid = nc;
    }
    return &v->fid[func];
}

static int on_open(void *ctx, uint32_t thread, uint32_t func, uint64_t tick)
{
    struct vexp *v = ctx;
    thread_start(v, thread);
    declare_thread(v);
    uint32_t *id = fid_slot(v, func);
    if (!id)
        return INSTR_ENOMEM;
    if (!*id) {
        char *name = instr_profile_func_name(v->p, func);
        if (!name)
            return INSTR_ENOMEM;
        *id = ++v->nfid;
        fprintf(v->out, "F %u %u ", v->cur_id, v->nfid - 1);
        put_label(v->out, name);
        free(name);
    }
    fprintf(v->out, "S %u %u %lld\n", v->cur_id, *id - 1, us(v, tick));
    return 0;
}

static int on_close(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete)
{
    struct vexp *v = ctx;
    (void)thread;
    (void)incomplete;
    fprintf(v->out, "E %u %u %lld\n", v->cur_id, v->fid[func] - 1, us(v, tick));
    return 0;
}

static int find_or_add(struct vlabel **a, size_t *n, size_t from, uint64_t label, uint32_t id, int *added)
{
    for (size_t i = from; i < *n; i++)
        if ((*a)[i].label == label) {
            *added = 0;
            return (int)i;
        }
    struct vlabel *b = realloc(*a, (*n + 1) * sizeof *b);
    if (!b)
        return INSTR_ENOMEM;
    *a = b;
    b[*n] = (struct vlabel){label, id};
    *added = 1;
    return (int)(*n)++;
}

static int on_mark(void *ctx, uint32_t thread, uint64_t label, uint64_t tick)
{
    struct vexp *v = ctx;
    thread_start(v, thread);
    declare_thread(v);
    int added, i = find_or_add(&v->ev, &v->nev, 0, label, (uint32_t)v->nev, &added);
    if (i < 0)
        return i;
    if (added) {
        fprintf(v->out, "V %u %u ", v->cur_id, v->ev[i].id);
        put_label(v->out, label_text(v, label));
    }
    fprintf(v->out, "Y %u %u %lld\n", v->cur_id, v->ev[i].id, us(v, tick));
    return 0;
}

static int on_counter(void *ctx, uint32_t thread, uint64_t label, int64_t value, uint64_t tick)
{
    struct vexp *v = ctx;
    (void)thread;
    int added, i = find_or_add(&v->ctr, &v->nctr, v->ctr_dump_base, label, (uint32_t)v->nctr, &added);
    if (i < 0)
        return i;
    if (added) {
        fprintf(v->out, "C %u ", v->ctr[i].id);
        put_label(v->out, label_text(v, label));
    }
    /* The format's values are 32-bit (so is instr_counter's). */
    if (value > INT32_MAX)
        value = INT32_MAX;
    if (value < INT32_MIN)
        value = INT32_MIN;
    fprintf(v->out, "D %u %lld %" PRId64 "\n", v->ctr[i].id, us(v, tick), value);
    return 0;
}

/* A dump's walk begins. */
static int dump_begin(void *ctx, size_t dump, const struct instr_profile *p)
{
    struct vexp *v = ctx;
    v->dump = dump;
    v->p = p;
    v->cur_thread = UINT32_MAX;
    v->ctr_dump_base = v->nctr;
    fprintf(v->out, "# %s (pid %" PRIu64 ")\n", v->dumps[dump].hdr.exe_path, v->dumps[dump].hdr.pid);
    return 0;
}

static int start(struct vexp *v, FILE *out, const struct instr_dump *dumps, size_t n)
{
    *v = (struct vexp){.dest = out, .dumps = dumps, .ndumps = n};
    if (instr_axis_build(&v->axis, dumps, n) < 0)
        return INSTR_ENOMEM;
    fprintf(out, "# profile-visualiser text, written by instr-report: times in microseconds since the session's "
                 "start\n");
    v->out = open_memstream(&v->buf, &v->len);
    return v->out ? 0 : INSTR_ENOMEM;
}

struct vline {
    long long t;
    size_t seq, off, len;
};

static int cmp_line(const void *a, const void *b)
{
    const struct vline *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The time of a line, or LLONG_MIN for a declaration or comment. */
static long long line_time(const char *l)
{
    unsigned a, b;
    long long t;
    if ((l[0] == 'S' || l[0] == 'E' || l[0] == 'Y') && sscanf(l + 1, "%u %u %lld", &a, &b, &t) == 3)
        return t;
    if (l[0] == 'D' && sscanf(l + 1, "%u %lld", &a, &t) == 2)
        return t;
    return LLONG_MIN;
}

/* The lines of buf to dest in time order (see the top). */
static int write_sorted(struct vexp *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->len; i++)
        n += v->buf[i] == '\n';
    struct vline *ls = malloc((n + 1) * sizeof *ls);
    if (!ls)
        return INSTR_ENOMEM;
    size_t k = 0;
    for (size_t off = 0; off < v->len && k < n;) {
        const char *nl = memchr(v->buf + off, '\n', v->len - off);
        size_t len = (size_t)(nl - (v->buf + off)) + 1;
        v->buf[off + len - 1] = 0; /* for sscanf; put back when written */
        ls[k] = (struct vline){line_time(v->buf + off), k, off, len};
        k++;
        off += len;
    }
    /* A declaration takes the time of the next timed line. */
    long long next = LLONG_MAX;
    for (size_t i = n; i-- > 0;) {
        if (ls[i].t == LLONG_MIN)
            ls[i].t = next;
        else
            next = ls[i].t;
    }
    qsort(ls, n, sizeof *ls, cmp_line);
    for (size_t i = 0; i < n; i++) {
        v->buf[ls[i].off + ls[i].len - 1] = '\n';
        fwrite(v->buf + ls[i].off, 1, ls[i].len, v->dest);
    }
    free(ls);
    return ferror(v->dest) ? INSTR_EIO : 0;
}

static int finish(struct vexp *v, int rc)
{
    if (v->out && fclose(v->out) && !rc)
        rc = INSTR_ENOMEM;
    if (!rc && v->buf)
        rc = write_sorted(v);
    free(v->buf);
    free(v->fid);
    free(v->ev);
    free(v->ctr);
    instr_axis_free(&v->axis);
    return rc;
}

int instr_export_visualiser_walk(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                                 const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                                 char *err, size_t errlen)
{
    (void)o;
    *wrc = 0;
    if (!instr_dumps_have_rate(dumps, n)) {
        *wrc = INSTR_EARG; /* times need a tick rate */
        return instr_session_build_excluding(s, dumps, n, x, err, errlen);
    }
    struct vexp v;
    if ((*wrc = start(&v, out, dumps, n)) < 0) {
        finish(&v, *wrc);
        return instr_session_build_excluding(s, dumps, n, x, err, errlen);
    }
    struct instr_session_observer obs = {&v, dump_begin, {&v, on_open, on_close, on_mark, on_counter, NULL}};
    int rc = instr_session_build_observed(s, dumps, n, x, &obs, err, errlen);
    *wrc = finish(&v, 0);
    return rc;
}

/* The same from a session already built: its dumps walked again. */
int instr_export_visualiser(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    (void)o;
    if (!s->have_rate)
        return INSTR_EARG;
    struct vexp v;
    int rc = start(&v, out, s->dumps, s->ndumps);
    struct instr_session_observer obs = {&v, dump_begin, {&v, on_open, on_close, on_mark, on_counter, NULL}};
    if (rc == 0)
        rc = instr_session_rewalk(s, &obs);
    return finish(&v, rc);
}

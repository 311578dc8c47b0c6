/* columns.c - the table views' columns (columns.h). */
#include "columns.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Getters: the cell's text, formatted into b or a string of the row. */
#define GETTER(fn) static const char *fn(char *b, size_t n, const struct instr_cell *c)
#define VALUE(fn, ticks, ns)                                                                                    \
    GETTER(fn)                                                                                                  \
    {                                                                                                           \
        instr_fmt_value(b, n, c->r->ticks, c->r->ns, c->u);                                                     \
        return b;                                                                                               \
    }
#define NUMBER(fn, format, field)                                                                               \
    GETTER(fn)                                                                                                  \
    {                                                                                                           \
        snprintf(b, n, format, c->r->field);                                                                    \
        return b;                                                                                               \
    }
#define STRING(fn, field)                                                                                       \
    GETTER(fn)                                                                                                  \
    {                                                                                                           \
        (void)b, (void)n;                                                                                       \
        return c->r->field;                                                                                     \
    }

NUMBER(calls, "%" PRIu64, v.calls)
VALUE(ei, v.ei, ns[0])
VALUE(ee, v.ee, ns[1])
VALUE(ai, v.ai, ns[2])
VALUE(ae, v.ae, ns[3])
VALUE(ci, v.ci, cpu_ns[0])
VALUE(ce, v.ce, cpu_ns[1])
NUMBER(flagged_n, "%" PRIu64, v.flagged_n)
VALUE(flagged_t, v.flagged_t, flagged_ns)
VALUE(offcpu, v.offcpu_t, offcpu_ns)
/* Flagged intervals of one kind (os-events.h index k) and their time. */
#define KIND(k, fn_n, fn_t)                                                                                     \
    NUMBER(fn_n, "%" PRIu64, v.kind_n[k])                                                                       \
    VALUE(fn_t, v.kind_t[k], kind_ns[k])
KIND(0, sched_n, sched_t)
KIND(1, syscall_n, syscall_t)
KIND(2, fault_n, fault_t)
KIND(3, signal_n, signal_t)
KIND(4, irq_n, irq_t)
KIND(5, unknown_n, unknown_t)
VALUE(probe, v.po, po_ns)
/* Across a job's ranks (job.h): Elapsed Inclusive's min, mean, max. */
VALUE(rank_min, spread.min_t, spread.min_ns)
VALUE(rank_mean, spread.mean_t, spread.mean_ns)
VALUE(rank_max, spread.max_t, spread.max_ns)
GETTER(max_rank)
{
    if (c->r->spread.max_rank < 0)
        return c->csv ? "" : "-";
    snprintf(b, n, "%d", c->r->spread.max_rank);
    return b;
}
/* max / mean: 1 balanced, the number of ranks when one rank does it all. */
GETTER(max_over_mean)
{
    double m = c->r->spread.mean_ns, x = c->r->spread.max_ns;
    if (isnan(m) || isnan(x))
        m = (double)c->r->spread.mean_t, x = (double)c->r->spread.max_t;
    if (!(m > 0))
        return c->csv ? "" : "-";
    snprintf(b, n, c->csv ? "%.4f" : "%.2f", x / m);
    return b;
}
VALUE(wall, wall_t, wall_ns)

/* Self %: from samples (self-pct.h); "-" without a source. */
static const char *self_pct(char *b, size_t n, const struct instr_cell *c)
{
    snprintf(b, n, c->csv ? "%.4f" : "%.2f", c->r->self_pct);
    return b;
}

/* Concurrency: Elapsed Inclusive / Wall Inclusive (threads at once). */
static const char *concurrency(char *b, size_t n, const struct instr_cell *c)
{
    if (!c->r->wall_t)
        return c->csv ? "" : "-";
    snprintf(b, n, c->csv ? "%.4f" : "%.2f", (double)c->r->v.ei / (double)c->r->wall_t);
    return b;
}

/* A thread's life (first event to end), percent of the run's duration. */
static const char *alive_pct(char *b, size_t n, const struct instr_cell *c)
{
    if (isnan(c->r->alive_pct))
        return c->csv ? "" : "n/a";
    snprintf(b, n, c->csv ? "%.4f" : "%.2f", c->r->alive_pct);
    return b;
}

NUMBER(line, "%" PRIu64, line)
NUMBER(pid, "%" PRIu64, pid)
NUMBER(thread, "%u", index)
NUMBER(tid, "%" PRIu64, tid)
STRING(file, file)
STRING(name, name)
STRING(mangled, mangled)
/* Functions: the name, and in text its module's file name when another
 * row has the same name in another module (session.c: name_shared). */
GETTER(function)
{
    if (c->csv || !c->r->name_shared)
        return c->r->name;
    snprintf(b, n, "%s [%s]", c->r->name, c->r->module && c->r->module[0] ? instr_basename(c->r->module) : "?");
    return b;
}

static const char *pct(char *b, size_t n, const struct instr_cell *c, int i)
{
    snprintf(b, n, c->csv ? "%.4f" : "%.2f", c->r->pct[i]);
    return b;
}
GETTER(ei_pct) { return pct(b, n, c, 0); }
GETTER(ee_pct) { return pct(b, n, c, 1); }
GETTER(ai_pct) { return pct(b, n, c, 2); }
GETTER(ae_pct) { return pct(b, n, c, 3); }
GETTER(ci_pct) { return pct(b, n, c, 4); }
GETTER(ce_pct) { return pct(b, n, c, 5); }

/* Time in uninstrumented callees; none for a pseudo-frame (it is one). */
static const char *external(char *b, size_t n, const struct instr_cell *c)
{
    if (c->r->pseudo)
        return c->csv ? "" : "-";
    instr_fmt_value(b, n, c->r->v.ext_ei, c->r->ext_ns[0], c->u);
    return b;
}

/* Functions: the module's file name in text, its path in CSV. */
static const char *fmodule(char *b, size_t n, const struct instr_cell *c)
{
    const char *m = c->r->module;
    (void)b, (void)n;
    return c->csv ? m : m[0] ? instr_basename(m) : "?";
}
static const char *file_line(char *b, size_t n, const struct instr_cell *c)
{
    if (!c->r->file[0])
        return "?";
    snprintf(b, n, "%s:%" PRIu64, instr_basename(c->r->file), c->r->line);
    return b;
}

#define F INSTR_VIEW_BIT(INSTR_VIEW_FUNCTIONS)
#define T INSTR_VIEW_BIT(INSTR_VIEW_THREADS)
#define M INSTR_VIEW_BIT(INSTR_VIEW_MODULES)
#define P INSTR_VIEW_BIT(INSTR_VIEW_PROCESSES)
#define ALL (F | T | M | P)
#define APP INSTR_COL_APP
#define LEFT INSTR_COL_LEFT
#define FLAGGED INSTR_COL_FLAGGED
#define CPU INSTR_COL_CPU
#define MORE INSTR_COL_MORE

/* In text order.  Functions and modules show the four values; threads and
 * processes (where inclusive = exclusive) two. */
const struct instr_column instr_columns[] = {
    /* -F key, title, CSV name, text views, CSV views, flags, CSV position, getter */
    {"calls", "Calls", "calls", ALL, ALL, 0, 10, calls},
    {"self", "Self %", "self_pct", F, F, INSTR_COL_SELF, 15, self_pct},
    {"ei", "Elapsed Incl", "elapsed_inclusive_%s", F | M, ALL, 0, 20, ei},
    {"ei", "Elapsed", NULL, T | P, 0, 0, 0, ei},
    {"ee", "Elapsed Excl", "elapsed_exclusive_%s", F | M, ALL, 0, 30, ee},
    {"ai", "App Incl", "application_inclusive_%s", F | M, ALL, APP, 40, ai},
    {"ai", "Application", NULL, T | P, 0, APP, 0, ai},
    {"ae", "App Excl", "application_exclusive_%s", F | M, ALL, APP, 50, ae},
    {"ci", "CPU Incl", "cpu_inclusive_%s", F | M, ALL, CPU | MORE, 210, ci},
    {"ci", "CPU", NULL, T | P, 0, CPU, 0, ci},
    {"ce", "CPU Excl", "cpu_exclusive_%s", F | M, ALL, CPU | MORE, 220, ce},
    {"ei%", "EI%", "elapsed_inclusive_pct", F | M, ALL, MORE, 60, ei_pct},
    {"ei%", "E%", NULL, T | P, 0, MORE, 0, ei_pct},
    {"ee%", "EE%", "elapsed_exclusive_pct", F | M, ALL, MORE, 70, ee_pct},
    {"ai%", "AI%", "application_inclusive_pct", F | M, ALL, APP | MORE, 80, ai_pct},
    {"ai%", "A%", NULL, T | P, 0, APP | MORE, 0, ai_pct},
    {"ae%", "AE%", "application_exclusive_pct", F | M, ALL, APP | MORE, 90, ae_pct},
    {"ci%", "CI%", "cpu_inclusive_pct", F | M, ALL, CPU | MORE, 230, ci_pct},
    {"ci%", "C%", NULL, T | P, 0, CPU | MORE, 0, ci_pct},
    {"ce%", "CE%", "cpu_exclusive_pct", F | M, ALL, CPU | MORE, 240, ce_pct},
    {"wall", "Wall Incl", "wall_inclusive_%s", F, F, INSTR_COL_WALL | MORE, 270, wall},
    {"conc", "Conc", "concurrency", F, F, INSTR_COL_WALL | MORE, 271, concurrency},
    {"alive%", "Alive%", "alive_pct", T, T, 0, 272, alive_pct},
    {"rank-min", "Rank Min", "rank_min_%s", F, F, INSTR_COL_JOB | MORE, 290, rank_min},
    {"rank-mean", "Rank Mean", "rank_mean_%s", F, F, INSTR_COL_JOB | MORE, 291, rank_mean},
    {"rank-max", "Rank Max", "rank_max_%s", F, F, INSTR_COL_JOB | MORE, 292, rank_max},
    {"max-rank", "Max Rank", "max_rank", F, F, INSTR_COL_JOB, 293, max_rank},
    {"max/mean", "Max/Mean", "max_over_mean", F, F, INSTR_COL_JOB, 294, max_over_mean},
    {"external", "External", "external_elapsed_%s", F, F, MORE, 200, external},
    {"probe", "Probe Overhead", "probe_overhead_%s", ALL, ALL, INSTR_COL_PROBE | MORE, 280, probe},
    {"flagged", "Flagged", "flagged_intervals", ALL, ALL, FLAGGED, 100, flagged_n},
    {"flagged-time", "Flagged Time", "flagged_%s", ALL, ALL, FLAGGED, 110, flagged_t},
    {"off-cpu", "Off-CPU", NULL, ALL, 0, FLAGGED | INSTR_COL_OFFCPU, 0, offcpu},
    /* Per kind: every flagged interval of that kind, whatever --os-events counts. */
    {"sched", "Sched", "flagged_sched_intervals", ALL, ALL, FLAGGED, 250, sched_n},
    {"sched-time", "Sched Time", "flagged_sched_%s", ALL, ALL, FLAGGED, 251, sched_t},
    {"syscall", "Syscall", "flagged_syscall_intervals", ALL, ALL, FLAGGED, 252, syscall_n},
    {"syscall-time", "Syscall Time", "flagged_syscall_%s", ALL, ALL, FLAGGED, 253, syscall_t},
    {"fault", "Fault", "flagged_fault_intervals", ALL, ALL, FLAGGED, 254, fault_n},
    {"fault-time", "Fault Time", "flagged_fault_%s", ALL, ALL, FLAGGED, 255, fault_t},
    {"signal", "Signal", "flagged_signal_intervals", ALL, ALL, FLAGGED, 256, signal_n},
    {"signal-time", "Signal Time", "flagged_signal_%s", ALL, ALL, FLAGGED, 257, signal_t},
    {NULL, NULL, "flagged_irq_intervals", 0, ALL, 0, 258, irq_n},
    {NULL, NULL, "flagged_irq_%s", 0, ALL, 0, 259, irq_t},
    {NULL, NULL, "flagged_unknown_intervals", 0, ALL, 0, 260, unknown_n},
    {NULL, NULL, "flagged_unknown_%s", 0, ALL, 0, 261, unknown_t},
    /* The name last in text: C++ names can be long, the columns stay readable. */
    {"module", "Module", "module", F, F, LEFT | MORE, 140, fmodule},
    {"file", "File:Line", NULL, F, 0, LEFT | MORE, 0, file_line},
    {NULL, NULL, "file", 0, F, 0, 150, file},
    {NULL, NULL, "line", 0, F, 0, 160, line},
    {"function", "Function", "function", F, F, LEFT, 120, function},
    {NULL, NULL, "mangled", 0, F, 0, 130, mangled},
    {"pid", "Pid", "pid", T | P, T | P, 0, 120, pid},
    {"thread", "Thread", "thread", T, T, MORE, 130, thread},
    {"tid", "Tid", "tid", T, T, 0, 140, tid},
    {"name", "Name", "name", T, T, LEFT, 150, name},
    {"module", "Module", "module", M, M, LEFT, 120, name},
    {"program", "Program", "program", P, P, LEFT, 130, name},
};
const size_t instr_ncolumns = sizeof instr_columns / sizeof instr_columns[0];
_Static_assert(sizeof instr_columns / sizeof instr_columns[0] <= 128, "instr_columns_pick's named[] is too small");

int instr_column_shown(const struct instr_column *c, enum instr_view v, int csv, const struct instr_session *s,
                       const struct instr_report_opts *o)
{
    if ((c->flags & INSTR_COL_PROBE) && !s->comp.known)
        return 0;
    if ((c->flags & INSTR_COL_SELF) && !s->self.source)
        return 0;
    if ((c->flags & INSTR_COL_JOB) && !s->job)
        return 0;
    if (csv)
        return c->csv && (c->csv_views & INSTR_VIEW_BIT(v));
    if (!c->title || !(c->text_views & INSTR_VIEW_BIT(v)))
        return 0;
    if ((c->flags & INSTR_COL_FLAGGED) && !o->flagged)
        return 0;
    if ((c->flags & INSTR_COL_CPU) && !s->cpu_known)
        return 0;
    if ((c->flags & INSTR_COL_WALL) && !s->wall_on)
        return 0;
    return !(c->flags & INSTR_COL_OFFCPU) || s->offcpu_exact;
}

/* Column of view v named key in text, or NULL. */
static const struct instr_column *by_key(const char *key, size_t len, enum instr_view v)
{
    for (size_t i = 0; i < instr_ncolumns; i++) {
        const struct instr_column *c = &instr_columns[i];
        if (c->key && c->title && (c->text_views & INSTR_VIEW_BIT(v)) && strlen(c->key) == len &&
            !strncmp(c->key, key, len))
            return c;
    }
    /* --sort's spellings of a value that is a column under another key
     * (sort.c), where the view has no column of that key: what sorts also
     * picks its column. */
    static const struct {
        const char *sort, *column;
    } alias[] = {{"po", "probe"}, {"name", "function"}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (strlen(alias[i].sort) == len && !strncmp(alias[i].sort, key, len))
            return by_key(alias[i].column, strlen(alias[i].column), v);
    return NULL;
}

/* A default column (or with all, any column) whose values are known. */
static int shown_by_default(const struct instr_column *c, enum instr_view v, int all, const struct instr_session *s,
                            const struct instr_report_opts *o)
{
    return (all || !(c->flags & INSTR_COL_MORE)) && instr_column_shown(c, v, 0, s, o);
}

int instr_columns_pick(const char *list, enum instr_view v, const struct instr_session *s,
                       const struct instr_report_opts *o, const struct instr_column **cols, int max, char *err,
                       size_t errlen)
{
    int all = list && !strcmp(list, "all"), add = list && list[0] == '+', n = 0;
    unsigned char named[128] = {0}; /* by table index: in an adding list */
    if (list && !all) {
        for (const char *p = list + add; *p;) {
            size_t len = strcspn(p, ",");
            const struct instr_column *c = len ? by_key(p, len, v) : NULL;
            if (!c) {
                size_t k = (size_t)snprintf(err, errlen, "no column '%.*s' in this view (its columns: ", (int)len, p);
                for (size_t i = 0; i < instr_ncolumns && k < errlen; i++)
                    if (instr_columns[i].key && instr_columns[i].title &&
                        (instr_columns[i].text_views & INSTR_VIEW_BIT(v)) && by_key(instr_columns[i].key,
                                                                                    strlen(instr_columns[i].key), v) ==
                                                                                 &instr_columns[i])
                        k += (size_t)snprintf(err + k, errlen - k, "%s%s", n++ ? ", " : "", instr_columns[i].key);
                if (k < errlen)
                    snprintf(err + k, errlen - k, "; or all, or +KEY to add to the defaults)");
                return -1;
            }
            if (add)
                named[c - instr_columns] = 1;
            else if (s && n < max)
                cols[n++] = c;
            p += len + (p[len] == ',');
        }
        if (!add || !s)
            return n;
    }
    if (!s)
        return 0;
    for (size_t i = 0; i < instr_ncolumns && n < max; i++)
        if (named[i] || shown_by_default(&instr_columns[i], v, all, s, o))
            cols[n++] = &instr_columns[i];
    return n;
}

const char *instr_column_cell(const struct instr_column *c, char *buf, size_t len, const struct instr_session *s,
                              const struct instr_row *r, enum instr_units u, int csv)
{
    if (((c->flags & INSTR_COL_APP) && s->no_app) || ((c->flags & INSTR_COL_CPU) && !s->cpu_known) ||
        ((c->flags & INSTR_COL_WALL) && !s->wall_known) ||
        ((c->flags & INSTR_COL_PROBE) && !s->comp.known) || ((c->flags & INSTR_COL_SELF) && !s->self.source) ||
        ((c->flags & INSTR_COL_OFFCPU) && !s->offcpu_exact) || ((c->flags & INSTR_COL_JOB) && !s->job))
        return csv ? "" : "n/a";
    const struct instr_cell cell = {r, u, csv};
    return c->get(buf, len, &cell);
}

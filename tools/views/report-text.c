/* report-text.c - the human report: header lines and an aligned table. */
#define _GNU_SOURCE /* asprintf */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "report.h"
#include "views.h"
#include "writers.h"

#define MAX_COLS 32

struct table {
    const char *title[MAX_COLS];
    int left[MAX_COLS]; /* left-aligned (text) columns */
    int ncols;
    char **cells; /* rows x ncols, malloc'd strings */
    size_t nrows;
};

static void col(struct table *t, const char *title, int left)
{
    t->title[t->ncols] = title;
    t->left[t->ncols++] = left;
}

/* The narrowest a name is cut to on a narrow terminal: below this a name
 * says too little, and the line wraps instead. */
#define MIN_NAME 24
/* The widest a name column is when other columns follow it (-F). */
#define MAX_INNER_NAME 48

/* Cuts s (malloc'd) to at most max bytes, ending in "..." when cut, at a
 * UTF-8 character boundary. */
static void cut(char *s, size_t max)
{
    size_t l = strlen(s);
    if (l <= max || max < 4)
        return;
    size_t k = max - 3;
    while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--;
    memcpy(s + k, "...", 4);
}

/* The table, its last column (a left-aligned name) cut to fit width
 * terminal columns when width is not 0. */
static void print_table(FILE *out, const struct table *t, unsigned width)
{
    size_t w[MAX_COLS];
    for (int c = 0; c < t->ncols; c++) {
        if (t->left[c] && c < t->ncols - 1) /* a name before other columns (-F): padded to this at most */
            for (size_t r = 0; r < t->nrows; r++)
                cut(t->cells[r * t->ncols + c], MAX_INNER_NAME);
        w[c] = strlen(t->title[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    }
    int last = t->ncols - 1;
    if (width && last >= 0 && t->left[last]) {
        size_t before = 0;
        for (int c = 0; c < last; c++)
            before += w[c] + 2;
        size_t room = width > before + MIN_NAME ? width - before : MIN_NAME;
        for (size_t r = 0; r < t->nrows; r++)
            cut(t->cells[r * t->ncols + last], room);
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->title[c] : t->cells[(r - 1) * t->ncols + c];
            int last = c == t->ncols - 1;
            if (t->left[c] && last)
                fputs(s, out);
            else if (t->left[c])
                fprintf(out, "%-*s", (int)w[c], s);
            else
                fprintf(out, "%*s", (int)w[c], s);
            if (!last)
                fputs("  ", out);
        }
        fputc('\n', out);
    }
}

/* ---- header lines shared by processes ------------------------------------------ */

/* Up to this many processes, each has its own Program line. */
#define GROUP_PROGRAMS 8

/* How process d ended, for its Program line: ", exit status N" after
 * exit(), "" otherwise (an Ended: line says how it ended). */
static const char *exit_text(const struct instr_dump *d, char *buf, size_t len)
{
    if (!instr_dump_exited(d))
        return "";
    snprintf(buf, len, ", exit status %d", d->hdr.exit_status);
    return buf;
}

/* A header line (or block) of process i, without its pid: the processes
 * with the same text share one.  first: the text before which the
 * processes are named (the end of the first line); NULL: the end. */
typedef char *(*header_text)(const struct instr_session *s, size_t i, size_t *first);

static char *program_line(const struct instr_session *s, size_t i, size_t *first)
{
    const struct instr_dump *d = &s->dumps[i];
    char st[64], *t = NULL;
    const char *fork = (d->hdr.flags & INSTR_DUMP_FORK_CHILD) ? "forked child" : "";
    const char *ex = exit_text(d, st, sizeof st);
    if (asprintf(&t, "Program:    %s%s%s%s%s", d->hdr.exe_path, *fork || *ex ? " (" : "", fork,
                 *fork ? ex : ex + (*ex ? 2 : 0), *fork || *ex ? ")" : "") < 0)
        return NULL;
    *first = strlen(t);
    return t;
}

/* The command line of process d as a shell would read it back (arguments
 * with special characters in single quotes), cut after about 300 bytes;
 * NULL if the dump has none (older dumps, converted inputs). */
static char *command_text(const struct instr_dump *d)
{
    if (!d->argv || !d->argc)
        return NULL;
    size_t cap = 400, n = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    for (size_t i = 0; i < d->argc && n < 300; i++) {
        const char *a = d->argv[i];
        int quote = !a[0] || strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") != NULL;
        if (i)
            t[n++] = ' ';
        if (quote)
            t[n++] = '\'';
        for (; *a && n < 300; a++) {
            if (*a == '\'' && quote) {
                memcpy(t + n, "'\\''", 4); /* ' closes, \' is a quote, ' reopens */
                n += 4;
            } else {
                t[n++] = *a == '\n' ? ' ' : *a;
            }
        }
        if (quote)
            t[n++] = '\'';
    }
    if (n >= 300)
        memcpy(t + n, " ...", 4), n += 4;
    t[n] = 0;
    return t;
}

static char *command_line(const struct instr_session *s, size_t i, size_t *first)
{
    char *c = command_text(&s->dumps[i]), *t = NULL;
    if (asprintf(&t, "Command:    %s", c ? c : "(not recorded)") < 0)
        t = NULL;
    free(c);
    if (t)
        *first = strlen(t);
    return t;
}

static int any_command(const struct instr_session *s)
{
    for (size_t i = 0; i < s->ndumps; i++)
        if (s->dumps[i].argc)
            return 1;
    return 0;
}

static char *tick_line(const struct instr_session *s, size_t i, size_t *first)
{
    const struct instr_dump *d = &s->dumps[i];
    char *t = NULL;
    char other[64]; /* not a TSC: the Machine line says what the ticks count */
    snprintf(other, sizeof other, " (%s%s)", instr_tick_source_name(d->hdr.tick_source),
             (d->hdr.flags & INSTR_DUMP_TSC_INVARIANT) ? ", constant rate" : ": times assume a constant rate");
    if (asprintf(&t, "Tick rate:  %.6f GHz%s", d->tick_hz / 1e9,
                 !instr_dump_ticks_tsc(d)                     ? other
                 : (d->hdr.flags & INSTR_DUMP_TSC_INVARIANT) ? " (invariant TSC)"
                                                              : " (TSC not known invariant: times assume a constant rate)") < 0)
        return NULL;
    *first = strlen(t);
    return t;
}

/* A dump whose ticks are not an x86-64 TSC's: the machine, what the ticks
 * count and their resolution (a generic timer's tick is 10-40 ns: a call
 * shorter than that is mostly 0 or 1 tick). */
static char *machine_line(const struct instr_session *s, size_t i, size_t *first)
{
    const struct instr_dump *d = &s->dumps[i];
    char rate[64] = "", *t = NULL;
    if (d->tick_hz >= 1e9)
        snprintf(rate, sizeof rate, " at %.4g GHz (%.3g ns a tick)", d->tick_hz / 1e9, 1e9 / d->tick_hz);
    else if (d->tick_hz > 0)
        snprintf(rate, sizeof rate, " at %.4g MHz (%.3g ns a tick)", d->tick_hz / 1e6, 1e9 / d->tick_hz);
    if (asprintf(&t, "Machine:    %s; ticks: %s%s", instr_arch_name(d->hdr.arch),
                 instr_tick_source_name(d->hdr.tick_source), rate) < 0)
        return NULL;
    *first = strlen(t);
    return t;
}

/* Time before the perf backend began watching the threads (its event opens
 * once a thread has run INSTR_PERF_AFTER): said where it is a share worth
 * a line (as sud's pauses), always with --verbose. */
static void unwatched_line(FILE *out, const struct instr_session *s, int verbose)
{
    if (!(s->notyet_ns > 0))
        return;
    double pct = s->notyet_life_ns > 0 ? 100.0 * s->notyet_ns / s->notyet_life_ns : 100.0;
    if (!verbose && pct < INSTR_UNSEEN_MINOR_PCT)
        return;
    const char *kinds = (s->notyet_kinds & INSTR_OS_FAULT) && (s->notyet_kinds & INSTR_OS_SCHED)
                            ? "page faults and context switches"
                        : (s->notyet_kinds & INSTR_OS_SCHED) ? "context switches"
                                                             : "page faults";
    /* in ms, or in us where the threads lived under a millisecond */
    double scale = s->notyet_life_ns < 1e6 ? 1e3 : 1e6;
    fprintf(out, "Unwatched:  %s in %.3f on the CPU of the threads' %.3f %s (%.1f%%, %u thread%s): a thread's perf event\n"
                 "            opens once it has run INSTR_PERF_AFTER (default 1 ms; 0: at its start), so a short\n"
                 "            process pays nothing for it; the intervals before count as Application time\n",
            kinds, s->notyet_ns / scale, s->notyet_life_ns / scale, scale == 1e3 ? "us" : "ms", pct,
            s->notyet_threads,
            s->notyet_threads == 1 ? "" : "s");
}

/* The detector line, then what it sees and does not see. */
static char *detector_block(const struct instr_session *s, size_t i, size_t *first)
{
    const struct instr_dump *d = &s->dumps[i];
    char sees[400], unseen[400], set[128], *t = NULL;
    instr_detector_text(d, sees, sizeof sees, unseen, sizeof unseen);
    int n = asprintf(&t, "Detector:   %s%s%s%s", instr_detector_set_name(d, set, sizeof set),
                     d->hdr.detector_detail[0] ? " [" : "", d->hdr.detector_detail,
                     d->hdr.detector_detail[0] ? "]" : "");
    if (n < 0)
        return NULL;
    *first = (size_t)n;
    if (d->hdr.flags & INSTR_DUMP_NO_TRANSITIONS)
        return t; /* nothing was watched: the Application line says so */
    char *b = NULL;
    n = asprintf(&b, "%s\n  sees:     %s%s%s", t, sees, unseen[0] ? "\n  not seen: " : "", unseen);
    free(t);
    return n < 0 ? NULL : b;
}

/* Without --verbose: the detector set, and what it does not see (whose
 * intervals count as Application time). */
static char *detector_short(const struct instr_session *s, size_t i, size_t *first)
{
    const struct instr_dump *d = &s->dumps[i];
    char sees[400], unseen[400], set[128], *t = NULL;
    instr_detector_text(d, sees, sizeof sees, unseen, sizeof unseen);
    int n = asprintf(&t, "Detector:   %s", instr_detector_set_name(d, set, sizeof set));
    if (n < 0)
        return NULL;
    *first = (size_t)n;
    if ((d->hdr.flags & INSTR_DUMP_NO_TRANSITIONS) || !unseen[0])
        return t;
    char *b = NULL;
    n = asprintf(&b, "%s\n  not seen: %s", t, unseen);
    free(t);
    return n < 0 ? NULL : b;
}

/* What one hook costs in process i (its start-up calibration), if known. */
static char *hook_cost_line(const struct instr_session *s, size_t i, size_t *first)
{
    static const unsigned kinds[] = {INSTR_EV_ENTER, INSTR_EV_EXIT, INSTR_EV_CALL, INSTR_EV_RETURN};
    static const char *const names[] = {"enter", "exit", "call", "return"};
    const struct instr_dump *d = &s->dumps[i];
    char buf[400] = "Hook cost:  ";
    size_t n = strlen(buf);
    int any = 0;
    for (int k = 0; k < 4; k++) {
        const struct instr_hook_cost *hc = &d->hook_cost[kinds[k]];
        if (hc->rounds)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s %.1f+%.1f", any++ ? ", " : "", names[k],
                                  hc->before / 1e3, hc->after / 1e3);
    }
    if (!any)
        snprintf(buf, sizeof buf, "Hook cost:  unknown (no start-up calibration in the dump)");
    else
        snprintf(buf + n, sizeof buf - n, " ticks (before+after its tick, %s%s)",
                 d->hdr.calibration_path == INSTR_CALIBRATION_PATH_FILTERING
                     ? "on the slow path the filters take, "
                     : "",
                 d->hdr.calibration == INSTR_CALIBRATION_CACHED
                     ? "measured by an earlier process this boot on this CPU: cached"
                     : "measured at start");
    *first = strlen(buf);
    return strdup(buf);
}

/* A process whose hooks took the slow path after the switch went off on
 * code not built switchable, with the fast path's cost measured
 * (instr_comp_slow_unmeasured): said under the Compensation line. */
static void slow_path_line(FILE *out, const struct instr_session *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        n += instr_comp_slow_unmeasured(&s->dumps[i]) != 0;
    if (!n)
        return;
    fprintf(out, "  the hooks took their slow path once the switch went off on code not built switchable");
    if (s->ndumps > 1)
        fprintf(out, " (%zu of %zu processes)", n, s->ndumps);
    fprintf(out, ", and only the fast path's cost was measured at start: part of their cost stays in the values\n");
}

/* Each distinct text of f once, in the order of the first process having
 * it, followed by the processes sharing it: "(pid P)" for one, "(N
 * processes: pids P, Q...)" for more (the first 8 pids). */
static int grouped(FILE *out, const struct instr_session *s, header_text f)
{
    size_t n = s->ndumps;
    char **text = calloc(n + 1, sizeof *text);
    size_t *first = calloc(n + 1, sizeof *first);
    int rc = text && first ? 0 : INSTR_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        if (!(text[i] = f(s, i, &first[i])))
            rc = INSTR_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!text[i])
            continue; /* printed with an earlier process */
        size_t k = 0;
        for (size_t j = i + 1; j < n; j++)
            k += text[j] && !strcmp(text[j], text[i]);
        fwrite(text[i], 1, first[i], out);
        if (n > 1 && !k) {
            fprintf(out, " (pid %" PRIu64 ")", s->dumps[i].hdr.pid);
        } else if (n > 1) {
            fprintf(out, " (%zu processes: pids %" PRIu64, k + 1, s->dumps[i].hdr.pid);
            size_t shown = 1;
            for (size_t j = i + 1; j < n; j++) {
                if (!text[j] || strcmp(text[j], text[i]))
                    continue;
                if (shown++ < 8)
                    fprintf(out, ", %" PRIu64, s->dumps[j].hdr.pid);
                if (j > i) {
                    free(text[j]);
                    text[j] = NULL;
                }
            }
            fputs(shown > 8 ? ", ...)" : ")", out);
        }
        fprintf(out, "%s\n", text[i] + first[i]);
        free(text[i]);
        text[i] = NULL;
    }
    for (size_t i = 0; text && i < n; i++)
        free(text[i]);
    free(text);
    free(first);
    return rc;
}

/* What the CPU values are (shown when every dump ran cpuclock). */
static void print_cpu_lines(FILE *out, const struct instr_session *s, int verbose)
{
    /* Compensation takes the hooks' cost out of the on-CPU part too. */
    if (verbose)
        fprintf(out,
                "CPU:        Elapsed less each interval's exact off-CPU time (cpuclock); includes the kernel's "
                "work for the thread (system calls, faults)%s\n",
                s->comp.applied ? "; the hooks' cost subtracted, as from Elapsed" : " and the hooks' cost");
    if (s->offcpu_unknown)
        fprintf(out, "CPU:        %" PRIu64 " flagged interval(s) without an off-CPU time (the clock could not be "
                     "read), counted as on the CPU\n", s->offcpu_unknown);
}

/* Whether an earlier dump of s is the same program with the same UNIT
 * sums (a fork child, whose records are per module; the same program run
 * again): counted once. */
static int same_units_before(const struct instr_session *s, size_t i)
{
    const struct instr_dump *d = &s->dumps[i];
    for (size_t j = 0; j < i; j++) {
        const struct instr_dump *e = &s->dumps[j];
        if (!strcmp(e->hdr.exe_path, d->hdr.exe_path) && e->threshold_units && e->threshold_left_out == d->threshold_left_out && e->threshold_min == d->threshold_min &&
            e->threshold_max == d->threshold_max)
            return 1;
    }
    return 0;
}

/* "Left out:" (plugin threshold=N): how many functions the compiler left
 * out and why, summed over the session's programs. */
static void threshold_line(FILE *out, const struct instr_session *s)
{
    uint64_t units = 0, left = 0, min = 0, max = 0;
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        if (!d->threshold_units || same_units_before(s, i))
            continue;
        if (!units || d->threshold_min < min)
            min = d->threshold_min;
        if (d->threshold_max > max)
            max = d->threshold_max;
        units += d->threshold_units;
        left += d->threshold_left_out;
    }
    if (!units)
        return;
    char t[64];
    if (min == max)
        snprintf(t, sizeof t, "%" PRIu64, max);
    else
        snprintf(t, sizeof t, "%" PRIu64 "-%" PRIu64, min, max);
    fprintf(out, "Left out:   %" PRIu64 " function%s under threshold=%s (fewer GIMPLE statements, no loop, "
                 "no call); their time is their callers'\n",
            left, left == 1 ? "" : "s", t);
}

/* Without samples: that the table ranks the instrumented run, and the
 * one step that gives the program's own ranking (self-percent.md). */
static void no_self_line(FILE *out, const struct instr_session *s)
{
    if (!s->ndumps)
        return;
    for (size_t i = 0; i < s->ndumps; i++)
        if (s->dumps[i].hdr.flags & (INSTR_DUMP_SAMPLED | INSTR_DUMP_NO_TRANSITIONS))
            return; /* sampled values, or another tool's file: no instrumented run of ours */
    const char *prog = instr_basename(s->dumps[0].hdr.exe_path);
    fprintf(out, "Self %%:     none: the table ranks the instrumented run, where short functions called often "
                 "look bigger;\n"
                 "            the program's own ranking: instr-sample -o plain.instr <%.40s built without instr>,\n"
                 "            then this command with --self plain.instr (docs/self-percent.md)\n",
            prog[0] ? prog : "the program");
}

/* Where Self % came from and how far to trust it (self-pct.h). */
static void self_line(FILE *out, const struct instr_session *s, int verbose)
{
    const struct instr_self *x = &s->self;
    if (!x->source)
        return no_self_line(out, s);
    /* Each source in the words of --verbose and of the default header. */
    static const char *const words[][3] = {
        {"plain-samples", "a sampled run of the uninstrumented build", "the plain build"},
        {"instrumented-samples", "instr-sample of the instrumented program", "instr-sample"},
        {"", "this run's own samples (INSTR_SAMPLE)", "this run (INSTR_SAMPLE)"}, /* in-run, the rest */
    };
    size_t k = 0;
    while (k < 2 && strcmp(x->source, words[k][0]))
        k++;
    if (verbose)
        fprintf(out, "Self %%:     share of %" PRIu64 " on-CPU samples from %s%s%s%s", x->samples, words[k][1],
                x->inputs ? " (" : "", x->inputs ? x->inputs : "", x->inputs ? ")" : "");
    else
        fprintf(out, "Self %%:     %" PRIu64 " samples of %s", x->samples, words[k][2]);
    if (x->runtime && verbose)
        fprintf(out, ", %" PRIu64 " in instr's runtime left out", x->runtime);
    fprintf(out, "; largest %.1f %% +/- %.1f (95 %%)", x->top_pct, x->top_ci95);
    if (x->samples > x->matched)
        fprintf(out, "; %.1f %% in code with no row", 100.0 * (double)(x->samples - x->matched) / (double)x->samples);
    if (x->ambiguous && verbose)
        fprintf(out, "; %zu name%s of several functions (split by Elapsed Exclusive)", x->ambiguous,
                x->ambiguous == 1 ? "" : "s");
    fputc('\n', out);
}

/* Without --verbose: the repairs there were, if any. */
static void repairs_short(FILE *out, const struct instr_session *s, uint64_t unwound)
{
    const struct instr_repairs *r = &s->repairs;
    uint64_t unmatched = r->unmatched_exits + s->header_unmatched;
    if (!unwound && !unmatched && !r->incomplete)
        return;
    const char *sep = "";
    fputs("Repairs:    ", out);
    if (unwound)
        fprintf(out, "%" PRIu64 " frame%s unwound", unwound, unwound == 1 ? "" : "s"), sep = ", ";
    if (unmatched)
        fprintf(out, "%s%" PRIu64 " unmatched exit%s", sep, unmatched, unmatched == 1 ? "" : "s"), sep = ", ";
    if (r->incomplete)
        fprintf(out, "%s%" PRIu64 " frame%s open at the end, closed there", sep, r->incomplete,
                r->incomplete == 1 ? "" : "s");
    fputs(" (--verbose: why)\n", out);
}

/* Switchable builds: the windows in which the hooks were on, per process
 * that switched them or began with them off, in the report's units. */
static void windows_lines(FILE *out, const struct instr_session *s, enum instr_units u)
{
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_profile *p = &s->profiles[i];
        const struct instr_dump *d = &s->dumps[i];
        int off = (d->hdr.flags & INSTR_DUMP_SWITCHED_OFF) != 0;
        if (!p->switched_at && !off)
            continue;
        double ns = d->tick_hz > 0 ? 1e9 / d->tick_hz : 0;
        uint64_t end = d->hdr.end_tsc ? d->hdr.end_tsc : d->hdr.last_tsc;
        uint64_t life = end > d->hdr.start_tsc ? end - d->hdr.start_tsc : 0;
        char pid[32] = "", a[64], b[64];
        if (s->ndumps > 1)
            snprintf(pid, sizeof pid, "pid %" PRIu64 ": ", d->hdr.pid);
        instr_fmt_value(a, sizeof a, p->recorded_ticks, (double)p->recorded_ticks * ns, u);
        instr_fmt_value(b, sizeof b, life, (double)life * ns, u);
        int trig = d->hdr.filter_triggers != 0; /* the runtime's triggers, else the switchable build's switch */
        fprintf(out, "Recorded:   %s%zu window%s, %s of %s %s: %s only there (%s%zu switch%s by %s)\n", pid,
                p->nwindows, p->nwindows == 1 ? "" : "s", a, b, instr_units_name(u),
                "recording was on", off ? "off at the start, " : "",
                p->switched_at, p->switched_at == 1 ? "" : "es",
                trig                     ? "INSTR_TRIGGER or instr_start/instr_stop"
                : instr_dump_is_rank(d) ? "instr_start/instr_stop, INSTR_SIGNAL or MPI_Pcontrol"
                                        : "instr_start/instr_stop or INSTR_SIGNAL");
        for (size_t k = 0; k < p->nwindows && k < 8; k++) {
            uint64_t from = p->windows[k].from - d->hdr.start_tsc, to = p->windows[k].to - d->hdr.start_tsc;
            instr_fmt_value(a, sizeof a, from, (double)from * ns, u);
            instr_fmt_value(b, sizeof b, to, (double)to * ns, u);
            fprintf(out, "            %s - %s %s\n", a, b, instr_units_name(u));
        }
        if (p->nwindows > 8)
            fprintf(out, "            ... and %zu more (JSON: recorded_windows)\n", p->nwindows - 8);
    }
}

/* Record-time filters (INSTR_DEPTH, INSTR_MIN_DURATION, INSTR_TRIGGER):
 * what each left out, per process that had one.  Those calls are their
 * callers' time and are in no count. */
static void filters_lines(FILE *out, const struct instr_session *s, enum instr_units u)
{
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump_header *h = &s->dumps[i].hdr;
        if (!h->filter_depth && !h->filter_min_ticks && !h->filter_triggers && !h->filtered_off)
            continue;
        char pid[32] = "", a[64];
        if (s->ndumps > 1)
            snprintf(pid, sizeof pid, "pid %" PRIu64 ": ", h->pid);
        fprintf(out, "Filtered:   %scalls not recorded, counted as their callers' time:", pid);
        const char *sep = " ";
        if (h->filter_depth)
            fprintf(out, "%s%" PRIu64 " deeper than %u (INSTR_DEPTH)", sep, h->filtered_depth, h->filter_depth),
                sep = "; ";
        if (h->filter_min_ticks) {
            double hz = s->dumps[i].tick_hz;
            instr_fmt_value(a, sizeof a, h->filter_min_ticks, hz > 0 ? (double)h->filter_min_ticks * 1e9 / hz : 0, u);
            fprintf(out, "%s%" PRIu64 " shorter than %s %s (INSTR_MIN_DURATION)", sep, h->filtered_short, a,
                    instr_units_name(u)),
                sep = "; ";
        }
        if (h->filter_triggers || h->filtered_off)
            fprintf(out, "%s%" PRIu64 " entered while recording was off (%s)", sep, h->filtered_off,
                    h->filter_triggers ? "INSTR_TRIGGER, instr_stop, INSTR_START=off or INSTR_SIGNAL"
                                       : "instr_stop, INSTR_START=off or INSTR_SIGNAL, in code not compiled "
                                         "switchable");
        fputc('\n', out);
    }
}

/* A job's ranks (job.h): which job, the ranks missing, the POP metrics. */
static void job_lines(FILE *out, const struct instr_session *s)
{
    const struct instr_job *j = s->job;
    if (!j)
        return;
    fprintf(out, "Job:        %s%s%s%s, %zu of %u ranks on %zu host%s", j->id, j->launcher[0] ? " (" : "",
            j->launcher, j->launcher[0] ? ")" : "", j->nranks, j->size, j->nhosts, j->nhosts == 1 ? "" : "s");
    if (j->extra)
        fprintf(out, "; %zu more dump%s of a rank's children", j->extra, j->extra == 1 ? "" : "s");
    if (j->other_jobs)
        fprintf(out, "; %zu dump%s of other jobs left out of the ranks", j->other_jobs,
                j->other_jobs == 1 ? "" : "s");
    fputc('\n', out);
    if (j->nmissing) {
        char miss[256];
        instr_job_missing_text(j, miss, sizeof miss);
        fprintf(out, "Missing:    rank%s %s: no dump of %s among the inputs (killed before it started, or not given)\n",
                j->nmissing == 1 ? "" : "s", miss, j->nmissing == 1 ? "it" : "them");
    }
    char ends[1024];
    if (!instr_job_ends_text(j, ends, sizeof ends) && ends[0])
        fprintf(out, "Ends:       %s\n", ends);
    /* Three decimals; a figure below 0.001 in two significant digits, not 0.000 */
    char pop[3][32];
    const double popv[3] = {j->load_balance, j->communication_efficiency, j->parallel_efficiency};
    for (int k = 0; k < 3; k++)
        snprintf(pop[k], sizeof pop[k], popv[k] > 0 && popv[k] < 0.001 ? "%.2g" : "%.3f", popv[k]);
    if (isnan(j->load_balance))
        fprintf(out, "POP:        unknown (no tick rate, or no useful time)\n");
    else
        fprintf(out, "POP:        load balance %s, communication efficiency %s, parallel efficiency %s\n"
                     "            (%s%suseful: %s time outside MPI frames; the job's %.3f ms from its first rank's start\n"
                     "            to its last rank's end, on the one clock of the Clocks: line)\n",
                pop[0], pop[1], pop[2], j->nmissing ? "of the ranks present only" : "", j->nmissing ? "; " : "", s->cpu_known ? "CPU" : "Elapsed", j->runtime_ns / 1e6);
    if (strcmp(j->mpi_prefixes, instr_mpi_prefixes_default))
        fprintf(out, "MPI frames: %s%s (--mpi-prefixes)\n", j->mpi_prefixes[0] ? "names beginning " : "none",
                j->mpi_prefixes);
    char clocks[512];
    instr_axis_text(&s->axis, clocks, sizeof clocks);
    fprintf(out, "Clocks:     %s\n", clocks[0] ? clocks : "one host's monotonic clock, exact");
}

/* The header: with --verbose every line; without, what a reader needs to
 * trust the numbers (what ran, how it ended, the detector and what it does
 * not see, what was lost or repaired, compensation, warnings, totals). */
static int print_header(FILE *out, const struct instr_session *s, enum instr_units u, int verbose)
{
    char a[64], b[64];
    fprintf(out, "instr report (units: %s)\n", instr_units_name(u));
    /* A few processes: a line each; more: one per program and way it ended. */
    for (size_t i = 0; s->ndumps <= GROUP_PROGRAMS && i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        char st[64];
        if (verbose)
            fprintf(out, "Program:    %s (pid %" PRIu64 ", ppid %" PRIu64 "%s%s)\n", d->hdr.exe_path, d->hdr.pid,
                    d->hdr.ppid, (d->hdr.flags & INSTR_DUMP_FORK_CHILD) ? ", forked child" : "",
                    exit_text(d, st, sizeof st));
        else /* the file's name: its directory is --verbose's */
            fprintf(out, "Program:    %s (pid %" PRIu64 "%s%s)\n", instr_basename(d->hdr.exe_path), d->hdr.pid,
                    (d->hdr.flags & INSTR_DUMP_FORK_CHILD) ? ", forked child" : "", exit_text(d, st, sizeof st));
        char *c = verbose ? command_text(d) : NULL;
        if (c)
            fprintf(out, "Command:    %s\n", c);
        free(c);
    }
    if (s->ndumps > GROUP_PROGRAMS &&
        (grouped(out, s, program_line) < 0 || (verbose && any_command(s) && grouped(out, s, command_line) < 0)))
        return INSTR_ENOMEM;
    for (size_t i = 0; i < s->ndumps; i++) {
        /* A process that did not exit: say how it ended and what was cut. */
        const struct instr_dump *d = &s->dumps[i];
        uint64_t open = s->profiles[i].repairs.incomplete;
        if (d->hdr.flags & INSTR_DUMP_COMPLETE)
            continue;
        char ending[400];
        if (instr_session_ending(s, i, ending, sizeof ending))
            fprintf(out, "Ended:      pid %" PRIu64 " %s; %" PRIu64 " frame(s) still open, closed there\n", d->hdr.pid,
                    ending, open);
        else if (d->hdr.flags & INSTR_DUMP_SIGNALED)
            fprintf(out, "Ended:      pid %" PRIu64 " killed by signal %u (%s) in thread %u; %" PRIu64
                         " frame(s) still open, closed at the signal (incomplete)\n",
                    d->hdr.pid, d->hdr.end_signal, instr_signal_name(d->hdr.end_signal), d->hdr.end_signal_tid,
                    open);
        else
            fprintf(out, "Ended:      pid %" PRIu64 " did not finish (SIGKILL, _exit, exec or still running); %" PRIu64
                         " frame(s) still open, closed at their thread's last event (incomplete)\n",
                    d->hdr.pid, open);
    }
    int tsc = 1; /* every dump timed with an x86-64 TSC: no Machine line */
    for (size_t i = 0; i < s->ndumps; i++)
        tsc &= instr_dump_ticks_tsc(&s->dumps[i]) || (s->dumps[i].hdr.flags & INSTR_DUMP_SAMPLED);
    if (!tsc && grouped(out, s, machine_line) < 0)
        return INSTR_ENOMEM;
    fprintf(out, "Threads:    %zu\n", s->nthreads);
    job_lines(out, s);
    if (s->have_rate) {
        fprintf(out, "Duration:   %.3f ms\n", s->duration_ns / 1e6);
        int variable = 0; /* a TSC not known invariant: the times assume a constant rate */
        for (size_t i = 0; i < s->ndumps; i++)
            variable |= !(s->dumps[i].hdr.flags & INSTR_DUMP_TSC_INVARIANT);
        if ((verbose || variable) && grouped(out, s, tick_line) < 0)
            return INSTR_ENOMEM;
    } else {
        fprintf(out, "Tick rate:  unknown (values in ticks)\n");
    }
    windows_lines(out, s, u);
    filters_lines(out, s, u);
    if (grouped(out, s, verbose ? detector_block : detector_short) < 0)
        return INSTR_ENOMEM;
    const struct instr_repairs *r = &s->repairs;
    uint64_t unwound = r->unwound[0] + r->unwound[1] + r->unwound[2] + r->unwound[3];
    if (!verbose)
        repairs_short(out, s, unwound);
    else
        /* Every count with its cause (dump-format.h's INSTR_UNWIND_*). */
        fprintf(out,
                "Repairs:    %" PRIu64 " frames unwound: %" PRIu64 " an exception passed through, %" PRIu64
                " whose stack frame was gone (longjmp, or unwinding seen late), %" PRIu64
                " above a frame an exit hook named further down, %" PRIu64 " other; %" PRIu64
                " unmatched exits, ignored (+%" PRIu64 " in the runtime); %" PRIu64
                " frames open at the end, closed at their thread's last event\n",
                unwound, r->unwound[1], r->unwound[2], r->unwound[3], r->unwound[0], r->unmatched_exits,
                s->header_unmatched, r->incomplete);
    if (s->dropped && (s->dropped_calls || s->dropped_sites))
        fprintf(out, "Dropped:    %" PRIu64 " events: %" PRIu64 " calls of instrumented functions and %" PRIu64
                     " at call sites not recorded\n",
                s->dropped, s->dropped_calls, s->dropped_sites);
    else if (s->dropped)
        fprintf(out, "Dropped:    %" PRIu64 " events\n", s->dropped);
    if (s->repairs.cut_threads) {
        instr_fmt_value(a, sizeof a, s->repairs.unrecorded_ticks, s->unrecorded_ns, u);
        fprintf(out, "Unknown:    %s %s of thread time after the last event of %" PRIu64 " thread%s whose record was "
                     "cut (truncated, damaged or dropped), to the process's end%s: charged to no function\n",
                a, instr_units_name(u), s->repairs.cut_threads, s->repairs.cut_threads == 1 ? "" : "s",
                s->repairs.cut_threads == 1 ? "" : " (summed over them: it may exceed the duration)");
    }
    threshold_line(out, s); /* where those functions' time went */
    if (verbose && s->repairs.runtime_ticks) {
        instr_fmt_value(a, sizeof a, s->repairs.runtime_ticks, s->runtime_ns, u);
        fprintf(out, "Runtime:    %s %s in the runtime's own slow paths (first calls, new chunks, the detectors' traps and checks), "
                     "charged to nobody\n", a, instr_units_name(u));
    }
    if (s->comp.known && !verbose) {
        instr_fmt_value(a, sizeof a, s->comp.ticks, s->comp_ns, u);
        if (s->comp.applied)
            fprintf(out, "Compensation: %s %s of hook costs subtracted from the values (--raw keeps them)\n", a,
                    instr_units_name(u));
        else
            fprintf(out, "Compensation: none (--raw): %s %s of the values are hook costs\n", a,
                    instr_units_name(u));
    } else if (s->comp.known) {
        if (grouped(out, s, hook_cost_line) < 0)
            return INSTR_ENOMEM;
        instr_fmt_value(a, sizeof a, s->comp.ticks, s->comp_ns, u);
        instr_fmt_value(b, sizeof b, s->comp.unpaid, s->comp_unpaid_ns, u);
        if (s->comp.applied && s->comp.clamped)
            fprintf(out, "Compensation: %s %s of hook costs subtracted from the values (--raw: keep them); "
                         "%" PRIu64 " of %" PRIu64 " intervals were shorter than their hooks' cost and count 0, "
                         "the rest of it taken from the next ones (%s %s left unsubtracted)\n",
                    a, instr_units_name(u), s->comp.clamped, s->comp.intervals, b, instr_units_name(u));
        else if (s->comp.applied)
            fprintf(out, "Compensation: %s %s of hook costs subtracted from the values (--raw: keep them); "
                         "none of %" PRIu64 " intervals was shorter than its hooks' cost\n",
                    a, instr_units_name(u), s->comp.intervals);
        else
            fprintf(out, "Compensation: not subtracted (--raw): %s %s of the values are hook costs "
                         "(Probe Overhead column)\n", a, instr_units_name(u));
    }
    if (s->comp.known)
        slow_path_line(out, s);
    for (size_t i = 0; i < s->nwarnings; i++)
        fprintf(out, "Warning:    %s\n", s->warnings[i]);
    instr_fmt_value(a, sizeof a, s->total.ei, s->total_ns[0], u);
    instr_fmt_value(b, sizeof b, s->total.ai, s->total_ns[1], u);
    if (s->exclude && s->exclude->text)
        fprintf(out, "Not Application: %s (intervals with a matching function on the stack)\n", s->exclude->text);
    if (s->exclude && s->exclude->os_ignored) {
        char in[96], out_[96];
        const char *taken = instr_os_events_text(s->exclude->os_ignored, in, sizeof in);
        const char *kept = instr_os_events_text(INSTR_OS_ALL_KINDS & ~s->exclude->os_ignored, out_, sizeof out_);
        if (!strcmp(taken, "none"))
            fprintf(out, "OS events:  none take intervals out of Application time (--os-events none): %s "
                         "count as Application\n", kept);
        else
            fprintf(out, "OS events:  only %s take intervals out of Application time (--os-events); not %s\n",
                    taken, kept);
    }
    if (!verbose) {
        /* Wall and Off-CPU: columns of -F; their lines with --verbose. */
    } else if (s->wall_on && s->wall_known) {
        char w[64], d[64];
        instr_fmt_value(w, sizeof w, s->total_wall_t, s->total_wall_ns, u);
        if (s->have_rate)
            snprintf(d, sizeof d, " of a %.3f ms run", s->duration_ns / 1e6);
        else
            d[0] = 0;
        fprintf(out, "Wall:       %s %s with a frame open in some thread%s; concurrency %.2f (Elapsed / Wall "
                     "Inclusive)\n", w, instr_units_name(u), d,
                s->total_wall_t ? (double)s->total.ei / (double)s->total_wall_t : 0.0);
    } else if (s->wall_why) {
        fprintf(out, "Wall:       unknown (%s)\n", s->wall_why);
    } else if (s->axis.nhosts > 1) {
        fprintf(out, "Wall:       unknown (processes of %zu hosts: their ticks are not one clock to unite them on)\n",
                s->axis.nhosts);
    } else if (s->wall_on) {
        fprintf(out, "Wall:       unknown (more than %u activations to unite, or no memory)\n", INSTR_WALL_MAX_SEGS);
    }
    if (verbose && s->unseen_minor_threads)
        fprintf(out, "Unseen:     system calls that do not block, in %.2f%% of the time of %u thread(s) (sud paused "
                     "briefly; under %.0f%% of a dump's threads' time is no warning)\n",
                s->unseen_minor_life_ns > 0 ? 100.0 * s->unseen_minor_ns / s->unseen_minor_life_ns : 0.0,
                s->unseen_minor_threads, INSTR_UNSEEN_MINOR_PCT);
    unwatched_line(out, s, verbose);
    self_line(out, s, verbose);
    if (s->offcpu_exact && verbose)
        fprintf(out, "Off-CPU:    exact, from the thread's CPU clock read at each flagged hook "
                     "(--flagged shows it per function)\n");
    if (s->no_app) {
        fprintf(out, "Application: %s\n", instr_no_app_reason);
        snprintf(b, sizeof b, "n/a");
    }
    if (s->cpu_known) {
        char c[64];
        print_cpu_lines(out, s, verbose);
        instr_fmt_value(c, sizeof c, s->total.ci, s->total_cpu_ns, u);
        fprintf(out, "Totals:     Elapsed %s, Application %s, CPU %s (%s)\n\n", a, b, c, instr_units_name(u));
        return 0;
    }
    if (s->offcpu_exact)
        fprintf(out, "CPU:        unknown (a process ran without the cpuclock backend)\n");
    fprintf(out, "Totals:     Elapsed %s, Application %s (%s)\n\n", a, b, instr_units_name(u));
    return 0;
}

/* Indent of a header line's continuation: under the value of "Label:   ". */
#define HEADER_INDENT 12

/* text (lines) to out, each line longer than width broken at spaces, its
 * continuations indented under the value. */
static void put_wrapped(FILE *out, const char *text, size_t len, unsigned width)
{
    const char *end = text + len;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *stop = nl ? nl : end;
        size_t indent = 0;
        while ((size_t)(stop - text) + indent > width) {
            const char *cut = text + (width - indent);
            while (cut > text && *cut != ' ')
                cut--;
            if (cut == text)
                break; /* one word wider than the terminal: left whole */
            fprintf(out, "%*s%.*s\n", (int)indent, "", (int)(cut - text), text);
            text = cut + 1;
            indent = HEADER_INDENT;
        }
        fprintf(out, "%*s%.*s\n", (int)indent, "", (int)(stop - text), text);
        text = nl ? nl + 1 : end;
    }
}

/* The header, wrapped to the terminal's width when there is one. */
static int header(FILE *out, const struct instr_session *s, enum instr_units u, const struct instr_report_opts *o)
{
    if (!o->width || o->width <= 2 * HEADER_INDENT)
        return print_header(out, s, u, o->verbose);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return INSTR_ENOMEM;
    int rc = print_header(m, s, u, o->verbose);
    if (fclose(m) || !text)
        rc = rc < 0 ? rc : INSTR_ENOMEM;
    if (!rc)
        put_wrapped(out, text, len, o->width);
    free(text);
    return rc;
}

/* One view after the header; titled when it is one of several. */
static int view_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o, enum instr_units u,
                     int titled)
{
    const struct instr_row *rows;
    size_t n;
    instr_view_rows(s, o->view, &rows, &n);
    if (o->limit && n > o->limit)
        n = o->limit;
    if (instr_views[o->view].text)
        return instr_views[o->view].text(out, s, o, u); /* it has a title of its own */
    if (titled)
        fprintf(out, "%c%s\n", toupper((unsigned char)instr_views[o->view].name[0]), instr_views[o->view].name + 1);
    struct table t = {.ncols = 0};
    const struct instr_column *cols[MAX_COLS];
    char err[600];
    int nc = instr_columns_pick(o->columns, o->view, s, o, cols, MAX_COLS, err, sizeof err);
    if (nc < 0)
        return INSTR_EARG; /* the front end checked the list before any output */
    for (int i = 0; i < nc; i++)
        col(&t, cols[i]->title, (cols[i]->flags & INSTR_COL_LEFT) != 0);
    t.nrows = n;
    t.cells = calloc(n * (size_t)t.ncols + 1, sizeof *t.cells);
    if (!t.cells)
        return INSTR_ENOMEM;
    int rc = 0;
    char buf[4096];
    for (size_t i = 0; i < n; i++) {
        char **c = &t.cells[i * (size_t)t.ncols];
        for (int k = 0; k < t.ncols; k++)
            if (!(c[k] = strdup(instr_column_cell(cols[k], buf, sizeof buf, s, &rows[i], u, 0))))
                rc = INSTR_ENOMEM;
    }
    if (!rc)
        print_table(out, &t, o->width);
    for (size_t i = 0; i < n * (size_t)t.ncols; i++)
        free(t.cells[i]);
    free(t.cells);
    return rc;
}

int instr_report_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    enum instr_units u = s->have_rate ? o->units : INSTR_UNITS_TICKS;
    int rc = header(out, s, u, o);
    if (rc < 0 || !o->views || o->nviews < 2)
        return rc < 0 ? rc : view_text(out, s, o, u, 0);
    /* Several views of the one walk, in the order asked. */
    struct instr_report_opts one = *o;
    for (size_t i = 0; i < o->nviews && rc >= 0; i++) {
        one.view = o->views[i];
        if (i)
            fputc('\n', out);
        rc = view_text(out, s, &one, u, 1);
    }
    return rc;
}

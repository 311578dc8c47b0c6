/* instr-report - the four values of data-values.md for one or more dumps.
 * A thin main: the command line into a struct (report-options.c), then
 * open the inputs -> build the session -> one writer of the format table. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "count-report.h"
#include "dump-reader.h"
#include "exclusions.h"
#include "formats.h"
#include "import-visualiser.h"
#include "output-file.h"
#include "progress.h"
#include "report-options.h"
#include "report.h"
#include "self-pct.h"
#include "hybrid-cli.h"
#include "sample-cli.h"
#include "sample-report.h"
#include "suggest-exclude.h"
#include "views.h"

/* Opens path: a dump, or a profile-visualiser text file converted into a
 * temporary dump (removed once mapped).  Bad lines of the text go to
 * stderr and set *warned.  Returns 0, or -1 after saying why. */
static int open_input(struct instr_dump *d, const char *path, int *warned)
{
    char err[600], head[4096];
    int in = instr_input_open(path); /* never waits on a FIFO */
    FILE *f = in >= 0 ? fdopen(in, "rb") : NULL;
    if (in >= 0 && !f)
        close(in);
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (!f || (n >= 8 && !memcmp(head, INSTR_DUMP_MAGIC, 8)) || !instr_visualiser_sniff(head, n)) {
        if (f)
            fclose(f);
        if (instr_dump_open(d, path, err, sizeof err) < 0) {
            fprintf(stderr, "instr-report: %s\n", err);
            return -1;
        }
        return 0;
    }
    /* The whole text, then the conversion. */
    char *buf = NULL;
    size_t len = 0, cap = 0;
    rewind(f);
    for (;;) {
        if (len == cap) {
            char *b = realloc(buf, cap = cap ? cap * 2 : 1 << 16);
            if (!b) {
                free(buf);
                fclose(f);
                fprintf(stderr, "instr-report: %s: out of memory\n", path);
                return -1;
            }
            buf = b;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        if (!k)
            break;
        len += k;
    }
    int rd = ferror(f);
    fclose(f);
    const char *tmpdir = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/instr-import-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = rd ? -1 : mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "instr-report: %s: %s\n", rd ? path : tmp, strerror(errno));
        free(buf);
        return -1;
    }
    close(fd);
    struct instr_import_result r;
    int rc = instr_visualiser_import(buf, len, path, tmp, &r, err, sizeof err);
    free(buf);
    if (rc == 0 && (rc = instr_dump_open(d, tmp, err, sizeof err)) == 0)
        d->path = path;
    unlink(tmp);
    for (size_t i = 0; i < r.nmessages; i++)
        fprintf(stderr, "instr-report: %s\n", r.messages[i]);
    if (r.bad_lines > r.nmessages)
        fprintf(stderr, "instr-report: %s: %zu more bad lines\n", path, r.bad_lines - r.nmessages);
    if (r.bad_lines)
        *warned = 1;
    instr_import_result_free(&r);
    if (rc < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        return -1;
    }
    return 0;
}

/* Chrome parts after the first: FILE.json -> FILE.2.json (FILE -> FILE.2). */
struct parts {
    const char *path;
};

static FILE *next_part(void *ctx, unsigned part)
{
    const struct parts *pp = ctx;
    char name[4096];
    const char *dot = strrchr(pp->path, '.');
    const char *slash = strrchr(pp->path, '/');
    if (dot && (!slash || dot > slash) && dot != pp->path)
        snprintf(name, sizeof name, "%.*s.%u%s", (int)(dot - pp->path), pp->path, part, dot);
    else
        snprintf(name, sizeof name, "%s.%u", pp->path, part);
    FILE *f = fopen(name, "w");
    if (!f)
        fprintf(stderr, PROG ": %s: %s\n", name, strerror(errno));
    return f;
}


/* The same dump given twice (an overlapping glob) would count its process
 * twice: keep the first, say which were left out.  Returns the new count;
 * paths[i] stays the path of dumps[i]. */
static size_t drop_duplicates(struct instr_dump *dumps, size_t n, char **paths)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && !instr_dump_same_process(&dumps[j], &dumps[i]))
            j++;
        if (j < k) {
            fprintf(stderr, PROG ": warning: %s is the same process as %s (pid %" PRIu64 ", same start): counted once\n",
                    paths[i], paths[j], dumps[i].hdr.pid);
            instr_dump_close(&dumps[i]);
            continue;
        }
        dumps[k] = dumps[i];
        paths[k++] = paths[i];
    }
    return k;
}

/* After a text report on a terminal: where to look next. */
static void hint(const struct cli *c)
{
    if (c->export || c->diff || strcmp(c->format->name, "text") || c->outpath || !isatty(STDOUT_FILENO) ||
        (c->given & GIVEN(OPT_SUGGEST_EXCLUDE)))
        return;
    const int self_hint = !c->self_shown && (instr_views[c->o.view].flags & INSTR_VIEW_ROWS);
    if (self_hint)
        printf("\nSelf %%: each function's share of the CPU time without instr: sample your plain\n"
               "        build: instr-sample -o plain.instr ./prog-plain, then --self plain.instr\n");
    if (!(instr_views[c->o.view].flags & INSTR_VIEW_ROWS))
        printf("\nNext: --view callers FUNC or --view callees FUNC for one function;\n"
               "      --export chrome -o run.json for a timeline\n");
    else
        printf("%sNext: --view calltree (call paths), --view callers FUNC / callees FUNC (one\n"
               "      function), -F +ee%%,module (more columns), --verbose (the whole header),\n"
               "      --export chrome -o run.json (a timeline); --help for more\n",
               self_hint ? "" : "\n");
}

/* ---- running it ------------------------------------------------------------- */

static FILE *open_output(const char *outpath)
{
    FILE *out = instr_output_open(outpath);
    if (!out)
        fprintf(stderr, PROG ": %s: %s\n", outpath, strerror(errno));
    return out;
}

/* Closes out, keeping the file only for a report written (exit 0 or 3:
 * output-file.h); returns status, or EXIT_INPUT after a write error. */
static int close_output(FILE *out, int status, int rc)
{
    if (rc < 0) {
        fprintf(stderr, PROG ": %s\n", instr_tool_strerror(rc));
        status = EXIT_INPUT;
    }
    if (instr_output_close(out, status == EXIT_OK || status == EXIT_WARNED) < 0 &&
        (status == EXIT_OK || status == EXIT_WARNED)) {
        fprintf(stderr, PROG ": write error: %s\n", strerror(errno));
        status = EXIT_INPUT;
    }
    return status;
}

/* What the session builds with beyond the defaults; NULL: nothing. */
static const struct instr_exclusions *exclusions_of(const struct cli *c)
{
    const struct instr_exclusions *x = &c->excl;
    return x->n || x->os_ignored || x->clones_split || x->mpi_prefixes || x->job_wall ? x : NULL;
}

/* --diff: a session for each input, then the table. */
static int run_diff(const struct cli *c, const struct instr_dump *dumps)
{
    char err[600];
    struct instr_session s[2];
    const struct instr_exclusions *x = exclusions_of(c);
    if (instr_session_build_excluding(&s[0], &dumps[0], 1, x, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return EXIT_INPUT;
    }
    if (instr_session_build_excluding(&s[1], &dumps[1], 1, x, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        instr_session_free(&s[0]);
        return EXIT_INPUT;
    }
    int status = EXIT_OK;
    FILE *out = open_output(c->outpath);
    if (!out) {
        status = EXIT_USAGE;
    } else {
        int rc = c->format->diff(out, &s[0], &s[1], c->sort, c->o.threshold, c->o.units);
        if (rc == INSTR_EARG) {
            fprintf(stderr, PROG ": --diff sorts by ei, ee, ai, ae or calls (ai, ae: only with "
                            "Application values in both inputs)\n");
            status = EXIT_USAGE;
            rc = 0;
        }
        status = close_output(out, status, rc);
    }
    instr_session_free(&s[0]);
    instr_session_free(&s[1]);
    return status;
}

/* What the export left out on its own (chrome past what viewers load). */
static struct instr_thinned thinned;

/* The options an exporter reads, with the -o FILE parts of --split-size. */
static struct instr_report_opts export_opts(const struct cli *c, struct parts *parts)
{
    struct instr_report_opts o = c->o;
    if (c->export) {
        o.thinned = &thinned;
        o.export_opts = c->xo[c->format - instr_formats];
        if (c->outpath) {
            o.next_part = next_part;
            o.part_ctx = parts;
        }
    }
    return o;
}

/* The session of every input, with a progress line while it is read.  An
 * export of the call timeline (format->walk) is written during the build,
 * in its one walk of each dump: *out is then open and *wrc its result. */
static int build_session(const struct cli *c, struct instr_dump *dumps, size_t nd, struct instr_session *s,
                         FILE **out, int *wrc)
{
    char err[600] = "";
    struct instr_progress bar;
    uint64_t total = 0;
    for (size_t i = 0; i < nd; i++)
        total += dumps[i].size;
    instr_progress_start(&bar, total);
    for (size_t i = 0; i < nd; i++) {
        dumps[i].progress = instr_progress_add;
        dumps[i].progress_ctx = &bar;
    }
    const struct instr_exclusions *x = exclusions_of(c);
    int built;
    if (c->export && c->format->walk) {
        struct parts parts;
        parts = (struct parts){c->outpath};
        struct instr_report_opts o = export_opts(c, &parts);
        if (!(*out = open_output(c->outpath)))
            built = INSTR_EARG; /* open_output said why; err stays empty */
        else
            built = c->format->walk(*out, s, dumps, nd, x, &o, wrc, err, sizeof err);
    } else {
        built = instr_session_build_excluding(s, dumps, nd, x, err, sizeof err);
    }
    instr_progress_end(&bar);
    /* bar dies with this frame: a later walk of the same dumps (Self %'s
     * in-run samples) must not report to it. */
    for (size_t i = 0; i < nd; i++) {
        dumps[i].progress = NULL;
        dumps[i].progress_ctx = NULL;
    }
    if (built < 0 && err[0])
        fprintf(stderr, PROG ": %s\n", err);
    return built;
}

/* Past this, a Chrome trace-event JSON file does not open in the browsers'
 * viewers (Perfetto UI, chrome://tracing: a JSON string of about 256-512 MB
 * is their limit; a 548 MB file opened as an empty view). */
#define BIG_TRACE_BYTES (256ull << 20)

/* A trace the export thinned says so, and how to have every call.  One
 * still too big to open (every call asked for, or long names) says so,
 * and how to make it fit: parts that open on their own, a time range,
 * short calls left out. */
static void warn_big_trace(const struct cli *c, FILE *out)
{
    if (thinned.calls)
        fprintf(stderr,
                PROG ": note: the trace keeps the %" PRIu64 " longest of %" PRIu64 " calls (every one of at least "
                     "%.3f µs): browser trace viewers load about %" PRIu64 "; --min-duration 0 keeps every call\n",
                thinned.kept, thinned.calls, (double)thinned.min_ns / 1e3, thinned.cap);
    struct stat st;
    if (strcmp(c->format->name, "chrome") || report_parts_asked(c) || fflush(out) || fstat(fileno(out), &st) ||
        !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= BIG_TRACE_BYTES)
        return;
    fprintf(stderr,
            PROG ": warning: the trace is %.0f MB; browser trace viewers fail past about %llu MB: split it "
                 "(--split-size 200: parts that open on their own), keep a time range (--time-range FROM:TO) or "
                 "leave out short calls (--min-duration US), or write Perfetto's compact trace (--export perfetto)\n",
            (double)st.st_size / 1e6, BIG_TRACE_BYTES >> 20);
}

/* The report or export of s.  Returns the exit status. */
static int emit(const struct cli *c, const struct instr_session *s, int warned, FILE *walked, int wrc)
{
    char err[600];
    struct parts parts = {c->outpath};
    struct instr_report_opts o = export_opts(c, &parts);
    if (o.func) {
        /* An unknown or ambiguous name is a usage error, said before any output. */
        struct instr_relations rel;
        snprintf(err, sizeof err, "out of memory");
        if (instr_relations_build(s, o.func, &rel, err, sizeof err) < 0) {
            fprintf(stderr, PROG ": %s\n", err);
            return EXIT_USAGE;
        }
        instr_relations_free(&rel);
    }
    FILE *out = walked ? walked : open_output(c->outpath);
    if (!out)
        return EXIT_USAGE;
    int rc = walked                                 ? wrc
             : c->given & GIVEN(OPT_SUGGEST_EXCLUDE) ? instr_suggest_exclude(out, s, c->suggest_pct)
                                                     : c->format->write(out, s, &o);
    if (rc == INSTR_EARG && c->export) {
        const struct instr_export_options *eo = c->format->options;
        const char *why = eo && eo->refused ? eo->refused(o.export_opts, s) : NULL;
        fprintf(stderr, PROG ": --export %s: %s\n", c->format->name,
                why ? why : "the input has no tick rate (times unknown)");
        return close_output(out, EXIT_USAGE, 0);
    }
    int status = EXIT_OK;
    if (rc >= 0)
        warn_big_trace(c, out);
    if (rc >= 0 && (s->nwarnings || s->repairs.bad_chunks || warned)) {
        for (size_t i = 0; i < s->nwarnings; i++)
            fprintf(stderr, PROG ": warning: %s\n", s->warnings[i]);
        if (s->nwarnings > s->nnotes || s->repairs.bad_chunks || warned)
            status = EXIT_WARNED;
    }
    return close_output(out, status, rc);
}

/* Self % asked where it cannot show: --sort self with no sampling source
 * (every row 0: name order), samples given to views without a Self %
 * column (it is a column of the functions view). */
static void warn_self_unused(const struct cli *c, const struct instr_session *s, size_t nself)
{
    if (c->sort && (!strcasecmp(c->sort, "self") || !strcasecmp(c->sort, "self%") ||
                    !strcasecmp(c->sort, "self_pct")) && !s->self.source)
        fprintf(stderr, PROG ": warning: --sort %s: no Self %% without a sampling dump of the plain build "
                        "(--self PLAIN.instr) or INSTR_SAMPLE samples: rows in name order\n", c->sort);
    int functions = 0;
    for (size_t i = 0; i < c->o.nviews; i++)
        functions |= c->views[i] == INSTR_VIEW_FUNCTIONS;
    if (nself && !c->export && !functions)
        fprintf(stderr, PROG ": warning: --self does nothing with --view %s (Self %% is a column of the functions "
                        "view)\n", instr_views[c->o.view].name);
}

/* Sampling dumps (instr-sample) have their own views and exports
 * (sample-cli.c).  1 if the inputs hold one and were reported, *status
 * then set. */
static int sampled_inputs(const struct cli *c, struct instr_dump *dumps, size_t nd, int warned, int *status)
{
    size_t i = 0;
    while (i < nd && !instr_dump_is_sampled(&dumps[i]))
        i++;
    if (i == nd)
        return 0;
    /* instr-sample's dump beside the instrumented one: the hybrid view */
    if ((instr_views[c->o.view].dumps & INSTR_VIEW_ON_HYBRID) && !c->diff && !c->export)
        for (size_t k = 0; k < nd; k++)
            if (!instr_dump_is_sampled(&dumps[k]))
                return 0;
    int fmt = c->export ? 0 : !strcmp(c->format->name, "csv") ? 1 : !strcmp(c->format->name, "json") ? 2 : 0;
    if (c->o.nviews > 1 && !c->diff && !c->export) {
        fprintf(stderr, PROG ": a list of views is for instrumented dumps; give a sampling dump one view\n");
        *status = EXIT_USAGE;
    } else if (c->diff) {
        *status = instr_sample_diff_cli(&dumps[0], &dumps[1], fmt, c->sort, c->o.threshold, c->outpath);
    } else {
        *status = instr_sample_cli(dumps, nd, instr_views[c->o.view].name, fmt, c->sort, c->o.limit, c->o.threshold, c->export ? c->format->name : NULL, c->outpath, c->o.func, c->o.depth,
                                   c->excl.clones_split ? INSTR_SPROFILE_CLONES_SPLIT : 0);
    }
    if (*status == EXIT_OK && warned)
        *status = EXIT_WARNED;
    return 1;
}

/* Count-mode dumps (plugin mode=count): calls and edges only
 * (count-report.c).  1 if the inputs hold one and were reported. */
static int counted_inputs(const struct cli *c, struct instr_dump *dumps, size_t nd, int warned, int *status)
{
    size_t i = 0;
    while (i < nd && !instr_dump_is_counted(&dumps[i]))
        i++;
    if (i == nd)
        return 0;
    const char *why = NULL;
    report_warn_count(c);
    FILE *out = instr_output_open(c->outpath);
    if (!out) {
        fprintf(stderr, PROG ": %s: %s\n", c->outpath, strerror(errno));
        *status = EXIT_INPUT;
        return 1;
    }
    char names[256] = "";
    for (size_t f = 0, n = 0; f < instr_nformats && n < sizeof names; f++)
        if (instr_formats[f].counts)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", instr_formats[f].name);
    char refusal[400];
    snprintf(refusal, sizeof refusal, "a count-mode dump has calls only, no time: --export %s has no count form (%s do)",
             c->format->name, names);
    int rc = c->export && !c->format->counts ? (why = refusal, INSTR_EARG)
             : c->export ? instr_count_export(dumps, nd, c->excl.clones_split, c->format->counts, out)
             : c->diff && nd == 2 ? instr_count_diff(&dumps[0], &dumps[1], c->format->name, c->excl.clones_split,
                                                     out, &why)
             : c->o.nviews > 1 ? (why = "a count-mode dump is reported one view at a time", INSTR_EARG)
                 : instr_count_report(dumps, nd, instr_views[c->o.view].name, c->o.func, c->o.limit,
                                      c->format->name, c->excl.clones_split, out, &why);
    if (instr_output_close(out, rc >= 0) < 0 && rc >= 0)
        rc = INSTR_EIO;
    if (rc < 0)
        fprintf(stderr, PROG ": %s\n", why ? why : instr_tool_strerror(rc));
    *status = rc == INSTR_EARG ? EXIT_USAGE : rc < 0 ? EXIT_INPUT : warned ? EXIT_WARNED : EXIT_OK;
    return 1;
}

/* The sampling dumps that give Self % (self-pct.h) to a report of
 * instrumented ones: --self, and those given beside instrumented dumps in
 * a view of them (not --view samples, which places them on the stack
 * itself, nor --diff or --export).  They move from dumps[0..*nd) to
 * self[0..*nself).  Returns EXIT_OK or the exit status after saying why. */
static int split_self(const struct cli *c, struct instr_dump *dumps, size_t *nd, struct instr_dump *self,
                      size_t *nself, int *warned)
{
    *nself = 0;
    size_t instrumented = 0, counted = 0;
    for (size_t i = 0; i < *nd; i++) {
        instrumented += !instr_dump_is_sampled(&dumps[i]) && !instr_dump_is_counted(&dumps[i]);
        counted += instr_dump_is_counted(&dumps[i]);
    }
    const int table = !c->diff && !c->export && c->o.view != INSTR_VIEW_SAMPLES && c->o.view != INSTR_VIEW_LINES;
    if (c->self && counted && !instrumented) {
        /* A count report reads the sampling dumps among its inputs
         * (count-report.c), in whichever order they come. */
        if (open_input(&dumps[*nd], c->self, warned) < 0)
            return EXIT_INPUT;
        if (!instr_dump_is_sampled(&dumps[(*nd)++])) {
            fprintf(stderr, PROG ": --self %s: not a sampling dump (instr-sample writes one)\n", c->self);
            return EXIT_USAGE;
        }
        return EXIT_OK;
    }
    if (c->self && table && !instrumented) {
        /* Only sampling dumps as inputs: the files the other way round? */
        struct instr_dump probe;
        int w = 0;
        if (open_input(&probe, c->self, &w) == 0) {
            int not_sampled = !instr_dump_is_sampled(&probe);
            instr_dump_close(&probe);
            if (not_sampled) {
                fprintf(stderr, PROG ": --self %s: not a sampling dump: --self takes instr-sample's dump, the "
                                "inputs the instrumented or count-mode ones (instr-report --self SAMPLES DUMP...)\n",
                        c->self);
                return EXIT_USAGE;
            }
        }
    }
    if (c->self) {
        if (!table || !instrumented) {
            fprintf(stderr, PROG ": --self gives the Self %% column of a report of instrumented dumps (not with "
                            "--diff, --export, --view samples or lines)\n");
            return EXIT_USAGE;
        }
        if (open_input(&self[0], c->self, warned) < 0)
            return EXIT_INPUT;
        *nself = 1;
        if (!instr_dump_is_sampled(&self[0])) {
            fprintf(stderr, PROG ": --self %s: not a sampling dump (instr-sample writes one)\n", c->self);
            return EXIT_USAGE;
        }
    }
    if (!table || !instrumented)
        return EXIT_OK;
    size_t k = 0;
    for (size_t i = 0; i < *nd; i++)
        if (instr_dump_is_sampled(&dumps[i]))
            self[(*nself)++] = dumps[i];
        else
            dumps[k++] = dumps[i];
    *nd = k;
    return EXIT_OK;
}

/* instr-report-mpi (instr-report-mpi.c) builds this file with its main renamed. */
#ifndef INSTR_REPORT_MAIN
#define INSTR_REPORT_MAIN main
#endif
int INSTR_REPORT_MAIN(int argc, char **argv);
int INSTR_REPORT_MAIN(int argc, char **argv)
{
    struct cli c = {0};
    int pr = report_parse_args(&c, argc, argv);
    if (pr != 0) {
        report_free_cli(&c);
        return pr > 0 ? EXIT_OK : EXIT_USAGE;
    }
    report_warn_unused(&c);

    /* +1: a count report takes --self's dump among its inputs (split_self). */
    struct instr_dump *dumps = calloc(c.npaths + 1, sizeof *dumps), *self = calloc(c.npaths + 1, sizeof *self);
    size_t nd = 0, nself = 0;
    int status = dumps && self ? EXIT_OK : EXIT_INPUT, warned = 0;
    for (size_t i = 0; i < c.npaths && status == EXIT_OK; i++) {
        if (open_input(&dumps[nd], c.paths[i], &warned) < 0)
            status = EXIT_INPUT;
        else
            nd++;
    }
    if (status == EXIT_OK && !c.diff)
        nd = drop_duplicates(dumps, nd, c.paths);
    for (size_t i = 0; i < nd; i++)
        dumps[i].raw = c.raw;
    if (status == EXIT_OK)
        status = split_self(&c, dumps, &nd, self, &nself, &warned);
    if (status == EXIT_OK && counted_inputs(&c, dumps, nd, warned, &status)) {
        /* reported */
    } else if (status == EXIT_OK && sampled_inputs(&c, dumps, nd, warned, &status)) {
        /* reported */
    } else if (status == EXIT_OK && (instr_views[c.o.view].dumps & INSTR_VIEW_ON_HYBRID) && !c.diff && !c.export) {
        int fmt = !strcmp(c.format->name, "csv") ? 1 : !strcmp(c.format->name, "json") ? 2 : 0;
        status = instr_hybrid_cli(dumps, nd, fmt, c.o.limit, c.outpath);
        if (status == EXIT_OK && warned)
            status = EXIT_WARNED;
    } else if (status == EXIT_OK && !(instr_views[c.o.view].dumps & (INSTR_VIEW_ON_INSTRUMENTED | INSTR_VIEW_ON_HYBRID))) {
        fprintf(stderr, PROG ": --view %s is a view of sampling dumps (instr-sample), not of instrumented ones\n",
                instr_views[c.o.view].name);
        status = EXIT_USAGE;
    } else if (status == EXIT_OK && c.diff) {
        status = run_diff(&c, dumps);
        if (status == EXIT_OK && warned)
            status = EXIT_WARNED;
    } else if (status == EXIT_OK) {
        struct instr_session s;
        FILE *walked = NULL;
        int wrc = 0, built = build_session(&c, dumps, nd, &s, &walked, &wrc);
        if (built < 0) {
            status = built == INSTR_EARG && !walked ? EXIT_USAGE : EXIT_INPUT;
            if (walked)
                close_output(walked, status, 0);
        } else {
            char err[600];
            int src = walked ? 0
                      : nself ? instr_self_from_sampled(&s, self, nself, err, sizeof err)
                              : instr_self_from_in_run(&s, err, sizeof err);
            if (src < 0) {
                fprintf(stderr, PROG ": Self %%: %s\n", err);
                status = src == INSTR_EARG ? EXIT_USAGE : EXIT_INPUT;
            } else if ((c.self_shown = s.self.source != NULL), instr_session_sort(&s, c.sort) < 0) {
                fprintf(stderr, PROG ": unknown sort column '%s' (one of: %s)\n", c.sort, instr_sort_columns);
                status = EXIT_USAGE;
                if (walked)
                    close_output(walked, status, 0);
            } else {
                warn_self_unused(&c, &s, nself);
                status = emit(&c, &s, warned, walked, wrc);
                if (status == EXIT_OK || status == EXIT_WARNED)
                    hint(&c);
            }
            instr_session_free(&s);
        }
    }
    for (size_t i = 0; i < nd; i++)
        instr_dump_close(&dumps[i]);
    for (size_t i = 0; i < nself; i++)
        instr_dump_close(&self[i]);
    free(dumps);
    free(self);
    report_free_cli(&c);
    return status;
}

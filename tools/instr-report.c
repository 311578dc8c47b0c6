/* instr-report - the four values of data-values.md for one or more dumps.
 * A thin main: options, then reader -> session -> one exporter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump-reader.h"
#include "progress.h"
#include "exclusions.h"
#include "import-visualiser.h"
#include "report.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WARNED = 3 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: instr-report [options] DUMP...\n"
            "       instr-report --diff [options] A B\n"
            "Reports Elapsed/Application Inclusive/Exclusive values of an instr session;\n"
            "several dumps are several processes of one session.  An input may also be\n"
            "a profile-visualiser text file (Application values are then unavailable).\n"
            "\n"
            "  --view VIEW      functions (default), threads, modules, processes, calltree,\n"
            "                   callers FUNC, callees FUNC (FUNC: a function's name)\n"
            "  --depth N        calltree: show N levels (default all)\n"
            "  --threshold PCT  calltree: hide paths below PCT %% of Elapsed Inclusive\n"
            "  --sort COLUMN    %s\n"
            "                   (numbers descending, names ascending; default ei)\n"
            "  --units UNIT     ticks, ns, us, ms (default ms)\n"
            "  --format FORMAT  text (default), csv, json (json has every view)\n"
            "  --limit N        show the first N rows (text, csv)\n"
            "  --flagged        add flagged-interval columns (text, csv)\n"
            "  --not-application=PATTERN|@CATEGORY[,...]\n"
            "                   intervals with a matching function on the stack are not\n"
            "                   Application time (globs on mangled and demangled names;\n"
            "                   categories @locks @io @alloc @sleep); repeatable\n"
            "  --export FORMAT  visualiser, chrome (trace event JSON), callgrind, folded\n"
            "  --weight W       folded: elapsed (default) or application exclusive weights\n"
            "  --time-range FROM:TO  chrome: only what overlaps FROM..TO ms since the\n"
            "                   session's start (either may be empty)\n"
            "  --min-duration US  chrome: leave out calls shorter than US microseconds\n"
            "  --split-size MB  chrome: end a file at about MB megabytes and go on in\n"
            "                   FILE.2.json, FILE.3.json... (needs -o FILE)\n"
            "  --diff A B       per-function change from A to B, sorted by the absolute\n"
            "                   change of --sort (ei, ee, ai, ae, calls); --threshold PCT\n"
            "                   hides changes below PCT %% of A's total\n"
            "  -o FILE          write to FILE instead of standard output\n"
            "  --help           this text\n"
            "\n"
            "Exit codes: 0 ok; 1 usage error; 2 input unusable (not a dump, wrong\n"
            "version, unreadable); 3 reported with warnings (truncated or incomplete\n"
            "dump, corrupt chunks salvaged, bad lines of a visualiser file skipped).\n",
            instr_sort_columns);
}

/* Opens path: a dump, or a profile-visualiser text file converted into a
 * temporary dump (removed once mapped).  Bad lines of the text go to
 * stderr and set *warned.  Returns 0, or -1 after saying why. */
static int open_input(struct instr_dump *d, const char *path, int *warned)
{
    char err[600], head[4096];
    FILE *f = fopen(path, "rb");
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
        perror(name);
    return f;
}

static int pick(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arg, names[i]))
            return i;
    return -1;
}

/* --diff: a session for each input, then the table. */
static int run_diff(const struct instr_dump *dumps, const struct instr_exclusions *excl, int format,
                    const char *sort, double threshold, enum instr_units units, const char *outpath)
{
    char err[600];
    struct instr_session s[2];
    int status = EXIT_OK;
    if (instr_session_build_excluding(&s[0], &dumps[0], 1, excl->n ? excl : NULL, err, sizeof err) < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        return EXIT_INPUT;
    }
    if (instr_session_build_excluding(&s[1], &dumps[1], 1, excl->n ? excl : NULL, err, sizeof err) < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        instr_session_free(&s[0]);
        return EXIT_INPUT;
    }
    FILE *out = outpath ? fopen(outpath, "w") : stdout;
    if (!out) {
        perror(outpath);
        status = EXIT_USAGE;
    } else {
        int rc = instr_diff_write(out, format, &s[0], &s[1], sort, threshold, units);
        if (rc == INSTR_EARG) {
            fprintf(stderr, "instr-report: --diff sorts by ei, ee, ai, ae or calls (ai, ae: only with "
                            "Application values in both inputs)\n");
            status = EXIT_USAGE;
        } else if (rc < 0 || fflush(out) != 0 || ferror(out)) {
            fprintf(stderr, "instr-report: %s\n", rc < 0 ? instr_tool_strerror(rc) : "write error");
            status = EXIT_INPUT;
        }
        if (out != stdout)
            fclose(out);
    }
    instr_session_free(&s[0]);
    instr_session_free(&s[1]);
    return status;
}

int main(int argc, char **argv)
{
    static const char *const views[] = {"functions", "threads", "modules", "processes",
                                        "calltree", "callers", "callees"};
    static const char *const units[] = {"ticks", "ns", "us", "ms"};
    static const char *const formats[] = {"text", "csv", "json"};
    static const instr_exporter exporters[] = {instr_report_text, instr_report_csv, instr_report_json};
    struct instr_report_opts o = {.units = INSTR_UNITS_MS, .view = INSTR_VIEW_FUNCTIONS};
    static const char *const exports[] = {"visualiser", "chrome", "callgrind", "folded"};
    static const instr_exporter exporters2[] = {instr_export_visualiser, instr_export_chrome,
                                                instr_export_callgrind, instr_export_folded};
    const char *sort = "ei", *outpath = NULL;
    int format = 0, export = -1, diff = 0, sort_set = 0;
    struct parts parts = {0};
    o.to_us = -1;
    struct instr_exclusions excl = {0};
    const char **paths = calloc((size_t)argc, sizeof *paths);
    size_t npaths = 0;
    if (!paths)
        return EXIT_INPUT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(paths);
            return EXIT_OK;
        } else if (!strcmp(a, "--flagged")) {
            o.flagged = 1;
        } else if (!strcmp(a, "--diff")) {
            diff = 1;
        } else if (!strncmp(a, "--not-application", 17) && (a[17] == '=' || (!a[17] && v))) {
            char xerr[200];
            if (instr_exclusions_add(&excl, a[17] ? a + 18 : v, xerr, sizeof xerr) < 0) {
                fprintf(stderr, "instr-report: --not-application: %s\n", xerr);
                instr_exclusions_free(&excl);
                free(paths);
                return EXIT_USAGE;
            }
            i += !a[17];
        } else if (a[0] == '-' && a[1] && !v) {
            fprintf(stderr, "instr-report: %s needs a value\n", a);
            free(paths);
            return EXIT_USAGE;
        } else if (!strcmp(a, "--view")) {
            if ((k = pick(v, views, 7)) < 0)
                goto bad;
            o.view = (enum instr_view)k;
            i++;
            if (o.view == INSTR_VIEW_CALLERS || o.view == INSTR_VIEW_CALLEES) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "instr-report: --view %s needs a function name\n", v);
                    free(paths);
                    return EXIT_USAGE;
                }
                o.func = argv[++i];
            }
        } else if (!strcmp(a, "--depth")) {
            char *end;
            o.depth = strtoul(v, &end, 10);
            if (*end || !*v)
                goto bad;
            i++;
        } else if (!strcmp(a, "--threshold")) {
            char *end;
            o.threshold = strtod(v, &end);
            if (*end || !*v || o.threshold < 0)
                goto bad;
            i++;
        } else if (!strcmp(a, "--units")) {
            if ((k = pick(v, units, 4)) < 0)
                goto bad;
            o.units = (enum instr_units)k;
            i++;
        } else if (!strcmp(a, "--format")) {
            if ((format = pick(v, formats, 3)) < 0)
                goto bad;
            i++;
        } else if (!strcmp(a, "--sort")) {
            sort = v;
            sort_set = 1;
            i++;
        } else if (!strcmp(a, "--export")) {
            if ((export = pick(v, exports, 4)) < 0)
                goto bad;
            i++;
        } else if (!strcmp(a, "--weight")) {
            if (strcmp(v, "elapsed") && strcmp(v, "application"))
                goto bad;
            o.weight_app = !strcmp(v, "application");
            i++;
        } else if (!strcmp(a, "--time-range")) {
            const char *colon = strchr(v, ':');
            char *end;
            if (!colon)
                goto bad;
            o.from_us = colon == v ? 0 : strtod(v, &end) * 1e3;
            if (colon != v && end != colon)
                goto bad;
            o.to_us = colon[1] ? strtod(colon + 1, &end) * 1e3 : -1;
            if (colon[1] && (*end || o.to_us < o.from_us))
                goto bad;
            i++;
        } else if (!strcmp(a, "--min-duration")) {
            char *end;
            o.min_dur_us = strtod(v, &end);
            if (*end || !*v || o.min_dur_us < 0)
                goto bad;
            i++;
        } else if (!strcmp(a, "--split-size")) {
            char *end;
            double mb = strtod(v, &end);
            if (*end || !*v || mb <= 0)
                goto bad;
            o.split_bytes = (uint64_t)(mb * 1e6);
            i++;
        } else if (!strcmp(a, "--limit")) {
            char *end;
            o.limit = strtoul(v, &end, 10);
            if (*end || !*v)
                goto bad;
            i++;
        } else if (!strcmp(a, "-o")) {
            outpath = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "instr-report: unknown option '%s'\n", a);
            usage(stderr);
            free(paths);
            return EXIT_USAGE;
        } else {
            paths[npaths++] = a;
        }
        continue;
    bad:
        fprintf(stderr, "instr-report: bad value '%s' for %s\n", v, a);
        free(paths);
        return EXIT_USAGE;
    }
    if (!npaths || (diff && npaths != 2) || (diff && export >= 0)) {
        if (diff && npaths != 2)
            fprintf(stderr, "instr-report: --diff takes two inputs, A and B\n");
        else if (diff && export >= 0)
            fprintf(stderr, "instr-report: --diff and --export do not go together\n");
        else
            usage(stderr);
        free(paths);
        return EXIT_USAGE;
    }
    if (o.split_bytes && (export != 1 || !outpath)) {
        fprintf(stderr, "instr-report: --split-size is for --export chrome with -o FILE\n");
        free(paths);
        return EXIT_USAGE;
    }
    parts.path = outpath;
    if (o.split_bytes) {
        o.next_part = next_part;
        o.part_ctx = &parts;
    }

    char err[600];
    struct instr_dump *dumps = calloc(npaths, sizeof *dumps);
    if (!dumps) {
        free(paths);
        return EXIT_INPUT;
    }
    size_t nd = 0;
    int status = EXIT_OK, warned = 0;
    for (size_t i = 0; i < npaths; i++) {
        if (open_input(&dumps[nd], paths[i], &warned) < 0) {
            status = EXIT_INPUT;
            goto done_dumps;
        }
        nd++;
    }
    if (diff) {
        status = run_diff(dumps, &excl, format, sort_set ? sort : "ei", o.threshold, o.units, outpath);
        if (status == EXIT_OK && warned)
            status = EXIT_WARNED;
        goto done_dumps;
    }
    struct instr_progress bar;
    uint64_t total = 0;
    for (size_t i = 0; i < nd; i++)
        total += dumps[i].size;
    instr_progress_start(&bar, total);
    for (size_t i = 0; i < nd; i++) {
        dumps[i].progress = instr_progress_add;
        dumps[i].progress_ctx = &bar;
    }
    struct instr_session s;
    int built = instr_session_build_excluding(&s, dumps, nd, excl.n ? &excl : NULL, err, sizeof err);
    instr_progress_end(&bar);
    if (built < 0) {
        fprintf(stderr, "instr-report: %s\n", err);
        status = EXIT_INPUT;
        goto done_dumps;
    }
    FILE *out = NULL;
    if (instr_session_sort(&s, sort) < 0) {
        fprintf(stderr, "instr-report: unknown sort column '%s' (one of: %s)\n", sort, instr_sort_columns);
        status = EXIT_USAGE;
        goto done_session;
    }
    if (!(out = outpath ? fopen(outpath, "w") : stdout)) {
        perror(outpath);
        status = EXIT_USAGE;
        goto done_session;
    }
    if (o.func) {
        /* An unknown or ambiguous name is a usage error, said before any output. */
        struct instr_relations rel;
        snprintf(err, sizeof err, "out of memory");
        if (instr_relations_build(&s, o.func, &rel, err, sizeof err) < 0) {
            fprintf(stderr, "instr-report: %s\n", err);
            status = EXIT_USAGE;
            if (out != stdout)
                fclose(out);
            goto done_session;
        }
        instr_relations_free(&rel);
    }
    int rc = export >= 0 ? exporters2[export](out, &s, &o) : exporters[format](out, &s, &o);
    if (rc == INSTR_EARG && export >= 0) {
        fprintf(stderr, "instr-report: --export %s: %s\n", exports[export],
                o.weight_app && s.no_app ? "no Application values in this input (--weight application)"
                                         : "the input has no tick rate (times unknown)");
        status = EXIT_USAGE;
        if (out != stdout)
            fclose(out);
        goto done_session;
    }
    if (rc < 0 || fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "instr-report: %s\n", rc < 0 ? instr_tool_strerror(rc) : "write error");
        status = EXIT_INPUT;
    } else if (s.nwarnings || s.repairs.bad_chunks || warned) {
        for (size_t i = 0; i < s.nwarnings; i++)
            fprintf(stderr, "instr-report: warning: %s\n", s.warnings[i]);
        status = EXIT_WARNED;
    }
    if (out != stdout)
        fclose(out);
done_session:
    instr_session_free(&s);
done_dumps:
    for (size_t i = 0; i < nd; i++)
        instr_dump_close(&dumps[i]);
    free(dumps);
    free(paths);
    instr_exclusions_free(&excl);
    return status;
}

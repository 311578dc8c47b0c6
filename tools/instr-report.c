/* instr-report - the four values of data-values.md for one or more dumps.
 * A thin main: options, then reader -> session -> one exporter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "progress.h"
#include "exclusions.h"
#include "report.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WARNED = 3 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: instr-report [options] DUMP...\n"
            "Reports Elapsed/Application Inclusive/Exclusive values of an instr session;\n"
            "several dumps are several processes of one session.\n"
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
            "  -o FILE          write to FILE instead of standard output\n"
            "  --help           this text\n"
            "\n"
            "Exit codes: 0 ok; 1 usage error; 2 input unusable (not a dump, wrong\n"
            "version, unreadable); 3 reported with warnings (truncated or incomplete\n"
            "dump, corrupt chunks salvaged).\n",
            instr_sort_columns);
}

static int pick(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arg, names[i]))
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    static const char *const views[] = {"functions", "threads", "modules", "processes",
                                        "calltree", "callers", "callees"};
    static const char *const units[] = {"ticks", "ns", "us", "ms"};
    static const char *const formats[] = {"text", "csv", "json"};
    static const instr_exporter exporters[] = {instr_report_text, instr_report_csv, instr_report_json};
    struct instr_report_opts o = {.units = INSTR_UNITS_MS, .view = INSTR_VIEW_FUNCTIONS};
    const char *sort = "ei", *outpath = NULL;
    int format = 0;
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
    if (format == 1 && o.view >= INSTR_VIEW_CALLTREE) {
        fprintf(stderr, "instr-report: --view %s is text or json, not csv\n", views[o.view]);
        free(paths);
        return EXIT_USAGE;
    }
    if (!npaths) {
        usage(stderr);
        free(paths);
        return EXIT_USAGE;
    }

    char err[600];
    struct instr_dump *dumps = calloc(npaths, sizeof *dumps);
    if (!dumps) {
        free(paths);
        return EXIT_INPUT;
    }
    size_t nd = 0;
    int status = EXIT_OK;
    for (size_t i = 0; i < npaths; i++) {
        if (instr_dump_open(&dumps[nd], paths[i], err, sizeof err) < 0) {
            fprintf(stderr, "instr-report: %s\n", err);
            status = EXIT_INPUT;
            goto done_dumps;
        }
        nd++;
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
    int rc = exporters[format](out, &s, &o);
    if (rc < 0 || fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "instr-report: %s\n", rc < 0 ? instr_tool_strerror(rc) : "write error");
        status = EXIT_INPUT;
    } else if (s.nwarnings || s.repairs.bad_chunks) {
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

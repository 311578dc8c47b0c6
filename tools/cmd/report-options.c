/* report-options.c - instr-report's command line (report-options.h): the
 * option table, each option's value into struct cli, --help from the
 * format and view tables, and the warnings for options that do nothing
 * in the chosen view or format. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "columns.h"
#include "export-options.h"
#include "job.h"
#include "os-events.h"
#include "profile-cache.h"
#include "report-options.h"
#include "views.h"

#ifndef INSTR_VERSION
#define INSTR_VERSION "unknown"
#endif

/* The help words of every format of that kind, from the format table. */
static void help_list(FILE *f, enum instr_format_kind kind)
{
    for (size_t i = 0, k = 0; i < instr_nformats; i++)
        if (instr_formats[i].kind == kind)
            fprintf(f, "%s%s", k++ ? ", " : "", instr_formats[i].help);
}

static void help_export_options(FILE *f);

/* The views' help words from the view table, joined by ", ", wrapped at
 * 80 columns under column 19. */
static void help_views(FILE *f)
{
    int col = 19;
    for (size_t i = 0; i < instr_nviews; i++) {
        int len = (int)strlen(instr_views[i].help) + (i + 1 < instr_nviews);
        if (i && col + 1 + len > 80) {
            fprintf(f, "\n%19s", "");
            col = 19;
        } else if (i) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%s%s", instr_views[i].help, i + 1 < instr_nviews ? "," : "\n");
        col += len;
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: instr-report [options] [DUMP...]\n"
            "       instr-report --diff [options] A B\n"
            "Reports Elapsed/Application Inclusive/Exclusive values of an instr session;\n"
            "several dumps are several processes of one session.  An input may also be\n"
            "a profile-visualiser text file (Application values are then unavailable).\n"
            "Without DUMP: the newest *.instr file of the current directory.\n"
            "\n"
            "  --view VIEW      ");
    help_views(f);
    fprintf(f,
            "                   several, comma-separated, from one walk (text, json)\n"
            "  --depth N        calltree: show N levels (default all)\n"
            "  --threshold PCT  calltree: hide paths below PCT %% of Elapsed Inclusive\n"
            "  --sort COLUMN    %s\n"
            "                   (numbers descending, names ascending; default ei)\n"
            "  --units UNIT     ticks, ns, us, ms (default ms)\n"
            "  --format FORMAT  ",
            instr_sort_columns);
    help_list(f, INSTR_FORMAT_REPORT);
    fputs("\n"
          "  --limit N        show the first N rows (text, csv)\n"
          "  --flagged        add flagged-interval columns (text, csv)\n"
          "  -F, --columns=KEY[,KEY...]  the text table's columns, in this order;\n"
          "                   +KEY[,...] adds to the defaults (Calls, Self %, the four\n"
          "                   values, the name); all: every column (keys: ei ee ai ae ci\n"
          "                   ce ei% ee% ai% ae% ci% ce% self calls module file external\n"
          "                   wall conc probe flagged ...; a wrong key lists the view's)\n"
          "  -v, --verbose    the whole header (command, tick rate, what the detectors\n"
          "                   see, hook costs, runtime, wall and off-CPU time)\n"
          "  --not-application=PATTERN|@CATEGORY[,...]\n"
          "                   intervals with a matching function on the stack are not\n"
          "                   Application time (globs on mangled and demangled names;\n"
          "                   categories @locks @io @alloc @sleep); repeatable\n"
          "  --os-events=KIND[,KIND...]\n"
          "                   the kinds of OS activity that take an interval out of\n"
          "                   Application time: sched, syscall, fault, signal, irq,\n"
          "                   unknown, all (default), none\n"
          "  --mpi-prefixes=[+]PREFIX[,PREFIX...]\n"
          "                   a job's MPI time: frames whose names begin so (default\n"
          "                   MPI_,PMPI_; +PREFIX,... adds to them; none)\n"
          "  --wall           Wall Inclusive for the ranks of an MPI job too (not computed for\n"
          "                   them by default: uniting every rank's activations costs more\n"
          "                   than the rest of the walk)\n"
          "  --clones=fold|split\n"
          "                   GCC's clones of a function (foo.constprop.0, foo.isra.0,\n"
          "                   foo.part.0, foo.cold) shown as the function (fold, the\n"
          "                   default) or as rows of their own (split)\n"
          "  --raw            keep the hooks' own cost in the values (default: subtract the\n"
          "                   cost the runtime measured at start; --compensate)\n"
          "  --export FORMAT  ",
          f);
    help_list(f, INSTR_FORMAT_EXPORT);
    fputc('\n', f);
    help_export_options(f);
    fputs("  --diff A B       per-function change from A to B, sorted by the absolute\n"
          "                   change of --sort (ei, ee, ai, ae, calls); --threshold PCT\n"
          "                   hides changes below PCT % of A's total\n"
          "  --suggest-exclude PCT  instead of a report, an exclude list of the tiny leaf\n"
          "                   functions whose hooks cost more than PCT % of the run, for\n"
          "                   the plugin's exclude=@FILE\n"
          "  --self SAMPLEDUMP  the Self % column from instr-sample's dump of the plain\n"
          "                   (uninstrumented) build, matched by function name; also a\n"
          "                   sampling dump given beside the instrumented one\n"
          "  -o, --output FILE  write to FILE instead of standard output ('-': standard output)\n"
          "  -h, --help       this text\n"
          "  --version        the version\n"
          "  --clear-cache    remove the profiles kept of earlier reports and exit\n"
          "Options may be abbreviated (--form=json); --opt=VALUE and --opt VALUE are the same.\n"
          "\n"
          "Exit codes: 0 ok; 1 usage error; 2 input unusable (not a dump, wrong\n"
          "version, unreadable); 3 reported with warnings (truncated or incomplete\n"
          "dump, corrupt chunks salvaged, bad lines of a visualiser file skipped).\n",
          f);
}

/* ---- the exports' own options (export-options.h), from the format table ---- */

#define OPT_XOPT 1000 /* getopt's value of xopts[i]: OPT_XOPT + i */

/* Every export's options, once by name, in table order. */
static const struct instr_option *xopts[MAX_XOPTS];
static size_t nxopts;

static void collect_export_options(void)
{
    nxopts = 0;
    for (size_t f = 0; f < instr_nformats; f++) {
        const struct instr_export_options *eo = instr_formats[f].options;
        for (size_t k = 0; eo && eo->list[k]; k++) {
            size_t i = 0;
            while (i < nxopts && strcmp(xopts[i]->name, eo->list[k]->name))
                i++;
            if (i == nxopts && nxopts < MAX_XOPTS)
                xopts[nxopts++] = eo->list[k];
        }
    }
}

/* Whether format f reads the option called name. */
static int format_reads(const struct instr_format *f, const char *name)
{
    for (size_t k = 0; f->options && f->options->list[k]; k++)
        if (!strcmp(f->options->list[k]->name, name))
            return 1;
    return 0;
}

/* The exports reading the option called name, joined by sep. */
static const char *readers(const char *name, const char *sep)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = 0;
    for (size_t f = 0; f < instr_nformats && n < sizeof buf; f++)
        if (format_reads(&instr_formats[f], name))
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? sep : "", instr_formats[f].name);
    return buf;
}

/* "  --NAME ARG" then the help, at column 19: "EXPORTS: words". */
static void help_export_options(FILE *f)
{
    for (size_t i = 0; i < nxopts; i++) {
        const struct instr_option *x = xopts[i];
        int n = fprintf(f, "  --%s%s%s", x->name, x->arg ? " " : "", x->arg ? x->arg : "");
        fprintf(f, "%*s%s: ", n < 17 ? 19 - n : 2, "", readers(x->name, ", "));
        for (const char *h = x->help; *h; h++)
            if (*h == '\n')
                fprintf(f, "\n%19s", "");
            else
                fputc(*h, f);
        fputc('\n', f);
    }
}

static int pick(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arg, names[i]))
            return i;
    return -1;
}

/* ---- the command line --------------------------------------------------------- */

/* --clear-cache: the kept profiles removed (profile-cache.h).  1 (done), or
 * -1 when the directory was refused. */
/* The inputs kept for the run's length (expand_dirs). */
static char **expanded;
static size_t nexpanded;

static void free_expanded(void)
{
    for (size_t i = 0; i < nexpanded; i++)
        free(expanded[i]);
    free(expanded);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory among the inputs (a job's, docs/mpi.md) stands for its
 * *.instr files, by name.  -1: no memory, an unreadable directory or one
 * without dumps (said). */
static int expand_dirs(struct cli *c)
{
    size_t dirs = 0;
    struct stat st;
    for (size_t i = 0; i < c->npaths; i++)
        dirs += stat(c->paths[i], &st) == 0 && S_ISDIR(st.st_mode);
    if (!dirs)
        return 0;
    size_t cap = c->npaths + 16, n = 0;
    char **out = malloc(cap * sizeof *out);
    if (!out)
        return -1;
    atexit(free_expanded);
    expanded = out;
    for (size_t i = 0; i < c->npaths; i++) {
        DIR *d = stat(c->paths[i], &st) == 0 && S_ISDIR(st.st_mode) ? opendir(c->paths[i]) : NULL;
        if (!d && S_ISDIR(st.st_mode)) {
            fprintf(stderr, PROG ": %s: %s\n", c->paths[i], strerror(errno));
            return -1;
        }
        size_t from = n;
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t l = strlen(e->d_name);
            if (l <= 6 || strcmp(e->d_name + l - 6, ".instr") || e->d_name[0] == '.')
                continue;
            if (n + 1 >= cap) {
                char **g = realloc(expanded, (cap *= 2) * sizeof *g);
                if (!g) {
                    closedir(d);
                    return -1;
                }
                expanded = g;
            }
            if (asprintf(&expanded[n], "%s/%s", c->paths[i], e->d_name) < 0) {
                closedir(d);
                return -1;
            }
            nexpanded = ++n;
        }
        if (d) {
            closedir(d);
            if (n == from) {
                fprintf(stderr, PROG ": %s: a directory without *.instr dumps\n", c->paths[i]);
                return -1;
            }
            qsort(expanded + from, n - from, sizeof *expanded, by_name);
            continue;
        }
        if (n + 1 >= cap) {
            char **g = realloc(expanded, (cap *= 2) * sizeof *g);
            if (!g)
                return -1;
            expanded = g;
        }
        if (!(expanded[n] = strdup(c->paths[i])))
            return -1;
        nexpanded = ++n;
    }
    c->paths = expanded;
    c->npaths = n;
    return 0;
}

static int clear_cache(void)
{
    char why[600];
    const char *dir;
    long n = instr_profile_cache_clear(&dir, why, sizeof why);
    if (n < 0) {
        fprintf(stderr, PROG ": --clear-cache: %s: not touched\n", why);
        return -1;
    }
    if (!dir)
        printf(PROG ": the profile cache is off (INSTR_REPORT_CACHE=off, or no HOME)\n");
    else
        printf(PROG ": removed %ld profile%s from %s\n", n, n == 1 ? "" : "s", dir);
    return 1;
}


/* The report's options; the exports' options follow --export (long_table). */
static const struct option long_opts[] = {
    {"view", required_argument, NULL, OPT_VIEW},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"sort", required_argument, NULL, OPT_SORT},
    {"units", required_argument, NULL, OPT_UNITS},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"flagged", no_argument, NULL, OPT_FLAGGED},
    {"not-application", required_argument, NULL, OPT_NOT_APP},
    {"os-events", required_argument, NULL, OPT_OS_EVENTS},
    {"clones", required_argument, NULL, OPT_CLONES},
    {"wall", no_argument, NULL, OPT_WALL},
    {"mpi-prefixes", required_argument, NULL, OPT_MPI_PREFIXES},
    {"export", required_argument, NULL, OPT_EXPORT},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"raw", no_argument, NULL, OPT_RAW},
    {"compensate", no_argument, NULL, OPT_COMPENSATE},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"clear-cache", no_argument, NULL, OPT_CLEAR_CACHE},
    {"suggest-exclude", required_argument, NULL, OPT_SUGGEST_EXCLUDE},
    {"self", required_argument, NULL, OPT_SELF},
    {"columns", required_argument, NULL, OPT_COLUMNS},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {NULL, 0, NULL, 0},
};
#define NLONG (sizeof long_opts / sizeof long_opts[0])

/* getopt_long's table: long_opts with every export's options after --export. */
static struct option long_table[NLONG + MAX_XOPTS];

static void build_long_table(void)
{
    size_t n = 0;
    collect_export_options();
    for (size_t i = 0; i < NLONG; i++) {
        long_table[n++] = long_opts[i];
        if (long_opts[i].val == OPT_EXPORT)
            for (size_t k = 0; k < nxopts; k++)
                long_table[n++] = (struct option){xopts[k]->name, xopts[k]->arg ? required_argument : no_argument,
                                                  NULL, OPT_XOPT + (int)k};
    }
}

/* An option's name (without --) by getopt value. */
static const char *opt_name(int val)
{
    const struct option *lo = long_table;
    while (lo->name && lo->val != val)
        lo++;
    return lo->name ? lo->name : "?";
}


static int parse_size(const char *v, size_t *out)
{
    char *end;
    if (!*v || *v == '-')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    *out = (size_t)x;
    return *end || errno ? -1 : 0;
}

/* --view NAME or --view NAME,NAME,...: several views of one walk of the
 * dumps (text and JSON), each once, in the order given.  A view of one
 * function (callers, callees) takes it from the next word, one for the
 * list.  Returns 0, -1 after saying why, -2 for an unknown name. */
static int set_views(struct cli *c, const char *v, int argc, char **argv)
{
    size_t n = 0;
    unsigned flags = 0, dumps = ~0u;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        char name[32];
        if (len >= sizeof name)
            return -2;
        memcpy(name, p, len);
        name[len] = 0;
        const struct instr_view_def *vd = instr_view_find(name);
        if (!vd) {
            fprintf(stderr, PROG ": bad value '%.*s' for --view (one of:", (int)len, p);
            for (size_t i = 0; i < instr_nviews; i++)
                fprintf(stderr, "%s %s", i ? "," : "", instr_views[i].name);
            fprintf(stderr, ")\n");
            return -1;
        }
        enum instr_view k = (enum instr_view)(vd - instr_views);
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            dup |= c->views[i] == k;
        if (!dup && n == MAX_VIEWS) {
            fprintf(stderr, PROG ": --view: at most %d views in a list\n", MAX_VIEWS);
            return -1;
        }
        if (!dup)
            c->views[n++] = k;
        flags |= vd->flags;
        dumps &= vd->dumps;
        p += len + (p[len] == ',');
    }
    if (!n)
        return -2;
    if (n > 1 && !(dumps & INSTR_VIEW_ON_INSTRUMENTED)) {
        fprintf(stderr, PROG ": --view %s: a list takes views of instrumented dumps (functions, threads, modules, "
                        "processes, calltree, callers, callees)\n", v);
        return -1;
    }
    if (flags & INSTR_VIEW_FUNC) {
        /* The function is the next word (--view callers FUNC). */
        if (optind >= argc) {
            fprintf(stderr, PROG ": --view %s needs a function name\n", v);
            return -1;
        }
        c->o.func = argv[optind++];
        /* --view callers A,callees B: the shell gave "A,callees" as the
         * function and B as a dump.  One function serves the list. */
        const char *comma = strchr(c->o.func, ',');
        char next[32];
        size_t nl = comma ? strcspn(comma + 1, ", ") : 0;
        if (comma && nl < sizeof next) {
            memcpy(next, comma + 1, nl);
            next[nl] = 0;
            if (instr_view_find(next)) {
                fprintf(stderr, PROG ": --view %s %s: one function serves the whole list: --view %s,%s FUNC\n", v,
                        c->o.func, v, next);
                return -1;
            }
        }
    }
    c->o.view = c->views[0];
    c->o.nviews = n;
    return 0;
}

/* The flags of the views asked, together (views.h). */
static unsigned views_flags(const struct cli *c)
{
    unsigned f = 0;
    for (size_t i = 0; i < c->o.nviews; i++)
        f |= instr_views[c->views[i]].flags;
    return f;
}

/* A percentage option's value: 0 to 100 (a larger one printed a
 * 300-digit percentage).  0, or -1 after saying why. */
static int percent(const char *v, const char *name, double *out)
{
    if (instr_opt_double(v, out, 0) < 0 || *out > 100) {
        fprintf(stderr, PROG ": --%s takes a percentage from 0 to 100, not '%s'\n", name, v);
        return -1;
    }
    return 0;
}

/* One option's value into c.  Returns 0, or -1 after saying why. */
static int set_option(struct cli *c, int opt, const char *v, int argc, char **argv)
{
    int k;
    switch (opt) {
    case OPT_VIEW:
        return set_views(c, v, argc, argv);
    case OPT_DEPTH:
        return parse_size(v, &c->o.depth) < 0 ? -2 : 0;
    case OPT_THRESHOLD:
        return percent(v, "threshold", &c->o.threshold);
    case OPT_LIMIT:
        return parse_size(v, &c->o.limit) < 0 ? -2 : 0;
    case OPT_UNITS:
        if ((k = pick(v, instr_unit_names, INSTR_NUNITS)) < 0)
            break;
        c->o.units = (enum instr_units)k;
        return 0;
    case OPT_FORMAT:
    case OPT_EXPORT: {
        enum instr_format_kind kind = opt == OPT_FORMAT ? INSTR_FORMAT_REPORT : INSTR_FORMAT_EXPORT;
        const struct instr_format *f = instr_format_find(kind, v);
        if (!f) {
            fprintf(stderr, PROG ": bad value '%s' for --%s (one of: %s)\n", v,
                    opt == OPT_FORMAT ? "format" : "export", instr_format_names(kind, ", "));
            return -1;
        }
        /* --export wins over --format. */
        if (opt == OPT_EXPORT || !c->export)
            c->format = f;
        c->export |= opt == OPT_EXPORT;
        return 0;
    }
    case OPT_SORT:
        c->sort = v;
        return 0;
    case OPT_FLAGGED:
        c->o.flagged = 1;
        return 0;
    case OPT_DIFF:
        c->diff = 1;
        return 0;
    case OPT_RAW:
    case OPT_COMPENSATE:
        c->raw = opt == OPT_RAW; /* the last one given wins */
        return 0;
    case OPT_NOT_APP: {
        char xerr[200];
        if (instr_exclusions_add(&c->excl, v, xerr, sizeof xerr) < 0) {
            fprintf(stderr, PROG ": --not-application: %s\n", xerr);
            return -1;
        }
        return 0;
    }
    case OPT_OS_EVENTS: {
        char xerr[200];
        if (instr_os_events_parse(v, &c->excl.os_ignored, xerr, sizeof xerr) < 0) {
            fprintf(stderr, PROG ": --os-events: %s\n", xerr);
            return -1;
        }
        return 0;
    }
    case OPT_MPI_PREFIXES: {
        char xerr[200];
        free(c->excl.mpi_prefixes);
        c->excl.mpi_prefixes = NULL;
        int rc = instr_mpi_prefixes_parse(v, &c->excl.mpi_prefixes, xerr, sizeof xerr);
        if (rc < 0) {
            fprintf(stderr, PROG ": --mpi-prefixes: %s\n", rc == -1 ? xerr : instr_tool_strerror(rc));
            return -1;
        }
        return 0;
    }
    case OPT_CLONES: {
        static const char *const kinds[] = {"fold", "split"};
        int k = pick(v, kinds, 2);
        if (k < 0) {
            fprintf(stderr, PROG ": --clones: '%s': fold (the default) or split\n", v);
            return -1;
        }
        c->excl.clones_split = k;
        return 0;
    }
    case 'o':
        c->outpath = strcmp(v, "-") ? v : NULL;
        return 0;
    case OPT_SUGGEST_EXCLUDE:
        return percent(v, "suggest-exclude", &c->suggest_pct);
    case OPT_SELF:
        c->self = v;
        return 0;
    case OPT_COLUMNS:
        c->o.columns = v; /* checked against the view once all options are read */
        return 0;
    case OPT_VERBOSE:
        c->o.verbose = 1;
        return 0;
    case OPT_WALL:
        c->excl.job_wall = 1;
        return 0;
    }
    if (opt >= OPT_XOPT && opt < OPT_XOPT + (int)nxopts) {
        /* Into the options of every export that reads it. */
        const char *name = xopts[opt - OPT_XOPT]->name;
        c->xgiven[opt - OPT_XOPT] = 1;
        for (size_t f = 0; f < instr_nformats; f++) {
            const struct instr_export_options *eo = instr_formats[f].options;
            for (size_t k = 0; eo && eo->list[k]; k++)
                if (!strcmp(eo->list[k]->name, name) && eo->list[k]->parse(c->xo[f], v) < 0) {
                    /* The first line of its help says what it takes. */
                    const char *h = eo->list[k]->help;
                    fprintf(stderr, PROG ": bad value '%s' for --%s %s: %.*s\n", v, name,
                            eo->list[k]->arg ? eo->list[k]->arg : "", (int)strcspn(h, "\n"), h);
                    return -1;
                }
        }
        return 0;
    }
    return -2;
}

/* The newest *.instr regular file of the current directory (as perf
 * report takes perf.data), or NULL.  Equal times: the greater name. */
static char *newest_dump(void)
{
    DIR *dir = opendir(".");
    if (!dir)
        return NULL;
    char *best = NULL;
    struct timespec bt = {0, 0};
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t l = strlen(e->d_name);
        struct stat st;
        if (l <= 6 || strcmp(e->d_name + l - 6, ".instr") || stat(e->d_name, &st) || !S_ISREG(st.st_mode))
            continue;
        if (best && (st.st_mtim.tv_sec < bt.tv_sec ||
                     (st.st_mtim.tv_sec == bt.tv_sec && (st.st_mtim.tv_nsec < bt.tv_nsec ||
                                                         (st.st_mtim.tv_nsec == bt.tv_nsec &&
                                                          strcmp(e->d_name, best) < 0)))))
            continue;
        char *n = strdup(e->d_name);
        if (!n)
            continue;
        free(best);
        best = n;
        bt = st.st_mtim;
    }
    closedir(dir);
    return best;
}

/* The terminal's width when the text report goes to one (names are cut
 * and the header wrapped to fit), else 0: a file or pipe gets whole lines. */
static unsigned terminal_width(const struct cli *c)
{
    struct winsize ws;
    if (c->outpath || !isatty(STDOUT_FILENO))
        return 0;
    if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
        return ws.ws_col;
    const char *e = getenv("COLUMNS");
    long n = e ? strtol(e, NULL, 10) : 0;
    return n > 0 && n < 10000 ? (unsigned)n : 80;
}

int report_parse_args(struct cli *c, int argc, char **argv)
{
    c->views[0] = INSTR_VIEW_FUNCTIONS;
    c->o = (struct instr_report_opts){.units = INSTR_UNITS_MS, .view = INSTR_VIEW_FUNCTIONS, .views = c->views,
                                      .nviews = 1};
    build_long_table();
    for (size_t f = 0; f < instr_nformats && f < sizeof c->xo / sizeof c->xo[0]; f++) {
        const struct instr_export_options *eo = instr_formats[f].options;
        if (eo && !(c->xo[f] = malloc(eo->size))) {
            fprintf(stderr, PROG ": out of memory\n");
            return -1;
        }
        if (eo)
            memcpy(c->xo[f], eo->defaults, eo->size);
    }
    c->format = instr_format_find(INSTR_FORMAT_REPORT, "text");
    c->sort = "ei";
    /* getopt's own messages (unrecognized, ambiguous, missing value) start
     * with argv[0]: the program's name rather than its path. */
    argv[0] = (char *)PROG;
    opterr = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "ho:F:v", long_table, NULL)) != -1) {
        if (opt == '?') {
            fprintf(stderr, PROG ": try '" PROG " --help' for more information\n");
            return -1;
        }
        if (opt == 'h') {
            usage(stdout);
            return 1;
        }
        if (opt == OPT_VERSION) {
            printf(PROG " (instr) %s\n", INSTR_VERSION);
            return 1;
        }
        if (opt == OPT_CLEAR_CACHE)
            return clear_cache();
        if (opt == 'F')
            opt = OPT_COLUMNS;
        else if (opt == 'v')
            opt = OPT_VERBOSE;
        if (opt >= OPT_VIEW && opt < OPT_XOPT)
            c->given |= GIVEN(opt);
        int rc = set_option(c, opt, optarg, argc, argv);
        if (rc == -2)
            fprintf(stderr, PROG ": bad value '%s' for --%s\n", optarg, opt_name(opt));
        if (rc < 0)
            return -1;
    }
    c->paths = argv + optind;
    c->npaths = (size_t)(argc - optind);
    if (!c->diff && expand_dirs(c) < 0)
        return -1;
    static char *newest[1];
    if (!c->npaths && !c->diff && (newest[0] = newest_dump())) {
        fprintf(stderr, PROG ": reading %s (the newest *.instr dump here)\n", newest[0]);
        c->paths = newest;
        c->npaths = 1;
    }
    if (!c->npaths) {
        fprintf(stderr, PROG ": no input (a dump, or a profile-visualiser file) and no *.instr dump here; try '" PROG
                        " --help'\n");
        return -1;
    }
    if (c->diff && c->npaths != 2) {
        fprintf(stderr, PROG ": --diff takes two inputs, A and B\n");
        return -1;
    }
    if (c->diff && c->export) {
        fprintf(stderr, PROG ": --diff and --export do not go together\n");
        return -1;
    }
    if (c->export && c->format->not_for_terminal && !c->outpath && isatty(STDOUT_FILENO)) {
        fprintf(stderr, PROG ": --export %s is not for a terminal: give -o FILE, or redirect standard output\n",
                c->format->name);
        return -1;
    }
    if (c->o.nviews > 1 && !c->diff && !c->export && strcmp(c->format->name, "text") &&
        strcmp(c->format->name, "json")) {
        fprintf(stderr, PROG ": --format %s writes one view; a list of views is for text or json\n",
                c->format->name);
        return -1;
    }
    for (size_t i = 0; c->o.columns && i < c->o.nviews; i++) {
        enum instr_view k = c->views[i];
        char why[600];
        if ((instr_views[k].flags & INSTR_VIEW_ROWS) &&
            instr_columns_pick(c->o.columns, k, NULL, NULL, NULL, 0, why, sizeof why) < 0) {
            fprintf(stderr, PROG ": --columns: %s\n", why);
            return -1;
        }
    }
    c->o.width = terminal_width(c);
    for (size_t i = 0; i < nxopts; i++)
        if (c->xgiven[i] && (xopts[i]->flags & INSTR_OPT_NEEDS_FILE) &&
            (!c->export || !format_reads(c->format, xopts[i]->name) || !c->outpath)) {
            fprintf(stderr, PROG ": --%s is for --export %s with -o FILE\n", xopts[i]->name,
                    readers(xopts[i]->name, " or "));
            return -1;
        }
    return 0;
}

void report_warn_unused(const struct cli *c)
{
    const unsigned vf = views_flags(c);
    const int table = !c->diff && !c->export && (vf & INSTR_VIEW_ROWS);
    const int json = !c->export && !strcmp(c->format->name, "json");
    struct {
        int opt, unused;
        const char *why;
    } checks[] = {
        {OPT_DEPTH, c->diff || c->export || !(vf & INSTR_VIEW_DEPTH), "without --view calltree"},
        {OPT_THRESHOLD, !c->diff && (c->export || !(vf & INSTR_VIEW_DEPTH)), "without --view calltree or --diff"},
        {OPT_VIEW, c->diff || c->export, c->diff ? "with --diff" : "with --export"},
        {OPT_LIMIT, (!table || json) && !((vf & INSTR_VIEW_LIMIT) && !c->diff && !c->export),
         "here (it limits the rows of a text or CSV table view, or the functions of --view lines)"},
        {OPT_FLAGGED, !table || json, "here (it adds columns to a text or CSV table view)"},
        {OPT_COLUMNS, !table || strcmp(c->format->name, "text"), "here (it picks the columns of a text table view)"},
        {OPT_VERBOSE, c->diff || c->export || strcmp(c->format->name, "text"), "here (it shows the text report's "
                                                                               "whole header)"},
        {OPT_FORMAT, c->export, "with --export"},
    };
    /* --units: read by the report formats; folded writes ticks or ns;
     * the other exports' units are fixed by their formats. */
    const unsigned uses = c->format->uses;
    if ((c->given & GIVEN(OPT_UNITS)) && !(uses & INSTR_USES_UNITS) &&
        !((uses & INSTR_USES_TICKS) && c->o.units == INSTR_UNITS_TICKS))
        fprintf(stderr, PROG ": warning: --units %s does nothing with --export %s (%s)\n",
                instr_unit_names[c->o.units], c->format->name,
                uses & INSTR_USES_TICKS ? "it writes ns, or ticks with --units ticks" : "the format fixes its unit");
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (!(c->given & GIVEN(checks[i].opt)) || !checks[i].unused)
            continue;
        fprintf(stderr, PROG ": warning: --%s does nothing %s\n", opt_name(checks[i].opt), checks[i].why);
    }
    /* The exports' options, read by the exports that list them. */
    for (size_t i = 0; i < nxopts; i++)
        if (c->xgiven[i] && (c->diff || !c->export || !format_reads(c->format, xopts[i]->name)))
            fprintf(stderr, PROG ": warning: --%s does nothing without --export %s\n", xopts[i]->name,
                    readers(xopts[i]->name, " or "));
}

void report_warn_count(const struct cli *c)
{
    /* A count dump has calls and edges only, ordered by calls. */
    static const int timed[] = {OPT_SORT, OPT_UNITS, OPT_RAW, OPT_COMPENSATE, OPT_FLAGGED,
                                OPT_COLUMNS, OPT_NOT_APP, OPT_OS_EVENTS, OPT_MPI_PREFIXES, OPT_WALL};
    for (size_t i = 0; i < sizeof timed / sizeof *timed; i++)
        if ((c->given & GIVEN(timed[i])) && !(timed[i] == OPT_SORT && c->sort && !strcmp(c->sort, "calls")))
            fprintf(stderr, PROG ": warning: --%s does nothing with a count-mode dump (calls only, no time: "
                            "its rows are in order of calls)\n",
                    opt_name(timed[i]));
    /* An export's own options choose among times or timelines. */
    for (size_t i = 0; i < nxopts; i++)
        if (c->xgiven[i])
            fprintf(stderr, PROG ": warning: --%s does nothing with a count-mode dump (calls only, no time)\n",
                    xopts[i]->name);
}

int report_parts_asked(const struct cli *c)
{
    for (size_t i = 0; i < nxopts; i++)
        if (c->xgiven[i] && (xopts[i]->flags & INSTR_OPT_NEEDS_FILE))
            return 1;
    return 0;
}

void report_free_cli(struct cli *c)
{
    instr_exclusions_free(&c->excl);
    for (size_t f = 0; f < sizeof c->xo / sizeof c->xo[0]; f++)
        free(c->xo[f]);
}

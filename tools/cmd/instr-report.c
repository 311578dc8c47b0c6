/* instr-report - the four values of data-values.md for one or more dumps.
 * A thin main: options (GNU getopt_long) into a struct, then open the
 * inputs -> build the session -> one writer of the format table. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "columns.h"
#include "count-report.h"
#include "dump-reader.h"
#include "exclusions.h"
#include "os-events.h"
#include "formats.h"
#include "import-visualiser.h"
#include "progress.h"
#include "report.h"
#include "self-pct.h"
#include "hybrid-cli.h"
#include "sample-cli.h"
#include "sample-report.h"
#include "suggest-exclude.h"
#include "views.h"

#ifndef INSTR_VERSION
#define INSTR_VERSION "unknown"
#endif

#define PROG "instr-report"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WARNED = 3 };

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
          "Options may be abbreviated (--form=json); --opt=VALUE and --opt VALUE are the same.\n"
          "\n"
          "Exit codes: 0 ok; 1 usage error; 2 input unusable (not a dump, wrong\n"
          "version, unreadable); 3 reported with warnings (truncated or incomplete\n"
          "dump, corrupt chunks salvaged, bad lines of a visualiser file skipped).\n",
          f);
}

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

/* ---- the exports' own options (export-options.h), from the format table ---- */

#define MAX_XOPTS 64
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


static int pick(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arg, names[i]))
            return i;
    return -1;
}

/* ---- the command line --------------------------------------------------------- */

enum opt {
    OPT_VIEW = 256, OPT_DEPTH, OPT_THRESHOLD, OPT_SORT, OPT_UNITS, OPT_FORMAT, OPT_LIMIT, OPT_FLAGGED,
    OPT_NOT_APP, OPT_EXPORT, OPT_DIFF, OPT_VERSION,
    OPT_OS_EVENTS,
    OPT_RAW, OPT_COMPENSATE,
    OPT_SUGGEST_EXCLUDE,
    OPT_SELF,
    OPT_COLUMNS, OPT_VERBOSE,
};
#define GIVEN(o) (1u << ((o) - OPT_VIEW))

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
    {"export", required_argument, NULL, OPT_EXPORT},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"raw", no_argument, NULL, OPT_RAW},
    {"compensate", no_argument, NULL, OPT_COMPENSATE},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
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

/* What the command line asks for. */
struct cli {
    struct instr_report_opts o;
    const struct instr_format *format; /* --format, or --export when export is set */
    int export;                        /* --export given */
    int diff;                          /* --diff A B */
    const char *sort;                  /* --sort, default ei */
    const char *outpath;               /* -o; NULL: standard output */
    struct instr_exclusions excl;      /* --not-application */
    int raw;                           /* --raw: the hook costs stay in the values (compensate.h) */
    unsigned given;                    /* GIVEN(OPT_*) of the options given */
    unsigned char xgiven[MAX_XOPTS];   /* xopts[i] given */
    void *xo[32];                      /* per row of the format table: its export's options, or NULL */
    double suggest_pct;                /* --suggest-exclude=PCT (with GIVEN(OPT_SUGGEST_EXCLUDE)) */
    const char *self;                  /* --self=SAMPLEDUMP: Self % from it (self-pct.h) */
    int self_shown;                    /* the report had a Self % source */
    char **paths;                      /* the inputs */
    size_t npaths;
};

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

/* One option's value into c.  Returns 0, or -1 after saying why. */
static int set_option(struct cli *c, int opt, const char *v, int argc, char **argv)
{
    int k;
    switch (opt) {
    case OPT_VIEW: {
        const struct instr_view_def *vd = instr_view_find(v);
        if (!vd)
            break;
        c->o.view = (enum instr_view)(vd - instr_views);
        if (vd->flags & INSTR_VIEW_FUNC) {
            /* The function is the next word (--view callers FUNC). */
            if (optind >= argc) {
                fprintf(stderr, PROG ": --view %s needs a function name\n", v);
                return -1;
            }
            c->o.func = argv[optind++];
        }
        return 0;
    }
    case OPT_DEPTH:
        return parse_size(v, &c->o.depth) < 0 ? -2 : 0;
    case OPT_THRESHOLD:
        return instr_opt_double(v, &c->o.threshold, 0) < 0 ? -2 : 0;
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
    case 'o':
        c->outpath = strcmp(v, "-") ? v : NULL;
        return 0;
    case OPT_SUGGEST_EXCLUDE:
        return instr_opt_double(v, &c->suggest_pct, 0) < 0 ? -2 : 0;
    case OPT_SELF:
        c->self = v;
        return 0;
    case OPT_COLUMNS:
        c->o.columns = v; /* checked against the view once all options are read */
        return 0;
    case OPT_VERBOSE:
        c->o.verbose = 1;
        return 0;
    }
    if (opt >= OPT_XOPT && opt < OPT_XOPT + (int)nxopts) {
        /* Into the options of every export that reads it. */
        const char *name = xopts[opt - OPT_XOPT]->name;
        c->xgiven[opt - OPT_XOPT] = 1;
        for (size_t f = 0; f < instr_nformats; f++) {
            const struct instr_export_options *eo = instr_formats[f].options;
            for (size_t k = 0; eo && eo->list[k]; k++)
                if (!strcmp(eo->list[k]->name, name) && eo->list[k]->parse(c->xo[f], v) < 0)
                    return -2;
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

/* Fills c from argv.  Returns 0 to go on, 1 when done (--help, --version),
 * -1 on a usage error (said on stderr). */
static int parse_args(struct cli *c, int argc, char **argv)
{
    c->o = (struct instr_report_opts){.units = INSTR_UNITS_MS, .view = INSTR_VIEW_FUNCTIONS};
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
    if (c->o.columns && (instr_views[c->o.view].flags & INSTR_VIEW_ROWS)) {
        char why[600];
        if (instr_columns_pick(c->o.columns, c->o.view, NULL, NULL, NULL, 0, why, sizeof why) < 0) {
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

/* Options given that the chosen view or format does not read: a warning
 * each (the report is still written). */
static void warn_unused(const struct cli *c)
{
    const unsigned vf = instr_views[c->o.view].flags;
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
    FILE *out = outpath ? fopen(outpath, "w") : stdout;
    if (!out)
        fprintf(stderr, PROG ": %s: %s\n", outpath, strerror(errno));
    return out;
}

/* Closes out; returns status, or EXIT_INPUT after a write error. */
static int close_output(FILE *out, int status, int rc)
{
    if (rc < 0 || fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, PROG ": %s\n", rc < 0 ? instr_tool_strerror(rc) : "write error");
        status = EXIT_INPUT;
    }
    if (out != stdout)
        fclose(out);
    return status;
}

/* --diff: a session for each input, then the table. */
static int run_diff(const struct cli *c, const struct instr_dump *dumps)
{
    char err[600];
    struct instr_session s[2];
    const struct instr_exclusions *x = c->excl.n || c->excl.os_ignored ? &c->excl : NULL;
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

/* Whether an option writing parts of -o FILE (--split-size) was given. */
static int parts_asked(const struct cli *c)
{
    for (size_t i = 0; i < nxopts; i++)
        if (c->xgiven[i] && (xopts[i]->flags & INSTR_OPT_NEEDS_FILE))
            return 1;
    return 0;
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
    const struct instr_exclusions *x = c->excl.n || c->excl.os_ignored ? &c->excl : NULL;
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
    if (strcmp(c->format->name, "chrome") || parts_asked(c) || fflush(out) || fstat(fileno(out), &st) ||
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
    if (c->diff) {
        *status = instr_sample_diff_cli(&dumps[0], &dumps[1], fmt, c->sort, c->o.threshold, c->outpath);
    } else {
        *status = instr_sample_cli(dumps, nd, instr_views[c->o.view].name, fmt, c->sort, c->o.limit, c->o.threshold, c->export ? c->format->name : NULL, c->outpath, c->o.func, c->o.depth);
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
    FILE *out = c->outpath && strcmp(c->outpath, "-") ? fopen(c->outpath, "w") : stdout;
    if (!out) {
        fprintf(stderr, PROG ": %s: %s\n", c->outpath, strerror(errno));
        *status = EXIT_INPUT;
        return 1;
    }
    int rc = c->export || c->diff || strcmp(c->format->name, "text")
                 ? (why = "a count-mode dump is reported as text (no --export, --diff, csv or json)", INSTR_EARG)
                 : instr_count_report(dumps, nd, instr_views[c->o.view].name, c->o.func, c->o.limit, out, &why);
    if (out != stdout && fclose(out))
        rc = INSTR_EIO;
    else if (out == stdout && fflush(out))
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
    size_t instrumented = 0;
    for (size_t i = 0; i < *nd; i++)
        instrumented += !instr_dump_is_sampled(&dumps[i]) && !instr_dump_is_counted(&dumps[i]);
    const int table = !c->diff && !c->export && c->o.view != INSTR_VIEW_SAMPLES && c->o.view != INSTR_VIEW_LINES;
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

static void free_cli(struct cli *c)
{
    instr_exclusions_free(&c->excl);
    for (size_t f = 0; f < sizeof c->xo / sizeof c->xo[0]; f++)
        free(c->xo[f]);
}

int main(int argc, char **argv)
{
    struct cli c = {0};
    int pr = parse_args(&c, argc, argv);
    if (pr != 0) {
        free_cli(&c);
        return pr > 0 ? EXIT_OK : EXIT_USAGE;
    }
    warn_unused(&c);

    struct instr_dump *dumps = calloc(c.npaths, sizeof *dumps), *self = calloc(c.npaths + 1, sizeof *self);
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
                status = EXIT_INPUT;
            } else if ((c.self_shown = s.self.source != NULL), instr_session_sort(&s, c.sort) < 0) {
                fprintf(stderr, PROG ": unknown sort column '%s' (one of: %s)\n", c.sort, instr_sort_columns);
                status = EXIT_USAGE;
                if (walked)
                    close_output(walked, status, 0);
            } else {
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
    free_cli(&c);
    return status;
}

/* sample-lines.c - --view lines of a sampling report: samples per source
 * line of the top functions (see sample-report.h).
 *
 * The samples are walked again; each frame whose function is one of the
 * top rows is turned into (file, line) with the DWARF line table of its
 * module file or debug file (read/line-table.c).  Per function and line:
 * inclusive samples (the line is on the stack, once per sample) and
 * exclusive samples (the sampled PC is on it).  A frame of
 * a caller holds a return address: its line is that of the byte before.
 */
#include "sample-report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "line-table.h"
#include "sample-reader.h"
#include "sample-symbols.h"

/* One (function, file, line) row. */
struct lrow {
    uint32_t fn; /* index into the top functions */
    const char *file;
    int line;
    uint64_t incl, excl, stamp;
};

struct lctx {
    struct instr_line_tables *lines;
    struct lrow *rows;
    size_t nrows, cap;
    char **files; /* interned file names */
    size_t nfiles;
};

static const char *intern(struct lctx *c, const char *s)
{
    for (size_t i = 0; i < c->nfiles; i++)
        if (!strcmp(c->files[i], s))
            return c->files[i];
    char **a = realloc(c->files, (c->nfiles + 1) * sizeof *a);
    if (!a)
        return NULL;
    c->files = a;
    if (!(a[c->nfiles] = strdup(s)))
        return NULL;
    return a[c->nfiles++];
}

/* (file, line) of vaddr in module path, the file by its base name:
 * 0 found, 1 none, INSTR_ENOMEM. */
static int line_of(struct lctx *c, const char *path, uint64_t vaddr, const char **file, int *line)
{
    const char *src;
    int rc = instr_line_find(c->lines, path, vaddr, &src, line);
    if (rc)
        return rc;
    const char *slash = strrchr(src, '/');
    if (!(*file = intern(c, slash ? slash + 1 : src)))
        return INSTR_ENOMEM;
    return 0;
}

static struct lrow *lrow_of(struct lctx *c, uint32_t fn, const char *file, int line)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].fn == fn && c->rows[i].line == line && c->rows[i].file == file)
            return &c->rows[i];
    if (c->nrows == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        struct lrow *a = realloc(c->rows, nc * sizeof *a);
        if (!a)
            return NULL;
        c->rows = a;
        c->cap = nc;
    }
    struct lrow *r = &c->rows[c->nrows++];
    *r = (struct lrow){fn, file, line, 0, 0, 0};
    return r;
}

static int by_fn_line(const void *a, const void *b)
{
    const struct lrow *x = a, *y = b;
    if (x->fn != y->fn)
        return x->fn < y->fn ? -1 : 1;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    int k = strcmp(x->file ? x->file : "", y->file ? y->file : "");
    return k ? k : (x->line > y->line) - (x->line < y->line);
}

static int collect(struct lctx *c, const struct instr_sprofile *p, const struct instr_dump *dumps, size_t nd,
                   size_t ntop)
{
    struct instr_symbolizer *sy;
    int rc = instr_symbolizer_new(&sy);
    if (rc < 0)
        return rc;
    struct instr_sample_iter *it = malloc(sizeof *it);
    if (!it) {
        instr_symbolizer_free(sy);
        return INSTR_ENOMEM;
    }
    const struct instr_srow *top = p->rows[INSTR_SVIEW_FUNCTIONS];
    uint64_t stamp = 0;
    for (size_t di = 0; di < nd && rc == 0; di++)
        for (size_t ti = 0; ti < dumps[di].nthreads && rc == 0; ti++) {
            struct instr_sample s;
            instr_sample_iter_init(it, &dumps[di].threads[ti]);
            while (rc == 0 && instr_sample_iter_next(it, &s) > 0) {
                if (s.kind != INSTR_SAMPLE_STACK)
                    continue;
                stamp++;
                for (size_t k = 0; k < s.nframes; k++) {
                    uint64_t a = k ? s.frames[k] - 1 : s.frames[k];
                    struct instr_frame_sym fs;
                    if ((rc = instr_symbolize(sy, &dumps[di], a, s.tick, &fs)) < 0)
                        break;
                    if (!fs.module || !fs.name)
                        continue;
                    size_t f = 0;
                    while (f < ntop && (strcmp(top[f].name, fs.name) || strcmp(top[f].module, fs.module)))
                        f++;
                    if (f == ntop)
                        continue;
                    const char *file = NULL;
                    int line = 0;
                    if ((rc = line_of(c, fs.module, fs.vaddr, &file, &line)) < 0)
                        break;
                    rc = 0;
                    struct lrow *r = lrow_of(c, (uint32_t)f, file, line);
                    if (!r) {
                        rc = INSTR_ENOMEM;
                        break;
                    }
                    if (r->stamp != stamp) {
                        r->stamp = stamp;
                        r->incl += s.weight;
                    }
                    if (k == 0)
                        r->excl += s.weight;
                }
            }
            for (size_t ch = 0; ch < dumps[di].threads[ti].nschunks; ch++)
                instr_dump_chunk_done(&dumps[di], &dumps[di].threads[ti].schunks[ch]);
        }
    free(it);
    instr_symbolizer_free(sy);
    return rc;
}

static void lctx_free(struct lctx *c)
{
    instr_line_tables_free(c->lines);
    for (size_t i = 0; i < c->nfiles; i++)
        free(c->files[i]);
    free(c->files);
    free(c->rows);
}

int instr_sreport_lines(FILE *out, const struct instr_sprofile *p, const struct instr_dump *dumps, size_t nd,
                        const struct instr_sreport_opts *o)
{
    size_t ntop = p->nrows[INSTR_SVIEW_FUNCTIONS];
    size_t want = o->limit ? o->limit : 10;
    if (ntop > want)
        ntop = want;
    struct lctx c = {0};
    int rc = instr_line_tables_new(&c.lines);
    if (rc == 0)
        rc = collect(&c, p, dumps, nd, ntop);
    if (rc < 0) {
        lctx_free(&c);
        return rc;
    }
    if (c.nrows > 1)
        qsort(c.rows, c.nrows, sizeof *c.rows, by_fn_line);
    const struct instr_srow *top = p->rows[INSTR_SVIEW_FUNCTIONS];
    double tot = p->total ? (double)p->total : 1;
    struct instr_json j;
    if (o->format == 2) {
        instr_json_init(&j, out);
        instr_json_open(&j, NULL, '{', INSTR_JSON_LINES);
        instr_json_key_u64(&j, "samples", p->total);
        instr_json_open(&j, "lines", '[', INSTR_JSON_LINES);
    } else if (o->format == 1) {
        fputs("function,module,file,line,inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct\n", out);
    } else {
        fprintf(out, "Samples per source line of the top %zu function%s (%" PRIu64 " samples in all)\n", ntop,
                ntop == 1 ? "" : "s", p->total);
    }
    size_t i = 0;
    for (uint32_t f = 0; f < ntop; f++) {
        if (o->format == 0) {
            fprintf(out, "\n%s  (%s)  Inclusive %" PRIu64 " (%.2f%%)  Exclusive %" PRIu64 " (%.2f%%)\n", top[f].name,
                    top[f].module, top[f].incl, 100.0 * top[f].incl / tot, top[f].excl, 100.0 * top[f].excl / tot);
            fprintf(out, "  %-32s %9s %9s %11s %11s\n", "Line", "Incl", "Excl", "Inclusive %", "Exclusive %");
        }
        size_t first = i;
        for (; i < c.nrows && c.rows[i].fn == f; i++) {
            const struct lrow *r = &c.rows[i];
            double ip = 100.0 * r->incl / tot, ep = 100.0 * r->excl / tot;
            if (o->format == 2) {
                instr_json_open(&j, NULL, '{', INSTR_JSON_INLINE);
                instr_json_key_str(&j, "function", top[f].name);
                instr_json_key_str(&j, "module", top[f].module);
                if (r->file) {
                    instr_json_key_str(&j, "file", r->file);
                    instr_json_key_u64(&j, "line", (uint64_t)r->line);
                } else {
                    instr_json_key_null(&j, "file");
                    instr_json_key_null(&j, "line");
                }
                instr_json_key_u64(&j, "inclusive_samples", r->incl);
                instr_json_key_u64(&j, "exclusive_samples", r->excl);
                instr_json_key_num(&j, "inclusive_pct", "%.4f", ip);
                instr_json_key_num(&j, "exclusive_pct", "%.4f", ep);
                instr_json_close(&j);
            } else if (o->format == 1) {
                instr_csv_field(out, top[f].name);
                fputc(',', out);
                instr_csv_field(out, top[f].module);
                fputc(',', out);
                instr_csv_field(out, r->file ? r->file : "");
                fprintf(out, ",%d,%" PRIu64 ",%" PRIu64 ",%.4f,%.4f\n", r->line, r->incl, r->excl, ip, ep);
            } else {
                char where[600];
                if (r->file)
                    snprintf(where, sizeof where, "%s:%d", r->file, r->line);
                else
                    snprintf(where, sizeof where, "(no line information)");
                fprintf(out, "  %-32s %9" PRIu64 " %9" PRIu64 " %10.2f%% %10.2f%%\n", where, r->incl, r->excl, ip,
                        ep);
            }
        }
        if (o->format == 0 && i == first)
            fputs("  (no samples)\n", out);
    }
    if (o->format == 2) {
        instr_json_close(&j);
        instr_json_close(&j);
        fputc('\n', out);
    }
    lctx_free(&c);
    return 0;
}

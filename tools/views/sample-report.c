/* sample-report.c - sample aggregation and its text, CSV and JSON tables
 * (see sample-report.h). */
#define _GNU_SOURCE /* qsort_r */
#include "sample-report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "report.h" /* instr_basename */
#include "emit.h"

#include "line-table.h"
#include "sample-reader.h"
#include "sample-symbols.h"

struct scache {
    uint64_t key;  /* dump index << 56 ^ address, + 1 (0 = empty) */
    uint32_t fn;   /* function row */
    uint32_t mod;  /* module row */
    uint32_t loc;  /* location (INSTR_SPROFILE_LINES) */
};

struct sname {
    uint64_t hash; /* 0 = empty */
    uint32_t view, row;
};

int instr_dump_is_sampled(const struct instr_dump *d)
{
    return (d->hdr.flags & INSTR_DUMP_SAMPLED) != 0;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

/* Room in an open-addressing table of used entries for one more (at
 * most half full): 0, or -1 when out of memory. */
static int names_room(struct sname **tab, size_t *mask, size_t used)
{
    if ((used + 1) * 2 <= *mask + 1)
        return 0;
    size_t n = *tab ? (*mask + 1) * 2 : 1024;
    struct sname *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; *tab && i <= *mask; i++) {
        if (!(*tab)[i].hash)
            continue;
        size_t k = (*tab)[i].hash & (n - 1);
        while (t[k].hash)
            k = (k + 1) & (n - 1);
        t[k] = (*tab)[i];
    }
    free(*tab);
    *tab = t;
    *mask = n - 1;
    return 0;
}

/* The row of (view, module, name), created if new; -1 when out of memory. */
static long row_of(struct instr_sprofile *p, enum instr_sview v, const char *module, const char *name)
{
    uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull ^ v, module ? module : ""), name) | 1;
    if (names_room(&p->names, &p->names_mask, p->names_used))
        return -1;
    size_t k = h & p->names_mask;
    for (; p->names[k].hash; k = (k + 1) & p->names_mask) {
        struct sname *e = &p->names[k];
        if (e->hash != h || e->view != v)
            continue;
        struct instr_srow *r = &p->rows[v][e->row];
        if (!strcmp(r->name, name) && !strcmp(r->module ? r->module : "", module ? module : ""))
            return e->row;
    }
    struct instr_srow *a = instr_grow(p->rows[v], &p->caprows[v], p->nrows[v] + 1, sizeof *a, 64);
    if (!a)
        return -1;
    p->rows[v] = a;
    struct instr_srow *r = &p->rows[v][p->nrows[v]];
    memset(r, 0, sizeof *r);
    if (!(r->name = strdup(name)))
        return -1;
    r->module = module ? module : "";
    p->names[k] = (struct sname){h, v, (uint32_t)p->nrows[v]};
    p->names_used++;
    return (long)p->nrows[v]++;
}

/* The location (fn, file, line), added if new; -1 when out of memory. */
static long loc_of(struct instr_sprofile *p, uint32_t fn, const char *file, int line)
{
    uint64_t h = hash_str((0xcbf29ce484222325ull ^ fn) * 0x100000001b3ull ^ (uint64_t)line, file ? file : "") | 1;
    if (names_room(&p->loc_table, &p->loc_mask, p->nlocs))
        return -1;
    size_t k = h & p->loc_mask;
    for (; p->loc_table[k].hash; k = (k + 1) & p->loc_mask) {
        const struct instr_sloc *l = &p->locs[p->loc_table[k].row];
        if (p->loc_table[k].hash == h && l->fn == fn && l->line == line &&
            !strcmp(l->file ? l->file : "", file ? file : ""))
            return p->loc_table[k].row;
    }
    struct instr_sloc *a = instr_grow(p->locs, &p->caplocs, p->nlocs + 1, sizeof *a, 256);
    if (!a)
        return -1;
    p->locs = a;
    p->locs[p->nlocs] = (struct instr_sloc){fn, file ? line : 0, file};
    p->loc_table[k] = (struct sname){h, 0, (uint32_t)p->nlocs};
    return (long)p->nlocs++;
}

/* Function and module rows of an address, cached per (dump, address). */
static int frame_rows(struct instr_sprofile *p, struct instr_symbolizer *sy, const struct instr_dump *d, size_t di,
                      uint64_t addr, uint64_t tick, uint32_t *fn, uint32_t *mod, uint32_t *loc)
{
    uint64_t key = ((uint64_t)di << 56 ^ addr) + 1;
    if ((p->cache_used + 1) * 2 > p->cache_mask + 1) {
        size_t n = p->cache ? (p->cache_mask + 1) * 2 : 4096;
        struct scache *t = calloc(n, sizeof *t);
        if (!t)
            return INSTR_ENOMEM;
        for (size_t i = 0; p->cache && i <= p->cache_mask; i++) {
            if (!p->cache[i].key)
                continue;
            size_t k = (p->cache[i].key * 0x9e3779b97f4a7c15ull >> 20) & (n - 1);
            while (t[k].key)
                k = (k + 1) & (n - 1);
            t[k] = p->cache[i];
        }
        free(p->cache);
        p->cache = t;
        p->cache_mask = n - 1;
    }
    size_t k = (key * 0x9e3779b97f4a7c15ull >> 20) & p->cache_mask;
    for (; p->cache[k].key; k = (k + 1) & p->cache_mask)
        if (p->cache[k].key == key) {
            *fn = p->cache[k].fn;
            *mod = p->cache[k].mod;
            *loc = p->cache[k].loc;
            return 0;
        }
    struct instr_frame_sym fs;
    int rc = instr_symbolize(sy, d, addr, tick, &fs);
    if (rc < 0)
        return rc;
    char anon[600];
    const char *name = fs.name;
    if (!name && fs.module && fs.module[0] == '[') {
        name = fs.module; /* [vdso] */
    } else if (!name) {
        snprintf(anon, sizeof anon, "[%s]", fs.module ? instr_basename(fs.module) : "unknown");
        name = anon;
    }
    const char *module = fs.module ? fs.module : "[unknown]";
    char *origin = NULL;
    if (!p->clones_split && fs.name) { /* a clone counts in its source function's row */
        if (!(origin = strdup(name)))
            return INSTR_ENOMEM;
        instr_name_origin(name, origin, strlen(name) + 1);
        name = origin;
    }
    long f = row_of(p, INSTR_SVIEW_FUNCTIONS, module, name);
    free(origin);
    long m = f < 0 ? -1 : row_of(p, INSTR_SVIEW_MODULES, "", module);
    if (m < 0)
        return INSTR_ENOMEM;
    p->rows[INSTR_SVIEW_FUNCTIONS][f].module = p->rows[INSTR_SVIEW_MODULES][m].name;
    long l = 0;
    if (p->lines) {
        const char *file = NULL;
        int line = 0;
        if (fs.module && fs.name && (rc = instr_line_find(p->lines, fs.module, fs.vaddr, &file, &line)) < 0)
            return rc;
        if ((l = loc_of(p, (uint32_t)f, rc == 0 ? file : NULL, line)) < 0)
            return INSTR_ENOMEM;
    }
    p->cache[k] = (struct scache){key, (uint32_t)f, (uint32_t)m, (uint32_t)l};
    p->cache_used++;
    *fn = (uint32_t)f;
    *mod = (uint32_t)m;
    *loc = (uint32_t)l;
    return 0;
}

/* Adds w samples to the stack rows[0..n) (root first) of thread row th,
 * at locations locs[0..n) (with INSTR_SPROFILE_LINES; else NULL). */
static int add_stack(struct instr_sprofile *p, const uint32_t *rows, const uint32_t *locs, size_t n, uint64_t w,
                     uint32_t th)
{
    const uint32_t *key = locs ? locs : rows; /* a location has one function */
    uint64_t h = (0xcbf29ce484222325ull ^ th) * 0x100000001b3ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ key[i]) * 0x100000001b3ull;
    h |= 1;
    if ((p->nstacks + 1) * 2 > p->stacks_mask + 1) {
        size_t cap = p->stacks ? (p->stacks_mask + 1) * 2 : 1024;
        struct instr_sstack *t = calloc(cap, sizeof *t);
        if (!t)
            return INSTR_ENOMEM;
        for (size_t i = 0; p->stacks && i <= p->stacks_mask; i++) {
            if (!p->stacks[i].hash)
                continue;
            size_t k = p->stacks[i].hash & (cap - 1);
            while (t[k].hash)
                k = (k + 1) & (cap - 1);
            t[k] = p->stacks[i];
        }
        free(p->stacks);
        p->stacks = t;
        p->stacks_mask = cap - 1;
    }
    size_t k = h & p->stacks_mask;
    for (; p->stacks[k].hash; k = (k + 1) & p->stacks_mask) {
        struct instr_sstack *e = &p->stacks[k];
        if (e->hash == h && e->len == n && e->thread == th &&
            !memcmp((locs ? p->lpool : p->pool) + e->off, key, n * sizeof *key)) {
            e->samples += w;
            return 0;
        }
    }
    uint32_t *a = instr_grow(p->pool, &p->cappool, p->npool + n, sizeof *a, 4096);
    if (!a)
        return INSTR_ENOMEM;
    p->pool = a;
    memcpy(p->pool + p->npool, rows, n * sizeof *rows);
    if (locs) {
        if (!(a = instr_grow(p->lpool, &p->caplpool, p->npool + n, sizeof *a, 4096)))
            return INSTR_ENOMEM;
        p->lpool = a;
        memcpy(p->lpool + p->npool, locs, n * sizeof *locs);
    }
    p->stacks[k] = (struct instr_sstack){h, p->npool, n, w, th};
    p->npool += n;
    p->nstacks++;
    return 0;
}

/* A function row of the vDSO without a name of its own ("[vdso]"), or
 * with one. */
static int unnamed_vdso(const struct instr_sprofile *p, uint32_t fn)
{
    const struct instr_srow *r = &p->rows[INSTR_SVIEW_FUNCTIONS][fn];
    return !strcmp(r->module, "[vdso]") && !strcmp(r->name, "[vdso]");
}

static int named_vdso(const struct instr_sprofile *p, uint32_t fn)
{
    const struct instr_srow *r = &p->rows[INSTR_SVIEW_FUNCTIONS][fn];
    return !strcmp(r->module, "[vdso]") && strcmp(r->name, "[vdso]");
}

static void count(struct instr_srow *r, uint64_t stamp, uint64_t w, int top)
{
    if (r->stamp != stamp) { /* distinct on this stack: one inclusive sample */
        r->stamp = stamp;
        r->incl += w;
    }
    if (top)
        r->excl += w;
}

int instr_sprofile_build(struct instr_sprofile *p, const struct instr_dump *dumps, size_t nd, unsigned flags,
                         char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->clones_split = (flags & INSTR_SPROFILE_CLONES_SPLIT) != 0;
    struct instr_symbolizer *sy;
    int rc = instr_symbolizer_new(&sy);
    if (rc < 0)
        return rc;
    if ((flags & INSTR_SPROFILE_LINES) && (rc = instr_line_tables_new(&p->lines)) < 0) {
        instr_symbolizer_free(sy);
        return rc;
    }
    struct instr_sample_iter *it = malloc(sizeof *it);
    uint32_t *path = malloc(INSTR_SAMPLE_MAX_FRAMES * sizeof *path);
    uint32_t *mods = malloc(INSTR_SAMPLE_MAX_FRAMES * sizeof *mods);
    uint32_t *locs = malloc(INSTR_SAMPLE_MAX_FRAMES * sizeof *locs);
    if (!it || !path || !mods || !locs) {
        free(it);
        free(path);
        free(mods);
        free(locs);
        instr_sprofile_free(p);
        instr_symbolizer_free(sy);
        return INSTR_ENOMEM;
    }
    uint64_t stamp = 0;
    for (size_t di = 0; di < nd && rc == 0; di++) {
        const struct instr_dump *d = &dumps[di];
        if (!p->program)
            p->program = d->hdr.exe_path;
        if (!p->unwinder && d->sample_unwinder) {
            p->unwinder = d->sample_unwinder;
            p->rate_hz = d->sample_rate_hz;
            p->stack_bytes = d->sample_stack_bytes;
        }
        char pname[1100];
        snprintf(pname, sizeof pname, "%" PRIu64 " %s", d->hdr.pid, instr_basename(d->hdr.exe_path));
        long pr = row_of(p, INSTR_SVIEW_PROCESSES, "", pname);
        if (pr < 0) {
            rc = INSTR_ENOMEM;
            break;
        }
        p->rows[INSTR_SVIEW_PROCESSES][pr].pid = d->hdr.pid;
        p->nprocesses++;
        if (d->hdr.flags & INSTR_DUMP_SAMPLING_CUT)
            p->cut++; /* the reader warns too */
        for (size_t ti = 0; ti < d->nthreads && rc == 0; ti++) {
            const struct instr_thread_info *t = &d->threads[ti];
            char tname[400];
            snprintf(tname, sizeof tname, "%" PRIu64 "/%" PRIu64 " %s", d->hdr.pid, t->tid,
                     t->name ? t->name : "");
            long tr = row_of(p, INSTR_SVIEW_THREADS, "", tname);
            if (tr < 0) {
                rc = INSTR_ENOMEM;
                break;
            }
            p->nthreads++;
            p->rows[INSTR_SVIEW_THREADS][tr].pid = d->hdr.pid;
            p->rows[INSTR_SVIEW_THREADS][tr].tid = t->tid;
            p->rows[INSTR_SVIEW_THREADS][tr].thread = t->name;
            p->rows[INSTR_SVIEW_THREADS][tr].cpu_ns += t->cpu_ns;
            p->rows[INSTR_SVIEW_PROCESSES][pr].cpu_ns += t->cpu_ns;
            p->cpu_ns += t->cpu_ns;
            struct instr_sample s;
            instr_sample_iter_init(it, t);
            while (instr_sample_iter_next(it, &s) > 0) {
                if (s.kind == INSTR_SAMPLE_LOST) {
                    p->lost += s.weight;
                    continue;
                }
                if (s.kind != INSTR_SAMPLE_STACK || !s.nframes)
                    continue;
                stamp++;
                p->records++;
                p->total += s.weight;
                if (s.flags & INSTR_STACK_TRUNCATED)
                    p->truncated += s.weight;
                if (s.flags & INSTR_STACK_FP)
                    p->fp_stacks += s.weight;
                count(&p->rows[INSTR_SVIEW_THREADS][tr], stamp, s.weight, 1);
                count(&p->rows[INSTR_SVIEW_PROCESSES][pr], stamp, s.weight, 1);
                size_t nf = 0;
                for (size_t k = 0; k < s.nframes; k++, nf++) {
                    /* A caller's frame holds a return address: the call is the byte before it. */
                    uint64_t a = k ? s.frames[k] - 1 : s.frames[k];
                    if ((rc = frame_rows(p, sy, d, di, a, s.tick, &path[k], &mods[k], &locs[k])) < 0)
                        break;
                }
                if (rc < 0)
                    break;
                /* The vDSO's own helpers have no symbol (its table exports
                 * only the entry points): such a frame, called from a named
                 * vDSO function, is that function's, as inlined code would
                 * be, instead of a row "[vdso]" beside it. */
                size_t kept = 0;
                for (size_t k = 0; k < nf; k++) {
                    if (k + 1 < nf && unnamed_vdso(p, path[k]) && named_vdso(p, path[k + 1]))
                        continue;
                    path[kept] = path[k];
                    locs[kept] = locs[k];
                    mods[kept++] = mods[k];
                }
                for (size_t k = 0; k < kept; k++) {
                    count(&p->rows[INSTR_SVIEW_FUNCTIONS][path[k]], stamp, s.weight, k == 0);
                    count(&p->rows[INSTR_SVIEW_MODULES][mods[k]], stamp, s.weight, k == 0);
                }
                for (size_t i = 0; i < kept / 2; i++) { /* root first */
                    uint32_t t = path[i];
                    path[i] = path[kept - 1 - i];
                    path[kept - 1 - i] = t;
                    t = locs[i];
                    locs[i] = locs[kept - 1 - i];
                    locs[kept - 1 - i] = t;
                }
                if (rc < 0 || (rc = add_stack(p, path, p->lines ? locs : NULL, kept, s.weight, (uint32_t)tr)) < 0)
                    break;
            }
            for (size_t c = 0; c < t->nschunks; c++)
                instr_dump_chunk_done(d, &t->schunks[c]);
            if (it->nbad) {
                p->bad_chunks += it->nbad;
                if ((rc = instr_msgs_add(&p->warnings, &p->nwarnings,
                                         "%s: thread %u: %zu sample chunk%s ended on invalid bytes; the rest of %s "
                                         "skipped",
                                         d->path, t->index, it->nbad, it->nbad > 1 ? "s" : "",
                                         it->nbad > 1 ? "them" : "it")))
                    break;
            }
        }
    }
    free(it);
    free(path);
    free(mods);
    free(locs);
    instr_symbolizer_free(sy);
    if (rc < 0) {
        snprintf(err, errlen, "%s", instr_tool_strerror(rc));
        instr_sprofile_free(p);
        return rc;
    }
    return 0;
}

void instr_sprofile_free(struct instr_sprofile *p)
{
    for (int v = 0; v < 4; v++) {
        for (size_t i = 0; i < p->nrows[v]; i++)
            free(p->rows[v][i].name);
        free(p->rows[v]);
    }
    for (size_t i = 0; i < p->nwarnings; i++)
        free(p->warnings[i]);
    INSTR_FREE_ALL(p->warnings, p->cache, p->names, p->stacks, p->pool, p->lpool, p->locs, p->loc_table);
    instr_line_tables_free(p->lines);
    memset(p, 0, sizeof *p);
}

static int by_incl(const void *a, const void *b)
{
    const struct instr_srow *x = a, *y = b;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int by_excl(const void *a, const void *b)
{
    const struct instr_srow *x = a, *y = b;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    return by_incl(a, b);
}

static int by_name(const void *a, const void *b)
{
    const struct instr_srow *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

int instr_sprofile_sort(struct instr_sprofile *p, const char *column)
{
    int (*cmp)(const void *, const void *);
    if (!column || !strcmp(column, "inclusive") || !strcmp(column, "ei") || !strcmp(column, "incl"))
        cmp = by_incl;
    else if (!strcmp(column, "exclusive") || !strcmp(column, "ee") || !strcmp(column, "excl"))
        cmp = by_excl;
    else if (!strcmp(column, "name"))
        cmp = by_name;
    else
        return -1;
    /* The name index points at rows by position: it is not needed after the build. */
    free(p->names);
    p->names = NULL;
    p->names_used = p->names_mask = 0;
    /* Stacks name function and thread rows, locations function rows, by
     * position: renumber them. */
    size_t nf = p->nrows[INSTR_SVIEW_FUNCTIONS], nt = p->nrows[INSTR_SVIEW_THREADS];
    uint32_t *pos = nf + nt ? malloc((nf + nt) * sizeof *pos) : NULL;
    if (nf + nt && !pos)
        return INSTR_ENOMEM;
    for (int v = 0; v < 4; v++)
        for (size_t i = 0; i < p->nrows[v]; i++)
            p->rows[v][i].stamp = i; /* old position */
    for (int v = 0; v < 4; v++)
        if (p->nrows[v] > 1)
            qsort(p->rows[v], p->nrows[v], sizeof *p->rows[v], cmp);
    for (size_t i = 0; i < nf; i++)
        pos[p->rows[INSTR_SVIEW_FUNCTIONS][i].stamp] = (uint32_t)i;
    for (size_t i = 0; i < nt; i++)
        pos[nf + p->rows[INSTR_SVIEW_THREADS][i].stamp] = (uint32_t)i;
    for (size_t i = 0; i < p->npool; i++)
        p->pool[i] = pos[p->pool[i]];
    for (size_t i = 0; i < p->nlocs; i++)
        p->locs[i].fn = pos[p->locs[i].fn];
    for (size_t i = 0; p->stacks && i <= p->stacks_mask; i++)
        if (p->stacks[i].hash)
            p->stacks[i].thread = pos[nf + p->stacks[i].thread];
    free(pos);
    return 0;
}

static int by_stack(const void *a, const void *b, void *ctx)
{
    const struct instr_sprofile *p = ctx;
    const struct instr_sstack *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(p->rows[INSTR_SVIEW_FUNCTIONS][p->pool[x->off + i]].name,
                       p->rows[INSTR_SVIEW_FUNCTIONS][p->pool[y->off + i]].name);
        if (c)
            return c;
    }
    return (x->len > y->len) - (x->len < y->len);
}

int instr_sreport_folded(FILE *out, const struct instr_sprofile *p)
{
    struct instr_sstack *a = p->nstacks ? malloc(p->nstacks * sizeof *a) : NULL;
    size_t n = 0;
    if (p->nstacks && !a)
        return INSTR_ENOMEM;
    const struct instr_sstack *s;
    for (size_t i = 0; (s = instr_sstack_next(p, &i));)
        a[n++] = *s;
    if (n > 1)
        qsort_r(a, n, sizeof *a, by_stack, (void *)p); /* a stable, readable order */
    for (size_t i = 0; i < n; i++) {
        uint64_t samples = a[i].samples;
        while (i + 1 < n && !by_stack(&a[i], &a[i + 1], (void *)p)) /* the same stack in other threads */
            samples += a[++i].samples;
        for (size_t k = 0; k < a[i].len; k++) {
            if (k)
                fputc(';', out);
            for (const char *c = p->rows[INSTR_SVIEW_FUNCTIONS][p->pool[a[i].off + k]].name; *c; c++)
                fputc(*c == ';' || *c == '\n' ? ':' : *c, out);
        }
        fprintf(out, " %" PRIu64 "\n", samples);
    }
    free(a);
    return 0;
}

/* ---- output ------------------------------------------------------------------ */

static const char *const view_names[] = {"functions", "modules", "threads", "processes"};
static const char *const view_titles[] = {"Function", "Module", "Thread", "Process"};

double instr_spct(uint64_t v, uint64_t total)
{
    return total ? 100.0 * (double)v / (double)total : 0;
}

void instr_svalues_write(FILE *f, int format, uint64_t incl, uint64_t excl, uint64_t total)
{
    static const char *const fmt[] = {
        "%17" PRIu64 "  %17" PRIu64 "  %11.2f  %11.2f",
        ",%" PRIu64 ",%" PRIu64 ",%.4f,%.4f",
        ",\"inclusive_samples\":%" PRIu64 ",\"exclusive_samples\":%" PRIu64
        ",\"inclusive_pct\":%.4f,\"exclusive_pct\":%.4f",
    };
    fprintf(f, fmt[format], incl, excl, instr_spct(incl, total), instr_spct(excl, total));
}

const struct instr_sstack *instr_sstack_next(const struct instr_sprofile *p, size_t *i)
{
    for (; p->stacks && *i <= p->stacks_mask; ++*i)
        if (p->stacks[*i].hash)
            return &p->stacks[(*i)++];
    return NULL;
}

static double achieved_hz(uint64_t samples, uint64_t cpu_ns)
{
    return cpu_ns ? (double)samples * 1e9 / (double)cpu_ns : 0;
}

static void text_header(FILE *f, const struct instr_sprofile *p)
{
    fprintf(f, "Program: %s\n", p->program && *p->program ? p->program : "?");
    fprintf(f, "Collection: sampling, %zu process%s, %zu thread%s\n", p->nprocesses, p->nprocesses == 1 ? "" : "es",
            p->nthreads, p->nthreads == 1 ? "" : "s");
    fprintf(f, "Samples: %" PRIu64 " (user code only; %" PRIu64 " ms of CPU time)\n", p->total, p->cpu_ns / 1000000);
    if (p->cpu_ns)
        fprintf(f, "Rate: asked %" PRIu64 " Hz of CPU time, achieved %.0f Hz\n", p->rate_hz,
                achieved_hz(p->total, p->cpu_ns));
    else
        fprintf(f, "Rate: asked %" PRIu64 " Hz of CPU time, achieved unknown (no CPU time recorded)\n", p->rate_hz);
    if (p->cut)
        fprintf(f, "Cut short: %zu process%s still ran when sampling stopped (the program's first process "
                   "ended): %s samples end there\n",
                p->cut, p->cut == 1 ? "" : "es", p->cut == 1 ? "its" : "their");
    fprintf(f, "Lost: %" PRIu64 " sample%s%s\n", p->lost, p->lost == 1 ? "" : "s",
            p->lost ? " (the kernel's sample ring was full: instr-sample did not drain it in time)" : "");
    fprintf(f, "Unwinder: %s (%" PRIu64 "-byte stack copies)\n", p->unwinder ? p->unwinder : "?", p->stack_bytes);
    fprintf(f, "Truncated stacks: %" PRIu64 " (%.1f%%); frame-pointer stacks: %" PRIu64 "\n", p->truncated,
            instr_spct(p->truncated, p->total), p->fp_stacks);
    if (p->bad_chunks)
        fprintf(f, "Damaged: %" PRIu64 " sample chunk%s salvaged\n", p->bad_chunks, p->bad_chunks == 1 ? "" : "s");
    fputc('\n', f);
}

static int shown(const struct instr_sprofile *p, const struct instr_srow *r, const struct instr_sreport_opts *o)
{
    return instr_spct(r->incl, p->total) >= o->threshold && (r->incl || r->excl);
}

int instr_sreport_write(FILE *f, const struct instr_sprofile *p, const struct instr_sreport_opts *o)
{
    enum instr_sview v = o->view;
    const struct instr_srow *rows = p->rows[v];
    size_t n = p->nrows[v], limit = o->limit ? o->limit : (size_t)-1;
    if (o->format == 0) {
        text_header(f, p);
        int w = (int)strlen(view_titles[v]);
        for (size_t i = 0, k = 0; i < n && k < limit; i++) {
            if (!shown(p, &rows[i], o))
                continue;
            k++;
            int l = (int)strlen(rows[i].name);
            if (l > w)
                w = l > 80 ? 80 : l;
        }
        fprintf(f, "%-*s  %17s  %17s  %11s  %11s%s\n", w, view_titles[v], "Inclusive Samples", "Exclusive Samples",
                "Inclusive %", "Exclusive %", v == INSTR_SVIEW_FUNCTIONS ? "  Module" : "");
        for (size_t i = 0, k = 0; i < n && k < limit; i++) {
            const struct instr_srow *r = &rows[i];
            if (!shown(p, r, o))
                continue;
            k++;
            fprintf(f, "%-*s  ", w, r->name);
            instr_svalues_write(f, 0, r->incl, r->excl, p->total);
            if (v == INSTR_SVIEW_FUNCTIONS)
                fprintf(f, "  %s", instr_basename(r->module));
            fputc('\n', f);
        }
        return 0;
    }
    if (o->format == 1) {
        fprintf(f, "%s,inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct%s\n", view_names[v] + 0,
                v == INSTR_SVIEW_FUNCTIONS ? ",module" : v >= INSTR_SVIEW_THREADS ? ",cpu_ns" : "");
        for (size_t i = 0, k = 0; i < n && k < limit; i++) {
            const struct instr_srow *r = &rows[i];
            if (!shown(p, r, o))
                continue;
            k++;
            instr_csv_field(f, r->name);
            instr_svalues_write(f, 1, r->incl, r->excl, p->total);
            if (v == INSTR_SVIEW_FUNCTIONS) {
                fputc(',', f);
                instr_csv_field(f, r->module);
            } else if (v >= INSTR_SVIEW_THREADS) {
                fprintf(f, ",%" PRIu64, r->cpu_ns);
            }
            fputc('\n', f);
        }
        return 0;
    }
    /* JSON: the session and every table. */
    fprintf(f, "{\"collection\":\"sampling\",\"session\":{\"program\":");
    instr_json_str(f, p->program ? p->program : "");
    fprintf(f,
            ",\"samples\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"rate_asked_hz\":%" PRIu64
            ",\"rate_achieved_hz\":%.1f,\"lost\":%" PRIu64 ",\"truncated\":%" PRIu64 ",\"fp_stacks\":%" PRIu64
            ",\"bad_chunks\":%" PRIu64 ",\"stack_bytes\":%" PRIu64 ",\"cut_processes\":%zu,\"unwinder\":",
            p->total, p->cpu_ns, p->rate_hz, achieved_hz(p->total, p->cpu_ns), p->lost, p->truncated, p->fp_stacks,
            p->bad_chunks, p->stack_bytes, p->cut);
    instr_json_str(f, p->unwinder ? p->unwinder : "");
    fputc('}', f);
    for (int t = 0; t < 4; t++) {
        fprintf(f, ",\"%s\":[", view_names[t]);
        int first = 1;
        for (size_t i = 0; i < p->nrows[t]; i++) {
            const struct instr_srow *r = &p->rows[t][i];
            if (!shown(p, r, o))
                continue;
            fprintf(f, "%s{\"name\":", first ? "" : ",");
            first = 0;
            instr_json_str(f, r->name);
            if (t == INSTR_SVIEW_FUNCTIONS) {
                fprintf(f, ",\"module\":");
                instr_json_str(f, r->module);
            }
            if (t >= INSTR_SVIEW_THREADS)
                fprintf(f, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"cpu_ns\":%" PRIu64, r->pid, r->tid, r->cpu_ns);
            instr_svalues_write(f, 2, r->incl, r->excl, p->total);
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputs("}\n", f);
    return 0;
}

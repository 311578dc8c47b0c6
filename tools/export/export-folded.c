/* export-folded.c - folded stacks, the input of flamegraph.pl, inferno and
 * speedscope: one line per call path, its frames from the outermost joined
 * by ';', a space, and the path's EXCLUSIVE weight:
 *
 *   main;foo;bar 280
 *
 * A flame graph draws each frame as wide as the sum of the weights of the
 * lines that contain it at that position, i.e. its inclusive value on that
 * path; over all paths a function's width is its Elapsed (Application)
 * Inclusive, recursion counted once.  Emitting inclusive weights instead
 * would count every callee's time once more per level.
 *
 * Weights: Elapsed Exclusive (or Application Exclusive, --weight application) in
 * whole ns (ticks with --units ticks, or without a tick rate), rounded per
 * path; paths with a zero weight are left out.  ';' in a name would split
 * a frame: it is written as ':'.
 *
 * Roots (--folded-root): by default the session's call tree, every thread
 * and process merged by function; "process" puts each process's paths
 * under a "program (pid P)" frame, "thread" under that and a "name (tid
 * T)" frame, from each thread's own call tree.
 *
 * Depth: a line holds at most MAX_FRAMES frames.  The weight of the paths
 * deeper than that (a deep recursion) is written once under the deepest
 * frame kept, as a "[deeper frames]" frame, so the file (and the time to
 * write it) grows linearly with the depth, not with its square (a
 * 100,000-deep recursion would write 5 billion frames).  Widths above
 * that frame stay exact.
 *
 * Count-mode dumps (instr_export_folded_counts) have no paths, only edges:
 * each line is one edge, "caller;callee N" with its calls, and "f N" for
 * the entries of f no counted edge explains (from uninstrumented code or
 * through pointers).  A frame's width is then its calls plus the calls it
 * makes: one level, not the calls below it.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "count-report.h"
#include "export-options.h"
#include "report.h"
#include "writers.h"

#define MAX_FRAMES 512

/* ---- its options ---- */

enum root { ROOT_NONE, ROOT_PROCESS, ROOT_THREAD };

struct folded_opts {
    int weight_app;   /* --weight application: Application Exclusive weights (else Elapsed Exclusive) */
    enum root root;   /* --folded-root */
};

static const struct folded_opts defaults = {0, ROOT_NONE};

static const struct folded_opts *fopts(const struct instr_report_opts *o)
{
    return o->export_opts ? o->export_opts : &defaults;
}

static int pick(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    return -1;
}

static int parse_weight(void *opts, const char *v)
{
    static const char *const names[] = {"elapsed", "application"};
    int k = pick(v, names, 2);
    if (k >= 0)
        ((struct folded_opts *)opts)->weight_app = k == 1;
    return k < 0 ? -1 : 0;
}

static int parse_root(void *opts, const char *v)
{
    static const char *const names[] = {"none", "process", "thread"};
    int k = pick(v, names, 3);
    if (k >= 0)
        ((struct folded_opts *)opts)->root = (enum root)k;
    return k < 0 ? -1 : 0;
}

static const char *refused(const void *opts, const struct instr_session *s)
{
    const struct folded_opts *f = opts;
    return f->weight_app && s->no_app ? "no Application values in this input (--weight application)" : NULL;
}

static const struct instr_option weight_opt = {
    "weight", "W", "elapsed (default) or application exclusive weights", parse_weight, 0};
static const struct instr_option root_opt = {
    "folded-root", "R", "none (default: every thread merged), process or thread\n(each stack rooted at its process, and thread)",
    parse_root, 0};

const struct instr_export_options instr_folded_options = {
    (const struct instr_option *const[]){&weight_opt, &root_opt, NULL}, sizeof(struct folded_opts), &defaults,
    refused};

/* A call tree to fold: nodes in an order where a parent comes before its
 * children; node 0 is the root (no frame). */
struct ftree {
    uint32_t *parent;
    const char **name; /* the frame's text */
    uint64_t *w;       /* exclusive weight */
    size_t len;
};

static void frame(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, out);
}

static void path(FILE *out, const struct ftree *t, uint32_t k, uint32_t *stack)
{
    size_t d = 0;
    for (; k; k = t->parent[k])
        stack[d++] = k;
    while (d--) {
        frame(out, t->name[stack[d]]);
        if (d)
            fputc(';', out);
    }
}

/* Writes t's paths (see the top for the depth cap). */
static int fold(FILE *out, const struct ftree *t)
{
    uint32_t *depth = calloc(t->len + 1, sizeof *depth), *stack = malloc((MAX_FRAMES + 1) * sizeof *stack);
    uint32_t *cut = malloc((t->len + 1) * sizeof *cut); /* the ancestor at MAX_FRAMES, or the node */
    uint64_t *deeper = calloc(t->len + 1, sizeof *deeper);
    if (!depth || !stack || !cut || !deeper) {
        free(depth), free(stack), free(cut), free(deeper);
        return INSTR_ENOMEM;
    }
    for (size_t i = 1; i < t->len; i++) {
        uint32_t p = t->parent[i];
        depth[i] = depth[p] + 1;
        cut[i] = depth[i] > MAX_FRAMES ? cut[p] : (uint32_t)i;
        if (depth[i] > MAX_FRAMES)
            deeper[cut[i]] += t->w[i];
    }
    for (size_t i = 1; i < t->len; i++) {
        if (depth[i] > MAX_FRAMES)
            continue;
        if (t->w[i]) {
            path(out, t, (uint32_t)i, stack);
            fprintf(out, " %" PRIu64 "\n", t->w[i]);
        }
        if (deeper[i]) {
            path(out, t, (uint32_t)i, stack);
            fprintf(out, ";[deeper frames] %" PRIu64 "\n", deeper[i]);
        }
    }
    free(depth), free(stack), free(cut), free(deeper);
    return 0;
}

static int ftree_alloc(struct ftree *f, size_t n)
{
    f->len = 0;
    f->parent = malloc((n + 1) * sizeof *f->parent);
    f->name = malloc((n + 1) * sizeof *f->name);
    f->w = malloc((n + 1) * sizeof *f->w);
    return f->parent && f->name && f->w ? 0 : INSTR_ENOMEM;
}

static void ftree_free(struct ftree *f)
{
    free(f->parent);
    free(f->name);
    free(f->w);
}

static uint64_t weight(const struct instr_session *s, const struct instr_report_opts *o, const struct instr_dump *d,
                       uint64_t ee, uint64_t ae, double ee_ns, double ae_ns)
{
    if (o->units == INSTR_UNITS_TICKS || !s->have_rate)
        return fopts(o)->weight_app ? ae : ee;
    double ns = fopts(o)->weight_app ? (d ? instr_ticks_ns(d, ae) : ae_ns) : (d ? instr_ticks_ns(d, ee) : ee_ns);
    return ns > 0 ? (uint64_t)llround(ns) : 0;
}

/* The session's merged call tree. */
static int fold_merged(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    struct instr_tree t;
    struct ftree f;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    if ((rc = ftree_alloc(&f, t.len)) == 0) {
        for (size_t i = 0; i < t.len; i++) {
            const struct instr_tnode *n = &t.n[i];
            f.parent[i] = i ? n->parent : 0;
            f.name[i] = i ? instr_function_row(s, n->row)->name : "";
            f.w[i] = i ? weight(s, o, NULL, n->v.ee, n->v.ae, n->ns[1], n->ns[3]) : 0;
        }
        f.len = t.len;
        rc = fold(out, &f);
    }
    ftree_free(&f);
    instr_tree_free(&t);
    return rc;
}

/* Each process's threads' own call trees under process (and thread)
 * frames: node 0 the root, then per process its frame, per thread its
 * frame (thread roots), then the profile's nodes in their order. */
static int fold_rooted(FILE *out, const struct instr_session *s, const struct instr_report_opts *o, int threads)
{
    size_t n = 1;
    for (size_t i = 0; i < s->ndumps; i++)
        n += 1 + s->profiles[i].nnodes;
    struct ftree f;
    char **labels = calloc(n + 1, sizeof *labels);
    uint32_t *map = NULL;
    int rc = ftree_alloc(&f, n);
    if (!rc && !labels)
        rc = INSTR_ENOMEM;
    if (!rc) {
        f.parent[0] = 0, f.name[0] = "", f.w[0] = 0, f.len = 1;
    }
    for (size_t i = 0; i < s->ndumps && !rc; i++) {
        const struct instr_dump *d = &s->dumps[i];
        const struct instr_profile *p = &s->profiles[i];
        uint32_t proc = (uint32_t)f.len++;
        if (asprintf(&labels[proc], "%s (pid %" PRIu64 ")", instr_basename(d->hdr.exe_path), d->hdr.pid) < 0) {
            labels[proc] = NULL;
            rc = INSTR_ENOMEM;
            break;
        }
        f.parent[proc] = 0, f.name[proc] = labels[proc], f.w[proc] = 0;
        free(map);
        if (!(map = malloc((p->nnodes + 1) * sizeof *map))) {
            rc = INSTR_ENOMEM;
            break;
        }
        for (size_t k = 0; k < p->nnodes; k++) {
            const struct instr_pnode *pn = &p->nodes[k];
            uint32_t me = (uint32_t)f.len++;
            map[k] = me;
            if (pn->func == UINT32_MAX) {
                /* A thread's root: its frame, or the process's. */
                const struct instr_pthread *th = &p->threads[pn->thread];
                if (!threads) {
                    map[k] = proc;
                    f.len--;
                    continue;
                }
                if (asprintf(&labels[me], "%s (tid %" PRIu64 ")", th->name && th->name[0] ? th->name : "thread",
                             th->tid) < 0) {
                    labels[me] = NULL;
                    rc = INSTR_ENOMEM;
                    break;
                }
                f.parent[me] = proc, f.name[me] = labels[me], f.w[me] = 0;
                continue;
            }
            f.parent[me] = map[pn->parent];
            f.name[me] = instr_function_row(s, s->func_rows[i][pn->func])->name;
            f.w[me] = weight(s, o, d, pn->ee, pn->ae, 0, 0);
        }
    }
    if (!rc)
        rc = fold(out, &f);
    for (size_t i = 0; i < n; i++)
        free(labels[i]);
    free(labels);
    free(map);
    ftree_free(&f);
    return rc;
}

int instr_export_folded(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    const struct folded_opts *f = fopts(o);
    if (f->weight_app && s->no_app)
        return INSTR_EARG;
    if (f->root == ROOT_NONE)
        return fold_merged(out, s, o);
    return fold_rooted(out, s, o, f->root == ROOT_THREAD);
}

int instr_export_folded_counts(FILE *out, const struct instr_count_graph *g)
{
    for (size_t k = 0; k < g->nfns; k++) {
        uint64_t n = g->fns[k].instrumented ? instr_count_uncounted_in(g, k) : 0;
        if (!n)
            continue;
        frame(out, g->fns[k].display);
        fprintf(out, " %" PRIu64 "\n", n);
    }
    for (size_t i = 0; i < g->nedges; i++) {
        const struct instr_count_edge *e = &g->edges[i];
        if (!e->calls)
            continue;
        frame(out, g->fns[e->caller].display);
        fputc(';', out);
        frame(out, g->fns[e->callee].display);
        fprintf(out, " %" PRIu64 "\n", e->calls);
    }
    return ferror(out) ? INSTR_EIO : 0;
}

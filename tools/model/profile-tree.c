/* profile-tree.c - the call tree a walk grows (profile.c walks the events):
 * a node per call path, found or made as frames open; the function rows
 * (metadata, module, pseudo-frames); after each thread, the fold of its
 * tree into inclusive values and the per-function, module and thread sums
 * (profile.h tells how), and the tree kept for the tree views; the names a
 * report shows for the rows. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "demangle.h"
#include "profile-walker.h"
#include "report.h"

/* ---- a small open-addressing map (k1, k2) -> u32 ------------------------ */

static inline size_t map_hash(uint64_t k1, uint32_t k2)
{
    uint64_t h = (k1 ^ ((uint64_t)k2 << 32 | k2)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ h >> 29);
}

static int map_init(struct map *m, size_t cap)
{
    m->e = malloc(cap * sizeof *m->e);
    if (!m->e)
        return INSTR_ENOMEM;
    for (size_t i = 0; i < cap; i++)
        m->e[i].val = UINT32_MAX;
    m->mask = cap - 1;
    m->n = 0;
    return 0;
}

static void map_clear(struct map *m)
{
    for (size_t i = 0; i <= m->mask; i++)
        m->e[i].val = UINT32_MAX;
    m->n = 0;
}

static inline uint32_t map_get(const struct map *m, uint64_t k1, uint32_t k2)
{
    for (size_t i = map_hash(k1, k2) & m->mask;; i = (i + 1) & m->mask) {
        const struct map_ent *e = &m->e[i];
        if (e->val == UINT32_MAX)
            return UINT32_MAX;
        if (e->k1 == k1 && e->k2 == k2)
            return e->val;
    }
}

static int map_put(struct map *m, uint64_t k1, uint32_t k2, uint32_t val)
{
    if ((m->n + 1) * 2 > m->mask + 1) {
        struct map old = *m;
        if (map_init(m, (old.mask + 1) * 2) < 0) {
            *m = old;
            return INSTR_ENOMEM;
        }
        for (size_t i = 0; i <= old.mask; i++)
            if (old.e[i].val != UINT32_MAX)
                map_put(m, old.e[i].k1, old.e[i].k2, old.e[i].val);
        free(old.e);
    }
    size_t i = map_hash(k1, k2) & m->mask;
    while (m->e[i].val != UINT32_MAX)
        i = (i + 1) & m->mask;
    m->e[i] = (struct map_ent){k1, k2, val};
    m->n++;
    return 0;
}

/* ---- call tree ------------------------------------------------------------ */

/* A frame is excluded when its name (function or pseudo-frame) matches. */
static int frame_excluded(const struct walker *w, uint32_t fn)
{
    const struct instr_pfunc *f = &w->p->funcs[fn];
    return instr_exclusions_match(w->x, f->origin ? f->origin : f->fn ? f->fn->name : f->pseudo) ||
           (f->origin && instr_exclusions_match(w->x, f->fn->name));
}

/* FNV-1a of s, then of t, for the origin map (a hit is checked by name). */
static uint64_t hash2(const char *s, const char *t)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
    for (; t && *t; t++)
        h = (h ^ (uint8_t)*t) * 0x100000001b3ull;
    return h;
}

static uint32_t fold_into(struct walker *w, struct instr_pfunc *f, uint32_t self, const struct instr_function *fn,
                          const char *origin, int *nomem);

/* GCC's clones of one source function (foo.constprop.0, foo.isra.0,
 * foo.part.0, foo.cold: instr_name_origin) are that function to a reader,
 * who never wrote them: f (a new row for function fn) takes its origin's
 * names, and if a row of the same origin, module and file exists, the
 * index of that row is returned instead (f is then dropped); else
 * UINT32_MAX after noting f's.  Inclusive values stay right: a clone
 * inside its origin is one function on the stack twice, as recursion is. */
static uint32_t fold_clone(struct walker *w, struct instr_pfunc *f, uint32_t self, int *nomem)
{
    const struct instr_function *fn = f->fn;
    size_t len = strlen(fn->name) + 1;
    char small[256], *buf = len <= sizeof small ? small : malloc(len);
    if (!buf) {
        *nomem = 1;
        return UINT32_MAX;
    }
    instr_name_origin(fn->name, buf, len);
    uint32_t row = fold_into(w, f, self, fn, !strcmp(buf, fn->name) ? fn->name : buf, nomem);
    if (buf != small)
        free(buf);
    return row;
}

/* fold_clone's lookup and note, origin the name without clone suffixes
 * (fn->name itself when it has none). */
static uint32_t fold_into(struct walker *w, struct instr_pfunc *f, uint32_t self, const struct instr_function *fn,
                          const char *origin, int *nomem)
{
    uint64_t h = hash2(origin, fn->file);
    uint32_t i = map_get(&w->originmap, h, fn->module);
    if (i != UINT32_MAX) {
        const struct instr_pfunc *o = &w->p->funcs[i];
        const char *oname = o->origin ? o->origin : o->fn->name;
        if (!strcmp(oname, origin) && !strcmp(o->fn->file ? o->fn->file : "", fn->file ? fn->file : ""))
            return i;
        return UINT32_MAX; /* a hash collision: a row of its own */
    }
    if (origin != fn->name) {
        int dm = fn->demangled && fn->demangled[0];
        if (!(f->origin = strdup(origin)) || (dm && !(f->origin_demangled = strdup(fn->demangled)))) {
            *nomem = 1;
            return UINT32_MAX;
        }
        if (dm) /* into the copy: an origin is never longer than its name */
            instr_name_origin(fn->demangled, f->origin_demangled, strlen(fn->demangled) + 1);
    }
    if (map_put(&w->originmap, h, fn->module, self) < 0)
        *nomem = 1;
    return UINT32_MAX;
}

static int func_index(struct walker *w, uint64_t key, uint32_t *out)
{
    uint32_t i = map_get(&w->fnmap, key, 0);
    if (i != UINT32_MAX) {
        *out = i;
        return 0;
    }
    struct instr_profile *p = w->p;
    if (p->nfuncs >= UINT32_MAX - 1)
        return INSTR_ENOMEM;
    struct instr_pfunc *f = realloc(p->funcs, (p->nfuncs + 1) * sizeof *f);
    if (!f)
        return INSTR_ENOMEM;
    p->funcs = f;
    f = &p->funcs[p->nfuncs];
    memset(f, 0, sizeof *f);
    f->key = key;
    f->module = (uint32_t)(p->nmodules - 1);
    if ((key & INSTR_KEY_SITE) && (key & ~INSTR_KEY_SITE) < p->sites.nnames) {
        /* A pseudo-frame: named after the callee, in the callee's module. */
        size_t k = (size_t)(key & ~INSTR_KEY_SITE);
        f->pseudo = p->sites.names[k];
        for (size_t m = p->nmodules - 1; m-- > 0;)
            if (p->dump->modules[m].id == p->sites.module[k]) {
                f->module = (uint32_t)m;
                break;
            }
    } else if (!(key & INSTR_KEY_SITE)) {
        f->fn = instr_dump_function(p->dump, key);
        if (f->fn)
            for (size_t m = p->nmodules - 1; m-- > 0;)
                if (p->dump->modules[m].id == f->fn->module) {
                    f->module = (uint32_t)m;
                    break;
                }
        if (f->fn && f->fn->name && !(w->x && w->x->clones_split)) {
            int nomem = 0;
            uint32_t row = fold_clone(w, f, (uint32_t)p->nfuncs, &nomem);
            if (nomem)
                return INSTR_ENOMEM;
            if (row != UINT32_MAX) {
                if (map_put(&w->fnmap, key, 0, row) < 0)
                    return INSTR_ENOMEM;
                *out = row;
                return 0;
            }
        }
    }
    if (map_put(&w->fnmap, key, 0, (uint32_t)p->nfuncs) < 0)
        return INSTR_ENOMEM;
    *out = (uint32_t)p->nfuncs++;
    return 0;
}

/* Doubles the node array (kept 64-byte aligned) and with it the room for
 * flagged values and inclusive values. */
static int grow_nodes(struct walker *w)
{
    size_t nc = w->capnodes ? w->capnodes * 2 : 1024;
    void *n;
    if (posix_memalign(&n, 64, nc * sizeof *w->nodes))
        return INSTR_ENOMEM;
    if (w->nnodes)
        memcpy(n, w->nodes, w->nnodes * sizeof *w->nodes);
    free(w->nodes);
    w->nodes = n;
    struct flagged *f = realloc(w->flagged, (nc + 2) * sizeof *f);
    if (!f)
        return INSTR_ENOMEM;
    w->flagged = f;
    free(w->incl);
    if (!(w->incl = malloc(nc * sizeof *w->incl)))
        return INSTR_ENOMEM;
    w->capnodes = nc;
    return 0;
}

/* The tree's arrays and maps, before the first thread (the maps and the
 * per-module counter: the modules are known; the rest grows). */
int instr_ptree_init(struct walker *w)
{
    struct instr_profile *p = w->p;
    if (!(w->modcount = calloc(p->nmodules, sizeof *w->modcount)) || grow_nodes(w) < 0 ||
        map_init(&w->fnmap, 256) < 0 || map_init(&w->originmap, 256) < 0 || map_init(&w->childmap, 1024) < 0)
        return INSTR_ENOMEM;
    return 0;
}

/* A walker of its own for one thread of a merged walk (profile.c): its
 * tree and child map; the function map and the fold's counters stay the
 * build's (shared by the caller). */
int instr_ptree_init_thread(struct walker *w)
{
    w->nodes = NULL;
    w->flagged = NULL;
    w->incl = NULL;
    w->nnodes = w->capnodes = 0;
    w->childmap.e = NULL;
    if (grow_nodes(w) < 0 || map_init(&w->childmap, 1024) < 0)
        return INSTR_ENOMEM;
    return 0;
}

void instr_ptree_free_thread(struct walker *w)
{
    free(w->nodes);
    free(w->flagged);
    free(w->incl);
    free(w->childmap.e);
    w->nodes = NULL;
    w->flagged = NULL;
    w->incl = NULL;
    w->childmap.e = NULL;
}

/* A thread's walk starts from an empty tree: its root alone. */
void instr_ptree_thread(struct walker *w)
{
    w->nnodes = 1;
    w->nflagged = 2;
    memset(&w->nodes[0], 0, sizeof w->nodes[0]);
    map_clear(&w->childmap);
}

/* Frees what instr_ptree_init and the walk allocated (the profile keeps
 * its own copies: instr_profile_free). */
void instr_ptree_free(struct walker *w)
{
    INSTR_FREE_ALL(w->nodes, w->flagged, w->incl, w->fncount, w->modcount, w->extcount, w->fnmap.e, w->originmap.e,
                   w->childmap.e);
}

/* The flagged values of n, a zeroed slot the first time (the pending call
 * site's is slot 1, zeroed at each of its first flagged intervals). */
struct flagged *instr_ptree_flagged_of(struct walker *w, struct node *n)
{
    if (!n->flagged) {
        n->flagged = n == &w->pend ? 1 : (uint32_t)w->nflagged++;
        memset(&w->flagged[n->flagged], 0, sizeof w->flagged[0]);
    }
    return &w->flagged[n->flagged];
}

/* Finds or creates the child of parent for key.  Returns UINT32_MAX on
 * allocation failure. */
uint32_t instr_ptree_child_slow(struct walker *w, uint32_t parent, uint64_t key)
{
    uint32_t c = map_get(&w->childmap, key, parent);
    if (c == UINT32_MAX) {
        uint32_t fn;
        if (w->nnodes >= UINT32_MAX - 1 || func_index(w, key, &fn) < 0)
            return UINT32_MAX;
        if (w->nnodes == w->capnodes && grow_nodes(w) < 0)
            return UINT32_MAX;
        c = (uint32_t)w->nnodes++;
        struct node *n = &w->nodes[c];
        memset(n, 0, sizeof *n);
        n->key = key;
        n->parent = parent;
        n->fn = fn;
        n->excluded = w->nodes[parent].excluded || (w->x && frame_excluded(w, fn));
        if (map_put(&w->childmap, key, parent, c) < 0)
            return UINT32_MAX;
        struct node *par = &w->nodes[parent];
        for (int k = 0; k < 4; k++)
            if (!par->kid[k]) {
                par->kid[k] = c;
                par->kid_key[k] = key;
                break;
            }
    }
    w->nodes[parent].last_child = c;
    return c;
}

static void add_values(struct instr_values *a, const struct instr_values *b)
{
    a->ei += b->ei;
    a->ee += b->ee;
    a->ai += b->ai;
    a->ae += b->ae;
    a->calls += b->calls;
    a->flagged_n += b->flagged_n;
    a->flagged_t += b->flagged_t;
    a->offcpu_t += b->offcpu_t;
    a->ext_ei += b->ext_ei;
    a->ext_ai += b->ext_ai;
    a->ci += b->ci;
    a->ce += b->ce;
    a->po += b->po;
    for (int k = 0; k < INSTR_OS_NKINDS; k++) {
        a->kind_n[k] += b->kind_n[k];
        a->kind_t[k] += b->kind_t[k];
    }
}

/* from's flagged values go to n too: a pending call site's (w->pend), to
 * the frame it became. */
void instr_ptree_add_flagged(struct walker *w, struct node *n, const struct flagged *from)
{
    struct flagged *f = instr_ptree_flagged_of(w, n);
    f->n += from->n;
    f->t += from->t;
    f->offcpu_t += from->offcpu_t;
    for (int k = 0; k < INSTR_OS_NKINDS; k++) {
        f->kind_n[k] += from->kind_n[k];
        f->kind_t[k] += from->kind_t[k];
    }
}

/* A node's flagged values into v (exclusive, like flagged_n). */
static void add_flagged(struct instr_values *v, const struct flagged *f)
{
    v->flagged_n += f->n;
    v->flagged_t += f->t;
    v->offcpu_t += f->offcpu_t;
    for (int k = 0; k < INSTR_OS_NKINDS; k++) {
        v->kind_n[k] += f->kind_n[k];
        v->kind_t[k] += f->kind_t[k];
    }
}

/* The function whose external time a node adds to: for a pseudo-frame
 * called directly by a function frame, that function; else UINT32_MAX. */
static inline uint32_t ext_caller(const struct instr_profile *p, const struct node *nodes, const struct node *nd)
{
    if (!(nd->key & INSTR_KEY_SITE) || nd->parent == 0)
        return UINT32_MAX;
    uint32_t caller = nodes[nd->parent].fn;
    return (p->funcs[caller].key & INSTR_KEY_SITE) ? UINT32_MAX : caller;
}

/* Keeps the thread's call tree (for the call-tree and caller/callee views). */
static int keep_tree(struct walker *w, uint32_t thread)
{
    struct instr_profile *p = w->p;
    size_t n = w->nnodes, base = p->nnodes;
    if (base + n >= UINT32_MAX)
        return INSTR_ENOMEM;
    struct instr_pnode *a = realloc(p->nodes, (base + n) * sizeof *a);
    if (!a)
        return INSTR_ENOMEM;
    p->nodes = a;
    for (size_t i = 0; i < n; i++) {
        const struct node *nd = &w->nodes[i];
        a[base + i] = (struct instr_pnode){
            .parent = (uint32_t)(base + (i ? nd->parent : 0)),
            .func = i ? nd->fn : UINT32_MAX,
            .thread = thread,
            .ei = w->incl[i].ei, .ee = nd->ee, .ai = w->incl[i].ai, .ae = nd->ae, .calls = nd->calls,
            .ci = w->incl[i].ci, .ce = nd->ce,
        };
    }
    p->nnodes = base + n;
    return 0;
}

/* Derives inclusive values and adds the tree into the profile. */
int instr_ptree_fold(struct walker *w, struct instr_pthread *th)
{
    struct instr_profile *p = w->p;
    struct node *nodes = w->nodes;
    struct incl *inc = w->incl;
    size_t n = w->nnodes;
    /* Children have larger indices than their parents: one reverse pass
     * sums inclusive values and links children lists. */
    for (size_t i = 0; i < n; i++)
        inc[i] = (struct incl){0}, nodes[i].first_child = nodes[i].next_sibling = 0;
    for (size_t i = n; i-- > 1;) {
        struct node *c = &nodes[i], *par = &nodes[c->parent];
        struct incl *ci = &inc[i], *pi = &inc[c->parent];
        ci->ei += c->ee;
        ci->ai += c->ae;
        ci->ci += c->ce;
        ci->po += c->po;
        pi->ei += ci->ei;
        pi->ai += ci->ai;
        pi->ci += ci->ci;
        pi->po += ci->po;
        c->next_sibling = par->first_child;
        par->first_child = (uint32_t)i;
    }
    th->v.ei = th->v.ee = inc[0].ei;
    th->v.ai = th->v.ae = inc[0].ai;
    th->v.ci = th->v.ce = inc[0].ci;
    th->v.po = inc[0].po;
    add_values(&p->total, &th->v);

    if (p->nfuncs > w->capfncount) {
        free(w->fncount);
        free(w->extcount);
        if (!(w->fncount = calloc(p->nfuncs, sizeof *w->fncount)) ||
            !(w->extcount = calloc(p->nfuncs, sizeof *w->extcount)))
            return INSTR_ENOMEM;
        w->capfncount = p->nfuncs;
    }
    if (p->nfuncs) {
        memset(w->fncount, 0, p->nfuncs * sizeof *w->fncount);
        memset(w->extcount, 0, p->nfuncs * sizeof *w->extcount);
    }
    memset(w->modcount, 0, p->nmodules * sizeof *w->modcount);

    /* Depth-first walk, counting how many nodes of each function and module
     * are on the current path: a node adds its inclusive values only when
     * it is the outermost of its function (module).  The explicit stack
     * holds node indices; the top bit marks "children done". */
    uint32_t *st = w->stack; /* reused: its capacity is at least the max depth + 1 */
    size_t cap = w->capstack, sp = 0;
    for (uint32_t c = nodes[0].first_child; c; c = nodes[c].next_sibling) {
        if (sp == cap) {
            if (instr_pwalk_grow_stack(w) < 0)
                return INSTR_ENOMEM;
            st = w->stack;
            cap = w->capstack;
        }
        st[sp++] = c;
    }
    while (sp) {
        uint32_t top = st[--sp];
        if (top & 0x80000000u) {
            struct node *nd = &nodes[top & 0x7fffffffu];
            w->fncount[nd->fn]--;
            w->modcount[p->funcs[nd->fn].module]--;
            if (ext_caller(p, nodes, nd) != UINT32_MAX)
                w->extcount[ext_caller(p, nodes, nd)]--;
            continue;
        }
        struct node *nd = &nodes[top];
        const struct incl *ni = &inc[top];
        struct instr_pfunc *f = &p->funcs[nd->fn];
        struct instr_pmodule *m = &p->modules[f->module];
        uint32_t ec = ext_caller(p, nodes, nd);
        if (ec != UINT32_MAX && w->extcount[ec]++ == 0) {
            p->funcs[ec].v.ext_ei += ni->ei;
            p->funcs[ec].v.ext_ai += ni->ai;
        }
        if (w->fncount[nd->fn]++ == 0) {
            f->v.ei += ni->ei;
            f->v.ai += ni->ai;
            f->v.ci += ni->ci;
            f->v.po += ni->po;
        }
        if (w->modcount[f->module]++ == 0) {
            m->v.ei += ni->ei;
            m->v.ai += ni->ai;
            m->v.ci += ni->ci;
            m->v.po += ni->po;
        }
        f->v.ee += nd->ee;
        f->v.ae += nd->ae;
        f->v.ce += nd->ce;
        m->v.ce += nd->ce;
        f->v.calls += nd->calls;
        if (nd->flagged) {
            add_flagged(&f->v, &w->flagged[nd->flagged]);
            add_flagged(&m->v, &w->flagged[nd->flagged]);
            add_flagged(&th->v, &w->flagged[nd->flagged]);
        }
        m->v.ee += nd->ee;
        m->v.ae += nd->ae;
        m->v.calls += nd->calls;
        th->v.calls += nd->calls;
        size_t need = sp + 1;
        for (uint32_t c = nd->first_child; c; c = nodes[c].next_sibling)
            need++;
        while (need > cap) {
            if (instr_pwalk_grow_stack(w) < 0)
                return INSTR_ENOMEM;
            st = w->stack;
            cap = w->capstack;
        }
        st[sp++] = top | 0x80000000u;
        for (uint32_t c = nd->first_child; c; c = nodes[c].next_sibling)
            st[sp++] = c;
    }
    return keep_tree(w, (uint32_t)(th - p->threads));
}

char *instr_profile_func_name(const struct instr_profile *p, uint32_t func)
{
    const struct instr_pfunc *f = &p->funcs[func];
    if (f->pseudo)
        return instr_demangle(f->pseudo);
    if (f->origin)
        return f->origin_demangled ? strdup(f->origin_demangled) : instr_demangle(f->origin);
    if (f->fn)
        return f->fn->demangled && f->fn->demangled[0] ? strdup(f->fn->demangled) : instr_demangle(f->fn->name);
    char buf[64];
    if (f->key & INSTR_KEY_SITE)
        snprintf(buf, sizeof buf, "[site %" PRIu64 "]", (uint64_t)(f->key & ~(INSTR_KEY_SITE | INSTR_KEY_UNNAMED)));
    else
        snprintf(buf, sizeof buf, "[function %" PRIu64 "]", f->key);
    return strdup(buf);
}

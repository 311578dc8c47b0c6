/* dump-metadata.c - the METADATA records of an instr dump: modules,
 * functions, threads, labels, call sites, maps, the process, counts,
 * sampling, hook costs, units and CPU times, each checked and copied out of
 * the mapping into struct instr_dump (dump-reader.c calls it per chunk). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "dump-reader-internal.h"

struct cursor {
    const uint8_t *p, *end;
};

static int get_str(struct cursor *c, char **out)
{
    uint64_t n;
    if (instr_get_varint(&c->p, c->end, &n) < 0 || n > (uint64_t)(c->end - c->p))
        return INSTR_ECORRUPT;
    char *s = malloc(n + 1);
    if (!s)
        return INSTR_ENOMEM;
    memcpy(s, c->p, n);
    s[n] = 0;
    /* Embedded NULs or control characters would break the text form. */
    for (uint64_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20)
            s[i] = '?';
    c->p += n;
    *out = s;
    return 0;
}

static int get_var(struct cursor *c, uint64_t *v)
{
    return instr_get_varint(&c->p, c->end, v) < 0 ? INSTR_ECORRUPT : 0;
}

static int get_u64(struct cursor *c, uint64_t *v)
{
    if (c->end - c->p < 8)
        return INSTR_ECORRUPT;
    *v = rd64(c->p);
    c->p += 8;
    return 0;
}

static size_t thread_hash(uint32_t index)
{
    return (size_t)((uint64_t)index * 0x9e3779b97f4a7c15ull >> 32);
}

/* The thread with this index, created if new.  A hash, not a scan: a
 * hostile file may name millions of threads. */
struct instr_thread_info *instr_dump_thread_slot(struct instr_dump *d, struct meta_caps *caps, uint32_t index)
{
    if (caps->tmap)
        for (size_t h = thread_hash(index) & caps->tmask; caps->tmap[h]; h = (h + 1) & caps->tmask)
            if (d->threads[caps->tmap[h] - 1].index == index)
                return &d->threads[caps->tmap[h] - 1];
    if (d->nthreads >= UINT32_MAX - 1)
        return NULL;
    if (!caps->tmap || (d->nthreads + 1) * 2 > caps->tmask + 1) {
        size_t n = caps->tmap ? (caps->tmask + 1) * 2 : 64;
        uint32_t *m = calloc(n, sizeof *m);
        if (!m)
            return NULL;
        for (size_t i = 0; i < d->nthreads; i++) {
            size_t h = thread_hash(d->threads[i].index) & (n - 1);
            while (m[h])
                h = (h + 1) & (n - 1);
            m[h] = (uint32_t)i + 1;
        }
        free(caps->tmap);
        caps->tmap = m;
        caps->tmask = n - 1;
    }
    struct instr_thread_info *t = instr_grow(d->threads, &caps->threads, d->nthreads + 1, sizeof *t, 16);
    if (!t)
        return NULL;
    d->threads = t;
    size_t h = thread_hash(index) & caps->tmask;
    while (caps->tmap[h])
        h = (h + 1) & caps->tmask;
    caps->tmap[h] = (uint32_t)d->nthreads + 1;
    t = &d->threads[d->nthreads++];
    memset(t, 0, sizeof *t);
    t->index = index;
    return t;
}

/* PROCESS record: the working directory and the command line (a later
 * record wins). */
static int parse_process(struct instr_dump *d, struct cursor *c)
{
    char *cwd;
    uint64_t argc;
    int rc;
    if ((rc = get_str(c, &cwd)))
        return rc;
    if ((rc = get_var(c, &argc)) || argc > (uint64_t)(c->end - c->p)) {
        free(cwd);
        return rc ? rc : INSTR_ECORRUPT; /* each argument takes a byte at least */
    }
    char **argv = calloc(argc + 1, sizeof *argv);
    if (!argv) {
        free(cwd);
        return INSTR_ENOMEM;
    }
    for (uint64_t i = 0; i < argc; i++)
        if ((rc = get_str(c, &argv[i]))) {
            while (i--)
                free(argv[i]);
            free(argv);
            free(cwd);
            return rc;
        }
    instr_dump_free_process(d);
    d->cwd = cwd;
    d->argv = argv;
    d->argc = (size_t)argc;
    return 0;
}

/* Appends item (size bytes) to arr, an array of *n with room for *cap,
 * grown as needed: the array (perhaps moved), or NULL (nothing added). */
static void *append(void *arr, size_t *cap, size_t *n, const void *item, size_t size)
{
    uint8_t *a = instr_grow(arr, cap, *n + 1, size, 16);
    if (a)
        memcpy(a + (*n)++ * size, item, size);
    return a;
}

/* Parses one record; returns 0, or a negative code (the caller warns and
 * skips the rest of the chunk on CORRUPT). */
static int parse_record(struct instr_dump *d, struct meta_caps *caps, unsigned type, struct cursor *c)
{
    int rc;
    switch (type) {
    case INSTR_META_MODULE: {
        struct instr_module m = {0};
        if ((rc = get_var(c, &m.id)) || (rc = get_str(c, &m.path)))
            return rc;
        if (c->end - c->p >= 8) {
            m.load_addr = rd64(c->p);
            c->p += 8;
        }
        struct instr_module *a = append(d->modules, &caps->modules, &d->nmodules, &m, sizeof m);
        if (!a) {
            free(m.path);
            return INSTR_ENOMEM;
        }
        d->modules = a;
        return 0;
    }
    case INSTR_META_FUNCTION: {
        struct instr_function f = {0};
        if ((rc = get_var(c, &f.id)) || (rc = get_var(c, &f.module)) || (rc = get_var(c, &f.line)))
            return rc;
        if ((rc = get_str(c, &f.name)))
            return rc;
        if ((rc = get_str(c, &f.file))) {
            free(f.name);
            return rc;
        }
        /* The demangled name came later: a record may end before it. */
        if ((rc = c->p < c->end ? get_str(c, &f.demangled) : (f.demangled = strdup("")) ? 0 : INSTR_ENOMEM)) {
            free(f.name);
            free(f.file);
            return rc;
        }
        struct instr_function *a = append(d->functions, &caps->functions, &d->nfunctions, &f, sizeof f);
        if (!a) {
            free(f.name);
            free(f.file);
            free(f.demangled);
            return INSTR_ENOMEM;
        }
        d->functions = a;
        return 0;
    }
    case INSTR_META_THREAD: {
        uint64_t index, tid;
        char *name;
        if ((rc = get_var(c, &index)) || (rc = get_var(c, &tid)) || (rc = get_str(c, &name)))
            return rc;
        if (index > UINT32_MAX) {
            free(name);
            return INSTR_ECORRUPT;
        }
        struct instr_thread_info *t = instr_dump_thread_slot(d, caps, (uint32_t)index);
        if (!t) {
            free(name);
            return INSTR_ENOMEM;
        }
        free(t->name); /* a later record wins */
        t->name = name;
        t->tid = tid;
        return 0;
    }
    case INSTR_META_LABEL: {
        struct instr_label l = {0};
        if ((rc = get_var(c, &l.id)) || (rc = get_str(c, &l.text)))
            return rc;
        struct instr_label *a = append(d->labels, &caps->labels, &d->nlabels, &l, sizeof l);
        if (!a) {
            free(l.text);
            return INSTR_ENOMEM;
        }
        d->labels = a;
        return 0;
    }
    case INSTR_META_CALLSITE: {
        struct instr_callsite cs = {0};
        if ((rc = get_var(c, &cs.id)) || (rc = get_var(c, &cs.caller)) || (rc = get_var(c, &cs.line)) ||
            (rc = get_var(c, &cs.flags)) || (rc = get_str(c, &cs.callee)))
            return rc;
        if ((rc = get_var(c, &cs.module)) || c->end - c->p < 16) {
            free(cs.callee);
            return rc ? rc : INSTR_ECORRUPT;
        }
        cs.callee_off = rd64(c->p);
        cs.site_off = rd64(c->p + 8);
        c->p += 16;
        struct instr_callsite *a = append(d->sites, &caps->sites, &d->nsites, &cs, sizeof cs);
        if (!a) {
            free(cs.callee);
            return INSTR_ENOMEM;
        }
        d->sites = a;
        return 0;
    }
    case INSTR_META_MAP: {
        struct instr_map m = {0};
        if ((rc = get_var(c, &m.module)))
            return rc;
        if (c->end - c->p < 32)
            return INSTR_ECORRUPT;
        m.start = rd64(c->p);
        m.end = rd64(c->p + 8);
        m.pgoff = rd64(c->p + 16);
        m.tick = rd64(c->p + 24);
        c->p += 32;
        if (m.end <= m.start)
            return INSTR_ECORRUPT;
        struct instr_map *a = append(d->maps, &caps->maps, &d->nmaps, &m, sizeof m);
        if (!a)
            return INSTR_ENOMEM;
        d->maps = a;
        return 0;
    }
    case INSTR_META_PROCESS:
        return parse_process(d, c);
    case INSTR_META_FN_CALLS: {
        struct instr_fn_calls fc;
        if ((rc = get_var(c, &fc.fn)) || (rc = get_var(c, &fc.calls)))
            return rc;
        struct instr_fn_calls *a = append(d->fn_calls, &caps->fn_calls, &d->nfn_calls, &fc, sizeof fc);
        if (!a)
            return INSTR_ENOMEM;
        d->fn_calls = a;
        return 0;
    }
    case INSTR_META_SITE_CALLS: {
        struct instr_site_calls sc;
        if ((rc = get_var(c, &sc.caller)) || (rc = get_var(c, &sc.line)) || (rc = get_var(c, &sc.flags)) ||
            (rc = get_str(c, &sc.callee)))
            return rc;
        if ((rc = get_var(c, &sc.calls))) {
            free(sc.callee);
            return rc;
        }
        struct instr_site_calls *a = append(d->site_calls, &caps->site_calls, &d->nsite_calls, &sc, sizeof sc);
        if (!a) {
            free(sc.callee);
            return INSTR_ENOMEM;
        }
        d->site_calls = a;
        return 0;
    }
    case INSTR_META_SAMPLING: {
        uint64_t rate, period, stack;
        char *unw;
        if ((rc = get_var(c, &rate)) || (rc = get_var(c, &period)) || (rc = get_var(c, &stack)) ||
            (rc = get_str(c, &unw)))
            return rc;
        free(d->sample_unwinder); /* a later record wins */
        d->sample_unwinder = unw;
        d->sample_rate_hz = rate;
        d->sample_period_ns = period;
        d->sample_stack_bytes = stack;
        return 0;
    }
    case INSTR_META_HOOK_COST: {
        uint64_t kind;
        struct instr_hook_cost hc;
        if ((rc = get_var(c, &kind)) || (rc = get_var(c, &hc.before)) || (rc = get_var(c, &hc.after)) ||
            (rc = get_var(c, &hc.spread)) || (rc = get_var(c, &hc.rounds)))
            return rc;
        if (kind >= sizeof d->hook_cost / sizeof d->hook_cost[0] || hc.before > UINT32_MAX ||
            hc.after > UINT32_MAX)
            return INSTR_ECORRUPT; /* not a hook's event, or a cost no hook has */
        d->hook_cost[kind] = hc; /* a later record wins */
        return 0;
    }
    case INSTR_META_UNIT: {
        uint64_t module, threshold, left, instrumented;
        char *file;
        if ((rc = get_var(c, &module)) || (rc = get_var(c, &threshold)) || (rc = get_var(c, &left)) ||
            (rc = get_var(c, &instrumented)) || (rc = get_str(c, &file)))
            return rc;
        free(file);
        if (!d->threshold_units || threshold < d->threshold_min)
            d->threshold_min = threshold;
        if (threshold > d->threshold_max)
            d->threshold_max = threshold;
        d->threshold_units++;
        d->threshold_left_out += left;
        d->threshold_instrumented += instrumented;
        return 0;
    }
    case INSTR_META_CPU_TIME: {
        uint64_t index, ns;
        if ((rc = get_var(c, &index)) || (rc = get_var(c, &ns)))
            return rc;
        if (index > UINT32_MAX)
            return INSTR_ECORRUPT;
        struct instr_thread_info *t = instr_dump_thread_slot(d, caps, (uint32_t)index);
        if (!t)
            return INSTR_ENOMEM;
        t->cpu_ns += ns;
        return 0;
    }
    case INSTR_META_CLOCK_SYNC: {
        uint64_t peer, rtt;
        struct instr_clock_sync k;
        if ((rc = get_var(c, &peer)) || (rc = get_u64(c, &k.local)) || (rc = get_u64(c, &k.peer_ticks)) ||
            (rc = get_var(c, &rtt)))
            return rc;
        if (peer > INT32_MAX)
            return INSTR_ECORRUPT;
        k.peer = (uint32_t)peer;
        k.rtt = rtt;
        d->clock_sync[d->nclock_sync ? 1 : 0] = k; /* the first, and the last */
        d->nclock_sync = d->nclock_sync ? 2 : 1;
        return 0;
    }
    case INSTR_META_EXIT_CPU: {
        uint64_t index, ns, tick;
        if ((rc = get_var(c, &index)) || (rc = get_var(c, &ns)) || (rc = get_var(c, &tick)))
            return rc;
        if (index > UINT32_MAX)
            return INSTR_ECORRUPT;
        struct instr_thread_info *t = instr_dump_thread_slot(d, caps, (uint32_t)index);
        if (!t)
            return INSTR_ENOMEM;
        t->has_exit_cpu = 1; /* a later record wins */
        t->exit_cpu_ns = ns;
        t->exit_cpu_tick = tick;
        return 0;
    }
    }
    return 0; /* unknown record type: skipped by its length */
}

int instr_dump_parse_metadata(struct instr_dump *d, struct meta_caps *caps, const uint8_t *p, size_t len,
                              uint64_t chunk_no)
{
    const uint8_t *end = p + len;
    while (p < end && *p != 0) {
        unsigned type = *p++;
        uint64_t plen;
        if (instr_get_varint(&p, end, &plen) < 0 || plen > (uint64_t)(end - p))
            return instr_dump_warn(d, "metadata chunk %llu: record cut short; rest of chunk skipped",
                                   (unsigned long long)chunk_no);
        struct cursor c = {p, p + plen};
        int rc = parse_record(d, caps, type, &c);
        if (rc == INSTR_ENOMEM)
            return rc;
        if (rc < 0 && (rc = instr_dump_warn(d, "metadata chunk %llu: malformed %u record skipped",
                                            (unsigned long long)chunk_no, type)))
            return rc;
        p += plen;
    }
    return 0;
}

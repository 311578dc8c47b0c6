/* profile-cache.c - a dump's walked profile kept in the user's cache (see
 * profile-cache.h).
 *
 * The file:
 *
 *   struct head        magic, the key (what the profile was built from,
 *                      compared field by field), the lengths, the checksum
 *   path               the dump's absolute path (to drop the profile once
 *                      the dump is gone)
 *   body               the profile's scalars, then its arrays as they are
 *                      in memory, the clones' names as strings
 *
 * The checksum covers the path and the body.  Pointers into the dump's
 * metadata (names, paths, functions) are not kept: they are found again in
 * the dump, which is open.  Written to a new name and renamed, so a reader
 * never sees half of one. */
#define _GNU_SOURCE
#include "profile-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "private-dir.h"

#define CACHE_MAGIC "INSTRPC3"
#define CACHE_SUFFIX ".profile"
#define CACHE_MAX_FILE (1ull << 31) /* a larger file is not one of ours */

/* The smallest dump kept: INSTR_PROFILE_CACHE_MIN, 0 once the fuzz target
 * plants a profile (instr_profile_cache_plant). */
static uint64_t cache_min = INSTR_PROFILE_CACHE_MIN;

struct key {
    uint64_t dev, ino, size, mtime_s, mtime_ns, ctime_s, ctime_ns; /* the dump's status */
    uint64_t content; /* hash of its header and of its chunks' headers (dump_content) */
    uint64_t tool_ino, tool_size, tool_mtime_ns; /* this executable */
    uint32_t raw, wall;
    uint32_t sizes[6]; /* the structures' sizes: a layout guard */
};

struct head {
    char magic[8];
    uint32_t path_len; /* bytes of the path after the head */
    uint32_t pad;
    uint64_t body_len; /* bytes of the body after the path */
    uint64_t sum;      /* checksum of the path and the body */
    struct key key;
};

struct scalars {
    struct instr_values total;
    struct instr_repairs repairs;
    struct instr_compensation comp;
    uint64_t events, offcpu_unknown, max_nodes;
    uint64_t nfuncs, nthreads, nmodules, nnodes, nwindows, switched_at, recorded_ticks, nswitches;
    int32_t wall_on, wall_merged, wall_overflow, wall_nomem;
    uint64_t merged_nfn, merged_root_len;
    int32_t merged_nomem, pad;
};

/* A 64-bit checksum, eight bytes a step: against a damaged file, not an
 * adversary (no one else can write the directory). */
static uint64_t checksum(uint64_t h, const unsigned char *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; n; p++, n--)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* What the dump says of itself, beyond its status: its header (pid, start
 * times, chunk count, end) and a chunk header's worth of bytes at up to 257
 * places spread over it at steps of the header's chunk_size (chunk headers
 * in a version-1 dump; in a version-2 one, whose first chunks are smaller,
 * whatever lies there: headers or events, as fixed by the file as they),
 * so a dump rewritten in place with the old size and times is known for
 * another without reading all of it.  Read from fd, the file at the
 * dump's path now, with pread: touching them through the mapping would
 * fault in the pages around each (up to 16 MB of the report's RSS, which
 * the walk keeps below half the dump's size).  -1 when fd's header is not
 * the mapped dump's (the path was replaced since it was opened). */
static int dump_content(const struct instr_dump *d, int fd, uint64_t *out)
{
    uint64_t hs = d->hdr.header_size, cs = d->hdr.chunk_size;
    size_t n = (size_t)(hs < d->size ? hs : d->size);
    unsigned char buf[INSTR_CHUNK_HEADER_SIZE], *head = malloc(n ? n : 1);
    if (!head)
        return -1;
    int same = pread(fd, head, n, 0) == (ssize_t)n && !memcmp(head, d->map, n);
    uint64_t h = checksum(0xcbf29ce484222325ull, head, n);
    free(head);
    if (!same)
        return -1;
    uint64_t nchunks = cs < INSTR_CHUNK_HEADER_SIZE || hs >= d->size ? 0 : (d->size - hs) / cs;
    for (uint64_t k = 0; nchunks && k <= 256; k++) {
        uint64_t i = nchunks <= 257 ? k : k * (nchunks - 1) / 256;
        if (i >= nchunks)
            break;
        if (pread(fd, buf, sizeof buf, (off_t)(hs + i * cs)) != (ssize_t)sizeof buf)
            return -1;
        h = checksum(h, buf, sizeof buf);
    }
    *out = h;
    return 0;
}

static int make_key(struct key *k, const struct instr_dump *d, int wall)
{
    struct stat st, tool;
    memset(k, 0, sizeof *k);
    /* A dump its process may still write (not complete, not ended by a
     * signal) is not kept: its content may change with no new time. */
    if (!(d->hdr.flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)) || !d->path || !strcmp(d->path, "-") ||
        !d->map || stat("/proc/self/exe", &tool))
        return -1;
    int fd = open(d->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == d->size &&
             dump_content(d, fd, &k->content) == 0;
    close(fd);
    if (!ok)
        return -1;
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    k->size = (uint64_t)st.st_size;
    k->mtime_s = (uint64_t)st.st_mtim.tv_sec;
    k->mtime_ns = (uint64_t)st.st_mtim.tv_nsec;
    k->ctime_s = (uint64_t)st.st_ctim.tv_sec;
    k->ctime_ns = (uint64_t)st.st_ctim.tv_nsec;
    k->tool_ino = tool.st_ino;
    k->tool_size = (uint64_t)tool.st_size;
    k->tool_mtime_ns = (uint64_t)tool.st_mtim.tv_sec * 1000000000u + (uint64_t)tool.st_mtim.tv_nsec;
    k->raw = d->raw != 0;
    k->wall = (uint32_t)wall;
    const uint32_t sizes[6] = {sizeof(struct instr_pfunc), sizeof(struct instr_pthread),
                               sizeof(struct instr_pmodule), sizeof(struct instr_pnode),
                               sizeof(struct instr_window), sizeof(struct instr_switch)};
    memcpy(k->sizes, sizes, sizeof sizes);
    return 0;
}

/* The cache directory's path: 0, or -1 (no cache: "off", or no place). */
static int cache_dir(char *dir, size_t dirlen)
{
    const char *e = getenv("INSTR_REPORT_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n;
    if (e && !strcmp(e, "off"))
        return -1;
    if (e && *e)
        n = snprintf(dir, dirlen, "%s", e);
    else if (x && *x == '/')
        n = snprintf(dir, dirlen, "%s/instr", x);
    else if (h && *h == '/')
        n = snprintf(dir, dirlen, "%s/.cache/instr", h);
    else
        return -1;
    return n < 0 || (size_t)n >= dirlen ? -1 : 0;
}

/* The file name of key k (in the cache directory). */
static void cache_name(const struct key *k, char *name, size_t len)
{
    snprintf(name, len, "%016llx" CACHE_SUFFIX,
             (unsigned long long)checksum(0xcbf29ce484222325ull, (const unsigned char *)k, sizeof *k));
}

/* INSTR_REPORT_CACHE_SIZE: bytes, with an optional K, M or G; the default
 * when unset.  A value that is not a size: -1, and why (the cache is not
 * written with a bound nobody asked for). */
static int cache_cap(uint64_t *cap, char *why, size_t whylen)
{
    const char *v = getenv("INSTR_REPORT_CACHE_SIZE");
    char *end;
    *cap = INSTR_PROFILE_CACHE_CAP;
    if (!v || !*v)
        return 0;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    if (end == v || *v == '-' || errno || (shift && end[1]) || (!shift && *end) || x > (UINT64_MAX >> 30)) {
        snprintf(why, whylen, "INSTR_REPORT_CACHE_SIZE=%.64s is not a size (bytes, with an optional K, M or G)", v);
        return -1;
    }
    *cap = (uint64_t)x << shift;
    return 0;
}

/* ---- reading: every count and index checked ---------------------------------- */

struct cursor {
    const unsigned char *p;
    size_t left;
    int ok;
};

static void take(struct cursor *c, void *dst, size_t n)
{
    if (!c->ok || n > c->left) {
        c->ok = 0;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
}

/* A malloc'd copy of n elements of size bytes, or NULL (n == 0 included). */
static void *take_array(struct cursor *c, size_t size, uint64_t n)
{
    if (!c->ok || n == 0)
        return NULL;
    if (n > c->left / size) {
        c->ok = 0;
        return NULL;
    }
    void *p = malloc((size_t)n * size);
    if (!p) {
        c->ok = 0;
        return NULL;
    }
    take(c, p, (size_t)n * size);
    return p;
}

static char *take_string(struct cursor *c)
{
    uint32_t len;
    take(c, &len, sizeof len);
    if (!c->ok || len == UINT32_MAX)
        return NULL;
    if (len > c->left) {
        c->ok = 0;
        return NULL;
    }
    char *s = malloc((size_t)len + 1);
    if (!s) {
        c->ok = 0;
        return NULL;
    }
    take(c, s, len);
    s[len] = 0;
    return s;
}

/* The call trees: each node's thread, function and parent in range, a
 * thread's nodes together with its root first (its own parent, no
 * function), every other node after its parent in the same thread: so no
 * walk up a tree can leave it or go round. */
static int nodes_valid(const struct instr_profile *q)
{
    size_t block = 0;
    uint32_t thread = 0;
    for (size_t i = 0; i < q->nnodes; i++) {
        const struct instr_pnode *n = &q->nodes[i];
        if (n->thread >= q->nthreads)
            return 0;
        if (n->func == UINT32_MAX) {
            if (n->parent != i)
                return 0;
            block = i;
            thread = n->thread;
        } else if (i == 0 || n->func >= q->nfuncs || n->parent < block || n->parent >= i || n->thread != thread) {
            return 0;
        }
    }
    return 1;
}

/* The pointers into d that were not kept. */
static void relink(struct instr_profile *p, const struct instr_dump *d)
{
    for (size_t i = 0; i < p->nfuncs; i++) {
        struct instr_pfunc *f = &p->funcs[i];
        f->fn = NULL;
        f->pseudo = NULL;
        size_t k = (size_t)(f->key & ~INSTR_KEY_SITE);
        if (!(f->key & INSTR_KEY_SITE))
            f->fn = instr_dump_function(d, f->key);
        else if (k < p->sites.nnames)
            f->pseudo = p->sites.names[k];
    }
    for (size_t i = 0; i < p->nthreads; i++)
        p->threads[i].name = d->threads[i].name;
    for (size_t i = 0; i < p->nmodules; i++)
        p->modules[i].path = i < d->nmodules ? d->modules[i].path : NULL;
}

int instr_profile_cache_parse(struct instr_profile *p, const struct instr_dump *d, const unsigned char *body,
                              size_t len)
{
    struct cursor c = {body, len, 1};
    struct scalars sc;
    struct instr_profile q;
    memset(&q, 0, sizeof q);
    q.dump = d;
    take(&c, &sc, sizeof sc);
    /* The counts the dump fixes, and a Wall Inclusive the cache can hold
     * (a merged walk's lengths, one per function). */
    c.ok = c.ok && sc.nthreads == d->nthreads && sc.nmodules == d->nmodules + 1 &&
           (sc.wall_on == 0 || (sc.wall_on == 1 && sc.wall_merged == 1 && sc.merged_nfn == sc.nfuncs)) &&
           (sc.wall_merged == 0 || sc.wall_on == 1) && sc.nfuncs < UINT32_MAX && sc.nnodes < UINT32_MAX;
    if (c.ok) {
        q.total = sc.total;
        q.repairs = sc.repairs;
        q.comp = sc.comp;
        q.events = sc.events;
        q.offcpu_unknown = sc.offcpu_unknown;
        q.wall_on = sc.wall_on;
        q.wall_merged = sc.wall_merged;
        q.wall.overflow = sc.wall_overflow;
        q.wall.nomem = sc.wall_nomem;
        q.merged.root_len = sc.merged_root_len;
        q.merged.nomem = sc.merged_nomem;
        q.switched_at = (size_t)sc.switched_at;
        q.recorded_ticks = sc.recorded_ticks;
        q.nfuncs = (size_t)sc.nfuncs;
        q.funcs = take_array(&c, sizeof *q.funcs, sc.nfuncs);
        for (size_t i = 0; c.ok && i < q.nfuncs; i++)
            q.funcs[i].origin = q.funcs[i].origin_demangled = NULL;
        if (!c.ok)
            q.nfuncs = 0; /* nothing of theirs to free */
        for (size_t i = 0; c.ok && i < q.nfuncs; i++) {
            q.funcs[i].origin = take_string(&c);
            q.funcs[i].origin_demangled = take_string(&c);
            c.ok = c.ok && q.funcs[i].module < sc.nmodules;
        }
        q.nthreads = (size_t)sc.nthreads;
        q.threads = take_array(&c, sizeof *q.threads, sc.nthreads);
        for (size_t i = 0; c.ok && i < q.nthreads; i++)
            c.ok = q.threads[i].index == d->threads[i].index && q.threads[i].tid == d->threads[i].tid &&
                   (q.threads[i].open_top == UINT32_MAX || q.threads[i].open_top < q.nfuncs) &&
                   (q.threads[i].open_caller == UINT32_MAX || q.threads[i].open_caller < q.nfuncs);
        q.nmodules = (size_t)sc.nmodules;
        q.modules = take_array(&c, sizeof *q.modules, sc.nmodules);
        q.nnodes = (size_t)sc.nnodes;
        q.nodes = take_array(&c, sizeof *q.nodes, sc.nnodes);
        q.nwindows = (size_t)sc.nwindows;
        q.windows = take_array(&c, sizeof *q.windows, sc.nwindows);
        q.nswitches = q.capswitches = (size_t)sc.nswitches;
        q.switches = take_array(&c, sizeof *q.switches, sc.nswitches);
        q.merged.nfn = (size_t)sc.merged_nfn;
        q.merged.len = take_array(&c, sizeof *q.merged.len, sc.merged_nfn);
        c.ok = c.ok && c.left == 0 && nodes_valid(&q);
    }
    /* The largest tree, counted again: walks size their stacks by it. */
    for (size_t i = 0, block = 0; c.ok && i <= q.nnodes; i++)
        if (i == q.nnodes || q.nodes[i].func == UINT32_MAX) {
            if (i - block > q.max_nodes)
                q.max_nodes = i - block;
            block = i;
        }
    if (!c.ok || instr_sitemap_build(&q.sites, d) < 0) {
        instr_profile_free(&q);
        return 0;
    }
    relink(&q, d);
    *p = q;
    return 1;
}

int instr_profile_cache_load(struct instr_profile *p, const struct instr_dump *d, int wall, char *why,
                             size_t whylen)
{
    struct key k;
    struct head h;
    char dir[4000], name[64];
    *why = 0;
    if (d->size < cache_min || cache_dir(dir, sizeof dir) < 0 || make_key(&k, d, wall) < 0)
        return 0;
    int dfd = instr_private_dir_open(dir, 0, why, whylen);
    if (dfd < 0)
        return *why ? -1 : 0;
    cache_name(&k, name, sizeof name);
    struct stat st;
    int fd = instr_private_file_open(dfd, name, &st, why, whylen);
    close(dfd);
    if (fd < 0)
        return *why ? -1 : 0;
    unsigned char *buf = NULL;
    int rc = -1;
    if ((uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > CACHE_MAX_FILE ||
        !(buf = malloc((size_t)st.st_size))) {
        snprintf(why, whylen, "%s: not a profile of this version", name);
        goto out;
    }
    size_t got = 0;
    for (ssize_t r; got < (size_t)st.st_size; got += (size_t)r)
        if ((r = read(fd, buf + got, (size_t)st.st_size - got)) <= 0)
            break;
    if (got == (size_t)st.st_size)
        memcpy(&h, buf, sizeof h);
    if (got != (size_t)st.st_size || memcmp(h.magic, CACHE_MAGIC, 8)) {
        snprintf(why, whylen, "%s: not a profile of this version", name);
        goto out;
    }
    if (memcmp(&h.key, &k, sizeof k)) {
        rc = 0; /* another dump's, by a name's collision: walk, and overwrite it */
        goto out;
    }
    const unsigned char *rest = buf + sizeof h;
    size_t nrest = got - sizeof h;
    if (h.path_len > nrest || h.body_len != nrest - h.path_len || checksum(0, rest, nrest) != h.sum) {
        snprintf(why, whylen, "%s: damaged (its checksum or lengths do not match)", name);
        goto out;
    }
    if (!instr_profile_cache_parse(p, d, rest + h.path_len, (size_t)h.body_len)) {
        snprintf(why, whylen, "%s: does not fit the dump (a count or index out of range)", name);
        goto out;
    }
    futimens(fd, NULL); /* used now: the last to be evicted */
    rc = 1;
out:
    free(buf);
    close(fd);
    return rc;
}

/* ---- writing --------------------------------------------------------------------- */

/* The body and checksum grow in one buffer. */
struct out {
    unsigned char *buf;
    size_t len, cap;
    int ok;
};

static void put(struct out *o, const void *p, size_t n)
{
    if (!o->ok || n == 0)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n)
            cap *= 2;
        unsigned char *g = realloc(o->buf, cap);
        if (!g) {
            o->ok = 0;
            return;
        }
        o->buf = g;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void put_string(struct out *o, const char *s)
{
    uint32_t len = s ? (uint32_t)strlen(s) : UINT32_MAX;
    put(o, &len, sizeof len);
    if (s)
        put(o, s, len);
}

/* Whether the profile file name in dir is still wanted: of this version,
 * and its dump still there (the same file).  For instr_private_dir_trim. */
static int still_wanted(void *ctx, int dir, const char *name)
{
    (void)ctx;
    struct stat st, ds;
    char why[256], path[4097];
    int fd = instr_private_file_open(dir, name, &st, why, sizeof why);
    if (fd < 0)
        return 1; /* not ours to judge: trimmed by size only */
    struct head h;
    int keep = read(fd, &h, sizeof h) == (ssize_t)sizeof h && !memcmp(h.magic, CACHE_MAGIC, 8) &&
               h.path_len < sizeof path && pread(fd, path, h.path_len, sizeof h) == (ssize_t)h.path_len;
    close(fd);
    if (!keep)
        return 0;
    path[h.path_len] = 0;
    return stat(path, &ds) == 0 && (uint64_t)ds.st_dev == h.key.dev && (uint64_t)ds.st_ino == h.key.ino;
}

/* The body of p's file: its scalars and arrays, as the parse reads them. */
static void put_body(struct out *o, const struct instr_profile *p)
{
    struct scalars sc;
    memset(&sc, 0, sizeof sc);
    sc.total = p->total;
    sc.repairs = p->repairs;
    sc.comp = p->comp;
    sc.events = p->events;
    sc.offcpu_unknown = p->offcpu_unknown;
    sc.max_nodes = p->max_nodes;
    sc.nfuncs = p->nfuncs;
    sc.nthreads = p->nthreads;
    sc.nmodules = p->nmodules;
    sc.nnodes = p->nnodes;
    sc.nwindows = p->nwindows;
    sc.switched_at = p->switched_at;
    sc.recorded_ticks = p->recorded_ticks;
    sc.nswitches = p->nswitches;
    sc.wall_on = p->wall_on;
    sc.wall_merged = p->wall_merged;
    sc.wall_overflow = p->wall.overflow;
    sc.wall_nomem = p->wall.nomem;
    sc.merged_nfn = p->wall_merged ? p->merged.nfn : 0;
    sc.merged_root_len = p->merged.root_len;
    sc.merged_nomem = p->merged.nomem;
    put(o, &sc, sizeof sc);
    put(o, p->funcs, sizeof *p->funcs * p->nfuncs);
    for (size_t i = 0; i < p->nfuncs; i++) {
        put_string(o, p->funcs[i].origin);
        put_string(o, p->funcs[i].origin_demangled);
    }
    put(o, p->threads, sizeof *p->threads * p->nthreads);
    put(o, p->modules, sizeof *p->modules * p->nmodules);
    put(o, p->nodes, sizeof *p->nodes * p->nnodes);
    put(o, p->windows, sizeof *p->windows * p->nwindows);
    put(o, p->switches, sizeof *p->switches * p->nswitches);
    put(o, p->merged.len, sizeof *p->merged.len * (size_t)sc.merged_nfn);
}

int instr_profile_serialize(const struct instr_profile *p, unsigned char **body, size_t *len)
{
    struct out o = {.ok = 1};
    put_body(&o, p);
    if (!o.ok) {
        free(o.buf);
        return -1;
    }
    *body = o.buf;
    *len = o.len;
    return 0;
}

/* Writes the file of dump d (wall mode `wall`) with the body
 * body[0..len): head, the dump's absolute path, the body; under a new
 * name, renamed into place; then bounds the directory. */
static int store(const struct instr_dump *d, int wall, const void *body, size_t len, char *why, size_t whylen)
{
    struct key k;
    char dir[4000], name[64], tmp[128];
    uint64_t cap;
    *why = 0;
    if (d->size < cache_min || cache_dir(dir, sizeof dir) < 0 || make_key(&k, d, wall) < 0)
        return 0;
    if (cache_cap(&cap, why, whylen) < 0)
        return -1;
    char *abs = realpath(d->path, NULL);
    if (!abs)
        return 0;
    struct head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.key = k;
    h.path_len = (uint32_t)strlen(abs);
    h.body_len = len;
    struct out o = {.ok = h.path_len < 4096};
    put(&o, &h, sizeof h);
    put(&o, abs, h.path_len);
    free(abs);
    put(&o, body, len);
    int rc = 0;
    if (o.ok) {
        struct head *hp = (struct head *)o.buf;
        hp->sum = checksum(0, o.buf + sizeof h, o.len - sizeof h);
        int dfd = instr_private_dir_open(dir, 1, why, whylen);
        rc = dfd < 0 && *why ? -1 : 0;
        if (dfd >= 0) {
            cache_name(&k, name, sizeof name);
            int fd = instr_private_file_create(dfd, name, tmp, sizeof tmp);
            if (fd >= 0) {
                size_t done = 0;
                for (ssize_t r; done < o.len; done += (size_t)r)
                    if ((r = write(fd, o.buf + done, o.len - done)) <= 0)
                        break;
                if (close(fd) == 0 && done == o.len)
                    instr_private_file_commit(dfd, tmp, name);
                else
                    unlinkat(dfd, tmp, 0);
            }
            instr_private_dir_trim(dfd, CACHE_SUFFIX, cap, still_wanted, NULL, NULL);
            close(dfd);
        }
    }
    free(o.buf);
    return rc;
}

int instr_profile_cache_save(const struct instr_profile *p, int wall, char *why, size_t whylen)
{
    *why = 0;
    /* Segments (several processes, or more threads than the merge takes)
     * are not kept: only a merged walk's lengths are. */
    if (p->dump->size < cache_min || (p->wall_on && !p->wall_merged))
        return 0;
    struct out o = {.ok = 1};
    put_body(&o, p);
    int rc = o.ok ? store(p->dump, wall, o.buf, o.len, why, whylen) : 0;
    free(o.buf);
    return rc;
}

int instr_profile_cache_plant(const struct instr_dump *d, int wall, const void *body, size_t len)
{
    char why[256];
    cache_min = 0;
    return store(d, wall, body, len, why, sizeof why);
}

long instr_profile_cache_clear(const char **dirp, char *why, size_t whylen)
{
    static char dir[4000];
    *why = 0;
    *dirp = NULL;
    if (cache_dir(dir, sizeof dir) < 0)
        return 0;
    *dirp = dir;
    int dfd = instr_private_dir_open(dir, 0, why, whylen);
    if (dfd < 0)
        return *why ? -1 : 0;
    long n = (long)instr_private_dir_trim(dfd, CACHE_SUFFIX, 0, NULL, NULL, NULL);
    close(dfd);
    return n;
}

/* profile-cache.c - a dump's walked profile kept in the user's cache (see
 * profile-cache.h).
 *
 * The file: a key (what the profile was built from, compared field by
 * field), the profile's scalars, then its arrays as they are in memory.
 * Pointers into the dump's metadata (names, paths, functions) are not
 * kept: they are found again in the dump, which is open.  Written to a
 * temporary name and renamed, so a reader never sees half of one. */
#define _GNU_SOURCE
#include "profile-cache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "INSTRPC1"

struct key {
    char magic[8];
    uint64_t dev, ino, size, mtime_s, mtime_ns; /* the dump */
    uint64_t tool_ino, tool_size, tool_mtime_ns; /* this executable */
    uint32_t raw, wall;
    uint32_t sizes[6]; /* the structures' sizes: a layout guard */
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

static int make_key(struct key *k, const struct instr_dump *d, int wall)
{
    struct stat st, tool;
    memset(k, 0, sizeof *k);
    /* A dump its process may still write (not complete, not ended by a
     * signal) is not kept: its content may change with no new time. */
    if (!(d->hdr.flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)) || !d->path || !strcmp(d->path, "-") ||
        stat(d->path, &st) || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size != d->size || stat("/proc/self/exe", &tool))
        return -1;
    memcpy(k->magic, CACHE_MAGIC, 8);
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    k->size = (uint64_t)st.st_size;
    k->mtime_s = (uint64_t)st.st_mtim.tv_sec;
    k->mtime_ns = (uint64_t)st.st_mtim.tv_nsec;
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

/* The cache file of key k: 0, or -1 (no cache, "off", or no room). */
static int cache_path(const struct key *k, char *buf, size_t len, char *dir, size_t dirlen)
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
    if (n < 0 || (size_t)n >= dirlen)
        return -1;
    /* FNV-1a of the key: the name; the key inside says which it is. */
    uint64_t hash = 0xcbf29ce484222325ull;
    const unsigned char *b = (const unsigned char *)k;
    for (size_t i = 0; i < sizeof *k; i++)
        hash = (hash ^ b[i]) * 0x100000001b3ull;
    n = snprintf(buf, len, "%s/%016llx.profile", dir, (unsigned long long)hash);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int get(FILE *f, void *p, size_t size, size_t n)
{
    return n == 0 || fread(p, size, n, f) == n ? 0 : -1;
}

/* A malloc'd array of n elements read from f, or NULL (n == 0 included:
 * *ok says which). */
static void *get_array(FILE *f, size_t size, uint64_t n, uint64_t left, int *ok)
{
    if (n == 0)
        return NULL;
    void *p = n <= left / size ? malloc((size_t)n * size) : NULL;
    if (!p || get(f, p, size, (size_t)n) < 0) {
        free(p);
        *ok = 0;
        return NULL;
    }
    return p;
}

static char *get_string(FILE *f, int *ok)
{
    uint32_t len;
    if (get(f, &len, sizeof len, 1) < 0) {
        *ok = 0;
        return NULL;
    }
    if (len == UINT32_MAX)
        return NULL;
    char *s = len < (1u << 20) ? malloc(len + 1) : NULL;
    if (!s || get(f, s, 1, len) < 0) {
        free(s);
        *ok = 0;
        return NULL;
    }
    s[len] = 0;
    return s;
}

/* fwrite of n elements; none: nothing (p may then be NULL). */
static int put(FILE *f, const void *p, size_t size, size_t n)
{
    return n == 0 || fwrite(p, size, n, f) == n ? 0 : -1;
}

static int put_string(FILE *f, const char *s)
{
    uint32_t len = s ? (uint32_t)strlen(s) : UINT32_MAX;
    return fwrite(&len, sizeof len, 1, f) == 1 && (!s || fwrite(s, 1, len, f) == len) ? 0 : -1;
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

int instr_profile_cache_load(struct instr_profile *p, const struct instr_dump *d, int wall)
{
    struct key k, fk;
    char path[4096], dir[4000];
    if (d->size < INSTR_PROFILE_CACHE_MIN || make_key(&k, d, wall) < 0 ||
        cache_path(&k, path, sizeof path, dir, sizeof dir) < 0)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    struct stat st;
    struct scalars sc;
    struct instr_profile q;
    memset(&q, 0, sizeof q);
    q.dump = d;
    int ok = fstat(fileno(f), &st) == 0 && get(f, &fk, sizeof fk, 1) == 0 && !memcmp(&fk, &k, sizeof k) &&
             get(f, &sc, sizeof sc, 1) == 0 && sc.nthreads == d->nthreads && sc.nmodules == d->nmodules + 1;
    uint64_t left = ok ? (uint64_t)st.st_size : 0;
    if (ok) {
        q.total = sc.total;
        q.repairs = sc.repairs;
        q.comp = sc.comp;
        q.events = sc.events;
        q.offcpu_unknown = sc.offcpu_unknown;
        q.max_nodes = (size_t)sc.max_nodes;
        q.wall_on = sc.wall_on;
        q.wall_merged = sc.wall_merged;
        q.wall.overflow = sc.wall_overflow;
        q.wall.nomem = sc.wall_nomem;
        q.merged.root_len = sc.merged_root_len;
        q.merged.nomem = sc.merged_nomem;
        q.switched_at = (size_t)sc.switched_at;
        q.recorded_ticks = sc.recorded_ticks;
        q.nfuncs = (size_t)sc.nfuncs;
        q.funcs = get_array(f, sizeof *q.funcs, sc.nfuncs, left, &ok);
        for (size_t i = 0; ok && i < q.nfuncs; i++)
            q.funcs[i].origin = q.funcs[i].origin_demangled = NULL;
        for (size_t i = 0; ok && i < q.nfuncs; i++) {
            q.funcs[i].origin = get_string(f, &ok);
            q.funcs[i].origin_demangled = get_string(f, &ok);
        }
        q.nthreads = (size_t)sc.nthreads;
        q.threads = get_array(f, sizeof *q.threads, sc.nthreads, left, &ok);
        q.nmodules = (size_t)sc.nmodules;
        q.modules = get_array(f, sizeof *q.modules, sc.nmodules, left, &ok);
        q.nnodes = (size_t)sc.nnodes;
        q.nodes = get_array(f, sizeof *q.nodes, sc.nnodes, left, &ok);
        q.nwindows = (size_t)sc.nwindows;
        q.windows = get_array(f, sizeof *q.windows, sc.nwindows, left, &ok);
        q.nswitches = q.capswitches = (size_t)sc.nswitches;
        q.switches = get_array(f, sizeof *q.switches, sc.nswitches, left, &ok);
        q.merged.nfn = (size_t)sc.merged_nfn;
        q.merged.len = get_array(f, sizeof *q.merged.len, sc.merged_nfn, left, &ok);
        ok = ok && fgetc(f) == EOF && instr_sitemap_build(&q.sites, d) == 0;
    }
    fclose(f);
    if (!ok) {
        instr_profile_free(&q);
        return 0;
    }
    relink(&q, d);
    *p = q;
    return 1;
}

void instr_profile_cache_save(const struct instr_profile *p, int wall)
{
    const struct instr_dump *d = p->dump;
    struct key k;
    char path[4096], dir[4000], tmp[4200];
    /* Segments (several processes, or more threads than the merge takes)
     * are not kept: only a merged walk's lengths are. */
    if (d->size < INSTR_PROFILE_CACHE_MIN || (p->wall_on && !p->wall_merged) || make_key(&k, d, wall) < 0 ||
        cache_path(&k, path, sizeof path, dir, sizeof dir) < 0)
        return;
    /* The directory, private: a profile names the program's functions. */
    char *slash = dir;
    while ((slash = strchr(slash + 1, '/'))) {
        *slash = 0;
        mkdir(dir, 0700);
        *slash = '/';
    }
    mkdir(dir, 0700);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
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
    int ok = put(f, &k, sizeof k, 1) == 0 && put(f, &sc, sizeof sc, 1) == 0 &&
             put(f, p->funcs, sizeof *p->funcs, p->nfuncs) == 0;
    for (size_t i = 0; ok && i < p->nfuncs; i++)
        ok = put_string(f, p->funcs[i].origin) == 0 && put_string(f, p->funcs[i].origin_demangled) == 0;
    ok = ok && put(f, p->threads, sizeof *p->threads, p->nthreads) == 0 &&
         put(f, p->modules, sizeof *p->modules, p->nmodules) == 0 && put(f, p->nodes, sizeof *p->nodes, p->nnodes) == 0 &&
         put(f, p->windows, sizeof *p->windows, p->nwindows) == 0 &&
         put(f, p->switches, sizeof *p->switches, p->nswitches) == 0 &&
         put(f, p->merged.len, sizeof *p->merged.len, (size_t)sc.merged_nfn) == 0;
    if (fclose(f) || !ok || rename(tmp, path))
        unlink(tmp);
}

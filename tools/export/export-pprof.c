/* export-pprof.c - the gzip'd profile.proto of pprof (Go's pprof, Grafana
 * Pyroscope, Parca, Perfetto UI), written by hand: the protobuf wire format
 * needs only varints and length-delimited fields.
 *
 *   Profile {
 *     sample_type: [calls/count, elapsed/nanoseconds, application/nanoseconds]
 *     sample:      one per call path of each thread (profile nodes), its
 *                  locations leaf first, values = the path's calls and
 *                  EXCLUSIVE times; labels pid, tid (numeric), thread (name)
 *     location:    one per function (row), line = the function's line
 *     function:    name (demangled), system_name (mangled), filename, start_line
 *     mapping:     one per module path, with the build id of the module file
 *                  (its ELF NT_GNU_BUILD_ID note) when the file is readable
 *   }
 *
 * pprof sums a sample into the flat value of its leaf and into the cum value
 * of every function on its stack (once per sample), so flat is Exclusive and
 * cum is Inclusive with recursion counted once: the report's values.  A
 * session without Application data (a visualiser file) has no application
 * sample type.  Times need a tick rate (INSTR_EARG without one).
 *
 * Sampling dumps (instr-sample) have their own profile, instr_sreport_pprof:
 *
 *   sample_type: [samples/count, cpu/nanoseconds]  (Go's own CPU profiles':
 *                cpu = samples x the period 1e9 / the asked rate)
 *   sample:      one per distinct stack of each thread, leaf first, values
 *                samples, cpu; labels pid, tid (numeric), thread (name)
 *   location:    one per source line of a function row (file and line
 *                from the DWARF line tables, read/line-table.c), the
 *                frames' lines: a caller's at its call; a function row
 *                without line information has one location, line 0
 *   function:    name, system_name (the demangled name: the rows keep no
 *                other), filename (of its first location with a line)
 *   mapping:     one per module path, as above
 *
 * pprof's flat is then the report's Exclusive Samples and cum its Inclusive
 * Samples (a function once per sample).
 *
 * Count-mode dumps (plugin mode=count) have calls and call edges only,
 * instr_export_pprof_counts:
 *
 *   sample_type: [calls/count]
 *   sample:      one per edge, [callee, caller], its calls; one per
 *                function entered from elsewhere than a counted edge
 *                (uninstrumented code, pointers), [function], those entries
 *   location, function: one per function, as above; one mapping, the program
 *
 * flat is then each function's calls (entries; a function that was not
 * instrumented, its calls from counted code), and cum adds the calls it
 * makes: one level, as the edges say nothing deeper.
 */
#include <elf.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "count-report.h"
#include "report.h"
#include "sample-report.h"
#include "writers.h"
#include "protobuf.h"
#include "strtab.h"

/* An integer field; zero is the default and is left out. */
static void pb_int(struct instr_pb *p, unsigned field, uint64_t v)
{
    if (v)
        instr_pb_u64(p, field, v);
}

/* ---- string table ----------------------------------------------------------- */

/* The profile's string table (string 0 is ""), with an out-of-memory flag
 * so the encoder checks once at the end. */
struct strtab {
    struct instr_strtab t;
    int oom;
};

static uint64_t str_id(struct strtab *t, const char *s)
{
    uint32_t id = t->oom ? UINT32_MAX : instr_strtab_id(&t->t, s);
    if (id == UINT32_MAX) {
        t->oom = 1;
        return 0;
    }
    return id;
}

/* ---- modules: build id and address span from the ELF file ------------------ */

struct elfinfo {
    char build_id[2 * 64 + 1]; /* hex, "" if unknown */
    uint64_t span;             /* highest PT_LOAD end, bytes (0 if unknown) */
};

static int read_at(FILE *f, uint64_t off, void *buf, size_t n)
{
    return fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n ? 0 : -1;
}

/* Reads the GNU build-id note from the PT_NOTE segments of an ELF64 file. */
static void elf_info(const char *path, struct elfinfo *e)
{
    e->build_id[0] = 0;
    e->span = 0;
    FILE *f = path && path[0] ? fopen(path, "rb") : NULL;
    if (!f)
        return;
    Elf64_Ehdr eh;
    if (read_at(f, 0, &eh, sizeof eh) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256) {
        fclose(f);
        return;
    }
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (read_at(f, eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph) < 0)
            break;
        if (ph.p_type == PT_LOAD && ph.p_vaddr + ph.p_memsz > e->span)
            e->span = ph.p_vaddr + ph.p_memsz;
        if (ph.p_type != PT_NOTE || ph.p_filesz > 1 << 16 || e->build_id[0])
            continue;
        uint8_t *n = malloc(ph.p_filesz);
        if (!n || read_at(f, ph.p_offset, n, ph.p_filesz) < 0) {
            free(n);
            continue;
        }
        for (size_t o = 0; o + sizeof(Elf64_Nhdr) <= ph.p_filesz;) {
            Elf64_Nhdr nh;
            memcpy(&nh, n + o, sizeof nh);
            size_t name = o + sizeof nh, desc = name + ((nh.n_namesz + 3) & ~3u);
            size_t next = desc + ((nh.n_descsz + 3) & ~3u);
            if (next > ph.p_filesz || next <= o)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(n + name, "GNU", 4) &&
                nh.n_descsz <= 64) {
                for (size_t k = 0; k < nh.n_descsz; k++)
                    snprintf(e->build_id + 2 * k, 3, "%02x", n[desc + k]);
                break;
            }
            o = next;
        }
        free(n);
    }
    fclose(f);
}

/* ---- the profile -------------------------------------------------------------- */

struct mapping {
    const char *path; /* session module path ("" = unknown) */
    uint64_t start;
};

static int find_mapping(struct mapping *m, size_t *n, const char *path, uint64_t start)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(m[i].path, path))
            return (int)i;
    m[*n].path = path;
    m[*n].start = start;
    return (int)(*n)++;
}

static uint64_t ns_of(const struct instr_dump *d, uint64_t ticks)
{
    return (uint64_t)llround((double)ticks * 1e9 / d->tick_hz);
}

static void value_type(struct instr_pb *p, unsigned field, struct instr_pb *sub, struct strtab *st, const char *type,
                       const char *unit)
{
    pb_int(sub, 1, str_id(st, type));
    pb_int(sub, 2, str_id(st, unit));
    instr_pb_sub(p, field, sub);
}

static void label(struct instr_pb *sample, struct instr_pb *sub, struct strtab *st, const char *key, const char *str,
                  uint64_t num)
{
    pb_int(sub, 1, str_id(st, key));
    if (str)
        pb_int(sub, 2, str_id(st, str));
    else {
        instr_pb_tag(sub, 3, INSTR_PB_VARINT);
        instr_pb_varint(sub, num);
    }
    instr_pb_sub(sample, 3, sub);
}

/* The module load address of the function row's module in some dump. */
static uint64_t module_start(const struct instr_session *s, const char *path)
{
    for (size_t i = 0; i < s->ndumps; i++)
        for (size_t k = 0; k < s->dumps[i].nmodules; k++)
            if (s->dumps[i].modules[k].path && !strcmp(s->dumps[i].modules[k].path, path))
                return s->dumps[i].modules[k].load_addr;
    return 0;
}

/* The profile's string table (field 6, last), then the scratch buffers
 * freed: 0, or INSTR_ENOMEM if anything ran out of memory. */
static int profile_end(struct instr_pb *p, struct strtab *st, struct instr_pb *sub, struct instr_pb *sub2,
                       struct instr_pb *packed)
{
    for (size_t i = 0; i < st->t.n; i++)
        instr_pb_bytes(p, 6, st->t.s[i], strlen(st->t.s[i]));
    p->oom |= sub->oom | sub2->oom | packed->oom | st->oom;
    free(sub->b), free(sub2->b), free(packed->b);
    return p->oom ? INSTR_ENOMEM : 0;
}

/* The mapping table (room for nmaps) and each row's mapping (nrows),
 * zeroed: 0, or -1 with neither allocated. */
static int mapping_tables(size_t nmaps, size_t nrows, struct mapping **maps, uint32_t **map_of_row)
{
    *maps = calloc(nmaps, sizeof **maps);
    *map_of_row = calloc(nrows, sizeof **map_of_row);
    if (*maps && *map_of_row)
        return 0;
    free(*maps);
    free(*map_of_row);
    return -1;
}

static int encode(struct instr_pb *p, struct strtab *st, const struct instr_session *s)
{
    struct instr_pb sub = {0}, sub2 = {0}, packed = {0};
    int app = !s->no_app;
    str_id(st, "");
    value_type(p, 1, &sub, st, "calls", "count");
    value_type(p, 1, &sub, st, "elapsed", "nanoseconds");
    if (app)
        value_type(p, 1, &sub, st, "application", "nanoseconds");

    /* Samples: every thread's call paths with a nonzero value. */
    size_t maxdepth = 1;
    uint64_t *stack = NULL;
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_profile *pr = &s->profiles[i];
        const struct instr_dump *d = &s->dumps[i];
        for (size_t n = 0; n < pr->nnodes; n++) {
            const struct instr_pnode *nd = &pr->nodes[n];
            if (nd->func == UINT32_MAX || (!nd->calls && !nd->ee && !nd->ae))
                continue;
            size_t depth = 0;
            /* Leaf first: follow parents up to the thread's root. */
            for (size_t k = n; pr->nodes[k].func != UINT32_MAX; k = pr->nodes[k].parent) {
                if (depth == maxdepth || !stack) {
                    maxdepth *= 2;
                    uint64_t *a = realloc(stack, maxdepth * sizeof *a);
                    if (!a) {
                        free(stack);
                        return INSTR_ENOMEM;
                    }
                    stack = a;
                }
                stack[depth++] = (uint64_t)s->func_rows[i][pr->nodes[k].func] + 1;
            }
            for (size_t k = 0; k < depth; k++)
                instr_pb_varint(&packed, stack[k]);
            instr_pb_bytes(&sub, 1, packed.b, packed.len);
            packed.len = 0;
            instr_pb_varint(&packed, nd->calls);
            instr_pb_varint(&packed, ns_of(d, nd->ee));
            if (app)
                instr_pb_varint(&packed, ns_of(d, nd->ae));
            instr_pb_bytes(&sub, 2, packed.b, packed.len);
            sub.oom |= packed.oom;
            packed.len = 0;
            const struct instr_pthread *th = &pr->threads[nd->thread];
            label(&sub, &sub2, st, "pid", NULL, d->hdr.pid);
            label(&sub, &sub2, st, "tid", NULL, th->tid);
            if (th->name && th->name[0])
                label(&sub, &sub2, st, "thread", th->name, 0);
            instr_pb_sub(p, 2, &sub);
        }
    }
    free(stack);

    /* Mappings (one per module path), locations and functions (one per row). */
    struct mapping *maps;
    uint32_t *map_of_row;
    if (mapping_tables(s->nmodules + 1, s->nfunctions + 1, &maps, &map_of_row)) {
        free(sub.b), free(sub2.b), free(packed.b);
        return INSTR_ENOMEM;
    }
    size_t nmaps = 0;
    /* pprof names the profile after its first mapping: the program's. */
    for (size_t i = 0; i < s->nmodules && s->ndumps; i++)
        if (s->modules[i].name && !strcmp(s->modules[i].name, s->dumps[0].hdr.exe_path))
            find_mapping(maps, &nmaps, s->modules[i].name, module_start(s, s->modules[i].name));
    for (uint32_t key = 0; key < s->nfunctions; key++) {
        const struct instr_row *r = instr_function_row(s, key);
        const char *m = r->module ? r->module : "";
        map_of_row[key] = (uint32_t)find_mapping(maps, &nmaps, m, m[0] ? module_start(s, m) : 0);
    }
    for (size_t i = 0; i < nmaps; i++) {
        struct elfinfo e;
        elf_info(maps[i].path, &e);
        pb_int(&sub, 1, i + 1);
        pb_int(&sub, 2, maps[i].start);
        pb_int(&sub, 3, maps[i].start + (e.span ? e.span : 1));
        pb_int(&sub, 5, str_id(st, maps[i].path[0] ? maps[i].path : "[unknown]"));
        pb_int(&sub, 6, str_id(st, e.build_id));
        pb_int(&sub, 7, 1); /* has_functions: symbolized already */
        pb_int(&sub, 8, 1);
        pb_int(&sub, 9, 1);
        instr_pb_sub(p, 3, &sub);
    }
    for (uint32_t key = 0; key < s->nfunctions; key++) {
        const struct instr_row *r = instr_function_row(s, key);
        pb_int(&sub, 1, key + 1);
        pb_int(&sub, 2, map_of_row[key] + 1);
        pb_int(&sub2, 1, key + 1);
        pb_int(&sub2, 2, r->line);
        instr_pb_sub(&sub, 4, &sub2);
        instr_pb_sub(p, 4, &sub);
    }
    for (uint32_t key = 0; key < s->nfunctions; key++) {
        const struct instr_row *r = instr_function_row(s, key);
        pb_int(&sub, 1, key + 1);
        pb_int(&sub, 2, str_id(st, r->name));
        pb_int(&sub, 3, str_id(st, r->mangled && r->mangled[0] ? r->mangled : r->name));
        pb_int(&sub, 4, str_id(st, r->file));
        pb_int(&sub, 5, r->line);
        instr_pb_sub(p, 5, &sub);
    }
    free(maps);
    free(map_of_row);

    /* Time of the run: the earliest process start (wall clock), its duration. */
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < s->ndumps; i++)
        if (s->dumps[i].hdr.start_real_ns && s->dumps[i].hdr.start_real_ns < t0)
            t0 = s->dumps[i].hdr.start_real_ns;
    uint64_t cmt = str_id(st, "instr-report --export pprof: values are per call path; flat = exclusive, "
                              "cum = inclusive");
    pb_int(p, 9, t0 == UINT64_MAX ? 0 : t0);
    pb_int(p, 10, (uint64_t)llround(s->duration_ns));
    value_type(p, 11, &sub, st, "elapsed", "nanoseconds");
    pb_int(p, 12, 1);
    pb_int(p, 13, cmt);
    pb_int(p, 14, str_id(st, "elapsed"));
    return profile_end(p, st, &sub, &sub2, &packed);
}

/* gzip (zlib's deflate with a gzip wrapper) of b[0..n) to out. */
static int gzip_to(FILE *out, const uint8_t *b, size_t n)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return INSTR_ENOMEM;
    uint8_t chunk[1 << 16];
    int rc = 0, zr;
    z.next_in = (Bytef *)(uintptr_t)b;
    do {
        size_t take = n > (1u << 30) ? 1u << 30 : n;
        z.avail_in = (uInt)take;
        n -= take;
        do {
            z.next_out = chunk;
            z.avail_out = sizeof chunk;
            zr = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
            size_t have = sizeof chunk - z.avail_out;
            if (have && fwrite(chunk, 1, have, out) != have)
                rc = INSTR_EIO;
        } while (z.avail_out == 0 && rc == 0);
    } while (n && rc == 0);
    if (rc == 0 && zr != Z_STREAM_END)
        rc = INSTR_EIO;
    deflateEnd(&z);
    return rc;
}

/* ---- sampling dumps ------------------------------------------------------------ */

static int encode_sampled(struct instr_pb *p, struct strtab *st, const struct instr_sprofile *sp)
{
    struct instr_pb sub = {0}, sub2 = {0}, packed = {0};
    const struct instr_srow *rows = sp->rows[INSTR_SVIEW_FUNCTIONS];
    size_t nrows = sp->nrows[INSTR_SVIEW_FUNCTIONS];
    uint64_t period = sp->rate_hz ? 1000000000u / sp->rate_hz : 0;
    str_id(st, "");
    value_type(p, 1, &sub, st, "samples", "count");
    value_type(p, 1, &sub, st, "cpu", "nanoseconds");

    const struct instr_sstack *k;
    const uint32_t *ids = sp->lpool ? sp->lpool : sp->pool; /* locations: lines, else one per row */
    for (size_t i = 0; (k = instr_sstack_next(sp, &i));) {
        for (size_t j = k->len; j-- > 0;) /* the pool is root first; pprof wants the leaf first */
            instr_pb_varint(&packed, (uint64_t)ids[k->off + j] + 1);
        instr_pb_bytes(&sub, 1, packed.b, packed.len);
        packed.len = 0;
        instr_pb_varint(&packed, k->samples);
        instr_pb_varint(&packed, k->samples * period);
        instr_pb_bytes(&sub, 2, packed.b, packed.len);
        sub.oom |= packed.oom;
        packed.len = 0;
        /* The thread, as the instrumented export labels it (tagfocus, -tags). */
        const struct instr_srow *th = &sp->rows[INSTR_SVIEW_THREADS][k->thread];
        label(&sub, &sub2, st, "pid", NULL, th->pid);
        label(&sub, &sub2, st, "tid", NULL, th->tid);
        if (th->thread && th->thread[0])
            label(&sub, &sub2, st, "thread", th->thread, 0);
        instr_pb_sub(p, 2, &sub);
    }

    /* Mappings: one per module path, the program's first (pprof names the
     * profile after it); addresses are not kept, so each spans [0, its size). */
    struct mapping *maps;
    uint32_t *map_of_row;
    if (mapping_tables(nrows + 2, nrows + 1, &maps, &map_of_row)) {
        free(sub.b), free(sub2.b), free(packed.b);
        return INSTR_ENOMEM;
    }
    size_t nmaps = 0;
    if (sp->program && sp->program[0])
        find_mapping(maps, &nmaps, sp->program, 0);
    for (size_t r = 0; r < nrows; r++)
        map_of_row[r] = (uint32_t)find_mapping(maps, &nmaps, rows[r].module ? rows[r].module : "", 0);
    for (size_t i = 0; i < nmaps; i++) {
        struct elfinfo e;
        elf_info(maps[i].path, &e);
        pb_int(&sub, 1, i + 1);
        pb_int(&sub, 3, e.span ? e.span : 1);
        pb_int(&sub, 5, str_id(st, maps[i].path[0] ? maps[i].path : "[unknown]"));
        pb_int(&sub, 6, str_id(st, e.build_id));
        pb_int(&sub, 7, 1); /* has_functions: symbolized already */
        instr_pb_sub(p, 3, &sub);
    }
    /* A function's file: that of its first location with a line. */
    const char **file_of = sp->lpool ? calloc(nrows + 1, sizeof *file_of) : NULL;
    if (sp->lpool && !file_of) {
        free(maps), free(map_of_row), free(sub.b), free(sub2.b), free(packed.b);
        return INSTR_ENOMEM;
    }
    if (sp->lpool) {
        for (size_t l = 0; l < sp->nlocs; l++) {
            const struct instr_sloc *lo = &sp->locs[l];
            if (lo->file && !file_of[lo->fn])
                file_of[lo->fn] = lo->file;
            pb_int(&sub, 1, l + 1);
            pb_int(&sub, 2, map_of_row[lo->fn] + 1);
            pb_int(&sub2, 1, lo->fn + 1);
            pb_int(&sub2, 2, (uint64_t)lo->line);
            instr_pb_sub(&sub, 4, &sub2);
            instr_pb_sub(p, 4, &sub);
        }
    } else {
        for (size_t r = 0; r < nrows; r++) {
            pb_int(&sub, 1, r + 1);
            pb_int(&sub, 2, map_of_row[r] + 1);
            pb_int(&sub2, 1, r + 1);
            instr_pb_sub(&sub, 4, &sub2);
            instr_pb_sub(p, 4, &sub);
        }
    }
    for (size_t r = 0; r < nrows; r++) {
        pb_int(&sub, 1, r + 1);
        pb_int(&sub, 2, str_id(st, rows[r].name));
        pb_int(&sub, 3, str_id(st, rows[r].name));
        if (file_of && file_of[r])
            pb_int(&sub, 4, str_id(st, file_of[r]));
        instr_pb_sub(p, 5, &sub);
    }
    free(file_of);
    free(maps);
    free(map_of_row);

    value_type(p, 11, &sub, st, "cpu", "nanoseconds");
    pb_int(p, 12, period);
    pb_int(p, 13, str_id(st, "instr-sample: one sample per distinct stack of each thread; flat = exclusive, "
                             "cum = inclusive samples"));
    pb_int(p, 14, str_id(st, "samples"));
    return profile_end(p, st, &sub, &sub2, &packed);
}

/* ---- count-mode dumps ------------------------------------------------------- */

static int encode_counts(struct instr_pb *p, struct strtab *st, const struct instr_count_graph *g)
{
    struct instr_pb sub = {0}, sub2 = {0}, packed = {0};
    str_id(st, "");
    value_type(p, 1, &sub, st, "calls", "count");
    for (size_t k = 0; k < g->nfns; k++) {
        uint64_t n = g->fns[k].instrumented ? instr_count_uncounted_in(g, k) : 0;
        if (!n)
            continue;
        instr_pb_varint(&packed, k + 1);
        instr_pb_bytes(&sub, 1, packed.b, packed.len);
        packed.len = 0;
        instr_pb_varint(&packed, n);
        instr_pb_bytes(&sub, 2, packed.b, packed.len);
        packed.len = 0;
        instr_pb_sub(p, 2, &sub);
    }
    for (size_t i = 0; i < g->nedges; i++) {
        const struct instr_count_edge *e = &g->edges[i];
        if (!e->calls)
            continue;
        instr_pb_varint(&packed, e->callee + 1); /* leaf first */
        instr_pb_varint(&packed, e->caller + 1);
        instr_pb_bytes(&sub, 1, packed.b, packed.len);
        packed.len = 0;
        instr_pb_varint(&packed, e->calls);
        instr_pb_bytes(&sub, 2, packed.b, packed.len);
        packed.len = 0;
        instr_pb_sub(p, 2, &sub);
    }
    /* One mapping, the program's: addresses are not kept. */
    const char *program = g->program && g->program[0] ? g->program : "[unknown]";
    struct elfinfo e;
    elf_info(program, &e);
    pb_int(&sub, 1, 1);
    pb_int(&sub, 3, e.span ? e.span : 1);
    pb_int(&sub, 5, str_id(st, program));
    pb_int(&sub, 6, str_id(st, e.build_id));
    pb_int(&sub, 7, 1); /* has_functions */
    instr_pb_sub(p, 3, &sub);
    for (size_t k = 0; k < g->nfns; k++) {
        pb_int(&sub, 1, k + 1);
        pb_int(&sub, 2, 1);
        pb_int(&sub2, 1, k + 1);
        pb_int(&sub2, 2, g->fns[k].line);
        instr_pb_sub(&sub, 4, &sub2);
        instr_pb_sub(p, 4, &sub);
    }
    for (size_t k = 0; k < g->nfns; k++) {
        const struct instr_count_fn *f = &g->fns[k];
        pb_int(&sub, 1, k + 1);
        pb_int(&sub, 2, str_id(st, f->display));
        pb_int(&sub, 3, str_id(st, f->name));
        if (f->file && f->file[0])
            pb_int(&sub, 4, str_id(st, f->file));
        pb_int(&sub, 5, f->line);
        instr_pb_sub(p, 5, &sub);
    }
    pb_int(p, 13, str_id(st, "instr count mode: exact calls per call edge, no time; flat = a function's calls, "
                             "cum = those and the calls it makes (one level)"));
    pb_int(p, 14, str_id(st, "calls"));
    return profile_end(p, st, &sub, &sub2, &packed);
}

/* The profile encoded into p (rc: the encoder's code) written gzip'd to
 * out; p and st freed. */
static int finish(FILE *out, struct instr_pb *p, struct strtab *st, int rc)
{
    if (rc == 0)
        rc = gzip_to(out, p->b, p->len);
    free(p->b);
    instr_strtab_free(&st->t);
    return rc;
}

int instr_sreport_pprof(FILE *out, const struct instr_sprofile *sp)
{
    struct instr_pb p = {0};
    struct strtab st = {0};
    return finish(out, &p, &st, encode_sampled(&p, &st, sp));
}

int instr_export_pprof(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    (void)o;
    if (!s->have_rate)
        return INSTR_EARG; /* nanoseconds need a tick rate */
    struct instr_pb p = {0};
    struct strtab st = {0};
    return finish(out, &p, &st, encode(&p, &st, s));
}

int instr_export_pprof_counts(FILE *out, const struct instr_count_graph *g)
{
    struct instr_pb p = {0};
    struct strtab st = {0};
    return finish(out, &p, &st, encode_counts(&p, &st, g));
}

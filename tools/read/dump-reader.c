/* dump-reader.c - mapping, validation and metadata of instr dumps. */
#define _GNU_SOURCE /* memfd_create */
#include "dump-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrays.h"

const char *instr_tool_strerror(int err)
{
    switch (err) {
#define INSTR_X_CASE(name, value, text)                                                            \
    case -(value):                                                                                 \
        return text;
        INSTR_TOOL_ERRORS(INSTR_X_CASE)
#undef INSTR_X_CASE
    case 0:
        return "success";
    }
    return "unknown error";
}

const char *instr_signal_name(uint32_t sig)
{
    /* Linux x86-64 numbers: the reader may run elsewhere. */
    static const char *const names[] = {
        "", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL",
        "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",
        "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF",
        "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"};
    return sig > 0 && sig < sizeof names / sizeof names[0] ? names[sig] : "unknown signal";
}

const char *instr_detector_name(uint32_t detector)
{
    switch (detector) {
        INSTR_DETECTORS(INSTR_X_TEXT_CASE)
    }
    return "unknown";
}

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

int instr_dump_warn(struct instr_dump *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = instr_msgs_vadd(&d->warnings, &d->nwarnings, fmt, ap);
    va_end(ap);
    return rc;
}

static void release(const struct instr_dump *d, const uint8_t *p, size_t len);

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* ---- metadata records ---------------------------------------------------- */

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

struct meta_caps {
    size_t modules, functions, labels, threads, sites, maps, fn_calls, site_calls;
    uint32_t *tmap; /* thread index -> position + 1 (0 = empty), open addressing */
    size_t tmask;   /* capacity - 1 */
};

static size_t thread_hash(uint32_t index)
{
    return (size_t)((uint64_t)index * 0x9e3779b97f4a7c15ull >> 32);
}

/* The thread with this index, created if new.  A hash, not a scan: a
 * hostile file may name millions of threads. */
static struct instr_thread_info *thread_slot(struct instr_dump *d, struct meta_caps *caps, uint32_t index)
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
        struct instr_module *a = instr_grow(d->modules, &caps->modules, d->nmodules + 1, sizeof *a, 16);
        if (!a) {
            free(m.path);
            return INSTR_ENOMEM;
        }
        d->modules = a;
        a[d->nmodules++] = m;
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
        struct instr_function *a = instr_grow(d->functions, &caps->functions, d->nfunctions + 1, sizeof *a, 16);
        if (!a) {
            free(f.name);
            free(f.file);
            free(f.demangled);
            return INSTR_ENOMEM;
        }
        d->functions = a;
        a[d->nfunctions++] = f;
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
        struct instr_thread_info *t = thread_slot(d, caps, (uint32_t)index);
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
        struct instr_label *a = instr_grow(d->labels, &caps->labels, d->nlabels + 1, sizeof *a, 16);
        if (!a) {
            free(l.text);
            return INSTR_ENOMEM;
        }
        d->labels = a;
        a[d->nlabels++] = l;
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
        struct instr_callsite *a = instr_grow(d->sites, &caps->sites, d->nsites + 1, sizeof *a, 16);
        if (!a) {
            free(cs.callee);
            return INSTR_ENOMEM;
        }
        d->sites = a;
        a[d->nsites++] = cs;
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
        struct instr_map *a = instr_grow(d->maps, &caps->maps, d->nmaps + 1, sizeof *a, 16);
        if (!a)
            return INSTR_ENOMEM;
        d->maps = a;
        a[d->nmaps++] = m;
        return 0;
    }
    case INSTR_META_PROCESS:
        return parse_process(d, c);
    case INSTR_META_FN_CALLS: {
        struct instr_fn_calls fc;
        if ((rc = get_var(c, &fc.fn)) || (rc = get_var(c, &fc.calls)))
            return rc;
        struct instr_fn_calls *a = instr_grow(d->fn_calls, &caps->fn_calls, d->nfn_calls + 1, sizeof *a, 16);
        if (!a)
            return INSTR_ENOMEM;
        d->fn_calls = a;
        a[d->nfn_calls++] = fc;
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
        struct instr_site_calls *a =
            instr_grow(d->site_calls, &caps->site_calls, d->nsite_calls + 1, sizeof *a, 16);
        if (!a) {
            free(sc.callee);
            return INSTR_ENOMEM;
        }
        d->site_calls = a;
        a[d->nsite_calls++] = sc;
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
        struct instr_thread_info *t = thread_slot(d, caps, (uint32_t)index);
        if (!t)
            return INSTR_ENOMEM;
        t->cpu_ns += ns;
        return 0;
    }
    case INSTR_META_EXIT_CPU: {
        uint64_t index, ns, tick;
        if ((rc = get_var(c, &index)) || (rc = get_var(c, &ns)) || (rc = get_var(c, &tick)))
            return rc;
        if (index > UINT32_MAX)
            return INSTR_ECORRUPT;
        struct instr_thread_info *t = thread_slot(d, caps, (uint32_t)index);
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

static int parse_metadata(struct instr_dump *d, struct meta_caps *caps, const uint8_t *p, size_t len,
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

/* ---- chunks ---------------------------------------------------------------- */

struct raw_chunk {
    uint32_t thread_index;
    uint16_t kind; /* INSTR_CHUNK_EVENTS or INSTR_CHUNK_SAMPLES */
    uint32_t seq;
    uint64_t tid;
    struct instr_chunk_ref ref;
};

static int cmp_raw(const void *a, const void *b)
{
    const struct raw_chunk *x = a, *y = b;
    if (x->thread_index != y->thread_index)
        return x->thread_index < y->thread_index ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Functions, labels and call sites are sorted by id, their first member. */
_Static_assert(offsetof(struct instr_function, id) == 0, "id first");
_Static_assert(offsetof(struct instr_label, id) == 0, "id first");
_Static_assert(offsetof(struct instr_callsite, id) == 0, "id first");

static int cmp_id(const void *a, const void *b)
{
    uint64_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x < y ? -1 : x > y;
}

static int cmp_thread(const void *a, const void *b)
{
    const struct instr_thread_info *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Fills list (room for n) with one thread's chunks of one kind, sorted by
 * seq: duplicates skipped, gaps warned about. */
static int chunk_list(struct instr_dump *d, struct instr_chunk_ref *list, size_t *count, const struct raw_chunk *raw,
                      size_t n)
{
    int rc;
    for (size_t k = 0; k < n; k++) {
        const char *what = raw[k].kind == INSTR_CHUNK_SAMPLES ? "sample " : "";
        if (*count && list[*count - 1].seq == raw[k].seq) {
            if ((rc = instr_dump_warn(d, "thread %u: duplicate %schunk seq %u skipped", raw[k].thread_index, what,
                                      raw[k].seq)))
                return rc;
            continue;
        }
        uint32_t expect = *count ? list[*count - 1].seq + 1 : 0;
        if (raw[k].seq != expect &&
            (rc = instr_dump_warn(d, "thread %u: %schunks %u..%u missing; %s lost", raw[k].thread_index, what, expect,
                                  raw[k].seq - 1, *what ? "samples" : "events")))
            return rc;
        list[(*count)++] = raw[k].ref;
    }
    return 0;
}

static int read_header(struct instr_dump *d, char *err, size_t errlen)
{
    const uint8_t *m = d->map;
    if (d->size < 16 || memcmp(m, INSTR_DUMP_MAGIC, 8) != 0)
        return fail(err, errlen, INSTR_ENOTDUMP, "%s: not an instr dump (bad magic)", d->path);
    uint32_t version = rd32(m + 8);
    if (version != INSTR_DUMP_VERSION)
        return fail(err, errlen, INSTR_EVERSION, "%s: dump version %u, this reader supports %u", d->path,
                    version, INSTR_DUMP_VERSION);
    if (d->size < INSTR_DUMP_HEADER_SIZE)
        return fail(err, errlen, INSTR_ECORRUPT, "%s: file ends inside the header (%zu of %u bytes)",
                    d->path, d->size, INSTR_DUMP_HEADER_SIZE);
    memcpy(&d->hdr, m, sizeof d->hdr);
    d->hdr.exe_path[sizeof d->hdr.exe_path - 1] = 0;
    d->hdr.detector_detail[sizeof d->hdr.detector_detail - 1] = 0;
    d->hdr.stop_reason[sizeof d->hdr.stop_reason - 1] = 0;
    if (d->hdr.header_size < INSTR_DUMP_HEADER_SIZE || d->hdr.header_size % 8)
        return fail(err, errlen, INSTR_ECORRUPT, "%s: bad header_size %u", d->path, d->hdr.header_size);
    if (d->hdr.chunk_size <= INSTR_CHUNK_HEADER_SIZE || d->hdr.chunk_size > INSTR_DUMP_MAX_CHUNK_SIZE ||
        d->hdr.chunk_size % 8)
        return fail(err, errlen, INSTR_ECORRUPT, "%s: bad chunk_size %u", d->path, d->hdr.chunk_size);
    return 0;
}

static void tick_rate(struct instr_dump *d)
{
    const struct instr_dump_header *h = &d->hdr;
    uint64_t tsc = h->last_tsc, ns = h->last_mono_ns;
    if ((h->flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)) && h->end_tsc > h->start_tsc &&
        h->end_mono_ns > h->start_mono_ns) {
        tsc = h->end_tsc;
        ns = h->end_mono_ns;
    }
    if (tsc > h->start_tsc && ns > h->start_mono_ns)
        d->tick_hz = (double)(tsc - h->start_tsc) * 1e9 / (double)(ns - h->start_mono_ns);
    else
        d->tick_hz = 0;
}

/* "-": standard input, read once into a file that can be mapped and read
 * again (the tools sniff an input's first bytes, then map it): stdin itself
 * when it is a regular file (`instr-report - < DUMP`), else an anonymous
 * memory file filled from it (a pipe: `ssh host cat DUMP | instr-report -`).
 * Each call returns a new descriptor for it, positioned at its start. */
static int stdin_copy = -1;

static int stdin_open(void)
{
    struct stat st;
    if (stdin_copy < 0) {
        if (fstat(STDIN_FILENO, &st) < 0)
            return -1;
        if (S_ISREG(st.st_mode)) {
            stdin_copy = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        } else {
            int fd = memfd_create("instr-stdin", MFD_CLOEXEC);
            if (fd < 0)
                return -1;
            char buf[1 << 16];
            for (;;) {
                ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0) {
                    if (n < 0) {
                        int e = errno;
                        close(fd);
                        errno = e;
                        return -1;
                    }
                    break;
                }
                for (ssize_t off = 0; off < n;) {
                    ssize_t w = write(fd, buf + off, (size_t)(n - off));
                    if (w < 0 && errno == EINTR)
                        continue;
                    if (w < 0) {
                        int e = errno;
                        close(fd);
                        errno = e;
                        return -1;
                    }
                    off += w;
                }
            }
            stdin_copy = fd;
        }
        if (stdin_copy < 0)
            return -1;
    }
    int fd = fcntl(stdin_copy, F_DUPFD_CLOEXEC, 3);
    if (fd >= 0)
        lseek(fd, 0, SEEK_SET);
    return fd;
}

int instr_input_open(const char *path)
{
    if (!strcmp(path, "-"))
        return stdin_open();
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int instr_dump_open(struct instr_dump *d, const char *path, char *err, size_t errlen)
{
    struct meta_caps caps = {0};
    memset(d, 0, sizeof *d);
    d->path = path;
    int fd = instr_input_open(path);
    if (fd < 0 && errno == EINVAL)
        return fail(err, errlen, INSTR_EIO, "%s: not a regular file", path);
    if (fd < 0)
        return fail(err, errlen, INSTR_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return fail(err, errlen, INSTR_EIO, "%s: %s", path, strerror(errno));
    }
    d->size = (size_t)st.st_size;
    if (d->size == 0) {
        close(fd);
        return fail(err, errlen, INSTR_ENOTDUMP, "%s: not an instr dump (empty file)", path);
    }
    void *map = mmap(NULL, d->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return fail(err, errlen, INSTR_EIO, "%s: mmap: %s", path, strerror(errno));
    }
    d->map = map;
    d->done = calloc(1, sizeof *d->done); /* without it, chunks are released one by one */
    madvise(map, d->size, MADV_SEQUENTIAL);
    int rc = read_header(d, err, errlen);
    if (rc < 0) {
        close(fd);
        instr_dump_close(d);
        return rc;
    }
    tick_rate(d);

    /* Chunks: as many as the file holds (the header's chunk_count is only a
     * cross-check, it may lag behind or be garbage). */
    const size_t cs = d->hdr.chunk_size;
    size_t avail = d->size > d->hdr.header_size ? d->size - d->hdr.header_size : 0;
    size_t nfull = avail / cs, rest = avail % cs;
    size_t nchunks = nfull + (rest >= INSTR_CHUNK_HEADER_SIZE ? 1 : 0);
    if (rest && (rc = instr_dump_warn(d, "truncated: file ends %zu bytes into chunk %zu (of %zu bytes)", rest,
                                      nfull, cs)))
        goto fail_nomem;
    if (rest)
        d->truncated = 1;
    if (!rest && d->hdr.chunk_count > nfull) {
        if ((rc = instr_dump_warn(d, "truncated: header counts %llu chunks, file holds %zu",
                                  (unsigned long long)d->hdr.chunk_count, nfull)))
            goto fail_nomem;
        d->truncated = 1;
    }
    struct raw_chunk *raw = nchunks ? calloc(nchunks, sizeof *raw) : NULL;
    if (nchunks && !raw) {
        rc = INSTR_ENOMEM;
        goto fail_nomem;
    }
    size_t nraw = 0;
    for (size_t i = 0; i < nchunks; i++) {
        const uint8_t *c = d->map + d->hdr.header_size + i * cs;
        size_t have = i < nfull ? cs : rest;
        /* The chunk headers are read with pread, not through the mapping:
         * a fault there maps many pages around it (fault-around, large
         * page-cache folios) and memory would grow with the file. */
        uint8_t hb[INSTR_CHUNK_HEADER_SIZE];
        if (pread(fd, hb, sizeof hb, (off_t)(c - d->map)) != (ssize_t)sizeof hb)
            memset(hb, 0, sizeof hb);
        uint32_t magic = rd32(hb), used = rd32(hb + 20);
        uint16_t kind = rd16(hb + 4), hsize = rd16(hb + 6);
        if (magic == 0 && kind == 0) {
            /* Handed out in the header count but never written (killed). */
            continue;
        }
        if (magic != INSTR_CHUNK_MAGIC || hsize != INSTR_CHUNK_HEADER_SIZE ||
            (kind != INSTR_CHUNK_EVENTS && kind != INSTR_CHUNK_METADATA && kind != INSTR_CHUNK_SAMPLES) ||
            used > cs - INSTR_CHUNK_HEADER_SIZE) {
            if ((rc = instr_dump_warn(d, "chunk %zu: corrupt chunk header (magic %#x kind %u size %u used %u); skipped",
                                      i, magic, kind, hsize, used)))
                goto fail_raw;
            continue;
        }
        size_t len = used ? used : cs - INSTR_CHUNK_HEADER_SIZE;
        if (len > have - INSTR_CHUNK_HEADER_SIZE)
            len = have - INSTR_CHUNK_HEADER_SIZE;
        const uint8_t *payload = c + INSTR_CHUNK_HEADER_SIZE;
        if (kind == INSTR_CHUNK_METADATA) {
            if ((rc = parse_metadata(d, &caps, payload, len, i)))
                goto fail_raw;
            release(d, c, have); /* copied out */
            continue;
        }
        struct raw_chunk *r = &raw[nraw++];
        r->thread_index = rd32(hb + 8);
        r->kind = kind;
        r->tid = rd32(hb + 12);
        r->seq = rd32(hb + 16);
        r->ref.payload = payload;
        r->ref.len = len;
        r->ref.base_tsc = rd64(hb + 24);
        r->ref.seq = r->seq;
        r->ref.open = used == 0;
    }
    if (nraw > 1)
        qsort(raw, nraw, sizeof *raw, cmp_raw);
    for (size_t i = 0; i < nraw;) {
        size_t j = i;
        while (j < nraw && raw[j].thread_index == raw[i].thread_index)
            j++;
        struct instr_thread_info *t = thread_slot(d, &caps, raw[i].thread_index);
        /* Events first, then samples (cmp_raw): one list each. */
        size_t ns = i;
        while (ns < j && raw[ns].kind == INSTR_CHUNK_EVENTS)
            ns++;
        if (!t || (ns > i && !(t->chunks = calloc(ns - i, sizeof *t->chunks))) ||
            (j > ns && !(t->schunks = calloc(j - ns, sizeof *t->schunks)))) {
            rc = INSTR_ENOMEM;
            goto fail_raw;
        }
        if (!t->name && !t->tid)
            t->tid = raw[i].tid;
        if ((rc = chunk_list(d, t->chunks, &t->nchunks, raw + i, ns - i)) ||
            (rc = chunk_list(d, t->schunks, &t->nschunks, raw + ns, j - ns)))
            goto fail_raw;
        i = j;
    }
    free(raw);
    close(fd);
    fd = -1;
    if (d->nfunctions > 1)
        qsort(d->functions, d->nfunctions, sizeof *d->functions, cmp_id);
    if (d->nlabels > 1)
        qsort(d->labels, d->nlabels, sizeof *d->labels, cmp_id);
    if (d->nsites > 1)
        qsort(d->sites, d->nsites, sizeof *d->sites, cmp_id);
    if (d->nthreads > 1)
        qsort(d->threads, d->nthreads, sizeof *d->threads, cmp_thread);
    if ((d->hdr.flags & INSTR_DUMP_SIGNALED) && !(d->hdr.flags & INSTR_DUMP_COMPLETE)) {
        if ((rc = instr_dump_warn(d, "incomplete: the process was ended by signal %u (%s) in thread %u",
                                  d->hdr.end_signal, instr_signal_name(d->hdr.end_signal),
                                  d->hdr.end_signal_tid)))
            goto fail_nomem;
    } else if ((d->hdr.flags & INSTR_DUMP_SAMPLING_CUT) && !(d->hdr.flags & INSTR_DUMP_COMPLETE)) {
        if ((rc = instr_dump_warn(d, "incomplete: the process still ran when instr-sample stopped (the program's "
                                     "first process ended: a daemon?); its samples end there")))
            goto fail_nomem;
    } else if (!(d->hdr.flags & INSTR_DUMP_COMPLETE) &&
               (rc = instr_dump_warn(d, "incomplete: the process did not finish (no end record: killed by "
                                        "SIGKILL, _exit, or still running)")))
        goto fail_nomem;
    free(caps.tmap);
    return 0;

fail_raw:
    free(raw);
fail_nomem:
    if (fd >= 0)
        close(fd);
    free(caps.tmap);
    instr_dump_close(d);
    return fail(err, errlen, rc, "%s: %s", path, instr_tool_strerror(rc));
}

void instr_dump_close(struct instr_dump *d)
{
    if (d->map)
        munmap((void *)d->map, d->size);
    free(d->done);
    for (size_t i = 0; i < d->nmodules; i++)
        free(d->modules[i].path);
    for (size_t i = 0; i < d->nfunctions; i++) {
        free(d->functions[i].name);
        free(d->functions[i].file);
        free(d->functions[i].demangled);
    }
    for (size_t i = 0; i < d->nlabels; i++)
        free(d->labels[i].text);
    for (size_t i = 0; i < d->nsites; i++)
        free(d->sites[i].callee);
    free(d->sites);
    for (size_t i = 0; i < d->nthreads; i++) {
        free(d->threads[i].name);
        free(d->threads[i].chunks);
        free(d->threads[i].schunks);
    }
    free(d->maps);
    for (size_t i = 0; i < d->nsite_calls; i++)
        free(d->site_calls[i].callee);
    free(d->site_calls);
    free(d->fn_calls);
    free(d->sample_unwinder);
    instr_dump_free_process(d);
    for (size_t i = 0; i < d->nwarnings; i++)
        free(d->warnings[i]);
    free(d->modules);
    free(d->functions);
    free(d->labels);
    free(d->threads);
    free(d->warnings);
    const char *path = d->path;
    memset(d, 0, sizeof *d);
    d->path = path;
}

/* The position of id in base[0..n) sorted by id (cmp_id), n if absent.
 * Several records for one id: any (qsort is not stable; they should
 * agree). */
static size_t find_id(const void *base, size_t n, size_t elem, uint64_t id)
{
    size_t i = instr_lower_bound(base, n, elem, 0, id);
    uint64_t k;
    if (i < n)
        memcpy(&k, (const char *)base + i * elem, sizeof k);
    return i < n && k == id ? i : n;
}

const struct instr_function *instr_dump_function(const struct instr_dump *d, uint64_t id)
{
    /* The runtime numbers functions 1, 2, 3...: usually the record is at
     * id - 1 (the report looks one up per event). */
    if (id - 1 < d->nfunctions && d->functions[id - 1].id == id)
        return &d->functions[id - 1];
    size_t i = find_id(d->functions, d->nfunctions, sizeof *d->functions, id);
    return i < d->nfunctions ? &d->functions[i] : NULL;
}

const struct instr_module *instr_dump_module(const struct instr_dump *d, uint64_t id)
{
    for (size_t i = d->nmodules; i-- > 0;)
        if (d->modules[i].id == id)
            return &d->modules[i];
    return NULL;
}

const struct instr_label *instr_dump_label(const struct instr_dump *d, uint64_t id)
{
    size_t i = find_id(d->labels, d->nlabels, sizeof *d->labels, id);
    return i < d->nlabels ? &d->labels[i] : NULL;
}

const struct instr_callsite *instr_dump_callsite(const struct instr_dump *d, uint64_t id)
{
    if (id - 1 < d->nsites && d->sites[id - 1].id == id) /* dense ids, as for functions */
        return &d->sites[id - 1];
    size_t i = find_id(d->sites, d->nsites, sizeof *d->sites, id);
    return i < d->nsites ? &d->sites[i] : NULL;
}

int instr_decode_event_slow(const uint8_t **pp, const uint8_t *end, struct instr_event *ev)
{
    const uint8_t *p = *pp;
    uint64_t v;
    if (p >= end || *p == 0)
        return 0;
    if (*p < 0x80) {
        v = *p++;
    } else if (instr_get_varint(&p, end, &v) < 0) {
        return -1;
    }
    ev->delta = v >> 4;
    ev->os = (uint8_t)(v >> 3 & 1);
    ev->kind = (uint8_t)(v & 7);
    ev->ext = 0;
    if (ev->os) {
        if (p >= end)
            return -1;
        ev->bits = *p++;
        ev->offcpu = 0;
        if ((ev->bits & INSTR_OS_OFFCPU_FOLLOWS) && instr_get_varint(&p, end, &ev->offcpu) < 0)
            return -1;
    } else {
        ev->bits = 0;
        ev->offcpu = 0;
    }
    switch (ev->kind) {
    case INSTR_EV_ENTER:
    case INSTR_EV_CALL:
        if (p < end && *p < 0x80)
            ev->arg = *p++;
        else if (instr_get_varint(&p, end, &ev->arg) < 0)
            return -1;
        break;
    case INSTR_EV_EXIT:
    case INSTR_EV_RETURN:
        break;
    case INSTR_EV_EXT:
        if (instr_get_ext(&p, end, &ev->ext, &ev->arg, &ev->value) < 0)
            return -1;
        break;
    default:
        return -1;
    }
    *pp = p;
    return 1;
}

/* Drops the whole pages of [p, p + len) from this process's memory: the
 * mapping is private and read-only, so they come back from the file if
 * touched again. */
static void release(const struct instr_dump *d, const uint8_t *p, size_t len)
{
    const uintptr_t pg = 4096;
    uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1), b = ((uintptr_t)p + len) & ~(pg - 1);
    if (b > a && (const uint8_t *)a >= d->map && (const uint8_t *)b <= d->map + d->size)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

void instr_dump_chunk_done(const struct instr_dump *d, const struct instr_chunk_ref *c)
{
    const uint8_t *start = c->payload - INSTR_CHUNK_HEADER_SIZE;
    /* The whole chunk, not just its used bytes: fault-around mapped the
     * pages after them too. */
    size_t len = d->hdr.chunk_size;
    if (len > (size_t)(d->map + d->size - start))
        len = (size_t)(d->map + d->size - start);
    struct instr_dump_done *b = d->done;
    if (!b) {
        release(d, start, len);
    } else {
        /* The span may hold chunks no reader is done with (another
         * thread's, interleaved in the file): released, they are read again
         * from the file when touched, unchanged (the mapping is never
         * written). */
        uintptr_t lo = (uintptr_t)start, hi = lo + len;
        if (!b->bytes || lo < b->lo)
            b->lo = lo;
        if (!b->bytes || hi > b->hi)
            b->hi = hi;
        b->bytes += len;
        if (b->bytes >= INSTR_DUMP_RELEASE_BYTES) {
            release(d, (const uint8_t *)b->lo, b->hi - b->lo);
            b->bytes = 0;
        }
    }
    if (d->progress)
        d->progress(d->progress_ctx, c->len + INSTR_CHUNK_HEADER_SIZE);
}

/* ---- event iteration --------------------------------------------------------- */

void instr_event_iter_init(struct instr_event_iter *it, const struct instr_thread_info *th)
{
    memset(it, 0, sizeof *it);
    it->th = th;
    it->chunk = (size_t)-1;
}

int instr_event_iter_next(struct instr_event_iter *it, struct instr_event *ev)
{
    for (;;) {
        if (it->chunk != (size_t)-1 && it->p) {
            int r = instr_decode_event(&it->p, it->end, ev);
            if (r > 0) {
                it->tick += ev->delta;
                ev->tick = it->tick;
                if (ev->kind == INSTR_EV_EXT && ev->ext == INSTR_EXT_RESYNC)
                    it->tick = ev->arg;
                if (ev->kind == INSTR_EV_EXT && ev->ext == INSTR_EXT_RUNTIME)
                    it->tick += ev->arg; /* the next interval starts after the runtime's work */
                return 1;
            }
            const struct instr_chunk_ref *c = &it->th->chunks[it->chunk];
            if (r < 0 || (it->p < it->end && !c->open)) {
                if (!it->bad) {
                    it->bad = 1;
                    it->bad_chunk = it->chunk;
                }
            }
        }
        if (!instr_chunk_advance(it->th->chunks, it->th->nchunks, &it->chunk, &it->p, &it->end, &it->tick))
            return 0;
    }
}

int instr_chunk_advance(const struct instr_chunk_ref *list, size_t n, size_t *chunk, const uint8_t **p,
                        const uint8_t **end, uint64_t *tick)
{
    if (++*chunk >= n) {
        *chunk = n;
        *p = NULL;
        return 0;
    }
    const struct instr_chunk_ref *c = &list[*chunk];
    *p = c->payload;
    *end = c->payload + c->len;
    *tick = c->base_tsc;
    return 1;
}

void instr_dump_free_process(struct instr_dump *d)
{
    for (size_t i = 0; i < d->argc; i++)
        free(d->argv[i]);
    free(d->argv);
    free(d->cwd);
    d->argv = NULL;
    d->cwd = NULL;
    d->argc = 0;
}

/* dump-reader.c - opening, mapping and validating instr dumps: the header,
 * the chunks listed per thread (METADATA ones handed to dump-metadata.c),
 * their release once read, the lookups by id, and the reader's error,
 * signal and detector names. */
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
#include "dump-reader-internal.h"

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

const char *instr_arch_name(uint32_t arch)
{
    switch (arch) {
    case 0:
    case INSTR_ARCH_X86_64:
        return "x86-64";
    case INSTR_ARCH_AARCH64:
        return "aarch64";
    }
    return "unknown";
}

const char *instr_tick_source_name(uint32_t tick_source)
{
    switch (tick_source) {
    case 0:
    case INSTR_TICKS_TSC:
        return "TSC";
    case INSTR_TICKS_CNTVCT:
        return "cntvct_el0";
    case INSTR_TICKS_MONO_NS:
        return "CLOCK_MONOTONIC";
    }
    return "unknown";
}

int instr_dump_ticks_tsc(const struct instr_dump *d)
{
    return d->hdr.arch <= INSTR_ARCH_X86_64 && d->hdr.tick_source <= INSTR_TICKS_TSC;
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

const char *instr_dump_note(const struct instr_dump *d, size_t *pos, size_t *len)
{
    const char *notes = d->hdr.notes;
    size_t end = d->hdr.notes_len; /* at most sizeof notes: the reader bounds it */
    while (*pos < end) {
        const char *q = notes + *pos, *nl = memchr(q, '\n', end - *pos);
        size_t n = (size_t)((nl ? nl : notes + end) - q);
        *pos += n + 1;
        if (n) {
            *len = n;
            return q;
        }
    }
    return NULL;
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

/* ---- chunks ---------------------------------------------------------------- */

struct raw_chunk {
    uint32_t thread_index;
    uint16_t kind; /* INSTR_CHUNK_* */
    uint32_t seq;
    uint64_t tid;
    size_t index, have; /* its place in the file, the bytes the file holds of it */
    struct instr_chunk_ref ref;
};

/* The metadata first, then each thread's events and samples, each in seq
 * order; a seq found twice in file order.  The runtime writes a stream's
 * chunks in one staging chunk and copies each out (runtime/dump-file.c),
 * so the file does not hold them in order, and a kill between a copy and
 * the reset leaves one twice: the first in the file is the staging chunk,
 * never cut short by a kill. */
static int cmp_raw(const void *a, const void *b)
{
    const struct raw_chunk *x = a, *y = b;
    int xm = x->kind == INSTR_CHUNK_METADATA, ym = y->kind == INSTR_CHUNK_METADATA;
    if (xm != ym)
        return xm ? -1 : 1;
    if (x->thread_index != y->thread_index)
        return x->thread_index < y->thread_index ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Of two chunks of one seq, whether r is to be kept rather than `than`: a
 * closed one before an open one (a thread that a signal handler left by
 * siglongjmp midway through a chunk switch can leave an open, empty one),
 * then the longer, then the first in the file. */
static int better(const struct instr_chunk_ref *r, const struct instr_chunk_ref *than)
{
    if (r->open != than->open)
        return than->open;
    return !r->open && r->len > than->len;
}

/* A second chunk of a seq already taken: silently when it is the same
 * chunk (see cmp_raw), with a warning when it differs. */
static int duplicate(struct instr_dump *d, const struct raw_chunk *keep, const struct raw_chunk *r)
{
    if (keep->ref.len == r->ref.len && !memcmp(keep->ref.payload, r->ref.payload, r->ref.len))
        return 0;
    const char *what = r->kind == INSTR_CHUNK_SAMPLES ? "sample " : "";
    if (r->kind == INSTR_CHUNK_METADATA)
        return instr_dump_warn(d, "duplicate metadata chunk seq %u skipped", r->seq);
    return instr_dump_warn(d, "thread %u: duplicate %schunk seq %u skipped", r->thread_index, what, r->seq);
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
            if ((rc = duplicate(d, &raw[k - 1], &raw[k])))
                return rc;
            if (better(&raw[k].ref, &list[*count - 1]))
                list[*count - 1] = raw[k].ref;
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
    if (version < INSTR_DUMP_VERSION_MIN || version > INSTR_DUMP_VERSION)
        return fail(err, errlen, INSTR_EVERSION, "%s: dump version %u, this reader supports %u to %u", d->path,
                    version, INSTR_DUMP_VERSION_MIN, INSTR_DUMP_VERSION);
    if (d->size < INSTR_DUMP_HEADER_SIZE)
        return fail(err, errlen, INSTR_ECORRUPT, "%s: file ends inside the header (%zu of %u bytes)",
                    d->path, d->size, INSTR_DUMP_HEADER_SIZE);
    memcpy(&d->hdr, m, sizeof d->hdr);
    d->hdr.exe_path[sizeof d->hdr.exe_path - 1] = 0;
    d->hdr.detector_detail[sizeof d->hdr.detector_detail - 1] = 0;
    d->hdr.stop_reason[sizeof d->hdr.stop_reason - 1] = 0;
    if (d->hdr.notes_len > sizeof d->hdr.notes) /* a count past the field: only what the field holds */
        d->hdr.notes_len = sizeof d->hdr.notes;
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
    /* The walk takes each thread's chunks in turn, so it reads across the
     * file, not along it, and a cold dump waited on the disk a fault at a
     * time (a 366 MB Redis dump: 2.8 s cold, 1.9 s cached).  The kernel
     * reads it all ahead instead, beside the chunk scan below and the walk
     * (1.7-2.0 s cold), when it fits in half the free memory; a bigger one
     * would push its own first pages out before the walk came to them.
     * (Asked at open, not at the walk: the scan of the chunks' headers
     * needs it as much, 3.0 s cold without.) */
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && d->size / 2 <= (size_t)pages / 4 * (size_t)page)
        posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    int rc = read_header(d, err, errlen);
    if (rc < 0) {
        close(fd);
        instr_dump_close(d);
        return rc;
    }
    tick_rate(d);

    /* Chunks: as many as the file holds, back to back, each as long as its
     * header says (version 2: its chunk_size, 0 for the dump's; version 1:
     * all the dump's).  The header's chunk_bytes (chunk_count in version
     * 1) is only a cross-check: it may lag behind or be garbage. */
    const size_t cs = d->hdr.chunk_size;
    const int sized = d->hdr.version >= 2;
    struct raw_chunk *raw = NULL;
    size_t nraw = 0, room = 0, i = 0;
    for (size_t off = d->hdr.header_size; off < d->size; i++) {
        size_t left = d->size - off;
        if (left < INSTR_CHUNK_HEADER_SIZE) {
            if ((rc = instr_dump_warn(d, "truncated: file ends %zu bytes into chunk %zu (of %zu bytes)", left, i,
                                      cs)))
                goto fail_raw;
            d->truncated = 1;
            break;
        }
        const uint8_t *c = d->map + off;
        /* The chunk headers are read with pread, not through the mapping:
         * a fault there maps many pages around it (fault-around, large
         * page-cache folios) and memory would grow with the file. */
        uint8_t hb[INSTR_CHUNK_HEADER_SIZE];
        if (pread(fd, hb, sizeof hb, (off_t)off) != (ssize_t)sizeof hb)
            memset(hb, 0, sizeof hb);
        /* A bad size leaves no way to the next chunk: the dump is refused. */
        uint32_t own = sized ? rd32(hb + offsetof(struct instr_chunk_header, chunk_size)) : 0;
        if (own && (own % 8 || own <= INSTR_CHUNK_HEADER_SIZE || own > cs)) {
            free(raw);
            free(caps.tmap);
            close(fd);
            instr_dump_close(d);
            return fail(err, errlen, INSTR_ECORRUPT,
                        "%s: chunk %zu at offset %zu: bad chunk_size %u (a multiple of 8 above %u, at most the "
                        "dump's %zu)",
                        path, i, off, own, INSTR_CHUNK_HEADER_SIZE, cs);
        }
        size_t size = own ? own : cs, have = left < size ? left : size;
        off += size;
        if (have < size) {
            if ((rc = instr_dump_warn(d, "truncated: file ends %zu bytes into chunk %zu (of %zu bytes)", have, i,
                                      size)))
                goto fail_raw;
            d->truncated = 1;
        }
        uint32_t magic = rd32(hb), used = rd32(hb + 20);
        uint16_t kind = rd16(hb + 4), hsize = rd16(hb + 6);
        if (magic == 0 && kind == 0) {
            /* Handed out in the header count but never written (killed). */
            continue;
        }
        if (magic != INSTR_CHUNK_MAGIC || hsize != INSTR_CHUNK_HEADER_SIZE ||
            (kind != INSTR_CHUNK_EVENTS && kind != INSTR_CHUNK_METADATA && kind != INSTR_CHUNK_SAMPLES) ||
            used > size - INSTR_CHUNK_HEADER_SIZE) {
            if ((rc = instr_dump_warn(d, "chunk %zu: corrupt chunk header (magic %#x kind %u size %u used %u); skipped",
                                      i, magic, kind, hsize, used)))
                goto fail_raw;
            continue;
        }
        size_t len = used ? used : size - INSTR_CHUNK_HEADER_SIZE;
        if (len > have - INSTR_CHUNK_HEADER_SIZE)
            len = have - INSTR_CHUNK_HEADER_SIZE;
        const uint8_t *payload = c + INSTR_CHUNK_HEADER_SIZE;
        if (nraw == room) {
            size_t more = room ? 2 * room : 64;
            struct raw_chunk *grown = realloc(raw, more * sizeof *raw);
            if (!grown) {
                rc = INSTR_ENOMEM;
                goto fail_raw;
            }
            raw = grown;
            room = more;
        }
        struct raw_chunk *r = &raw[nraw++];
        memset(r, 0, sizeof *r);
        r->index = i;
        r->have = have;
        r->thread_index = rd32(hb + 8);
        r->kind = kind;
        r->tid = rd32(hb + 12);
        r->seq = rd32(hb + 16);
        r->ref.payload = payload;
        r->ref.len = len;
        r->ref.base_tsc = rd64(hb + 24);
        r->ref.seq = r->seq;
        r->ref.size = (uint32_t)size;
        r->ref.open = used == 0;
    }
    if (!d->truncated) {
        uint64_t holds = d->size > d->hdr.header_size ? d->size - d->hdr.header_size : 0;
        int cut = sized ? d->hdr.chunk_bytes > holds : d->hdr.chunk_count > i;
        if (cut && (rc = sized ? instr_dump_warn(d, "truncated: header counts %llu bytes of chunks, file holds %llu",
                                                 (unsigned long long)d->hdr.chunk_bytes, (unsigned long long)holds)
                               : instr_dump_warn(d, "truncated: header counts %llu chunks, file holds %zu",
                                                 (unsigned long long)d->hdr.chunk_count, i)))
            goto fail_raw;
        d->truncated |= cut;
    }
    if (nraw > 1)
        qsort(raw, nraw, sizeof *raw, cmp_raw);
    size_t nmeta = 0;
    while (nmeta < nraw && raw[nmeta].kind == INSTR_CHUNK_METADATA)
        nmeta++;
    for (size_t k = 0, j; k < nmeta; k = j) { /* a seq at a time, the longest of its copies */
        size_t best = k;
        for (j = k + 1; j < nmeta && raw[j].seq == raw[k].seq; j++) {
            if ((rc = duplicate(d, &raw[j - 1], &raw[j])))
                goto fail_raw;
            if (better(&raw[j].ref, &raw[best].ref))
                best = j;
        }
        if ((rc = instr_dump_parse_metadata(d, &caps, raw[best].ref.payload, raw[best].ref.len, raw[best].index)))
            goto fail_raw;
    }
    for (size_t k = 0; k < nmeta; k++) /* copied out */
        release(d, raw[k].ref.payload - INSTR_CHUNK_HEADER_SIZE, raw[k].have);
    for (size_t i = nmeta; i < nraw;) {
        size_t j = i;
        while (j < nraw && raw[j].thread_index == raw[i].thread_index)
            j++;
        struct instr_thread_info *t = instr_dump_thread_slot(d, &caps, raw[i].thread_index);
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
    } else if (!(d->hdr.flags & INSTR_DUMP_COMPLETE)) {
        /* The model may know which it was (model/endings.c) and say it instead. */
        if ((rc = instr_dump_warn(d, "incomplete: the process did not finish (no end record: killed by "
                                     "SIGKILL, ended by _exit, replaced by exec, or still running)")))
            goto fail_nomem;
        d->unfinished_warning = d->nwarnings;
    }
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
    INSTR_FREE_ALL(d->modules, d->functions, d->labels, d->threads, d->warnings);
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
    size_t len = c->size ? c->size : d->hdr.chunk_size;
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

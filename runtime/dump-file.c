/* dump-file.c - the dump file: its name, creation, header and chunks.
 *
 * One file per process: a header page, then chunks.  The header and every
 * chunk are shared file mappings, so whatever was written survives _exit, a
 * crash or SIGKILL.
 *
 * Windows.  Each stream (a thread's events, the metadata) owns a window of
 * consecutive chunks, reserved with fallocate (a sparse file on a full disk
 * would turn a store into SIGBUS, a failed fallocate only stops the
 * recording) and mapped in one mmap.  Handing out the next chunk of a window
 * is a few stores; a new window's chunks are first written with zeros (64
 * KiB at a time: see instr__fill_zeros), then the whole window is
 * pre-faulted in one call (MADV_POPULATE_WRITE, or a touch per page before
 * Linux 5.14), so the hot path never takes a page fault on the dump:
 * nothing of the runtime's lands inside the program's intervals, and no
 * detector sees the runtime's faults.
 * Windows grow 1, 2, 4 ... INSTR_RT_WINDOW_CHUNKS chunks: a process that
 * forks and execs reserves one chunk (32 KiB), not megabytes.  A window's unused chunks
 * are given back (FALLOC_FL_PUNCH_HOLE) when its thread ends and at exit;
 * the reader skips chunks that were never written.
 *
 * Descriptors.  The dump is created with openat relative to its directory,
 * opened once (O_DIRECTORY|O_NOFOLLOW), exclusively (never through a
 * symlink, never reusing a file), readable and writable by its owner only.
 * A name already taken gets NAME.1.instr, NAME.2.instr ...; after 16 of
 * them, or at once if the file in the way belongs to another user (a name
 * planted in a shared directory), an unpredictable name (NAME.<random>.instr)
 * and one line saying so.
 *
 * When the soft RLIMIT_NOFILE is at least 256, the runtime keeps two
 * descriptors, close-on-exec, at the top of the first 1024 numbers (the dump
 * at 1023, its directory at 1022, or the highest free ones below the limit):
 * out of the way of programs that count on the lowest free number, and what
 * lets recording go on after the program chroots or drops privileges.  A
 * program that closes them (closefrom, a loop to OPEN_MAX) or puts another
 * file at their number is noticed (device and inode checked before each
 * use): the runtime then never touches that number again and opens the dump
 * by its path for each window.  Under a lower limit it keeps no descriptor
 * at all and always opens by path, so the program sees exactly the
 * descriptors it would see uninstrumented.
 *
 * Size.  Growth stays under RLIMIT_FSIZE (going past it would raise SIGXFSZ
 * and kill the program), under INSTR_MAX_SIZE (per dump; default a quarter
 * of the space free when the dump is created, at least 64 MiB), and leaves
 * 2% of the file system free whatever the number of processes writing dumps
 * (the session-wide guard).  Past any of them, events are dropped and
 * counted, and one line says why.
 *
 * In set-user-ID and set-group-ID programs nothing is written at all, unless
 * the runtime was built with INSTR_RECORD_SETUID.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"
#include "output-name.h"

static dev_t dump_dev;
static ino_t dump_ino;

const char *instr__dump_path(void)
{
    return instr__rt.path;
}

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The dump name from INSTR_OUTPUT's pattern (output-name.h). */
int instr__expand_output(const char *tmpl, char *out, size_t size)
{
    return instr_output_expand(tmpl, (long)getpid(), basename_of(instr__rt.exe_path), out, size);
}

#define NUMBERED_TRIES 16 /* NAME.1 .. NAME.16, then random names */
#define FREE_FLOOR_PERCENT 2 /* the session-wide guard */
#define DEFAULT_MAX_MIN (64ull << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static int same_file(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Moves fd to a high number out of the program's way (see the top); returns
 * the new descriptor (fd is closed), or -1 (fd untouched) when the limit is
 * too low to keep anything. */
static int keep_high(int fd, int from_top)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < 256)
        return -1;
    rlim_t cap = rl.rlim_cur < INSTR_RT_DUMP_FD_CAP ? rl.rlim_cur : INSTR_RT_DUMP_FD_CAP;
    int k = fcntl(fd, F_DUPFD_CLOEXEC, (int)cap - from_top);
    if (k < 0)
        return -1;
    close(fd);
    return k;
}

static dev_t dir_dev;
static ino_t dir_ino;

/* The dump's directory, opened once without following a symlink put in
 * place of it (unless the link belongs to us or to root: /var/tmp-like
 * setups).  -1 with errno. */
static int open_dir(const char *dir)
{
    int d = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0 && errno == ELOOP) {
        struct stat st;
        if (lstat(dir, &st) == 0 && (st.st_uid == geteuid() || st.st_uid == 0))
            d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        else
            errno = ELOOP;
    }
    return d;
}

static void random_tag(char *out, size_t n)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint8_t r[16];
    uint64_t mix = instr__tsc() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)out;
    ssize_t got = getrandom(r, sizeof r, GRND_NONBLOCK);
    for (size_t i = 0; i + 1 < n && i < sizeof r; i++) {
        mix = mix * 6364136223846793005ull + 1442695040888963407ull;
        uint8_t b = (got == (ssize_t)sizeof r ? r[i] : 0) ^ (uint8_t)(mix >> 56);
        out[i] = alphabet[b % (sizeof alphabet - 1)];
        out[i + 1] = 0;
    }
}

/* Creates the dump in directory dfd: never following a symlink, never
 * truncating or reusing an existing file.  path gets the absolute name. */
static int create_unique(int dfd, const char *base, char *path, size_t size)
{
    size_t bl = strlen(base);
    int has_ext = bl > 6 && !strcmp(base + bl - 6, ".instr");
    int stem = (int)(has_ext ? bl - 6 : bl);
    int foreign = 0;
    for (unsigned i = 0; i < 10000; i++) {
        int n;
        char tag[12];
        int random = foreign || i > NUMBERED_TRIES;
        if (random)
            random_tag(tag, sizeof tag);
        if (i == 0)
            n = snprintf(path, size, "%s", base);
        else if (random)
            n = snprintf(path, size, "%.*s.%s%s", stem, base, tag, has_ext ? ".instr" : "");
        else
            n = snprintf(path, size, "%.*s.%u%s", stem, base, i, has_ext ? ".instr" : "");
        if (n < 0 || (size_t)n >= size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        const char *name = basename_of(path);
        int fd = openat(dfd, name, O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_RDWR, 0600);
        if (fd >= 0) {
            if (foreign)
                instr__say("a file of another user had the dump's name: recording to ", path,
                           "", "");
            return fd;
        }
        if (errno != EEXIST)
            return -1;
        struct stat st;
        if (!foreign && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != geteuid())
            foreign = 1;
    }
    errno = EEXIST;
    return -1;
}

/* The descriptor to use for one operation (chunk lock held): the kept one
 * if it is still ours, else the dump opened by its path (*opened = 1: the
 * caller closes it).  -1 with errno, ESTALE if the path now names another
 * file (moved, replaced). */
static int dump_fd(int *opened)
{
    *opened = 0;
    if (instr__rt.fd >= 0) {
        if (same_file(instr__rt.fd, dump_dev, dump_ino))
            return instr__rt.fd;
        instr__rt.fd = -1; /* closed or reused by the program: its number now */
    }
    int fd = open(instr__rt.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (!same_file(fd, dump_dev, dump_ino)) {
        close(fd);
        errno = ESTALE;
        return -1;
    }
    *opened = 1;
    return fd;
}

/* INSTR_MAX_SIZE: bytes, with an optional K, M or G (powers of 1024); 0,
 * "none" or "unlimited" for no cap; unset or unreadable: the default. */
static uint64_t max_size(int fd)
{
    const char *s = secure_getenv("INSTR_MAX_SIZE");
    if (s && *s) {
        if (!strcmp(s, "none") || !strcmp(s, "unlimited"))
            return UINT64_MAX;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
                  : *end == 'G' || *end == 'g' ? 30 : 0;
        if (shift)
            end++;
        if (!errno && end != s && !*end && v <= (UINT64_MAX >> shift))
            return v ? (uint64_t)v << shift : UINT64_MAX;
        instr__say("INSTR_MAX_SIZE=", s, ": not a size; using the default", "");
    }
    struct statvfs sv;
    if (fstatvfs(fd, &sv))
        return UINT64_MAX;
    uint64_t cap = (uint64_t)sv.f_bavail * sv.f_frsize / 4;
    return cap < DEFAULT_MAX_MIN ? DEFAULT_MAX_MIN : cap;
}

/* How many of `want` chunks may be reserved from chunk `idx` on (chunk
 * lock held): 0 with *why set when none. */
static uint64_t room_for(int fd, uint64_t idx, uint64_t want, const char **why)
{
    struct rlimit rl;
    if (idx + want > instr__rt.max_chunks)
        want = instr__rt.max_chunks > idx ? instr__rt.max_chunks - idx : 0;
    if (!want) {
        *why = "the dump reached INSTR_MAX_SIZE";
        return 0;
    }
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t fit = rl.rlim_cur > INSTR_DUMP_HEADER_SIZE
                           ? (rl.rlim_cur - INSTR_DUMP_HEADER_SIZE) / INSTR_RT_CHUNK_SIZE
                           : 0;
        if (idx + want > fit)
            want = fit > idx ? fit - idx : 0;
        if (!want) {
            *why = "file size limit (RLIMIT_FSIZE) reached";
            return 0;
        }
    }
    struct statvfs sv;
    if (fstatvfs(fd, &sv) == 0 && sv.f_blocks) {
        uint64_t floor = (uint64_t)sv.f_blocks * FREE_FLOOR_PERCENT / 100;
        uint64_t blocks = (want * INSTR_RT_CHUNK_SIZE + sv.f_frsize - 1) / sv.f_frsize;
        if ((uint64_t)sv.f_bavail < floor + blocks) {
            uint64_t left = (uint64_t)sv.f_bavail > floor ? sv.f_bavail - floor : 0;
            want = left * sv.f_frsize / INSTR_RT_CHUNK_SIZE;
            if (!want) {
                *why = "No space left on device (the runtime keeps 2% of the file system free)";
                return 0;
            }
        }
    }
    return want;
}

void instr__count_dropped(void)
{
    if (instr__rt.header)
        __atomic_fetch_add(&instr__rt.header->dropped_events, 1, __ATOMIC_RELAXED);
}

/* The end of the process (exit, or a fatal signal): its time, which is
 * also the last calibration pair.  Only reads the clocks: async-signal-safe. */
void instr__header_end(struct instr_dump_header *h)
{
    uint64_t tsc, mono;
    instr__clock_pair(&tsc, &mono, NULL);
    h->end_tsc = tsc;
    h->end_mono_ns = mono;
    h->last_tsc = tsc;
    h->last_mono_ns = mono;
}

void instr__header_touch(void)
{
    struct instr_dump_header *h = instr__rt.header;
    uint64_t tsc, mono;
    instr__clock_pair(&tsc, &mono, NULL);
    __atomic_store_n(&h->last_tsc, tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&h->last_mono_ns, mono, __ATOMIC_RELAXED);
}

/* 0 in a set-user-ID or set-group-ID program (AT_SECURE): the runtime then
 * writes nothing and says nothing, unless built with INSTR_RECORD_SETUID. */
int instr__dump_allowed(void)
{
#ifndef INSTR_RECORD_SETUID
    if (getauxval(AT_SECURE))
        return 0;
#endif
    return 1;
}

/* Fork child: the inherited kept descriptor is the parent's dump; the
 * directory's stays (the child's dump goes next to it). */
static void drop_parent_fd(void)
{
    if (instr__rt.fd >= 0 && same_file(instr__rt.fd, dump_dev, dump_ino))
        close(instr__rt.fd);
    instr__rt.fd = -1;
}

/* The directory descriptor for a new dump: the kept one if still ours,
 * else the directory opened now (*opened = 1). */
static int dir_for(const char *dir, int *opened)
{
    *opened = 0;
    if (instr__rt.dir_fd >= 0) {
        if (same_file(instr__rt.dir_fd, dir_dev, dir_ino))
            return instr__rt.dir_fd;
        instr__rt.dir_fd = -1;
    }
    int d = open_dir(dir);
    if (d >= 0)
        *opened = 1;
    return d;
}

int instr__dump_create(uint32_t flags)
{
    char base[sizeof instr__rt.path];
    int saved = errno, dfd = -1, dir_opened = 0;
    drop_parent_fd();
    instr__rt.header = NULL;
    instr__rt.stopped = 1;
    instr__rt.dump_gen++;
    if (!instr__dump_allowed())
        return -1;
    if (instr__expand_output(instr__rt.output_template, base, sizeof base)) {
        instr__say("cannot create ", instr__rt.output_template, ": name too long", "; not recording");
        errno = saved;
        return -1;
    }
    int fd = -1;
    const char *what = base;
    struct instr_dump_header *h = MAP_FAILED;
    {
        char dir[sizeof base];
        const char *name = basename_of(base);
        size_t dl = (size_t)(name - base);
        memcpy(dir, base, dl);
        dir[dl] = 0;
        if (!dl)
            strcpy(dir, ".");
        else if (dl > 1)
            dir[dl - 1] = 0; /* "/a/b/" -> "/a/b"; "/" stays */
        dfd = dir_for(dir, &dir_opened);
        if (dfd < 0)
            goto fail;
        fd = create_unique(dfd, base, instr__rt.path, sizeof instr__rt.path);
    }
    if (fd < 0)
        goto fail;
    what = instr__rt.path;
    instr__rt.reserved_chunks = 0;
    instr__rt.next_chunk = 0;
    {
        int e = posix_fallocate(fd, 0, INSTR_DUMP_HEADER_SIZE);
        if (e) {
            errno = e;
            goto fail_unlink;
        }
    }
    h = mmap(NULL, INSTR_DUMP_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED)
        goto fail_unlink;
    struct stat st;
    if (fstat(fd, &st))
        goto fail_unlink;
    dump_dev = st.st_dev;
    dump_ino = st.st_ino;
    {
        uint64_t cap = max_size(fd);
        instr__rt.max_chunks = cap == UINT64_MAX ? UINT64_MAX
                               : cap > INSTR_DUMP_HEADER_SIZE
                                   ? (cap - INSTR_DUMP_HEADER_SIZE) / INSTR_RT_CHUNK_SIZE
                                   : 0;
    }
    /* Keep the dump's descriptor, and the directory's (fork children), out
     * of the program's way; or nothing under a low RLIMIT_NOFILE. */
    int kept = keep_high(fd, 1);
    instr__rt.fd = kept;
    if (kept >= 0 && dir_opened) {
        int kd = keep_high(dfd, 2);
        if (kd >= 0 && fstat(kd, &st) == 0) {
            dir_dev = st.st_dev;
            dir_ino = st.st_ino;
            instr__rt.dir_fd = kd;
            dir_opened = 0;
        } else if (kd >= 0) {
            close(kd);
            dir_opened = 0;
        }
    }
    if (dir_opened)
        close(dfd);
    if (kept < 0)
        close(fd);

    memcpy(h->magic, INSTR_DUMP_MAGIC, 8);
    h->version = INSTR_DUMP_VERSION;
    h->header_size = INSTR_DUMP_HEADER_SIZE;
    h->chunk_size = INSTR_RT_CHUNK_SIZE;
    h->flags = flags | (instr__tsc_invariant() ? INSTR_DUMP_TSC_INVARIANT : 0) |
               (instr__switch_off() ? INSTR_DUMP_SWITCHED_OFF : 0);
    h->pid = (uint64_t)getpid();
    h->ppid = (uint64_t)getppid();
    instr__clock_pair(&h->start_tsc, &h->start_mono_ns, &h->start_real_ns);
    h->last_tsc = h->start_tsc;
    h->last_mono_ns = h->start_mono_ns;
    h->detector = instr__detector.kind;
    h->detector_sees = instr__detector.sees;
    h->detector_set = instr__detector.set;
    memcpy(h->detector_detail, instr__detector.detail, sizeof h->detector_detail);
    h->detector_detail[sizeof h->detector_detail - 1] = 0;
    memcpy(h->exe_path, instr__rt.exe_path, sizeof h->exe_path);
    h->exe_path[sizeof h->exe_path - 1] = 0;
    instr__rt.header = h;
    instr__rt.stopped = 0;
    instr__rt.space_warned = 0;
    errno = saved;
    return 0;

fail_unlink: {
    int e = errno;
    unlinkat(dfd, basename_of(instr__rt.path), 0);
    if (h != MAP_FAILED)
        munmap(h, INSTR_DUMP_HEADER_SIZE);
    errno = e;
}
fail:
    /* One line: the program goes on unrecorded. */
    char why[160];
    snprintf(why, sizeof why, "%s; not recording", strerror(errno));
    instr__say("cannot create ", what, ": ", why);
    if (fd >= 0)
        close(fd);
    if (dir_opened)
        close(dfd);
    errno = saved;
    return -1;
}

static void stop(const char *why)
{
    instr__rt.stopped = 1;
    if (!instr__rt.space_warned) {
        instr__rt.space_warned = 1;
        instr__say("stopped recording to ", instr__rt.path, ": ", why);
    }
}

/* Out of descriptors (the program is at its RLIMIT_NOFILE): this window is
 * refused, the thread drops and counts events and retries later. */
static void pause_for(const char *why)
{
    if (!instr__rt.space_warned) {
        instr__rt.space_warned = 1;
        instr__say("recording paused (events dropped and counted): ", why, "", "");
    }
}

static int populate_ok = 1; /* MADV_POPULATE_WRITE known (Linux >= 5.14) */

/* Faults in a chunk about to be written, in one system call: no fault on
 * the hot path.  -1 if the pages cannot be had (the file was truncated
 * under us, no memory): the chunk must then not be written. */
static int prefault(uint8_t *p, size_t len)
{
    if (populate_ok) {
        if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
            return 0;
        if (errno != EINVAL)
            return -1;
        populate_ok = 0;
    }
    for (size_t i = 0; i < len; i += 4096)
        *(volatile uint8_t *)(p + i) = 0; /* not handed out yet: still zero */
    return 0;
}

/* Zeros written into a new window's chunks, 64 KiB per write, before any
 * is mapped: the page cache then holds them in folios of at most 64 KiB
 * and the pre-fault only maps them.  Faulted in through the mapping, the
 * holes are filled by readahead, in folios up to 2 MiB on file systems
 * with large folios (ext4 on Linux 6.18 here: perf shows 87 % of the
 * pre-fault in the readahead's memset); on a VM whose host takes back
 * free memory in such large blocks, every page of them is then first
 * touched by that memset at several µs a page.  Measured on this
 * project's VM, 256 MiB in 64 KiB writes: 8.7 µs a page by pre-fault
 * alone after 20 s idle, 0.86 with these writes first (4 MiB writes: 10.4,
 * the folios are large again), 0.75 either way while memory is warm.  A write
 * that fails changes nothing: the pre-fault then brings the pages in.
 * Without libc: the prefill helper (prefill.c) calls it too. */
static uint8_t zeros[INSTR_RT_ZERO_WRITE]; /* .bss: only ever read */

__attribute__((no_stack_protector)) void instr__fill_zeros(int fd, int64_t off, uint64_t chunks)
{
    uint64_t len = chunks * INSTR_RT_CHUNK_SIZE;
    for (uint64_t done = 0; done < len; done += sizeof zeros) {
        long n = (long)(len - done < sizeof zeros ? len - done : sizeof zeros);
        if (instr__sys6(SYS_pwrite64, fd, (long)zeros, n, (long)(off + (int64_t)done), 0, 0) != n)
            return;
    }
}

/* Gives back the space of chunks [from, w->mapped) of a window of this
 * process's dump: never written, or written with nothing (the reader skips
 * zero chunks).  Chunk lock held. */
static void punch(struct instr__window *w, uint32_t from)
{
    if (from >= w->mapped || w->gen != instr__rt.dump_gen || !instr__rt.header)
        return;
    int opened, fd = dump_fd(&opened);
    if (fd < 0)
        return;
    off_t off = (off_t)INSTR_DUMP_HEADER_SIZE + (off_t)(w->first + from) * INSTR_RT_CHUNK_SIZE;
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
                  (off_t)(w->mapped - from) * INSTR_RT_CHUNK_SIZE)) {
        /* file systems without holes keep the space: harmless */
    }
    if (opened)
        close(fd);
}

static void release(struct instr__window *w)
{
    if (w->base)
        munmap(w->base, (size_t)w->mapped * INSTR_RT_CHUNK_SIZE);
    w->base = NULL;
    w->mapped = w->usable = w->next = 0;
}

/* The smallest window whose successor the helper prepares (prefill.c):
 * short-lived threads and processes never start it. */
#define PREFILL_MIN_CHUNKS 2u

static uint32_t next_grow(uint64_t n)
{
    return (uint32_t)(n * 2 > INSTR_RT_WINDOW_CHUNKS ? INSTR_RT_WINDOW_CHUNKS : n * 2);
}

/* Reserves the chunks of w's next window and asks the helper to prepare
 * them (chunk lock held); nothing if it is busy, gone, or the dump has no
 * room for them (the inline path then says why, when it gets there).  The
 * header counts them only once taken: a request the helper never finished
 * (the program ended first) must not make the header count chunks the
 * file does not hold (the reader would call the dump truncated). */
static void ask_next(struct instr__window *w, int fd)
{
    uint64_t idx = instr__rt.next_chunk, want = w->grow ? w->grow : 1;
    const char *why = NULL;
    if (want < PREFILL_MIN_CHUNKS || instr__prefill_busy() || room_for(fd, idx, want, &why) < want)
        return;
    off_t off = (off_t)INSTR_DUMP_HEADER_SIZE + (off_t)idx * INSTR_RT_CHUNK_SIZE;
    if (instr__prefill_ask(fd, idx, (uint32_t)want, off))
        return;
    instr__rt.next_chunk = instr__rt.reserved_chunks = idx + want;
}

/* Maps a new window for w (chunk lock held): the old one is given up. */
static int new_window(struct instr__window *w)
{
    if (w->base && w->gen == instr__rt.dump_gen)
        punch(w, w->next);
    if (w->gen != instr__rt.dump_gen) {
        release(w);
        w->gen = instr__rt.dump_gen;
        w->grow = 0;
    }
    uint64_t pfirst;
    uint32_t pn;
    uint8_t *pbase;
    if (instr__prefill_take(&pfirst, &pn, &pbase)) {
        if (w->base && !instr__prefill_unmap(w->base, (size_t)w->mapped * INSTR_RT_CHUNK_SIZE))
            w->base = NULL; /* the helper unmaps it */
        release(w);
        w->base = pbase;
        w->first = pfirst;
        w->mapped = w->usable = pn;
        w->next = 0;
        w->grow = next_grow(pn > w->grow ? pn : w->grow);
        if (__atomic_load_n(&instr__rt.header->chunk_count, __ATOMIC_RELAXED) < pfirst + pn)
            __atomic_store_n(&instr__rt.header->chunk_count, pfirst + pn, __ATOMIC_RELEASE);
        int opened, fd = dump_fd(&opened);
        if (fd >= 0) {
            ask_next(w, fd);
            if (opened)
                close(fd);
        }
        return 0;
    }
    release(w);
    int opened, fd = dump_fd(&opened);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE)
            pause_for(strerror(errno));
        else if (errno == ESTALE)
            stop("the file was moved or replaced");
        else if (errno == EPERM || errno == ENOSYS) { /* our own file: a filter said no */
            stop(strerror(errno));
            instr__sandbox_enter("a system call of the runtime was refused (a seccomp filter?)");
        }
        else
            stop(strerror(errno));
        return -1;
    }
    uint64_t idx = instr__rt.next_chunk;
    uint64_t want = w->grow ? w->grow : 1;
    const char *why = NULL;
    uint64_t n = room_for(fd, idx, want, &why);
    if (!n) {
        stop(why);
        goto fail;
    }
    off_t off = (off_t)INSTR_DUMP_HEADER_SIZE + (off_t)idx * INSTR_RT_CHUNK_SIZE;
    int e = posix_fallocate(fd, off, (off_t)n * INSTR_RT_CHUNK_SIZE);
    if (e) {
        stop(strerror(e));
        goto fail;
    }
    instr__fill_zeros(fd, off, n);
    void *m = mmap(NULL, (size_t)n * INSTR_RT_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    if (m == MAP_FAILED) {
        if (errno == ENOMEM)
            pause_for("no address space for the next window (RLIMIT_AS)");
        else
            stop(strerror(errno));
        goto fail;
    }
    instr__rt.next_chunk = instr__rt.reserved_chunks = idx + n;
    __atomic_store_n(&instr__rt.header->chunk_count, idx + n, __ATOMIC_RELEASE);
    w->base = m;
    w->first = idx;
    w->mapped = w->usable = (uint32_t)n;
    w->next = 0;
    w->grow = next_grow(want);
    /* The whole window in one call: its pages are in the page cache
     * already (the zeros above), so this only maps them, one system call
     * a window instead of one a chunk. */
    if (prefault(w->base, (size_t)n * INSTR_RT_CHUNK_SIZE)) {
        stop(strerror(errno));
        goto fail;
    }
    if (n >= PREFILL_MIN_CHUNKS)
        ask_next(w, fd); /* the descriptor of this window, still open */
    if (opened)
        close(fd);
    return 0;
fail:
    if (opened)
        close(fd);
    return -1;
}

/* Hands out the next chunk of w's stream, mapped, pre-faulted, its header
 * filled in; NULL when recording has stopped.  A window's chunks go without
 * a system call; a new window takes the chunk lock and a few. */
void *instr__chunk_map(struct instr__window *w, uint16_t kind, uint32_t thread_index, uint32_t tid,
                       uint32_t seq, uint64_t base_tsc)
{
    int saved = errno;
    struct instr_chunk_header *c = NULL;
    if (instr__rt.stopped || !instr__rt.header)
        goto out;
    if (!w->base || w->gen != instr__rt.dump_gen || w->next >= w->usable) {
        if (!instr__may_syscall())
            goto out; /* sandbox.c: not even the lock (a futex) */
        pthread_mutex_lock(&instr__rt.chunk_lock);
        int r = instr__rt.stopped ? -1 : new_window(w);
        pthread_mutex_unlock(&instr__rt.chunk_lock);
        if (r)
            goto out;
    }
    c = (struct instr_chunk_header *)(w->base + (size_t)w->next * INSTR_RT_CHUNK_SIZE);
    w->next++;
    c->magic = INSTR_CHUNK_MAGIC;
    c->kind = kind;
    c->header_size = INSTR_CHUNK_HEADER_SIZE;
    c->thread_index = thread_index;
    c->tid = tid;
    c->seq = seq;
    c->used_bytes = 0;
    c->base_tsc = base_tsc;
    instr__header_touch();
out:
    errno = saved;
    return c;
}

/* At exit: gives back the unused chunks of the exiting thread's window and
 * of the metadata's (all but the pre-faulted next one, which late
 * destructors may still fill).  Recording goes on: a later chunk maps a new
 * window. */
void instr__dump_trim(void)
{
    struct instr__thread *t = instr__thread_own(instr__tls);
    pthread_mutex_lock(&instr__rt.meta_lock);
    pthread_mutex_lock(&instr__rt.chunk_lock);
    struct instr__window *ws[2] = {&instr__rt.meta_win, t ? &t->win : NULL};
    for (int i = 0; i < 2; i++) {
        struct instr__window *w = ws[i];
        if (!w || !w->base || w->next + 1 >= w->usable)
            continue;
        w->usable = w->next + 1;
        punch(w, w->usable);
    }
    uint64_t pfirst;
    uint32_t pn;
    uint8_t *pbase;
    if (instr__prefill_take(&pfirst, &pn, &pbase)) { /* prepared, never taken */
        struct instr__window spare = {.base = pbase, .first = pfirst, .mapped = pn, .usable = pn,
                                      .gen = instr__rt.dump_gen};
        punch(&spare, 0);
        release(&spare);
    }
    pthread_mutex_unlock(&instr__rt.chunk_lock);
    pthread_mutex_unlock(&instr__rt.meta_lock);
}

void instr__chunk_unmap(struct instr__window *w)
{
    int saved = errno;
    if (!instr__may_syscall())
        return; /* sandbox.c: it stays mapped */
    pthread_mutex_lock(&instr__rt.chunk_lock);
    if (w->base && w->gen == instr__rt.dump_gen)
        punch(w, w->next);
    release(w);
    pthread_mutex_unlock(&instr__rt.chunk_lock);
    errno = saved;
}

/* dump-file.c - the dump file: its name, creation, header and chunks.
 *
 * One file per process: a header page, then chunks.  The header and every
 * chunk are shared file mappings, so whatever was written survives _exit, a
 * crash or SIGKILL.
 *
 * Staging.  Each stream (a thread's events or samples, the metadata) has a
 * staging area of its own: consecutive chunks of the dump, written as
 * zeros first (a hole on a full disk would turn a store into SIGBUS; a
 * failed write only stops the recording), mapped and pre-faulted once.
 * The stream writes its chunks there, one after the other, with no
 * system call; once all are full the area grows (1, 2, 4 ... 16 chunks:
 * the full one stays in the file where it is) or, at its largest, is
 * copied to new chunk indexes with one pwrite and reset.  So the program's
 * threads do not fault in, map or unmap a page of the dump per chunk (a
 * first touch of a new page, and a TLB shootdown per munmap, were most of
 * the recorder's cost), a full disk is an error from pwrite rather than a
 * signal, and a killed program still leaves every chunk in the file: the
 * last ones of each stream are in its staging area.  Chunks are therefore
 * not in seq order in the file; the reader sorts them and drops the one
 * copy a kill between the pwrite and the reset leaves twice.  A stream's
 * first staging area is one chunk of a page (INSTR_RT_FIRST_CHUNK_SIZE),
 * its size written in its header with its space, so a process that made
 * a few calls leaves a dump of a few pages, killed or not (hello world:
 * 12 KiB); the next ones hold chunks of INSTR_RT_CHUNK_SIZE (32 KiB).
 * Space is reserved in pages (INSTR_RT_UNIT); a thread's chunks never
 * handed out are given back when it ends.
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
 * by its path for each chunk it copies out.  Under a lower limit it keeps no descriptor
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
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"
#include "output-name.h"

static dev_t dump_dev;
static ino_t dump_ino;
static int reason_is_pause; /* the header's stop_reason is a pause's (header_reason) */

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
    const struct instr_output_job j = {instr__job.rank, instr__job.host, instr__job.id};
    return instr_output_expand_job(tmpl, (long)instr__getpid(), basename_of(instr__rt.exe_path), &j, out, size);
}

/* Whether the template's last directory names a job (%j, %r or %h in it):
 * that directory is created when missing (a directory per job, mkdir
 * races among its ranks are harmless). */
static int job_dir_template(const char *tmpl)
{
    const char *slash = strrchr(tmpl, '/');
    if (!slash)
        return 0;
    const char *from = slash;
    while (from > tmpl && from[-1] != '/')
        from--;
    for (const char *p = from; p + 1 < slash; p++)
        if (p[0] == '%' && (p[1] == 'j' || p[1] == 'r' || p[1] == 'h'))
            return 1;
    return 0;
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
        if (lstat(dir, &st) == 0 && (st.st_uid == instr__geteuid() || st.st_uid == 0))
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
    uint64_t mix = instr__tsc() ^ ((uint64_t)instr__getpid() << 32) ^ (uintptr_t)out;
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
        if (!foreign && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != instr__geteuid())
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
        if (!errno && end != s && !*end && v <= (UINT64_MAX >> shift)) {
            uint64_t cap = v ? (uint64_t)v << shift : UINT64_MAX;
            /* The header, the metadata chunk and one thread's chunk: less,
             * and no call is recorded at all; said, the limit kept. */
            if (cap < INSTR_DUMP_HEADER_SIZE + 2ull * INSTR_RT_FIRST_CHUNK_SIZE)
                instr__say("INSTR_MAX_SIZE=", s,
                           ": below the smallest dump that records a thread (12K: the header, a metadata chunk "
                           "and one chunk of events); no call will be recorded",
                           "");
            return cap;
        }
        instr__say("INSTR_MAX_SIZE=", s, ": not a size; using the default", "");
    }
    struct statvfs sv;
    if (fstatvfs(fd, &sv))
        return UINT64_MAX;
    uint64_t cap = (uint64_t)sv.f_bavail * sv.f_frsize / 4;
    return cap < DEFAULT_MAX_MIN ? DEFAULT_MAX_MIN : cap;
}

/* How many of `want` units (INSTR_RT_UNIT) may be reserved from unit
 * `idx` on (chunk lock held); *why set when a limit cuts them. */
static uint64_t room_for(int fd, uint64_t idx, uint64_t want, const char **why)
{
    struct rlimit rl;
    if (idx + want > instr__rt.max_units) {
        want = instr__rt.max_units > idx ? instr__rt.max_units - idx : 0;
        *why = "the dump reached INSTR_MAX_SIZE";
    }
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t fit =
            rl.rlim_cur > INSTR_DUMP_HEADER_SIZE ? (rl.rlim_cur - INSTR_DUMP_HEADER_SIZE) / INSTR_RT_UNIT : 0;
        if (idx + want > fit) {
            want = fit > idx ? fit - idx : 0;
            *why = "file size limit (RLIMIT_FSIZE) reached";
        }
    }
    struct statvfs sv;
    if (want && fstatvfs(fd, &sv) == 0 && sv.f_blocks) {
        uint64_t floor = (uint64_t)sv.f_blocks * FREE_FLOOR_PERCENT / 100;
        uint64_t blocks = (want * INSTR_RT_UNIT + sv.f_frsize - 1) / sv.f_frsize;
        if ((uint64_t)sv.f_bavail < floor + blocks) {
            uint64_t left = (uint64_t)sv.f_bavail > floor ? sv.f_bavail - floor : 0;
            want = left * sv.f_frsize / INSTR_RT_UNIT;
            *why = "No space left on device (the runtime keeps 2% of the file system free)";
        }
    }
    return want;
}

void instr__count_dropped_kind(unsigned kind)
{
    if (!instr__rt.header)
        return;
    __atomic_fetch_add(&instr__rt.header->dropped_events, 1, __ATOMIC_RELAXED);
    if (kind == INSTR_EV_ENTER)
        __atomic_fetch_add(&instr__rt.header->dropped_calls, 1, __ATOMIC_RELAXED);
    else if (kind == INSTR_EV_CALL)
        __atomic_fetch_add(&instr__rt.header->dropped_sites, 1, __ATOMIC_RELAXED);
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

void instr__dump_detach(void)
{
    drop_parent_fd();
    instr__rt.header = NULL;
    instr__rt.stopped = 1;
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
        if (job_dir_template(instr__rt.output_template) && !(dfd >= 0 && !dir_opened)) {
            /* A job's directory: made if missing, used only if it is ours
             * (else the dump goes next to it, named DIR.NAME). */
            struct stat jst;
            if (dfd < 0 && errno == ENOENT && (mkdir(dir, 0700) == 0 || errno == EEXIST))
                dir_opened = (dfd = open_dir(dir)) >= 0;
            if (dfd >= 0 && (fstat(dfd, &jst) || jst.st_uid != instr__geteuid())) {
                close(dfd);
                dfd = -1;
                base[dl - 1] = '.';
                instr__say("the job directory ", dir, " is not this user's: recording to ", base);
                char *slash = strrchr(dir, '/');
                if (slash)
                    slash[slash == dir] = 0;
                else
                    strcpy(dir, ".");
                dir_opened = (dfd = open_dir(dir)) >= 0;
            }
        }
        if (dfd < 0)
            goto fail;
        fd = create_unique(dfd, base, instr__rt.path, sizeof instr__rt.path);
    }
    if (fd < 0)
        goto fail;
    what = instr__rt.path;
    instr__rt.next_unit = instr__rt.granted_units = 0;
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
        instr__rt.max_units = cap == UINT64_MAX              ? UINT64_MAX
                              : cap > INSTR_DUMP_HEADER_SIZE ? (cap - INSTR_DUMP_HEADER_SIZE) / INSTR_RT_UNIT
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

    instr__filter_init();
    memcpy(h->magic, INSTR_DUMP_MAGIC, 8);
    h->version = INSTR_DUMP_VERSION;
    h->header_size = INSTR_DUMP_HEADER_SIZE;
    h->chunk_size = INSTR_RT_CHUNK_SIZE;
    h->flags = flags | (instr__tsc_invariant() ? INSTR_DUMP_TSC_INVARIANT : 0) |
               (instr__switch_off() ? INSTR_DUMP_SWITCHED_OFF : 0);
    instr__filter_header(h);
    h->pid = (uint64_t)instr__getpid();
    h->ppid = (uint64_t)instr__getppid();
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
    instr__notes_to_header(h);
    h->arch = INSTR_RT_ARCH;
    h->tick_source = INSTR_RT_TICKS;
    instr__job_header(h);
    instr__rt.header = h;
    instr__rt.stopped = 0;
    instr__rt.space_warned = 0;
    reason_is_pause = 0;
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

/* Why events were dropped, in the header (stop_reason: the report's
 * warning, instr-dump's stopped=), so that the dump itself says which
 * limit cut it, not only the one line on stderr.  The first reason wins;
 * a pause (no descriptor free) gives way to a stop, which lasts. */
static void header_reason(const char *why, int pause)
{
    struct instr_dump_header *h = instr__rt.header;
    if (!h || (h->stop_reason[0] && (pause || !reason_is_pause)))
        return;
    snprintf(h->stop_reason, sizeof h->stop_reason, "%s%s", pause ? "recording paused: " : "", why);
    reason_is_pause = pause;
}

static void stop(const char *why)
{
    instr__rt.stopped = 1;
    header_reason(why, 0);
    if (!instr__rt.space_warned) {
        instr__rt.space_warned = 1;
        instr__say("stopped recording to ", instr__rt.path, ": ", why);
    }
}

/* Out of descriptors (the program is at its RLIMIT_NOFILE): this chunk is
 * refused, the thread drops and counts events and retries later. */
static void pause_for(const char *why)
{
    header_reason(why, 1);
    if (!instr__rt.space_warned) {
        instr__rt.space_warned = 1;
        instr__say("recording paused (events dropped and counted): ", why, "", "");
    }
}

static int populate_ok = 1; /* MADV_POPULATE_WRITE known (Linux >= 5.14) */

/* Faults in a stream's staging chunk in one system call, once: the hot
 * path never takes a page fault on the dump.  -1 if the pages cannot be
 * had (the file was truncated under us, no memory). */
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

/* Reserves units [idx, idx + n) of the dump (INSTR_RT_UNIT each) if
 * there is room (chunk lock held): the first, or UINT64_MAX with
 * recording stopped.  The limits are checked for GRANT_UNITS at a time
 * (1 MiB): each check is two system calls, a microsecond each on this
 * project's VM. */
#define GRANT_UNITS ((1u << 20) / INSTR_RT_UNIT)

static uint64_t reserve(int fd, uint64_t n)
{
    uint64_t idx = instr__rt.next_unit;
    if (idx + n > instr__rt.granted_units) {
        const char *why = NULL;
        uint64_t got = room_for(fd, idx, n > GRANT_UNITS ? n : GRANT_UNITS, &why);
        if (got < n) {
            stop(why ? why : "no room");
            return UINT64_MAX;
        }
        instr__rt.granted_units = idx + got;
    }
    instr__rt.next_unit = idx + n;
    return idx;
}

/* The header counts n chunks of csize bytes from unit idx as handed out
 * once they are in the file: chunks counted but not written (killed in
 * between) would make the reader call the dump truncated. */
static void count_chunks(uint64_t idx, uint32_t n, uint32_t csize)
{
    struct instr_dump_header *h = instr__rt.header;
    uint64_t end = idx * INSTR_RT_UNIT + (uint64_t)n * csize;
    uint64_t have = __atomic_load_n(&h->chunk_bytes, __ATOMIC_RELAXED);
    while (have < end &&
           !__atomic_compare_exchange_n(&h->chunk_bytes, &have, end, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    __atomic_fetch_add(&h->chunk_count, n, __ATOMIC_RELAXED);
}

static off_t chunk_off(uint64_t idx)
{
    return (off_t)INSTR_DUMP_HEADER_SIZE + (off_t)idx * INSTR_RT_UNIT;
}

/* Out of descriptors or refused: why the dump cannot be written now. */
static void fd_failed(void)
{
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
}

/* Stages grow 1, 2, 4 ... STAGE_MAX_CHUNKS chunks: a thread that makes a
 * few calls keeps one chunk, a busy one copies 512 KiB at a time (one
 * pwrite of 32 KiB costs 6.7 µs on this project's VM, of 512 KiB 3.8 µs
 * per 32 KiB: docs/performance.md, "The recorder's chunks"). */
#define STAGE_MAX_CHUNKS 16u

/* Writes len zero bytes at off (chunk lock held): the page-cache pages of
 * a new staging area, with their blocks reserved.  Zeros written with one
 * pwritev and then MADV_POPULATE_WRITE cost a quarter of what fallocate
 * and populating the unwritten pages did: examples/shapes, whose 1.5 MB
 * dump is mostly its stages' growth, spent 0.6 ms in the runtime against
 * 0.7 as root, 0.4 against 0.6 as a user (docs/performance.md, "The
 * recorder's chunks").  Like fallocate, it fails (ENOSPC, EDQUOT) rather
 * than leaving a hole that a store would turn into SIGBUS.  Every iovec
 * is the same page of zeros: the kernel reads one page, faulted in once
 * per process, where a zero mapping of the stage's size took a fault per
 * page it read (eight for a first chunk: a fifth of the page faults a
 * short process added, issue 39).  0, or -1 with recording stopped. */
#define ZERO_PAGE_SIZE 4096u

#define ZERO_IOVECS (STAGE_MAX_CHUNKS * (INSTR_RT_CHUNK_SIZE / ZERO_PAGE_SIZE))
_Static_assert(INSTR_RT_CHUNK_SIZE % ZERO_PAGE_SIZE == 0, "a chunk is whole pages");

static const uint8_t zero_page[ZERO_PAGE_SIZE] __attribute__((aligned(ZERO_PAGE_SIZE)));
/* Static, not on the stack: a hook may run on a signal handler's small
 * alternate stack. */
static const struct iovec zero_iov[ZERO_IOVECS] = {
    [0 ... ZERO_IOVECS - 1] = {(void *)zero_page, ZERO_PAGE_SIZE}};

/* A stream's first chunk: a page of zeros but for its size, which makes
 * it a chunk of its own length to the reader before it is handed out. */
_Static_assert(INSTR_RT_FIRST_CHUNK_SIZE == ZERO_PAGE_SIZE, "a first chunk is one page");
_Static_assert(INSTR_RT_FIRST_CHUNK_SIZE % INSTR_RT_UNIT == 0 && INSTR_RT_CHUNK_SIZE % INSTR_RT_UNIT == 0,
               "chunks are whole units");
static const uint8_t first_page[ZERO_PAGE_SIZE] __attribute__((aligned(ZERO_PAGE_SIZE))) = {
    [offsetof(struct instr_chunk_header, chunk_size)] = INSTR_RT_FIRST_CHUNK_SIZE & 0xff,
    [offsetof(struct instr_chunk_header, chunk_size) + 1] = (INSTR_RT_FIRST_CHUNK_SIZE >> 8) & 0xff,
    [offsetof(struct instr_chunk_header, chunk_size) + 2] = (INSTR_RT_FIRST_CHUNK_SIZE >> 16) & 0xff,
    [offsetof(struct instr_chunk_header, chunk_size) + 3] = (INSTR_RT_FIRST_CHUNK_SIZE >> 24) & 0xff};
static const struct iovec first_iov = {(void *)first_page, ZERO_PAGE_SIZE};

static int put_zeros(int fd, off_t off, size_t len, int first)
{
    size_t n = len / ZERO_PAGE_SIZE;
    if (n > ZERO_IOVECS || len % ZERO_PAGE_SIZE || (first && len != INSTR_RT_FIRST_CHUNK_SIZE)) {
        stop("a staging area larger than its zeros");
        return -1;
    }
    ssize_t w = pwritev(fd, first ? &first_iov : zero_iov, (int)n, off);
    if (w != (ssize_t)len) {
        stop(w < 0 ? strerror(errno) : "short write");
        return -1;
    }
    return 0;
}

/* Gives s a staging area of n chunks of csize bytes of its own (chunk
 * lock held): consecutive chunks of the dump, written as zeros (a first
 * chunk with its size), mapped and pre-faulted once.  The area it had
 * stays where it is, in the file. */
static int new_stage(struct instr__stage *s, uint32_t n, uint32_t csize)
{
    int opened, fd = dump_fd(&opened);
    if (fd < 0) {
        fd_failed();
        return -1;
    }
    int rc = -1;
    size_t len = (size_t)n * csize;
    uint64_t idx = reserve(fd, len / INSTR_RT_UNIT);
    if (idx == UINT64_MAX)
        goto out;
    if (put_zeros(fd, chunk_off(idx), len, csize != INSTR_RT_CHUNK_SIZE))
        goto out;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, chunk_off(idx));
    if (m == MAP_FAILED) {
        if (errno == ENOMEM)
            pause_for("no address space for a stream's chunks (RLIMIT_AS)");
        else
            stop(strerror(errno));
        goto out;
    }
    if (prefault(m, len)) {
        stop(strerror(errno));
        munmap(m, len);
        goto out;
    }
    count_chunks(idx, n, csize);
    if (s->base)
        munmap(s->base, (size_t)s->n * s->csize);
    s->base = m;
    s->slot = idx;
    s->n = n;
    s->csize = csize;
    s->next = 0;
    s->gen = instr__rt.dump_gen;
    rc = 0;
out:
    if (opened)
        close(fd);
    return rc;
}

/* Copies the full staging area of s to chunk indexes of its own (chunk
 * lock held for the reservation only), then resets it.  The copy is one
 * pwrite from pages that stay mapped: no page of the dump is ever faulted
 * in, mapped or unmapped on the program's thread for it (on this project's
 * VM a first touch of a page costs several µs, and each munmap a TLB
 * shootdown).  Until the reset the chunks are in the file twice,
 * identical: the reader keeps one.  The reset keeps the file readable at
 * every store: each chunk's first eight bytes (magic, kind) go to zero
 * first, so a kill midway leaves chunks the reader skips as never
 * written. */
static int flush_stage(struct instr__stage *s)
{
    size_t len = (size_t)s->n * s->csize;
    pthread_mutex_lock(&instr__rt.chunk_lock);
    int opened, fd = dump_fd(&opened);
    uint64_t idx = UINT64_MAX;
    if (fd < 0)
        fd_failed();
    else if (!instr__rt.stopped)
        idx = reserve(fd, len / INSTR_RT_UNIT);
    pthread_mutex_unlock(&instr__rt.chunk_lock);
    if (idx == UINT64_MAX)
        goto fail;
    ssize_t w = pwrite(fd, s->base, len, chunk_off(idx));
    if (w != (ssize_t)len) {
        const char *why = w < 0 ? strerror(errno) : "short write";
        if (w > 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, chunk_off(idx), w)) {
            /* no holes: the reader reports the cut chunk */
        }
        pthread_mutex_lock(&instr__rt.chunk_lock);
        stop(why);
        pthread_mutex_unlock(&instr__rt.chunk_lock);
        goto fail;
    }
    count_chunks(idx, s->n, s->csize);
    if (opened)
        close(fd);
    for (uint32_t i = 0; i < s->n; i++)
        __atomic_store_n((uint64_t *)(s->base + (size_t)i * s->csize), 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    memset(s->base, 0, len);
    s->next = 0;
    return 0;
fail:
    if (opened)
        close(fd);
    return -1;
}

/* Fills in the header of c, a chunk of a staging area that is zero or a
 * stale hand-out of the same chunk: magic and kind, which make it a chunk
 * to the reader, in one store after the rest. */
static void put_header(struct instr_chunk_header *c, uint16_t kind, uint32_t thread_index, uint32_t tid,
                       uint32_t seq, uint64_t base_tsc)
{
    c->thread_index = thread_index;
    c->tid = tid;
    c->seq = seq;
    c->used_bytes = 0;
    c->base_tsc = base_tsc;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n((uint64_t *)c,
                     (uint64_t)INSTR_CHUNK_MAGIC | (uint64_t)kind << 32 | (uint64_t)INSTR_CHUNK_HEADER_SIZE << 48,
                     __ATOMIC_RELAXED);
}

/* Hands out the next chunk of s's stream, its header filled in; NULL when
 * recording has stopped.  Every chunk of a stream is written in its
 * staging area, which stays mapped: the next of its chunks without a
 * system call; once all are full, a larger area (the full one stays in
 * the file where it is) or, at the largest, the area copied out and
 * reset (flush_stage).  The chunk's magic and kind are stored last. */
void *instr__chunk_map(struct instr__stage *s, uint16_t kind, uint32_t thread_index, uint32_t tid, uint32_t seq,
                       uint64_t base_tsc)
{
    int saved = errno;
    struct instr_chunk_header *c = NULL;
    if (instr__rt.stopped || !instr__rt.header)
        goto out;
    if (!s->base || s->gen != instr__rt.dump_gen || s->next >= s->n) {
        if (!instr__may_syscall())
            goto out; /* sandbox.c: not even the lock (a futex) */
        if (s->base && s->gen != instr__rt.dump_gen) { /* a fork parent's: left as it is */
            munmap(s->base, (size_t)s->n * s->csize);
            s->base = NULL;
        }
        if (!s->base || s->n < STAGE_MAX_CHUNKS) {
            /* The stream's first chunk, small and alone; then 1, 2, 4 ... */
            int first = !s->base, after_first = s->base && s->csize != INSTR_RT_CHUNK_SIZE;
            uint32_t n = first || after_first ? 1 : s->n * 2;
            pthread_mutex_lock(&instr__rt.chunk_lock);
            int r = instr__rt.stopped ? -1
                                      : new_stage(s, n, first ? INSTR_RT_FIRST_CHUNK_SIZE : INSTR_RT_CHUNK_SIZE);
            pthread_mutex_unlock(&instr__rt.chunk_lock);
            if (r)
                goto out;
        } else if (flush_stage(s))
            goto out;
    }
    c = (struct instr_chunk_header *)(s->base + (size_t)s->next * s->csize);
    s->next++;
    put_header(c, kind, thread_index, tid, seq, base_tsc);
    instr__header_touch();
out:
    errno = saved;
    return c;
}

void *instr__chunk_after(struct instr__stage *s, const uint8_t *pos, uint64_t base_tsc)
{
    struct instr_chunk_header *old = instr__stage_chunk_of(s, pos), *c;
    if (!old || instr__rt.stopped || !instr__rt.header ||
        (uint8_t *)old + s->csize >= s->base + (size_t)s->n * s->csize)
        return NULL;
    c = (struct instr_chunk_header *)((uint8_t *)old + s->csize);
    s->next = (uint32_t)(((uint8_t *)c - s->base) / s->csize) + 1;
    put_header(c, old->kind, old->thread_index, old->tid, old->seq + 1, base_tsc);
    return c;
}

/* The stream ends (thread end), or s is a fork parent's: unmaps its
 * staging area, which keeps the stream's last chunks in the file, and in
 * this process's own dump gives back the space of its chunks never handed
 * out (the reader skips zero chunks). */
void instr__chunk_unmap(struct instr__stage *s)
{
    if (!instr__may_syscall() || !s->base)
        return; /* sandbox.c: it stays mapped */
    int saved = errno;
    if (s->gen == instr__rt.dump_gen && s->next < s->n && instr__rt.header) {
        pthread_mutex_lock(&instr__rt.chunk_lock);
        int opened, fd = dump_fd(&opened);
        if (fd >= 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                 chunk_off(s->slot) + (off_t)s->next * s->csize,
                                 (off_t)(s->n - s->next) * s->csize)) {
            /* file systems without holes keep the space: harmless */
        }
        if (fd >= 0 && opened)
            close(fd);
        pthread_mutex_unlock(&instr__rt.chunk_lock);
    }
    munmap(s->base, (size_t)s->n * s->csize);
    s->base = NULL;
    errno = saved;
}

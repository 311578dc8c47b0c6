/* dump-file.c - the dump file: its name, creation, header and chunks.
 *
 * One file per process.  The header page and every chunk are shared file
 * mappings, so whatever was written survives _exit, a crash or SIGKILL.
 * Space is reserved with fallocate in extents of INSTR_RT_EXTENT_CHUNKS
 * chunks: a sparse file on a full disk would turn a store into SIGBUS, a
 * failed fallocate only stops the recording.
 *
 * The runtime keeps no descriptor open: each chunk (and each extent) opens
 * the dump by its absolute path, checks it is still the same file (device
 * and inode), maps and closes it.  A program that closes every descriptor,
 * counts on the lowest free number, or runs with a low RLIMIT_NOFILE sees
 * exactly the descriptors it would see uninstrumented.  (One open per 64 KiB
 * chunk costs about a microsecond.)
 *
 * Growth stays under RLIMIT_FSIZE: going past it would raise SIGXFSZ and
 * kill the program.  The file is created exclusively (never through a
 * symlink, never reusing a file), readable and writable by its owner only.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"

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

/* %p pid, %e executable basename, %% a percent sign. */
int instr__expand_output(const char *tmpl, char *out, size_t size)
{
    size_t n = 0;
    char num[24];
    for (const char *s = tmpl; *s; s++) {
        const char *ins = NULL;
        char one[2] = {*s, 0};
        if (*s == '%' && s[1]) {
            s++;
            if (*s == 'p') {
                snprintf(num, sizeof num, "%d", (int)getpid());
                ins = num;
            } else if (*s == 'e') {
                ins = basename_of(instr__rt.exe_path);
            } else if (*s == '%') {
                ins = "%";
            } else {
                one[0] = '%'; /* unknown: keep it literally */
                s--;
                ins = one;
            }
        } else {
            ins = one;
        }
        size_t l = strlen(ins);
        if (n + l + 1 > size)
            return -1;
        memcpy(out + n, ins, l);
        n += l;
    }
    out[n] = 0;
    return 0;
}

/* Never follow a symlink, never truncate or reuse an existing file: on
 * EEXIST try NAME.1.instr, NAME.2.instr, ... */
static int create_unique(const char *base, char *path, size_t size)
{
    size_t bl = strlen(base);
    int has_ext = bl > 6 && !strcmp(base + bl - 6, ".instr");
    for (unsigned i = 0; i < 10000; i++) {
        int n;
        if (i == 0)
            n = snprintf(path, size, "%s", base);
        else if (has_ext)
            n = snprintf(path, size, "%.*s.%u.instr", (int)(bl - 6), base, i);
        else
            n = snprintf(path, size, "%s.%u", base, i);
        if (n < 0 || (size_t)n >= size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_RDWR, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Opens the dump by its path for one operation.  -1 with errno set if it
 * cannot, or ESTALE if the path now names another file (moved, replaced). */
static int dump_open(void)
{
    struct stat st;
    int fd = open(instr__rt.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) || st.st_dev != dump_dev || st.st_ino != dump_ino) {
        close(fd);
        errno = ESTALE;
        return -1;
    }
    return fd;
}

/* Backs chunks up to `chunks` with disk space, or as many as RLIMIT_FSIZE
 * allows (at least one more than now).  0, or -1 with errno. */
static int reserve(int fd, uint64_t chunks)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t fit = rl.rlim_cur > INSTR_DUMP_HEADER_SIZE
                           ? (rl.rlim_cur - INSTR_DUMP_HEADER_SIZE) / INSTR_RT_CHUNK_SIZE
                           : 0;
        if (fit < chunks)
            chunks = fit;
        if (chunks <= instr__rt.reserved_chunks) {
            errno = EFBIG;
            return -1;
        }
    }
    off_t off = (off_t)INSTR_DUMP_HEADER_SIZE + (off_t)instr__rt.reserved_chunks * INSTR_RT_CHUNK_SIZE;
    off_t len = (off_t)(chunks - instr__rt.reserved_chunks) * INSTR_RT_CHUNK_SIZE;
    int e = posix_fallocate(fd, off, len);
    if (e) {
        errno = e;
        return -1;
    }
    instr__rt.reserved_chunks = chunks;
    return 0;
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

int instr__dump_create(uint32_t flags)
{
    char base[sizeof instr__rt.path];
    int saved = errno;
    instr__rt.header = NULL;
    instr__rt.stopped = 1;
    if (!instr__dump_allowed())
        return -1;
    if (instr__expand_output(instr__rt.output_template, base, sizeof base)) {
        instr__say("cannot create ", instr__rt.output_template, ": name too long", "; not recording");
        errno = saved;
        return -1;
    }
    int fd = create_unique(base, instr__rt.path, sizeof instr__rt.path);
    const char *what = instr__rt.path;
    struct instr_dump_header *h = MAP_FAILED;
    if (fd < 0) {
        what = base;
        goto fail;
    }
    instr__rt.reserved_chunks = 0;
    instr__rt.next_chunk = 0;
    {
        int e = posix_fallocate(fd, 0, INSTR_DUMP_HEADER_SIZE);
        if (e) {
            errno = e;
            goto fail_unlink;
        }
    }
    if (reserve(fd, INSTR_RT_EXTENT_CHUNKS))
        goto fail_unlink;
    h = mmap(NULL, INSTR_DUMP_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED)
        goto fail_unlink;
    struct stat st;
    if (fstat(fd, &st))
        goto fail_unlink;
    dump_dev = st.st_dev;
    dump_ino = st.st_ino;
    close(fd);

    memcpy(h->magic, INSTR_DUMP_MAGIC, 8);
    h->version = INSTR_DUMP_VERSION;
    h->header_size = INSTR_DUMP_HEADER_SIZE;
    h->chunk_size = INSTR_RT_CHUNK_SIZE;
    h->flags = flags | (instr__tsc_invariant() ? INSTR_DUMP_TSC_INVARIANT : 0);
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
    unlink(instr__rt.path);
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

/* Out of descriptors (the program is at its RLIMIT_NOFILE): this chunk is
 * refused, the thread drops and counts events and retries later. */
static void pause_for(const char *why)
{
    if (!instr__rt.space_warned) {
        instr__rt.space_warned = 1;
        instr__say("recording paused (events dropped and counted): ", why, "", "");
    }
}

/* Hands out the next chunk, mapped and with its header filled in; NULL when
 * recording has stopped.  Slow path: takes the chunk lock, may syscall. */
void *instr__chunk_map(uint16_t kind, uint32_t thread_index, uint32_t tid, uint32_t seq,
                       uint64_t base_tsc)
{
    int saved = errno;
    struct instr_chunk_header *c = NULL;
    pthread_mutex_lock(&instr__rt.chunk_lock);
    if (instr__rt.stopped || !instr__rt.header)
        goto out;
    int fd = dump_open();
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE)
            pause_for(strerror(errno));
        else if (errno == ESTALE)
            stop("the file was moved or replaced");
        else
            stop(strerror(errno));
        goto out;
    }
    uint64_t idx = instr__rt.next_chunk;
    if (idx >= instr__rt.reserved_chunks &&
        reserve(fd, instr__rt.reserved_chunks + INSTR_RT_EXTENT_CHUNKS)) {
        stop(errno == EFBIG ? "file size limit (RLIMIT_FSIZE) reached" : strerror(errno));
        close(fd);
        goto out;
    }
    off_t off = (off_t)INSTR_DUMP_HEADER_SIZE + (off_t)idx * INSTR_RT_CHUNK_SIZE;
    void *m = mmap(NULL, INSTR_RT_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    close(fd);
    if (m == MAP_FAILED) {
        stop(strerror(errno));
        goto out;
    }
    c = m;
    c->magic = INSTR_CHUNK_MAGIC;
    c->kind = kind;
    c->header_size = INSTR_CHUNK_HEADER_SIZE;
    c->thread_index = thread_index;
    c->tid = tid;
    c->seq = seq;
    c->used_bytes = 0;
    c->base_tsc = base_tsc;
    instr__rt.next_chunk = idx + 1;
    __atomic_store_n(&instr__rt.header->chunk_count, idx + 1, __ATOMIC_RELEASE);
    instr__header_touch();
out:
    pthread_mutex_unlock(&instr__rt.chunk_lock);
    errno = saved;
    return c;
}

/* Gives back the space reserved beyond the chunks handed out, so a short
 * run leaves a small file.  Recording goes on: a later chunk reserves again. */
void instr__dump_trim(void)
{
    pthread_mutex_lock(&instr__rt.chunk_lock);
    if (instr__rt.header && !instr__rt.stopped && instr__rt.reserved_chunks > instr__rt.next_chunk) {
        int fd = dump_open();
        if (fd >= 0 && ftruncate(fd, (off_t)INSTR_DUMP_HEADER_SIZE +
                                         (off_t)instr__rt.next_chunk * INSTR_RT_CHUNK_SIZE) == 0)
            instr__rt.reserved_chunks = instr__rt.next_chunk;
        if (fd >= 0)
            close(fd);
    }
    pthread_mutex_unlock(&instr__rt.chunk_lock);
}

void instr__chunk_unmap(struct instr_chunk_header *c)
{
    if (c)
        munmap(c, INSTR_RT_CHUNK_SIZE);
}

/* instr-sample - runs a program and samples every thread of it at a rate of
 * its CPU time, with the kernel's per-task CPU-clock sampling.
 *
 *   instr-sample [--rate HZ] [-o DUMP] [--stack-size BYTES] [--fp-chain] [--] PROGRAM [ARGS...]
 *
 * How: fork; the child waits on a pipe; the events are opened on it (one
 * per CPU, inherited by its threads and forked children, enabled at its
 * exec); then it execs PROGRAM.  The program holds no descriptor, no
 * signal handler, no mapping of ours: the kernel writes each sample (IP,
 * user registers, a copy of the top of the user stack, with --fp-chain the
 * frame-pointer call chain) into rings only instr-sample maps, and instr-sample drains
 * them, unwinds each stack with DWARF CFI (sample-unwind.c) and writes one
 * dump per process image (after exec, a new dump), like the instrumented
 * runtime.
 *
 * Exit codes: the program's exit status (128 + N if a signal N ended it);
 * 124 perf events are not allowed here; 125 instr-sample failed (usage,
 * setup); 126 PROGRAM cannot be run; 127 PROGRAM not found.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dump-reader.h"
#include "dump-writer.h"
#include "output-name.h"
#include "sample-perf.h"
#include "sample-unwind.h"

#ifndef INSTR_VERSION
#define INSTR_VERSION "unknown"
#endif
#define PROG "instr-sample"

enum { EXIT_NOT_ALLOWED = 124, EXIT_FAILED = 125, EXIT_NOEXEC = 126, EXIT_NOTFOUND = 127 };

#define MAX_FRAMES 512

struct thread {
    uint32_t tid;
    uint32_t index;
    uint64_t cpu_ns; /* from READ records (inherited tasks that exited) */
    char name[32];
};

struct proc {
    uint32_t pid, ppid;
    char exe[1024];
    int fork_child;            /* the image began with fork, not exec */
    int exe_pending;           /* exec seen: the next file mapping names the image */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    struct instr_dump_writer *w;
    struct instr_umap *maps; /* sorted by start */
    size_t nmaps, capmaps;
    char **modules; /* module id - 1 -> path */
    size_t nmodules;
    struct thread *threads;
    size_t nthreads;
    struct instr_unwinder *unw;
    int maps_read;  /* /proc/PID/maps was read for this image */
    int ended;      /* EXIT of its main thread seen (in drain round ended) */
    int no_dump;    /* its dump could not be created (said once) */
    int closed;     /* its dump is written: late records are dropped */
    int exit_status;
    int have_status;
    uint64_t samples;
    struct proc *next;
};

static struct {
    uint64_t rate_hz, period_ns, stack_bytes;
    int fp_chain; /* --fp-chain: samples carry the kernel's frame-pointer chain */
    const char *out_template;
    struct proc *procs;
    struct instr_ufile **files;
    size_t nfiles;
    pid_t child;
    uint64_t read_total; /* READ record values summed (for the main thread's share) */
    uint64_t unwind_fail, samples, lost;
    int round; /* drain rounds so far */
} g;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- module files --------------------------------------------------------- */

static struct instr_ufile *ufile(const char *path)
{
    for (size_t i = 0; i < g.nfiles; i++)
        if (!strcmp(g.files[i]->path, path))
            return g.files[i];
    struct instr_ufile **a = realloc(g.files, (g.nfiles + 1) * sizeof *a);
    struct instr_ufile *f = calloc(1, sizeof *f);
    if (!a || !f || !(f->path = strdup(path))) {
        free(f);
        if (a)
            g.files = a;
        return NULL;
    }
    g.files = a;
    f->ok = (!strcmp(path, "[vdso]") ? instr_elf_open_vdso(&f->elf) : instr_elf_open(&f->elf, path)) == 0;
    instr_ufile_prepare(f);
    g.files[g.nfiles++] = f;
    return f;
}

/* ---- processes and their dumps ------------------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* INSTR_OUTPUT / -o (output-name.h). */
static int expand(const char *tmpl, const struct proc *p, char *out, size_t size)
{
    return instr_output_expand(tmpl, (long)p->pid, base_name(p->exe), out, size);
}

/* Never overwrite: NAME, then NAME.1.instr, NAME.2.instr... (as the runtime). */
static int create_unique(const char *base, char *path, size_t size)
{
    size_t bl = strlen(base);
    int has_ext = bl > 6 && !strcmp(base + bl - 6, ".instr");
    for (unsigned i = 0; i < 10000; i++) {
        int n = i == 0 ? snprintf(path, size, "%s", base)
                : has_ext ? snprintf(path, size, "%.*s.%u.instr", (int)(bl - 6), base, i)
                          : snprintf(path, size, "%s.%u", base, i);
        if (n < 0 || (size_t)n >= size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_WRONLY, 0600);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

static uint32_t module_id(struct proc *p, const char *path)
{
    for (size_t i = 0; i < p->nmodules; i++)
        if (!strcmp(p->modules[i], path))
            return (uint32_t)i + 1;
    char **a = realloc(p->modules, (p->nmodules + 1) * sizeof *a);
    if (!a)
        return 0;
    p->modules = a;
    if (!(a[p->nmodules] = strdup(path)))
        return 0;
    p->nmodules++;
    if (p->w)
        instr_writer_module(p->w, p->nmodules, path, 0);
    return (uint32_t)p->nmodules;
}

static void write_map(struct proc *p, const struct instr_umap *m, uint64_t tick)
{
    struct instr_map r = {m->module, m->start, m->end, m->pgoff, tick};
    if (p->w)
        instr_writer_map(p->w, &r);
}

static struct thread *thread_of(struct proc *p, uint32_t tid, int create)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == tid)
            return &p->threads[i];
    if (!create)
        return NULL;
    struct thread *a = realloc(p->threads, (p->nthreads + 1) * sizeof *a);
    if (!a)
        return NULL;
    p->threads = a;
    struct thread *t = &a[p->nthreads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->index = (uint32_t)p->nthreads++;
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/task/%u/comm", p->pid, tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(t->name, sizeof t->name, f))
            t->name[strcspn(t->name, "\n")] = 0;
        fclose(f);
    }
    if (p->w)
        instr_writer_thread(p->w, t->index, tid, t->name);
    return t;
}

static void read_exe(struct proc *p);

/* The dump of a process image, created at its first sample. */
static int open_dump(struct proc *p)
{
    if (p->w)
        return 0;
    if (p->no_dump)
        return -1;
    char base[4096], path[4096];
    if (!p->exe[0])
        read_exe(p); /* the exec's mapping not seen (yet): ask /proc while it lives */
    const char *tmpl = g.out_template ? g.out_template : "%e.%p.instr";
    if (expand(tmpl, p, base, sizeof base) < 0 || create_unique(base, path, sizeof path) < 0) {
        say("cannot create %s: %s; process %u not recorded", base, strerror(errno), p->pid);
        p->no_dump = 1;
        return -1;
    }
    struct instr_dump_header h;
    memset(&h, 0, sizeof h);
    h.flags = INSTR_DUMP_SAMPLED | (p->fork_child ? INSTR_DUMP_FORK_CHILD : 0);
    h.pid = p->pid;
    h.ppid = p->ppid;
    h.start_tsc = h.start_mono_ns = h.last_tsc = h.last_mono_ns = p->start_ns;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    h.start_real_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - (mono_ns() - p->start_ns);
    h.detector = INSTR_DETECTOR_NONE;
    snprintf(h.exe_path, sizeof h.exe_path, "%s", p->exe);
    snprintf(h.detector_detail, sizeof h.detector_detail, "none (sampling)");
    char err[300];
    if (instr_writer_open(&p->w, path, &h, err, sizeof err) < 0) {
        say("%s", err);
        p->w = NULL;
        p->no_dump = 1;
        return -1;
    }
    instr_writer_sampling(p->w, g.rate_hz, g.period_ns, g.stack_bytes, instr_unwinder_name(g.fp_chain));
    for (size_t i = 0; i < p->nmodules; i++)
        instr_writer_module(p->w, i + 1, p->modules[i], 0);
    for (size_t i = 0; i < p->nmaps; i++)
        write_map(p, &p->maps[i], 0);
    for (size_t i = 0; i < p->nthreads; i++)
        instr_writer_thread(p->w, p->threads[i].index, p->threads[i].tid, p->threads[i].name);
    return 0;
}

static void close_dump(struct proc *p, uint64_t end_ns, int complete)
{
    if (!p->w)
        return;
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].cpu_ns)
            instr_writer_cpu_time(p->w, p->threads[i].index, p->threads[i].cpu_ns);
    struct instr_dump_header *h = instr_writer_header(p->w);
    if (complete) {
        h->flags |= INSTR_DUMP_COMPLETE;
        h->end_tsc = h->end_mono_ns = end_ns;
    }
    h->last_tsc = h->last_mono_ns = end_ns;
    h->exit_status = p->have_status ? p->exit_status : 0;
    char err[300];
    if (instr_writer_close(p->w, err, sizeof err) < 0)
        say("%s", err);
    p->w = NULL;
}

static void read_exe(struct proc *p)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%u/exe", p->pid);
    ssize_t n = readlink(link, p->exe, sizeof p->exe - 1);
    p->exe[n > 0 ? n : 0] = 0;
}

static struct proc *proc_of(uint32_t pid, int create)
{
    for (struct proc *p = g.procs; p; p = p->next)
        if (p->pid == pid)
            return p;
    if (!create)
        return NULL;
    struct proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->pid = pid;
    p->start_ns = mono_ns();
    read_exe(p);
    p->next = g.procs;
    g.procs = p;
    return p;
}

/* A new image after exec: the old one's dump ends here. */
static void reset_image(struct proc *p, uint64_t t)
{
    close_dump(p, t, 1);
    for (size_t i = 0; i < p->nmodules; i++)
        free(p->modules[i]);
    free(p->modules);
    p->modules = NULL;
    p->nmodules = 0;
    p->nmaps = 0;
    free(p->threads); /* the thread that exec'd comes back with its first sample */
    p->threads = NULL;
    p->nthreads = 0;
    p->maps_read = 0;
    p->fork_child = 0;
    p->start_ns = t;
    p->samples = 0;
    /* Its name comes with the records, not from /proc: the process may be
     * gone (or have exec'd again) by the time this record is drained.  The
     * kernel maps the executable (or a script's interpreter) first, before
     * the dynamic loader: the next file mapping names the image. */
    p->exe[0] = 0;
    p->exe_pending = 1;
    if (p->unw)
        instr_unwinder_flush(p->unw);
}

static void add_map(struct proc *p, uint64_t start, uint64_t end, uint64_t pgoff, const char *path, uint64_t tick)
{
    if ((path[0] != '/' && strcmp(path, "[vdso]")) || end <= start)
        return; /* anonymous (JIT) code, [vsyscall]: no file to read */
    struct instr_ufile *f = ufile(path);
    if (!f)
        return;
    /* A new mapping replaces what it overlaps. */
    size_t k = 0;
    for (size_t i = 0; i < p->nmaps; i++)
        if (p->maps[i].end <= start || p->maps[i].start >= end)
            p->maps[k++] = p->maps[i];
    if (k != p->nmaps && p->unw)
        instr_unwinder_flush(p->unw);
    p->nmaps = k;
    if (p->nmaps == p->capmaps) {
        size_t nc = p->capmaps ? p->capmaps * 2 : 32;
        struct instr_umap *a = realloc(p->maps, nc * sizeof *a);
        if (!a)
            return;
        p->maps = a;
        p->capmaps = nc;
    }
    struct instr_umap m = {start, end, pgoff, 0, 0, f, module_id(p, path)};
    m.bias_ok = f->ok && instr_elf_bias(&f->elf, start, pgoff, &m.bias) == 0;
    size_t i = p->nmaps;
    while (i > 0 && p->maps[i - 1].start > start) {
        p->maps[i] = p->maps[i - 1];
        i--;
    }
    p->maps[i] = m;
    p->nmaps++;
    write_map(p, &m, tick);
}

/* The executable mappings as /proc says now (for images whose MMAP2
 * records we did not see: a fork child's inherited ones, races). */
static void read_proc_maps(struct proc *p)
{
    char path[64], line[4608];
    p->maps_read = 1;
    snprintf(path, sizeof path, "/proc/%u/maps", p->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &pos) < 4 || !pos ||
            perms[2] != 'x')
            continue;
        char *name = line + pos;
        name[strcspn(name, "\n")] = 0;
        int known = 0;
        for (size_t i = 0; i < p->nmaps; i++)
            if (p->maps[i].start == lo && p->maps[i].end == hi)
                known = 1;
        if (!known)
            add_map(p, lo, hi, off, name, 0);
    }
    fclose(f);
}

static int ip_mapped(const struct proc *p, uint64_t ip)
{
    for (size_t i = 0; i < p->nmaps; i++)
        if (ip >= p->maps[i].start && ip < p->maps[i].end)
            return 1;
    return 0;
}

/* ---- records ---------------------------------------------------------------- */

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void on_sample(const uint8_t *r, size_t size)
{
    /* ip, pid tid, time, callchain (--fp-chain), regs_user, stack_user (our
     * sample_type order) */
    const uint8_t *p = r + 8, *end = r + size;
    if (end - p < 24 + (g.fp_chain ? 8 : 0))
        return;
    uint64_t ip = rd64(p);
    uint32_t pid = rd32(p + 8), tid = rd32(p + 12);
    uint64_t t = rd64(p + 16);
    p += 24;
    uint64_t nr = 0;
    if (g.fp_chain) {
        nr = rd64(p);
        p += 8;
    }
    if (nr > (uint64_t)(end - p) / 8)
        return;
    const uint8_t *chain = p;
    p += nr * 8;
    if (end - p < 8)
        return;
    uint64_t abi = rd64(p);
    p += 8;
    struct instr_usample us = {0};
    int have_regs = abi != PERF_SAMPLE_REGS_ABI_NONE;
    if (have_regs) {
        if (end - p < 8 * INSTR_UREGS)
            return;
        memcpy(us.regs, p, 8 * INSTR_UREGS);
        p += 8 * INSTR_UREGS;
    }
    uint64_t ssize = 0;
    if (end - p >= 8) {
        ssize = rd64(p);
        p += 8;
        if (ssize > (uint64_t)(end - p) || (ssize && end - p < (ptrdiff_t)(ssize + 8)))
            return;
        us.stack = p;
        us.stack_size = ssize ? rd64(p + ssize) : 0; /* dyn_size: the bytes actually copied */
        if (us.stack_size > ssize)
            us.stack_size = ssize;
    }
    struct proc *pr = proc_of(pid, 1);
    if (!pr || pr->closed)
        return;
    if (!ip_mapped(pr, ip) && !pr->maps_read)
        read_proc_maps(pr);
    if (!pr->unw && instr_unwinder_new(&pr->unw) < 0)
        pr->unw = NULL;
    if (open_dump(pr) < 0)
        return;
    struct thread *th = thread_of(pr, tid, 1);
    if (!th)
        return;
    uint64_t frames[MAX_FRAMES];
    size_t n = 0;
    int trunc = 1;
    unsigned flags = 0;
    if (have_regs && pr->unw) {
        us.maps = pr->maps;
        us.nmaps = pr->nmaps;
        n = instr_unwind(pr->unw, &us, frames, MAX_FRAMES, &trunc);
    }
    /* The kernel's frame-pointer chain when CFI gave nothing past the leaf. */
    size_t nfp = 0;
    for (uint64_t i = 0; i < nr; i++)
        if (rd64(chain + 8 * i) < PERF_CONTEXT_MAX)
            nfp++;
    if (n <= 1 && nfp > 1) {
        n = 0;
        for (uint64_t i = 0; i < nr && n < MAX_FRAMES; i++) {
            uint64_t a = rd64(chain + 8 * i);
            if (a < PERF_CONTEXT_MAX)
                frames[n++] = a;
        }
        flags |= INSTR_STACK_FP;
        g.unwind_fail++;
    } else if (n == 0) {
        frames[n++] = ip;
    }
    if (trunc && !(flags & INSTR_STACK_FP))
        flags |= INSTR_STACK_TRUNCATED;
    if (instr_writer_sample(pr->w, th->index, t, INSTR_SAMPLE_STACK, 1, flags, frames, n) == 0) {
        pr->samples++;
        g.samples++;
    }
}

static void on_record(const uint8_t *r, size_t size)
{
    uint32_t type = rd32(r);
    uint16_t misc = (uint16_t)(rd32(r + 4) & 0xffff);
    /* sample_id_all trailer of side-band records: pid, tid, time */
    uint32_t spid = size >= 24 ? rd32(r + size - 16) : 0, stid = size >= 24 ? rd32(r + size - 12) : 0;
    uint64_t t = size >= 24 ? rd64(r + size - 8) : mono_ns();
    switch (type) {
    case PERF_RECORD_SAMPLE:
        on_sample(r, size);
        break;
    case PERF_RECORD_MMAP2: {
        if (size < 8 + 64 + 1)
            return;
        uint32_t pid = rd32(r + 8);
        uint64_t addr = rd64(r + 16), len = rd64(r + 24), pgoff = rd64(r + 32);
        const char *name = (const char *)r + 8 + 64;
        size_t maxlen = size - 8 - 64 - 16;
        if (!memchr(name, 0, maxlen))
            return;
        struct proc *p = proc_of(pid, 1);
        if (p && p->exe_pending && name[0] == '/') {
            snprintf(p->exe, sizeof p->exe, "%s", name);
            p->exe_pending = 0;
        }
        if (p)
            add_map(p, addr, addr + len, pgoff, name, t);
        break;
    }
    case PERF_RECORD_COMM: {
        uint32_t pid = rd32(r + 8), tid = rd32(r + 12);
        const char *name = (const char *)r + 16;
        if (size < 16 + 16 + 1 || !memchr(name, 0, size - 16 - 16))
            return;
        struct proc *p = proc_of(pid, 1);
        if (!p)
            return;
        if (misc & PERF_RECORD_MISC_COMM_EXEC)
            reset_image(p, t);
        struct thread *th = thread_of(p, tid, 0);
        if (th) {
            snprintf(th->name, sizeof th->name, "%s", name);
            if (p->w)
                instr_writer_thread(p->w, th->index, tid, th->name);
        }
        break;
    }
    case PERF_RECORD_FORK: {
        uint32_t pid = rd32(r + 8), ppid = rd32(r + 12);
        struct proc *old = proc_of(pid, 0);
        if (old && old->closed) { /* the pid was reused: a new process */
            old->pid = 0;
            old = NULL;
        }
        if (pid == ppid || old)
            return; /* a new thread: it appears with its first sample */
        struct proc *parent = proc_of(ppid, 0), *p = proc_of(pid, 1);
        if (!p)
            return;
        p->ppid = ppid;
        p->fork_child = 1;
        p->start_ns = rd64(r + 24);
        if (parent) { /* the child starts with its parent's mappings */
            snprintf(p->exe, sizeof p->exe, "%s", parent->exe);
            for (size_t i = 0; i < parent->nmaps; i++)
                add_map(p, parent->maps[i].start, parent->maps[i].end, parent->maps[i].pgoff,
                        parent->maps[i].file->path, 0);
        }
        break;
    }
    case PERF_RECORD_EXIT: {
        uint32_t pid = rd32(r + 8), tid = rd32(r + 16);
        struct proc *p = proc_of(pid, 0);
        if (p && pid == tid && !p->ended) {
            p->ended = g.round + 1;
            p->end_ns = rd64(r + 24);
        }
        break;
    }
    case PERF_RECORD_READ: {
        uint32_t pid = rd32(r + 8), tid = rd32(r + 12);
        uint64_t v = size >= 24 ? rd64(r + 16) : 0;
        g.read_total += v;
        struct proc *p = proc_of(pid, 0);
        struct thread *th = p ? thread_of(p, tid, 1) : NULL;
        if (th)
            th->cpu_ns += v;
        break;
    }
    case PERF_RECORD_LOST: {
        uint64_t lost = size >= 24 ? rd64(r + 16) : 0;
        g.lost += lost;
        struct proc *p = proc_of(spid ? spid : (uint32_t)g.child, 1);
        if (!p || p->closed || open_dump(p) < 0)
            return;
        struct thread *th = thread_of(p, stid ? stid : p->pid, 1);
        if (th)
            instr_writer_sample(p->w, th->index, t, INSTR_SAMPLE_LOST, lost, 0, NULL, 0);
        break;
    }
    default:
        break;
    }
}

/* Processes whose end was seen in an earlier drain round (so every CPU's
 * ring has been drained past it): their dumps are finished now, so a
 * program that runs thousands of processes does not hold a descriptor and
 * an unwinder for each. */
static void finish_ended(void)
{
    for (struct proc *p = g.procs; p; p = p->next) {
        if (!p->ended || p->closed || p->ended > g.round || p->pid == (uint32_t)g.child)
            continue;
        close_dump(p, p->end_ns, 1);
        p->closed = 1;
        instr_unwinder_free(p->unw);
        p->unw = NULL;
        free(p->maps);
        p->maps = NULL;
        p->nmaps = p->capmaps = 0;
    }
}

/* ---- the run ---------------------------------------------------------------------- */

/* The program's own dump can be created (as perf record does, before the
 * program runs): a file of the name it will have is made and removed.
 * 0, or -1 with errno and the name in base. */
static int output_writable(pid_t pid, const char *program, char *base, size_t size)
{
    char path[4096];
    const char *tmpl = g.out_template ? g.out_template : "%e.%p.instr";
    struct proc p = {.pid = (uint32_t)pid};
    snprintf(p.exe, sizeof p.exe, "%s", program);
    if (expand(tmpl, &p, base, size) < 0) {
        snprintf(base, size, "%s", tmpl);
        errno = ENAMETOOLONG;
        return -1;
    }
    if (create_unique(base, path, sizeof path) < 0)
        return -1;
    unlink(path);
    return 0;
}

static volatile sig_atomic_t forward_sig;

static void on_term(int sig)
{
    forward_sig = sig;
    if (g.child > 0)
        kill(g.child, sig);
}

static void usage(FILE *f)
{
    fputs("usage: instr-sample [--rate HZ] [-o DUMP] [--stack-size BYTES] [--fp-chain] [--] PROGRAM [ARGS...]\n"
          "Runs PROGRAM and samples every thread of it (and of the processes it forks\n"
          "and execs) at HZ per second of its CPU time, user code only; writes one dump\n"
          "per process, PROGRAM.<pid>.instr, for instr-report.\n"
          "\n"
          "  --rate HZ           samples per CPU second of each thread (default 1000)\n"
          "  -o, --output DUMP   dump path: %p pid, %e executable name, %% a percent sign\n"
          "                      (default: INSTR_OUTPUT, else %e.%p.instr)\n"
          "  --stack-size BYTES  user stack copied per sample for unwinding (default 8192)\n"
          "  --fp-chain          also the kernel's frame-pointer chain, for stacks through\n"
          "                      code without unwind tables (JIT, some assembly, Go)\n"
          "  --help, --version\n"
          "\n"
          "Exit codes: PROGRAM's own (128+N if signal N ended it); 124 perf events are not\n"
          "allowed here; 125 instr-sample failed; 126 PROGRAM cannot run; 127 not found.\n",
          f);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"rate", required_argument, 0, 'r'},
                                         {"output", required_argument, 0, 'o'},
                                         {"stack-size", required_argument, 0, 's'},
                                         {"fp-chain", no_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {"version", no_argument, 0, 'V'},
                                         {0, 0, 0, 0}};
    g.rate_hz = 1000;
    g.stack_bytes = 8192;
    g.out_template = getenv("INSTR_OUTPUT");
    if (g.out_template && !*g.out_template)
        g.out_template = NULL;
    argv[0] = (char *)PROG; /* getopt's messages start with it */
    int c;
    while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'r':
            g.rate_hz = strtoull(optarg, &end, 10);
            if (*end || !*optarg || g.rate_hz < 1 || g.rate_hz > 100000) {
                say("--rate takes 1..100000 (Hz), not '%s'", optarg);
                return EXIT_FAILED;
            }
            break;
        case 's':
            g.stack_bytes = strtoull(optarg, &end, 10);
            if (*end || !*optarg || g.stack_bytes < 64 || g.stack_bytes > 65000) {
                say("--stack-size takes 64..65000 (bytes), not '%s'", optarg);
                return EXIT_FAILED;
            }
            g.stack_bytes &= ~(uint64_t)7;
            break;
        case 'o':
            g.out_template = optarg;
            break;
        case 'f':
            g.fp_chain = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf(PROG " (instr) %s\n", INSTR_VERSION);
            return 0;
        default: /* getopt said why */
            say("try '" PROG " --help' for more information");
            return EXIT_FAILED;
        }
    }
    if (optind >= argc) {
        say("no PROGRAM to run; try '" PROG " --help'");
        return EXIT_FAILED;
    }
    g.period_ns = 1000000000u / g.rate_hz;

    int go[2], report[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
        say("pipe: %s", strerror(errno));
        return EXIT_FAILED;
    }
    pid_t child = fork();
    if (child < 0) {
        say("fork: %s", strerror(errno));
        return EXIT_FAILED;
    }
    if (child == 0) {
        char b;
        close(go[1]);
        close(report[0]);
        /* Wait until the events are on us (or instr-sample gave up). */
        if (read(go[0], &b, 1) != 1)
            _exit(EXIT_FAILED);
        execvp(argv[optind], argv + optind);
        int e = errno;
        if (write(report[1], &e, sizeof e) < 0)
            _exit(EXIT_FAILED);
        _exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
    }
    g.child = child;
    close(go[0]);
    close(report[1]);
    char outname[4096];
    if (output_writable(child, argv[optind], outname, sizeof outname) < 0) {
        int e = errno;
        close(go[1]); /* the child reads EOF and leaves without running PROGRAM */
        waitpid(child, NULL, 0);
        say("cannot create %s: %s", outname, strerror(e));
        return EXIT_FAILED;
    }

    struct instr_sampler *smp = NULL;
    char err[512];
    struct instr_sampler_config cfg = {
        .pid = child, .period_ns = g.period_ns, .stack_bytes = g.stack_bytes, .fp_chain = g.fp_chain};
    int rc = instr_sampler_open(&smp, &cfg, err, sizeof err);
    if (rc < 0) {
        /* The child is told nothing: it reads EOF and leaves without running PROGRAM. */
        close(go[1]);
        waitpid(child, NULL, 0);
        if (rc == INSTR_SAMPLER_NOT_ALLOWED) {
            say("%s", err);
            return EXIT_NOT_ALLOWED;
        }
        say("%s", err);
        return EXIT_FAILED;
    }
    struct proc *top = proc_of((uint32_t)child, 1);
    if (!top) {
        say("out of memory");
        return EXIT_FAILED;
    }
    top->ppid = (uint32_t)getpid();
    signal(SIGINT, SIG_IGN); /* the terminal's ^C reaches the program; we finish its dumps */
    signal(SIGQUIT, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (write(go[1], "g", 1) != 1) {
        say("cannot start %s", argv[optind]);
        return EXIT_FAILED;
    }
    close(go[1]);
    int e;
    if (read(report[0], &e, sizeof e) == (ssize_t)sizeof e) {
        say("%s: %s", argv[optind], strerror(e));
        waitpid(child, NULL, 0);
        instr_sampler_close(smp);
        return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
    }
    close(report[0]);
    /* The program now runs: the image that counts starts at its exec. */
    top->start_ns = mono_ns();
    read_exe(top);

    int status = 0, done = 0;
    while (!done) {
        instr_sampler_wait(smp, 50);
        instr_sampler_drain(smp, on_record);
        g.round++;
        finish_ended();
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            done = 1;
    }
    instr_sampler_drain(smp, on_record);
    uint64_t end = mono_ns();
    /* The first task's own CPU time: the events' totals minus what its
     * inherited tasks reported when they exited. */
    uint64_t total = instr_sampler_total(smp);
    struct thread *mt = thread_of(top, top->pid, top->w != NULL);
    if (mt && total > g.read_total)
        mt->cpu_ns += total - g.read_total;
    top->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    top->have_status = 1;
    if (!top->w)
        open_dump(top); /* the program always gets a dump, even without samples */
    /* Like perf record, sampling ends with the program's first process: a
     * daemon it left behind may run for ever.  Its dump says that its
     * samples stop here, and so does one line. */
    for (struct proc *p = g.procs; p; p = p->next) {
        if (p->closed || p->ended || p == top || kill((pid_t)p->pid, 0) < 0)
            continue;
        if (!p->w)
            open_dump(p);
        if (p->w) {
            instr_writer_header(p->w)->flags |= INSTR_DUMP_SAMPLING_CUT;
            say("process %u (%s) still runs: its sampling stopped when %s ended (its dump says so)", p->pid,
                base_name(p->exe), base_name(argv[optind]));
        }
        close_dump(p, end, 0);
        p->closed = 1;
    }
    for (struct proc *p = g.procs; p; p = p->next)
        close_dump(p, p->ended && p->end_ns ? p->end_ns : end, 1);
    instr_sampler_close(smp);
    if (g.lost)
        say("%" PRIu64 " samples lost (the kernel's ring was full); the report counts them", g.lost);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

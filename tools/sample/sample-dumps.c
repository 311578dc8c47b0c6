/* sample-dumps.c - instr-sample's processes, threads, mappings and module
 * files, and the dump each process image writes (sample-session.h): a
 * process gets a dump at its first sample, a new one after exec, and its
 * dump is finished once its end has been drained from every ring. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dump-reader.h"
#include "output-name.h"
#include "sample-session.h"

/* A message for the user, through the command's say. */
static void say(struct instr_ssession *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct instr_ssession *s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s->say)
        s->say(s->say_ctx, msg);
}

uint64_t instr_ss_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- module files --------------------------------------------------------- */

static struct instr_ufile *ufile(struct instr_ssession *s, const char *path)
{
    for (size_t i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i]->path, path))
            return s->files[i];
    struct instr_ufile **a = realloc(s->files, (s->nfiles + 1) * sizeof *a);
    struct instr_ufile *f = calloc(1, sizeof *f);
    if (!a || !f || !(f->path = strdup(path))) {
        free(f);
        if (a)
            s->files = a;
        return NULL;
    }
    s->files = a;
    f->ok = (!strcmp(path, "[vdso]") ? instr_elf_open_vdso(&f->elf) : instr_elf_open(&f->elf, path)) == 0;
    instr_ufile_prepare(f);
    s->files[s->nfiles++] = f;
    return f;
}

/* ---- processes and their dumps ------------------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* INSTR_OUTPUT / -o (output-name.h). */
static int expand(const char *tmpl, const struct instr_sproc *p, char *out, size_t size)
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

static uint32_t module_id(struct instr_sproc *p, const char *path)
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

static void write_map(struct instr_sproc *p, const struct instr_umap *m, uint64_t tick)
{
    struct instr_map r = {m->module, m->start, m->end, m->pgoff, tick};
    if (p->w)
        instr_writer_map(p->w, &r);
}

struct instr_sthread *instr_ss_thread(struct instr_sproc *p, uint32_t tid, int create)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == tid)
            return &p->threads[i];
    if (!create)
        return NULL;
    struct instr_sthread *a = realloc(p->threads, (p->nthreads + 1) * sizeof *a);
    if (!a)
        return NULL;
    p->threads = a;
    struct instr_sthread *t = &a[p->nthreads];
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

/* The dump of a process image, created at its first sample. */
int instr_ss_open_dump(struct instr_ssession *s, struct instr_sproc *p)
{
    if (p->w)
        return 0;
    if (p->no_dump)
        return -1;
    char base[4096], path[4096];
    if (!p->exe[0])
        instr_ss_read_exe(p); /* the exec's mapping not seen (yet): ask /proc while it lives */
    const char *tmpl = s->out_template ? s->out_template : "%e.%p.instr";
    if (expand(tmpl, p, base, sizeof base) < 0 || create_unique(base, path, sizeof path) < 0) {
        say(s, "cannot create %s: %s; process %u not recorded", base, strerror(errno), p->pid);
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
    h.start_real_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - (instr_ss_now() - p->start_ns);
    h.detector = INSTR_DETECTOR_NONE;
    snprintf(h.exe_path, sizeof h.exe_path, "%s", p->exe);
    snprintf(h.detector_detail, sizeof h.detector_detail, "none (sampling)");
    char err[300];
    if (instr_writer_open(&p->w, path, &h, err, sizeof err) < 0) {
        say(s, "%s", err);
        p->w = NULL;
        p->no_dump = 1;
        return -1;
    }
    instr_writer_sampling(p->w, s->rate_hz, s->period_ns, s->stack_bytes, instr_unwinder_name(s->fp_chain));
    for (size_t i = 0; i < p->nmodules; i++)
        instr_writer_module(p->w, i + 1, p->modules[i], 0);
    for (size_t i = 0; i < p->nmaps; i++)
        write_map(p, &p->maps[i], 0);
    for (size_t i = 0; i < p->nthreads; i++)
        instr_writer_thread(p->w, p->threads[i].index, p->threads[i].tid, p->threads[i].name);
    return 0;
}

void instr_ss_close_dump(struct instr_ssession *s, struct instr_sproc *p, uint64_t end_ns, int complete)
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
        say(s, "%s", err);
    p->w = NULL;
}

void instr_ss_read_exe(struct instr_sproc *p)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%u/exe", p->pid);
    ssize_t n = readlink(link, p->exe, sizeof p->exe - 1);
    p->exe[n > 0 ? n : 0] = 0;
}

struct instr_sproc *instr_ss_proc(struct instr_ssession *s, uint32_t pid, int create)
{
    for (struct instr_sproc *p = s->procs; p; p = p->next)
        if (p->pid == pid)
            return p;
    if (!create)
        return NULL;
    struct instr_sproc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->pid = pid;
    p->start_ns = instr_ss_now();
    instr_ss_read_exe(p);
    p->next = s->procs;
    s->procs = p;
    return p;
}

/* A new image after exec: the old one's dump ends here. */
void instr_ss_reset_image(struct instr_ssession *s, struct instr_sproc *p, uint64_t t)
{
    instr_ss_close_dump(s, p, t, 1);
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

void instr_ss_add_map(struct instr_ssession *s, struct instr_sproc *p, uint64_t start, uint64_t end,
                      uint64_t pgoff, const char *path, uint64_t tick)
{
    if ((path[0] != '/' && strcmp(path, "[vdso]")) || end <= start)
        return; /* anonymous (JIT) code, [vsyscall]: no file to read */
    struct instr_ufile *f = ufile(s, path);
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
void instr_ss_read_proc_maps(struct instr_ssession *s, struct instr_sproc *p)
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
            instr_ss_add_map(s, p, lo, hi, off, name, 0);
    }
    fclose(f);
}

int instr_ss_ip_mapped(const struct instr_sproc *p, uint64_t ip)
{
    for (size_t i = 0; i < p->nmaps; i++)
        if (ip >= p->maps[i].start && ip < p->maps[i].end)
            return 1;
    return 0;
}

/* Processes whose end was seen in an earlier drain round (so every CPU's
 * ring has been drained past it): their dumps are finished now, so a
 * program that runs thousands of processes does not hold a descriptor and
 * an unwinder for each. */
void instr_ss_finish_ended(struct instr_ssession *s)
{
    for (struct instr_sproc *p = s->procs; p; p = p->next) {
        if (!p->ended || p->closed || p->ended > s->round || p->pid == (uint32_t)s->child)
            continue;
        instr_ss_close_dump(s, p, p->end_ns, 1);
        p->closed = 1;
        instr_unwinder_free(p->unw);
        p->unw = NULL;
        free(p->maps);
        p->maps = NULL;
        p->nmaps = p->capmaps = 0;
    }
}

/* The program's own dump can be created (as perf record does, before the
 * program runs): a file of the name it will have is made and removed.
 * 0, or -1 with errno and the name in base. */
int instr_ss_output_writable(const struct instr_ssession *s, pid_t pid, const char *program, char *base, size_t size)
{
    char path[4096];
    const char *tmpl = s->out_template ? s->out_template : "%e.%p.instr";
    struct instr_sproc p = {.pid = (uint32_t)pid};
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

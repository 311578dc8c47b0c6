/* exclusions.c - --not-application patterns and the shipped categories. */
#define _GNU_SOURCE
#include "exclusions.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "demangle.h"

/* Each category: the libc, POSIX and C++ standard library entry points
 * whose time is waiting rather than computing.  C++ entries match the
 * demangled name. */
static const char *const locks[] = {
    "pthread_mutex_lock", "pthread_mutex_timedlock", "pthread_mutex_clocklock",
    "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_timed*lock",
    "pthread_rwlock_clock*lock", "pthread_spin_lock", "pthread_cond_wait", "pthread_cond_timedwait",
    "pthread_cond_clockwait", "pthread_barrier_wait", "pthread_join", "pthread_timedjoin_np",
    "pthread_clockjoin_np", "sem_wait", "sem_timedwait", "sem_clockwait", "mtx_lock", "mtx_timedlock",
    "cnd_wait", "cnd_timedwait", "thrd_join", "flock", "lockf", "std::mutex::lock*",
    "std::timed_mutex::*lock*", "std::recursive_mutex::lock*", "std::shared_mutex::lock*",
    "std::condition_variable::wait*", "std::condition_variable_any::wait*", "std::thread::join*",
    "std::__atomic_futex_unsigned_base::_M_futex_wait_until*", NULL};
static const char *const io[] = {
    "read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv", "writev", "preadv*",
    "pwritev*", "open", "open64", "openat", "openat64", "creat", "close", "fsync", "fdatasync",
    "sync", "syncfs", "sync_file_range", "sendfile", "sendfile64", "splice", "tee", "copy_file_range",
    "fopen", "fopen64", "fclose", "fread", "fwrite", "fread_unlocked", "fwrite_unlocked", "fgets",
    "fputs", "puts", "fflush", "getline", "getdelim", "fgetc", "getc", "fputc", "putc", "printf",
    "fprintf", "vprintf", "vfprintf", "dprintf", "recv", "recvfrom", "recvmsg", "recvmmsg", "send",
    "sendto", "sendmsg", "sendmmsg", "accept", "accept4", "connect", "poll", "ppoll", "select",
    "pselect", "epoll_wait", "epoll_pwait", "epoll_pwait2", "io_uring_enter", "io_getevents",
    "aio_suspend", NULL};
static const char *const alloc[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc", "malloc_trim", "mmap", "mmap64", "munmap", "mremap", "brk",
    "sbrk", "operator new*", "operator delete*", NULL};
static const char *const sleep_[] = {
    "sleep", "usleep", "nanosleep", "clock_nanosleep", "sched_yield", "pause", "sigsuspend",
    "sigwait", "sigwaitinfo", "sigtimedwait", "thrd_sleep", "thrd_yield",
    "std::this_thread::sleep_for*", "std::this_thread::sleep_until*", "std::this_thread::yield*",
    NULL};

static const struct {
    const char *name;
    const char *const *patterns;
} categories[] = {{"locks", locks}, {"io", io}, {"alloc", alloc}, {"sleep", sleep_}};

const char *instr_exclusion_category(size_t i, const char *const **patterns)
{
    if (i >= sizeof categories / sizeof categories[0])
        return NULL;
    *patterns = categories[i].patterns;
    return categories[i].name;
}

static int add_pattern(struct instr_exclusions *x, const char *p, size_t len)
{
    char **np = realloc(x->patterns, (x->n + 1) * sizeof *np);
    if (!np)
        return -1;
    x->patterns = np;
    if (!(np[x->n] = strndup(p, len)))
        return -1;
    x->n++;
    return 0;
}

int instr_exclusions_add(struct instr_exclusions *x, const char *arg, char *err, size_t errlen)
{
    for (const char *p = arg; *p;) {
        size_t len = strcspn(p, ",");
        if (len && p[0] == '@') {
            size_t c = 0, nc = sizeof categories / sizeof categories[0];
            while (c < nc && (strlen(categories[c].name) != len - 1 || strncmp(categories[c].name, p + 1, len - 1)))
                c++;
            if (c == nc) {
                snprintf(err, errlen, "unknown category '%.*s' (one of @locks, @io, @alloc, @sleep)", (int)len, p);
                return -1;
            }
            for (const char *const *q = categories[c].patterns; *q; q++)
                if (add_pattern(x, *q, strlen(*q)))
                    goto nomem;
        } else if (len && add_pattern(x, p, len)) {
            goto nomem;
        }
        p += len;
        p += *p == ',';
    }
    size_t old = x->text ? strlen(x->text) : 0;
    char *t = realloc(x->text, old + strlen(arg) + 3);
    if (!t)
        goto nomem;
    x->text = t;
    if (old)
        strcpy(t + old, ", "), old += 2;
    strcpy(t + old, arg);
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int instr_exclusions_match(const struct instr_exclusions *x, const char *mangled)
{
    if (!x || !x->n || !mangled)
        return 0;
    for (size_t i = 0; i < x->n; i++)
        if (fnmatch(x->patterns[i], mangled, 0) == 0)
            return 1;
    if (strncmp(mangled, "_Z", 2))
        return 0;
    char *d = instr_demangle(mangled);
    int hit = 0;
    for (size_t i = 0; d && !hit && i < x->n; i++)
        hit = fnmatch(x->patterns[i], d, 0) == 0;
    free(d);
    return hit;
}

void instr_exclusions_free(struct instr_exclusions *x)
{
    for (size_t i = 0; i < x->n; i++)
        free(x->patterns[i]);
    free(x->patterns);
    free(x->text);
    free(x->mpi_prefixes);
    memset(x, 0, sizeof *x);
}

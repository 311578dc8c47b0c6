/* prefill.c - a helper that prepares the next window of the dump off the
 * program's threads.
 *
 * Bringing a window's pages into the page cache and mapping them costs the
 * kernel about 2 µs a 4 KiB page here (dump-file.c: instr__fill_zeros): a tenth of
 * the run of a call-heavy program, spent in the runtime on the program's
 * own thread (README: "Runtime:").  The helper does that work beside the
 * program: when a thread takes a window of at least PREFILL_MIN_CHUNKS
 * chunks, dump-file.c reserves the chunks of the next one and asks; the
 * helper fallocates them, writes zeros, maps them into the program's
 * address space and faults them in; the next thread that needs a window
 * takes it if it is ready (a few stores), else makes one itself as before.
 * One window is prepared at a time, for whichever thread needs one next.
 *
 * The helper is a process, not a thread: clone(CLONE_VM) shares the
 * address space (the window it maps is the program's) but not the thread
 * group, so the program sees no new thread (/proc/self/task,
 * unshare(CLONE_NEWUSER) and setns, which refuse a process with two
 * threads), its wait() for children does not see it (its exit signal is
 * none: only __WALL/__WCLONE waits do), and signals sent to the program
 * never reach it.  It shares neither the descriptor table (it closes its
 * copy at once but the dump's descriptor, so it keeps no pipe of the
 * program's open), nor the file-system context, nor the TLS: it runs on
 * the creator's thread pointer, so it calls no libc function (errno,
 * malloc, the stack protector's canary live there) and makes its system
 * calls itself.  It blocks every signal, is killed with the thread that
 * made it (PR_SET_PDEATHSIG), leaves when the program execs (its parent's
 * address space is then another: kcmp), and the kernel clears
 * helper_tid when it is gone: from then on every window is made inline.
 * A fork child has no helper until it needs one (instr__prefill_fork_child).
 *
 * Only when asked (INSTR_PREFILL=1), because the program can see it,
 * whatever is done to hide it: it is a task, so it counts in RLIMIT_NPROC
 * and /proc; waitpid(-1, __WALL) waits for it forever; kill(0) leaves it
 * alive; a seccomp filter that forbids new processes kills the program at
 * its clone(); a subreaper or a PID namespace's init reaps it (one extra
 * child, or a zombie for an init that reaps only its own); after an exec,
 * or when the thread that made it ends, it is a zombie until the program
 * ends; job control (SIGSTOP of the group) sends the program a SIGCHLD
 * with CLD_STOPPED; under unshare -p without -f it becomes the namespace's
 * PID 1 and the program can fork no more; instr-sample records it as one
 * more process.  docs/man/instr.7 lists the same.  Without it each thread
 * makes its own windows (dump-file.c); measured on whole runs (wall and
 * CPU time, helper included), the helper only moves the same CPU time
 * off the program's thread, which pays on a spare core and costs when
 * the program uses every core.
 *
 * Only in a process without privilege: no user or group id 0, no
 * capability.  The helper keeps the credentials it was made with, and
 * shares the program's memory, code included: a program that later drops
 * privileges would leave beside it a process with the old ones that its
 * own code could take over.  A process without privilege can never drop
 * any, so its helper never has more than the program.
 * Under valgrind, which ends a program at such a clone(), it never starts.
 *
 * A request the helper has not finished when the program ends leaves its
 * chunks as zeros or holes, which the reader skips; a ready window not
 * taken is given back at exit (instr__dump_trim takes and punches it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#ifndef SYS_kcmp
#define SYS_kcmp 312
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define KCMP_VM_ 1
#define HELPER_STACK (64u * 1024u)

enum { P_IDLE, P_ASKED, P_BUSY, P_READY, P_FAILED };

static struct {
    uint32_t state;   /* P_*, atomic; the futex the helper waits on */
    uint32_t gen;     /* the dump (instr__rt.dump_gen) the chunks are in */
    uint64_t first;   /* the chunks [first, first + n) */
    uint32_t n;
    int64_t off;      /* their file offset */
    uint8_t *base;    /* P_READY: where the helper mapped them */
} req;
/* A window its thread has left, for the helper to unmap (unmapping 4 MiB
 * of mapped file pages takes the kernel a while too): NULL when free. */
static struct {
    void *base; /* atomic: set by a thread, cleared by the helper */
    size_t len;
} old;
static pid_t helper_tid; /* CLONE_CHILD_SETTID/CLEARTID: 0 once it is gone */
static int helper_fd;    /* the dump's descriptor in the helper's own table */
static pid_t helper_parent;
static int tried;        /* a helper was started (or refused) in this process */
/* Fallocate, zeros INSTR_RT_ZERO_WRITE at a time (small folios: dump-file.c), map,
 * pre-fault: the window the request names, or NULL. */
__attribute__((no_stack_protector)) static uint8_t *prepare(void)
{
    long len = (long)req.n * INSTR_RT_CHUNK_SIZE;
    if (instr__sys6(SYS_fallocate, helper_fd, 0, req.off, len, 0, 0) != 0)
        return NULL;
    instr__fill_zeros(helper_fd, req.off, req.n);
    long m = instr__sys6(SYS_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_SHARED, helper_fd, req.off);
    if (m < 0 && m > -4096)
        return NULL;
    if (instr__sys6(SYS_madvise, m, len, 23 /* MADV_POPULATE_WRITE */, 0, 0, 0) != 0) {
        instr__sys6(SYS_munmap, m, len, 0, 0, 0, 0);
        return NULL;
    }
    return (uint8_t *)m;
}

/* Still the helper of the program that made it: same parent, and the
 * parent's address space still ours (not after its exec). */
__attribute__((no_stack_protector)) static int still_wanted(void)
{
    long parent = instr__sys6(SYS_getppid, 0, 0, 0, 0, 0, 0);
    if (parent != helper_parent)
        return 0;
    return instr__sys6(SYS_kcmp, parent, instr__sys6(SYS_getpid, 0, 0, 0, 0, 0, 0), KCMP_VM_, 0, 0, 0) == 0;
}

__attribute__((no_stack_protector)) static int helper_main(void *arg)
{
    (void)arg;
    uint64_t all = ~0ull;
    instr__sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, 8, 0, 0);
    instr__sys6(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
    instr__sys6(SYS_prctl, PR_SET_NAME, (long)"instr-prefill", 0, 0, 0, 0);
    /* Only the dump's descriptor: no pipe or socket of the program's held open. */
    if ((helper_fd > 0 && instr__sys6(SYS_close_range, 0, (long)helper_fd - 1, 0, 0, 0, 0) != 0) ||
        instr__sys6(SYS_close_range, (long)helper_fd + 1, ~0u, 0, 0, 0, 0) != 0)
        return 0;
    if (!still_wanted()) /* the maker may be gone before PDEATHSIG was set */
        return 0;
    for (;;) {
        void *gone = __atomic_load_n(&old.base, __ATOMIC_ACQUIRE);
        if (gone) {
            instr__sys6(SYS_munmap, (long)gone, (long)old.len, 0, 0, 0, 0);
            __atomic_store_n(&old.base, NULL, __ATOMIC_RELEASE);
        }
        uint32_t st = __atomic_load_n(&req.state, __ATOMIC_ACQUIRE);
        if (st != P_ASKED) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            instr__sys6(SYS_futex, (long)&req.state, FUTEX_WAIT_PRIVATE, st, (long)&ts, 0, 0);
            if (!still_wanted())
                return 0;
            continue;
        }
        uint32_t asked = P_ASKED;
        if (!__atomic_compare_exchange_n(&req.state, &asked, P_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        uint8_t *m = prepare();
        req.base = m;
        __atomic_store_n(&req.state, m ? P_READY : P_FAILED, __ATOMIC_RELEASE);
    }
}

static int unprivileged(void)
{
    uid_t u[3];
    gid_t g[3];
    if (getresuid(&u[0], &u[1], &u[2]) || getresgid(&g[0], &g[1], &g[2]))
        return 0;
    for (int i = 0; i < 3; i++)
        if (!u[i] || !g[i])
            return 0;
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d))
        return 0;
    for (int i = 0; i < 2; i++)
        if (d[i].effective || d[i].permitted)
            return 0;
    return 1;
}

/* Starts the helper once per process image, with fd, the dump's
 * descriptor now (chunk lock held).  0 if it runs. */
static int start(int fd)
{
    if (tried)
        return __atomic_load_n(&helper_tid, __ATOMIC_ACQUIRE) ? 0 : -1;
    tried = 1;
    /* Opt-in only: the helper is a task the program can see (the top). */
    const char *e = secure_getenv("INSTR_PREFILL");
    if (!e || strcmp(e, "1"))
        return -1;
    /* Valgrind ends the whole program at a clone() it does not know (one
     * that is neither a thread nor a fork): no helper under it. */
    const char *pre = getenv("LD_PRELOAD");
    if (RUNNING_ON_VALGRIND || (pre && strstr(pre, "vgpreload")) || !unprivileged())
        return -1;
    void *stack = mmap(NULL, HELPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    helper_fd = fd;
    helper_parent = getpid();
    int saved = errno;
    pid_t pid = clone(helper_main, (char *)stack + HELPER_STACK, CLONE_VM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID,
                      NULL, NULL, NULL, &helper_tid);
    errno = saved;
    if (pid <= 0) {
        munmap(stack, HELPER_STACK);
        return -1;
    }
    /* Its stack stays: the helper may outlive this call by the whole run. */
    return 0;
}

int instr__prefill_ask(int fd, uint64_t first, uint32_t n, int64_t off)
{
    if (start(fd) || __atomic_load_n(&req.state, __ATOMIC_ACQUIRE) != P_IDLE)
        return -1;
    req.gen = instr__rt.dump_gen;
    req.first = first;
    req.n = n;
    req.off = off;
    req.base = NULL;
    __atomic_store_n(&req.state, P_ASKED, __ATOMIC_RELEASE);
    syscall(SYS_futex, &req.state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return 0;
}

int instr__prefill_unmap(void *base, size_t len)
{
    if (!__atomic_load_n(&helper_tid, __ATOMIC_ACQUIRE) || __atomic_load_n(&old.base, __ATOMIC_ACQUIRE))
        return -1;
    old.len = len;
    __atomic_store_n(&old.base, base, __ATOMIC_RELEASE);
    /* The helper unmaps it when it wakes for the next request (asked just
     * after this) or within 50 ms. */
    return 0;
}

int instr__prefill_busy(void)
{
    return __atomic_load_n(&req.state, __ATOMIC_ACQUIRE) != P_IDLE;
}

int instr__prefill_take(uint64_t *first, uint32_t *n, uint8_t **base)
{
    uint32_t st = __atomic_load_n(&req.state, __ATOMIC_ACQUIRE);
    if (st == P_FAILED || (st == P_READY && req.gen != instr__rt.dump_gen)) {
        if (st == P_READY)
            munmap(req.base, (size_t)req.n * INSTR_RT_CHUNK_SIZE);
        __atomic_store_n(&req.state, P_IDLE, __ATOMIC_RELEASE);
        return 0;
    }
    if (st != P_READY)
        return 0;
    *first = req.first;
    *n = req.n;
    *base = req.base;
    __atomic_store_n(&req.state, P_IDLE, __ATOMIC_RELEASE);
    return 1;
}

void instr__prefill_fork_child(void)
{
    /* The helper serves the parent's address space; a READY window of the
     * parent's dump is mapped here too: let go of it. */
    if (__atomic_load_n(&req.state, __ATOMIC_ACQUIRE) == P_READY)
        munmap(req.base, (size_t)req.n * INSTR_RT_CHUNK_SIZE);
    req.state = P_IDLE;
    if (old.base) /* the parent's helper unmaps it there, not here */
        munmap(old.base, old.len);
    old.base = NULL;
    helper_tid = 0;
    tried = 0;
}

/* detector-sud.c - system calls, seen with Syscall User Dispatch (Linux 5.11+).
 *
 * Per thread, prctl(PR_SET_SYSCALL_USER_DISPATCH) points the kernel at a
 * selector byte (instr__sud_state[0], static TLS: it lives as long as the
 * thread, so no unmapping of our state can leave the kernel a dangling
 * selector).  Every hook leaves it at BLOCK, so the first
 * syscall of the interval is not run: the kernel raises SIGSYS
 * (si_code SYS_USER_DISPATCH) with the registers rolled back.  Our handler
 * sets the selector to ALLOW, moves RIP back over the 2-byte `syscall` and
 * returns; the syscall then runs natively, and so does every later one in
 * the interval.  At the next hook, ALLOW means "this interval made a
 * syscall".  Cost: about 1 us for the first syscall of an interval, nothing
 * for intervals without syscalls.  A signal handler returns through
 * rt_sigreturn, a syscall: when that is the first one, the bit is SIGNAL.
 *
 * The runtime's own syscalls (chunk switches, registration) happen inside
 * hooks, after the check: they trap once, set ALLOW, and the hook's re-arm
 * puts BLOCK back (instr__detector_rearm).
 *
 * Living with the program's own signal handling:
 *  - SIGSYS that is not ours (seccomp RET_TRAP, a program's own SUD) is
 *    passed to the handler that was installed before ours, as it would
 *    have been called (SA_SIGINFO or not; SIG_DFL still kills, SIG_IGN
 *    ignores).
 *  - The program reads and sets its own SIGSYS disposition, never ours:
 *    an rt_sigaction(SIGSYS) that traps (the first system call after a
 *    hook: a call to sigaction() or signal() from instrumented code always
 *    is) is answered here without running, from and into the disposition
 *    the program set (or found at start), kept in the kernel's own layout
 *    so that libc converts it back exactly.  A bad pointer still gets
 *    EFAULT (process_vm_readv/writev on ourselves do the copies).
 *  - One that does not trap (a later system call of the same interval, a
 *    raw syscall from uninstrumented code) runs: the next hook runs
 *    instr__sud_fired, which finds the foreign handler, keeps it as the one
 *    to chain to and puts ours back.  Until that hook, that thread runs at
 *    ALLOW; another thread's trap in that window would reach the program's
 *    handler (counted nowhere: it is the program's), and a query in that
 *    window reads ours.
 *  - A blocked SIGSYS is fatal: the kernel forces the signal and resets the
 *    handler to SIG_DFL.  So SUD is armed on a thread only while its mask
 *    lets SIGSYS through (checked when the thread starts and after every
 *    interval that made syscalls, since changing the mask is a syscall);
 *    a thread that blocks it is paused and resumed when it unblocks.
 *    Signal handlers whose sa_mask blocks SIGSYS would have the same
 *    problem while they run: SIGSYS is removed from their sa_mask (the
 *    signals with a handler, from /proc/self/status), at every thread start, after an interval whose first syscall was
 *    rt_sigaction, and at most every 50 ms otherwise.
 *  - A process under a seccomp filter does not use SUD at all (a filter
 *    could trap our prctl itself).
 * SUD is not inherited by threads or fork children;
 * detector.c re-arms the child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "detector.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2 /* si_code */
#endif
#define RESCAN_NS 50000000ull

/* The budget.  A trap costs a signal's delivery and return and the checks
 * after it (two system calls): microseconds, once per interval that makes
 * a system call.  A thread that makes them faster than the budget
 * (INSTR_SUD_RATE traps a second, counted over a window) pauses SUD for
 * PAUSE_NS: the system calls of those intervals go unseen, and the dump
 * says from where to where (EXT UNSEEN), so the report can say how much
 * of each thread's time that was.  Blocking ones stay seen by rseq_cs and
 * perf (a context switch). */
#define WINDOW_NS 100000000ull
#define PAUSE_NS 1000000000ull
#define DEFAULT_RATE 10000u
static uint32_t window_budget = DEFAULT_RATE / (1000000000ull / WINDOW_NS); /* 0: no budget */

__thread volatile uint8_t instr__sud_state[2] __attribute__((tls_model("initial-exec"))) = {
    INSTR__SUD_BLOCK, 0};
static __thread volatile uint8_t sud_armed __attribute__((tls_model("initial-exec"))); /* prctl is on */
static __thread volatile int saw_sigaction __attribute__((tls_model("initial-exec")));

/* While this thread runs on its alternate signal stack (a handler with
 * SA_ONSTACK): the stack's [start, end), else {0, 0}.  The selector then
 * rests at ALLOW: a program may give its handlers as little as 5 KiB of
 * alternate stack, and a SIGSYS frame (3.4 KiB with AVX-512 state) on top
 * of the handler's own does not fit, so a trap there (the handler's first
 * syscall, or its rt_sigreturn) would kill the program with SIGSEGV.  The
 * handler's intervals are then not watched by sud (the other backends
 * still see them).  Found by the hooks' slow path, which a handler's first
 * hook takes (its CFA is far from the interrupted frame's). */
__thread uintptr_t instr__sud_alt[2] __attribute__((tls_model("initial-exec")));

/* instr__own_syscall, the region prctl always allows: stubs.c. */

/* rt_sigaction's argument as the kernel reads it (x86-64). */
struct ksigaction {
    uint64_t handler, flags, restorer, mask;
};

static struct sigaction chained;   /* the program's SIGSYS disposition, to call */
static struct ksigaction prog_view; /* the same, as the program last set or read it */
static uint64_t conflicts;        /* foreign SIGSYS handlers replaced by ours */
static uint64_t last_scan_ns;

static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction c = chained;
    if (c.sa_flags & SA_SIGINFO) {
        if (c.sa_sigaction)
            c.sa_sigaction(sig, si, uc);
    } else if (c.sa_handler == SIG_DFL) {
        /* What would have happened without us: death by SIGSYS, delivered
         * as soon as this handler returns.  At ALLOW: a trapped
         * rt_sigaction(SIGSYS) would be answered, not run. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        instr__sud_state[0] = INSTR__SUD_ALLOW;
        sigaction(SIGSYS, &dfl, NULL);
        raise(SIGSYS);
    } else if (c.sa_handler != SIG_IGN) {
        c.sa_handler(sig);
    }
}

static void view_set(const struct sigaction *sa)
{
    prog_view.handler = (uint64_t)(uintptr_t)sa->sa_handler;
    prog_view.flags = (uint64_t)(unsigned)sa->sa_flags;
    prog_view.restorer = (uint64_t)(uintptr_t)sa->sa_restorer;
    memcpy(&prog_view.mask, &sa->sa_mask, sizeof prog_view.mask);
    chained = *sa;
}

/* Copies between our memory and the program's pointer as the kernel would
 * (EFAULT, not SIGSEGV, for a bad one): 0 or -errno.  In a sandbox
 * (sandbox.c) no system call: a plain copy. */
static long copy_user(void *to, const void *from, size_t n, int write)
{
    if (!instr__may_syscall()) {
        memcpy(to, from, n);
        return 0;
    }
    struct iovec local = {write ? (void *)from : to, n}, remote = {write ? to : (void *)from, n};
    long nr = write ? SYS_process_vm_writev : SYS_process_vm_readv;
    long r = syscall(nr, (long)instr__getpid(), &local, 1L, &remote, 1L, 0L);
    if (r == (long)n)
        return 0;
    if (r < 0 && errno != EFAULT) { /* not allowed to look: trust the pointer */
        memcpy(to, from, n);
        return 0;
    }
    return -EFAULT;
}

/* The program's rt_sigaction(SIGSYS, act, oact, 8), answered from its own
 * view (detector comment above): what the kernel returns, in RAX. */
static long emulate_sigaction(const void *act, void *oact)
{
    struct ksigaction nv, old = prog_view;
    if (act && copy_user(&nv, act, sizeof nv, 0))
        return -EFAULT;
    if (oact && copy_user(oact, &old, sizeof old, 1))
        return -EFAULT;
    if (act) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = (void (*)(int))(uintptr_t)nv.handler;
        sa.sa_flags = (int)nv.flags;
        sa.sa_restorer = (void (*)(void))(uintptr_t)nv.restorer;
        memcpy(&sa.sa_mask, &nv.mask, sizeof nv.mask);
        chained = sa;
        prog_view = nv;
    }
    return 0;
}

__thread uint64_t instr__sud_spent __attribute__((tls_model("initial-exec")));

/* The handler's own time is read with rdtsc only while the thread has
 * its TSC: once it is gone (PR_SET_TSC, seccomp strict mode: sandbox.c,
 * possibly during this very handler), rdtsc raises a SIGSEGV, which this
 * handler blocks, so the kernel would kill the program with it. */
static inline uint64_t handler_tsc(void)
{
    return instr__tsc_gone ? 0 : instr__tsc();
}

static inline uint64_t handler_spent(uint64_t t0)
{
    return instr__tsc_gone ? 0 : instr__tsc() - t0;
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
    volatile uint8_t *sel = instr__sud_state;
    if (si->si_code == SYS_USER_DISPATCH && sud_armed && *sel == INSTR__SUD_BLOCK) {
        uint64_t t0 = handler_tsc(); /* the handler's own time: charged to nobody (instr__put_sud_gap) */
        ucontext_t *uc = ucv;
        sel[0] = INSTR__SUD_ALLOW;
        sel[1] = si->si_syscall == SYS_rt_sigreturn ? INSTR_OS_SIGNAL : INSTR_OS_SYSCALL;
        if (si->si_syscall == SYS_rt_sigaction) {
            greg_t *g = uc->uc_mcontext.gregs;
            saw_sigaction = 1;
            if (g[REG_RDI] == SIGSYS && g[REG_R10] == sizeof(uint64_t)) {
                int saved = errno;
                g[REG_RAX] = emulate_sigaction((const void *)(uintptr_t)g[REG_RSI],
                                               (void *)(uintptr_t)g[REG_RDX]);
                errno = saved;
                instr__rseq_restore();
                instr__sud_spent += handler_spent(t0);
                return; /* RIP stays past the syscall: it does not run */
            }
        }
        if (si->si_syscall == SYS_prctl || si->si_syscall == SYS_seccomp) /* sandbox.c */
            instr__sandbox_syscall(si->si_syscall, (unsigned long)uc->uc_mcontext.gregs[REG_RDI],
                                   (unsigned long)uc->uc_mcontext.gregs[REG_RSI]);
        else if (si->si_syscall == SYS_exit_group) /* _exit: lifecycle.c */
            instr__exit_group_seen((int)uc->uc_mcontext.gregs[REG_RDI]);
        uc->uc_mcontext.gregs[REG_RIP] -= 2; /* run the syscall again, now allowed */
        instr__rseq_restore();
        instr__sud_spent += handler_spent(t0);
        return;
    }
    chain(sig, si, ucv);
}

static int install(struct sigaction *prev)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    /* Nothing may interrupt the handler before it sets ALLOW: another
     * signal's handler would trap at its first syscall (or rt_sigreturn)
     * while SIGSYS is blocked, and a blocked SIGSYS is fatal.  So every
     * other signal waits, and SIGSYS itself stays open (SA_NODEFER). */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
    sigfillset(&sa.sa_mask);
    sigdelset(&sa.sa_mask, SIGSYS);
    return sigaction(SIGSYS, &sa, prev);
}

/* The signals that have a handler (SigCgt of /proc/self/status, bit
 * s - 1 for signal s): 0 and *set, or -1 (no /proc; sandboxed, where the
 * runtime opens nothing).  Read in pieces of 512 bytes, the end of each
 * kept for a line cut between two: a hook's slow path may run on a
 * signal handler's small alternate stack. */
#define STATUS_PIECE 512
#define STATUS_KEEP 31 /* longer than "\nSigCgt:\t" and 16 digits */

static int caught_signals(uint64_t *set)
{
    char buf[STATUS_KEEP + STATUS_PIECE + 1];
    if (!instr__may_syscall())
        return -1;
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = -1;
    size_t kept = 0;
    ssize_t n;
    while ((n = read(fd, buf + kept, STATUS_PIECE)) > 0) {
        size_t len = kept + (size_t)n;
        buf[len] = 0;
        const char *c = strstr(buf, "\nSigCgt:");
        if (c && strchr(c + 8, '\n')) {
            char *end;
            errno = 0;
            *set = strtoull(c + 8, &end, 16);
            rc = errno || end == c + 8 || *end != '\n' ? -1 : 0;
            break;
        }
        size_t from = c ? (size_t)(c - buf) : len;
        if (len - from > STATUS_KEEP || !c)
            from = len > STATUS_KEEP ? len - STATUS_KEEP : 0;
        memmove(buf, buf + from, len - from);
        kept = len - from;
    }
    close(fd);
    return rc;
}

/* Handlers that block SIGSYS while they run would die at their first
 * syscall: let SIGSYS through them.  Only the signals with a handler are
 * read (a handler that can run is a caught signal, SA_SIGINFO or not):
 * reading /proc/self/status (15 us on this VM in one read) instead of an
 * rt_sigaction read of all 61 (70 us, more in a process's first
 * moments); without /proc, all of them. */
static void unblock_in_handlers(void)
{
    uint64_t caught = ~0ull;
    if (caught_signals(&caught))
        caught = ~0ull;
    for (int s = 1; s < NSIG; s++) {
        struct sigaction sa;
        if (s == SIGKILL || s == SIGSTOP || s == SIGSYS || (s <= 64 && !(caught >> (s - 1) & 1)) ||
            sigaction(s, NULL, &sa))
            continue;
        if ((sa.sa_flags & SA_SIGINFO || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)) &&
            sigismember(&sa.sa_mask, SIGSYS)) {
            sigdelset(&sa.sa_mask, SIGSYS);
            sigaction(s, &sa, NULL);
        }
    }
    __atomic_store_n(&last_scan_ns, instr__mono_ns(), __ATOMIC_RELAXED);
}

static int sigsys_blocked(void)
{
    sigset_t m;
    return pthread_sigmask(SIG_BLOCK, NULL, &m) != 0 || sigismember(&m, SIGSYS);
}

static int under_seccomp(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *s = strstr(buf, "\nSeccomp:");
    return s && strtol(s + 9, NULL, 10) != 0;
}

/* Valgrind runs the program on its own core, whose system calls come from
 * outside any region we could allow: with SUD on, the first one is a
 * SIGSYS valgrind does not expect (the program dies, exit 159, before the
 * self-test can even report).  Its client request, where the header is
 * there; else its preload libraries, which it always puts in LD_PRELOAD. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define INSTR_HAVE_VALGRIND_H 1
#endif
#endif

static int under_valgrind(void)
{
#ifdef INSTR_HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND)
        return 1;
#endif
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "/vgpreload_") != NULL;
}

/* INSTR_SUD_RATE: traps a second a thread may take before SUD pauses on
 * it; 0 never pauses.  Unset, empty or not a number: the default. */
static void read_budget(void)
{
    const char *e = secure_getenv("INSTR_SUD_RATE");
    if (!e || !*e)
        return;
    char *end;
    unsigned long v = strtoul(e, &end, 10);
    if (*end || v > 100000000ul) {
        instr__say("INSTR_SUD_RATE=", e, " is not a number of traps a second", "; using the default");
        return;
    }
    window_budget = (uint32_t)((v * WINDOW_NS + 999999999ull) / 1000000000ull);
    if (v && !window_budget)
        window_budget = 1;
}

static int sud_init(char *why, size_t n)
{
    read_budget();
    if (under_valgrind()) {
        snprintf(why, n, "sud off: running under valgrind");
        return -1;
    }
    if (under_seccomp()) {
        snprintf(why, n, "sud off: the process runs under seccomp");
        return -1;
    }
    if (sigsys_blocked()) {
        snprintf(why, n, "sud off: SIGSYS is blocked at start");
        return -1;
    }
    struct sigaction prev;
    if (install(&prev)) {
        snprintf(why, n, "sud off: cannot install the SIGSYS handler");
        return -1;
    }
    if (prev.sa_sigaction != on_sigsys)
        view_set(&prev);
    /* Self-test on this thread: one getppid must trap exactly once.  No
     * other handler may run meanwhile (one that blocks SIGSYS would die at
     * its first system call): every signal but SIGSYS and the faults waits,
     * two system calls where scanning every handler (unblock_in_handlers)
     * took 63; the thread's start scans them anyway, before it arms. */
    sigset_t all, was;
    sigfillset(&all);
    static const int let_through[] = {SIGSYS, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};
    for (size_t i = 0; i < sizeof let_through / sizeof let_through[0]; i++)
        sigdelset(&all, let_through[i]);
    if (pthread_sigmask(SIG_BLOCK, &all, &was)) {
        snprintf(why, n, "sud off: cannot block signals for the self-test");
        sigaction(SIGSYS, &prev, NULL);
        return -1;
    }
    volatile uint8_t *sel = instr__sud_state;
    pid_t want = (pid_t)syscall(SYS_getppid);
    sel[0] = INSTR__SUD_ALLOW;
    sel[1] = 0;
    if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, sel)) {
        snprintf(why, n, "sud off: prctl refused (%s)", strerror(errno));
        sel[0] = INSTR__SUD_BLOCK;
        pthread_sigmask(SIG_SETMASK, &was, NULL);
        sigaction(SIGSYS, &prev, NULL);
        return -1;
    }
    sud_armed = 1;
    sel[0] = INSTR__SUD_BLOCK;
    pid_t got = (pid_t)syscall(SYS_getppid);
    int ok = sel[0] == INSTR__SUD_ALLOW && sel[1] == INSTR_OS_SYSCALL && got == want;
    prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
    sud_armed = 0;
    sel[0] = INSTR__SUD_BLOCK;
    sel[1] = 0;
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (!ok) {
        snprintf(why, n, "sud off: self-test failed (a getppid did not trap once)");
        sigaction(SIGSYS, &prev, NULL);
        return -1;
    }
    return 0;
}

/* Armed, the selector stays at ALLOW: every caller goes on with the
 * runtime's own work (the thread's first chunk, a fork child's dump, the
 * detector's other backends) and ends it with instr__detector_rearm, which
 * sets it to BLOCK for the program's next interval.  Left at BLOCK, the
 * runtime's next system call trapped (a signal delivered and returned: one
 * per thread start and per fork child, the trap's flag then forgotten by
 * that rearm).  Not armed, it rests at BLOCK, the check's resting value. */
static void arm_thread(struct instr__thread *t)
{
    volatile uint8_t *sel = instr__sud_state;
    sel[0] = INSTR__SUD_ALLOW;
    sel[1] = 0;
    unsigned long own = (unsigned long)(uintptr_t)instr__own_syscall;
    if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, own,
              (unsigned long)(uintptr_t)instr__own_syscall_end - own, sel) == 0) {
        sud_armed = 1;
        t->det.on |= INSTR__DET_ON_SUD;
    } else {
        sel[0] = INSTR__SUD_BLOCK;
    }
}

/* The budget's window starts anew at now. */
static void new_window(struct instr__thread *t, uint64_t now)
{
    t->det.sud_window_ns = now;
    t->det.sud_traps = 0;
}

static void disarm(struct instr__thread *t)
{
    instr__sud_state[0] = INSTR__SUD_ALLOW; /* the prctl itself must not trap */
    prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
    sud_armed = 0;
    t->det.on &= ~INSTR__DET_ON_SUD;
    instr__sud_state[0] = INSTR__SUD_BLOCK;
    instr__sud_state[1] = 0;
}

/* SUD off on this thread (SIGSYS blocked; or over budget, until until_ns):
 * its system calls that do not block go unseen (EXT UNSEEN) until
 * instr__sud_resume arms it again. */
static void pause_thread(struct instr__thread *t, uint64_t until_ns)
{
    if (t->det.on & INSTR__DET_ON_SUD)
        disarm(t);
    t->det.on |= INSTR__DET_ON_SUD_PAUSED;
    t->det.sud_until_ns = until_ns;
    t->det.unseen |= INSTR_OS_SYSCALL;
}

static void start_thread(struct instr__thread *t, int scan)
{
    new_window(t, instr__mono_ns());
    t->det.sud_until_ns = 0;
    if (scan)
        unblock_in_handlers();
    if (sigsys_blocked())
        pause_thread(t, 0);
    else
        arm_thread(t);
}

static void sud_thread(struct instr__thread *t)
{
    start_thread(t, 1);
}



static void sud_thread_end(struct instr__thread *t)
{
    if (t->det.on & INSTR__DET_ON_SUD)
        disarm(t);
    t->det.on &= ~INSTR__DET_ON_SUD_PAUSED;
}

/* A paused thread (SIGSYS blocked, or over budget until sud_until_ns):
 * arm again once it is let through and the pause is over. */
void instr__sud_resume(struct instr__thread *t)
{
    int saved = errno;
    uint64_t now = instr__mono_ns();
    if (now >= t->det.sud_until_ns && instr__may_syscall() && !sigsys_blocked()) {
        t->det.on &= ~INSTR__DET_ON_SUD_PAUSED;
        t->det.sud_until_ns = 0;
        new_window(t, now);
        t->det.unseen &= (uint8_t)~INSTR_OS_SYSCALL;
        arm_thread(t);
    }
    errno = saved;
}

/* One more trap on this thread: over the window's budget, SUD pauses
 * here (it is off: no trap, no check) until PAUSE_NS from now. */
static int over_budget(struct instr__thread *t, uint64_t now)
{
    if (!window_budget)
        return 0;
    if (now - t->det.sud_window_ns >= WINDOW_NS)
        new_window(t, now);
    if (++t->det.sud_traps <= window_budget)
        return 0;
    pause_thread(t, now + PAUSE_NS);
    return 1;
}

/* The interval made a syscall (selector ALLOW).  Called from a hook, before
 * the re-arm: our own syscalls here run at ALLOW. */
unsigned instr__sud_fired(struct instr__thread *t)
{
    if (INSTR_UNLIKELY(instr__sud_alt[1]) && instr__sud_rest() == INSTR__SUD_ALLOW) {
        instr__sud_state[1] = 0;
        return 0; /* on the alternate signal stack: not watched */
    }
    unsigned bits = instr__sud_state[1] ? instr__sud_state[1] : INSTR_OS_SYSCALL;
    instr__sud_state[1] = 0;
    if (!(t->det.on & INSTR__DET_ON_SUD))
        return 0;
    if (!instr__may_syscall())
        return bits; /* sandbox.c: the checks below make system calls */
    int saved = errno;
    struct sigaction cur;
    if (sigaction(SIGSYS, NULL, &cur) == 0 && cur.sa_sigaction != on_sigsys) {
        /* The program installed its own: chain to it from now on. */
        struct sigaction prev;
        view_set(&cur);
        if (install(&prev) == 0 && prev.sa_sigaction != on_sigsys)
            view_set(&prev);
        __atomic_fetch_add(&conflicts, 1, __ATOMIC_RELAXED);
    }
    uint64_t now = instr__mono_ns();
    if (over_budget(t, now)) {
        errno = saved;
        return bits;
    }
    if (saw_sigaction || now - __atomic_load_n(&last_scan_ns, __ATOMIC_RELAXED) > RESCAN_NS) {
        saw_sigaction = 0;
        unblock_in_handlers();
    }
    if (sigsys_blocked())
        pause_thread(t, 0);
    errno = saved;
    return bits;
}

/* A hook far from the top frame, of this thread: on the alternate signal
 * stack?  Then the selector rests at ALLOW until the thread leaves it. */
void instr__sud_altstack(struct instr__thread *t)
{
    stack_t ss;
    if (!(t->det.on & INSTR__DET_ON_SUD) || instr__sud_alt[1] ||
        instr__own_syscall(SYS_sigaltstack, 0, (long)(uintptr_t)&ss, 0) != 0 ||
        !(ss.ss_flags & SS_ONSTACK))
        return;
    instr__sud_alt[0] = (uintptr_t)ss.ss_sp;
    instr__sud_alt[1] = (uintptr_t)ss.ss_sp + ss.ss_size;
    instr__sud_state[0] = INSTR__SUD_ALLOW;
}

__attribute__((noinline)) uint8_t instr__sud_rest_alt(void)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (sp - instr__sud_alt[0] < instr__sud_alt[1] - instr__sud_alt[0])
        return INSTR__SUD_ALLOW;
    instr__sud_alt[0] = instr__sud_alt[1] = 0; /* left it */
    return INSTR__SUD_BLOCK;
}

uint64_t instr__sud_conflicts(void)
{
    return __atomic_load_n(&conflicts, __ATOMIC_RELAXED);
}

/* Syscall User Dispatch is not inherited by a fork child: arm again.
 * The child's one thread goes on from its parent's forking thread, with
 * the parent's handlers: the parent's rescan policy (after an
 * rt_sigaction, else every RESCAN_NS) carries over, and the child scans
 * the handlers only when the parent would have at its next hook.  A scan
 * is some 60 rt_sigaction calls, a third of the system calls a
 * fork-per-request child made for its dump (issue 39). */
static void sud_fork_child(struct instr__thread *t)
{
    t->det.on &= ~(INSTR__DET_ON_SUD | INSTR__DET_ON_SUD_PAUSED);
    t->det.unseen &= (uint8_t)~INSTR_OS_SYSCALL; /* armed again: seen again, */
    t->det.unseen_written = 0;                    /* in a dump of its own */
    uint64_t now = instr__mono_ns();
    int stale = saw_sigaction || now - __atomic_load_n(&last_scan_ns, __ATOMIC_RELAXED) > RESCAN_NS;
    saw_sigaction = 0;
    start_thread(t, stale);
}

/* No dump after all: the program's SIGSYS disposition back as it was, so
 * that it reads what it set (no thread is armed to answer for it). */
static void sud_withdraw(void)
{
    struct sigaction cur;
    if (sigaction(SIGSYS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigsys)
        sigaction(SIGSYS, &chained, NULL);
}

const struct instr__detector_ops instr__det_sud = {
    .name = "sud",
    .id = INSTR_DETECTOR_SUD,
    .is_kind = 1,
    .sees = INSTR_OS_SYSCALL | INSTR_OS_SIGNAL,
    .init = sud_init,
    .thread = sud_thread,
    .thread_end = sud_thread_end,
    .fork_child = sud_fork_child,
    .withdraw = sud_withdraw,
};

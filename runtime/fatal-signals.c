/* fatal-signals.c - a process killed by a signal still ends its dump.
 *
 * Events are already in the file when a signal kills the process (the
 * chunks are shared file mappings); what is missing is the end: when, and
 * why.  For the signals whose default action ends the process and that a
 * program rarely inspects, the runtime installs a handler while the
 * disposition is still the default.  It stores the end tick and the signal
 * in the header (flag SIGNALED), puts the default action back and sends
 * the signal again: it stays pending while the handler runs (the handler
 * does not use SA_NODEFER) and kills the process, with its core dump, the
 * moment the handler returns.  A fault re-executed after the return faults
 * again under the default action; the result is the same.
 *
 *   program                        runtime handler
 *   *p = 0;  --SIGSEGV-->          end_tsc, end_signal, SIGNALED
 *                                  SIGSEGV -> SIG_DFL, raise(SIGSEGV) (pending)
 *            <--return--           pending SIGSEGV: the process dies as it would
 *
 * The program's behaviour does not change:
 *  - a disposition that is not the default (ignored, or a handler installed
 *    before the runtime was loaded) is left alone;
 *  - a handler the program installs later simply replaces ours (its
 *    process then ends however its handler decides: exit() completes the
 *    dump normally);
 *  - a program that chains to the previous handler reaches ours, which does
 *    what the default would have done;
 *  - exec resets handled signals to the default, as without us.
 *  - a program that asks about its dispositions must see what it would see
 *    without us (SIG_DFL: a runtime or crash reporter decides on it whether
 *    to install or chain its own).  A query cannot be intercepted, but it
 *    is a call to sigaction() or signal(): the first time an instrumented
 *    function calls one of them (its call site registering, before the
 *    call runs), our handlers are put back to SIG_DFL for good
 *    (instr__fatal_signals_hide).  Such a program handles its own signals;
 *    if it then dies of one we did not see, its dump has no end and the
 *    report says the process did not finish.  Calls from uninstrumented
 *    code, or with callsites=none, are not seen.
 * SIGINT, SIGHUP and SIGQUIT are not handled: shells and interpreters test
 * "is it still SIG_DFL?" before installing theirs.  SIGKILL and SIGSTOP
 * cannot be caught: a killed process's dump has no end (the report says
 * the process did not finish).  SIGSYS belongs to the detectors.
 *
 * In a seccomp sandbox (sandbox.c) a filter may refuse sigaction.  When
 * sud sees the sandbox coming, the handlers are made one-shot first
 * (SA_RESETHAND: the kernel puts SIG_DFL back as it delivers, the fault
 * happens again on return and kills, as without us), and SIGTERM and
 * SIGABRT go back to SIG_DFL (a sent signal does not come again, and the
 * sandbox may refuse to send it: a SIGTERM would be lost).  Otherwise a refused
 * sigaction ends the process with _exit(128 + signal), the nearest the
 * sandbox allows (the fault would come back to the handler for ever).
 *
 * Async-signal-safe: only atomic stores into the header page, the vDSO
 * clocks, sigaction and raise.  No lock is taken (the signal may have
 * interrupted the runtime itself).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "fatal-signals.h"
#include "internal.h"

static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};

/* Whether pc lies in an executable segment of the module this code is in
 * (the runtime): read from our own ELF program headers, no call. */
static int own_code(uintptr_t pc)
{
    extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
    const ElfW(Ehdr) *eh = &__ehdr_start;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    uintptr_t base = (uintptr_t)eh;
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && !ph[i].p_offset)
            base -= ph[i].p_vaddr; /* the segment holding the ELF header */
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && pc - (base + ph[i].p_vaddr) < ph[i].p_memsz)
            return 1;
    return 0;
}

/* A SIGSEGV from one of our own rdtsc or rdtscp: the TSC was taken from
 * the thread (seccomp strict mode entered without sud seeing it,
 * PR_SET_TSC).  The thread stops recording (sandbox.c: no system call from
 * now on, not even here), the hook goes on with the thread's last tick
 * (and any other read of the clock it makes on the way out faults here
 * again: the same tick), and the program with it. */
static __thread uint64_t frozen_tsc __attribute__((tls_model("initial-exec")));

/* Set once our handlers reset themselves on delivery (SA_RESETHAND):
 * needed in a sandbox, where sigaction may be refused. */
static int oneshot;

static int tsc_taken(int sig, const siginfo_t *si, ucontext_t *uc)
{
    uintptr_t pc = instr__signal_pc(uc);
    if (sig != SIGSEGV || si->si_code != SI_KERNEL || !own_code(pc))
        return 0;
    unsigned len = instr__tick_fault_len(pc); /* runtime/arch/<arch>/cpu.c */
    if (!len)
        return 0;
    if (!instr__tsc_gone) {
        struct instr__thread *t = instr__thread_own(instr__tls);
        frozen_tsc = t ? t->last_tsc : instr__rt.header ? instr__rt.header->last_tsc : 0;
        instr__sandbox_tsc_gone();
    }
    instr__tick_emulate(uc, len, frozen_tsc);
    return 1;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    if (tsc_taken(sig, si, uc))
        return;
    int saved = errno;
    int calls = instr__may_syscall(); /* sandbox.c: in a sandbox, header stores only */
    if (calls && !instr__rt.header)
        instr__fork_child_signalled(); /* a fork child's dump, made now (lifecycle.c) */
    struct instr_dump_header *h = instr__rt.header;
    /* Not in a vfork child (the header is its parent's), and only once. */
    if (h && (!calls || h->pid == (uint64_t)instr__getpid()) &&
        !(__atomic_load_n(&h->flags, __ATOMIC_ACQUIRE) & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED))) {
        if (calls && !instr__tsc_gone)
            instr__thread_cpu_all(1); /* the live threads' CPU clocks, if the lock is free */
        if (!instr__tsc_gone) /* else the last event ends it */
            instr__header_end(h);
        h->end_signal = (uint32_t)sig;
        h->end_signal_tid = calls ? instr__gettid() : 0;
        __atomic_fetch_or(&h->flags, INSTR_DUMP_SIGNALED, __ATOMIC_RELEASE);
    }
    if (!calls && __atomic_load_n(&oneshot, __ATOMIC_RELAXED)) {
        /* Delivery put SIG_DFL back: a fault happens again and kills. */
        if (si->si_code <= 0)
            raise(sig); /* sent: send it again, if the sandbox lets us */
        errno = saved;
        return;
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (sigaction(sig, &dfl, NULL)) {
        /* A sandbox refused it (an errno filter): the fault would come
         * back here for ever.  End as close to the signal as it allows. */
        _exit(128 + sig);
    }
    raise(sig); /* blocked until we return */
    errno = saved;
}

void instr__fatal_signals_init(void)
{
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(fatal[i], NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(fatal[i], &sa, NULL);
    }
}

/* A sandbox is about to close (sandbox.c, from the SIGSYS handler, the
 * filter not yet installed): our handlers become one-shot, so that a
 * crash inside it needs no system call to end as it would without us. */
void instr__fatal_signals_oneshot(void)
{
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction cur;
        if (sigaction(fatal[i], NULL, &cur) || !(cur.sa_flags & SA_SIGINFO) ||
            cur.sa_sigaction != on_fatal || (cur.sa_flags & SA_RESETHAND))
            continue;
        if (fatal[i] == SIGTERM || fatal[i] == SIGABRT) {
            /* Sent, not faults: the handler could not send them again
             * (kill refused), so the first would be lost.  Not ours any
             * more: such an end is not recorded in a sandbox. */
            cur.sa_handler = SIG_DFL;
            cur.sa_flags = 0;
        } else {
            cur.sa_flags |= SA_RESETHAND;
        }
        sigaction(fatal[i], &cur, NULL);
    }
    __atomic_store_n(&oneshot, 1, __ATOMIC_RELAXED);
}

/* The program is about to ask about, or set, a disposition: ours become
 * SIG_DFL again (the ones still ours), as they would be without us. */
void instr__fatal_signals_hide(void)
{
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction cur, dfl;
        if (sigaction(fatal[i], NULL, &cur) || !(cur.sa_flags & SA_SIGINFO) ||
            cur.sa_sigaction != on_fatal)
            continue;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(fatal[i], &dfl, NULL);
    }
}

/* Whether a call to the function named `callee` (mangled) asks about or
 * changes signal dispositions. */
int instr__fatal_signals_api(const char *callee)
{
    static const char *const api[] = {"sigaction", "signal", "sysv_signal", "bsd_signal",
                                      "__sysv_signal", "sigset", "__sigaction"};
    for (size_t i = 0; callee && i < sizeof api / sizeof api[0]; i++)
        if (strcmp(callee, api[i]) == 0)
            return 1;
    return 0;
}
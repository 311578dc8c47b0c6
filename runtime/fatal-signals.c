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
 * Async-signal-safe: only atomic stores into the header page, the vDSO
 * clocks, sigaction and raise.  No lock is taken (the signal may have
 * interrupted the runtime itself).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "fatal-signals.h"
#include "internal.h"

static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    int saved = errno;
    struct instr_dump_header *h = instr__rt.header;
    /* Not in a vfork child (the header is its parent's), and only once. */
    if (h && h->pid == (uint64_t)getpid() &&
        !(__atomic_load_n(&h->flags, __ATOMIC_ACQUIRE) & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED))) {
        instr__header_end(h);
        h->end_signal = (uint32_t)sig;
        h->end_signal_tid = instr__gettid();
        __atomic_fetch_or(&h->flags, INSTR_DUMP_SIGNALED, __ATOMIC_RELEASE);
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
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
/* sandbox.c - may the runtime make a system call now?
 *
 * A program may put itself in a seccomp sandbox (a filter, or strict mode)
 * and go on computing.  The filter was written for the program's own
 * system calls, not for the runtime's: an open, mmap or munmap of a chunk
 * switch, a sigaction of the sud detector or a read of the thread CPU clock
 * would then fail, raise SIGSYS or kill the process.  So once a sandbox is
 * seen coming, the runtime makes no system call at all: recording stops,
 * every later event is counted as dropped in the header (shared memory, no
 * call needed), the header's stop_reason says why, and the program
 * runs on unchanged.  Nothing is said on stderr (the filter may forbid
 * that write too).
 *
 * Seen coming (before the filter exists):
 *  - at the call site, whatever the detector: the plugin marks calls from
 *    instrumented code to prctl(PR_SET_NO_NEW_PRIVS or PR_SET_SECCOMP),
 *    syscall(SYS_seccomp or SYS_prctl with those) and libseccomp's
 *    seccomp_load() (INSTR_SITE_SANDBOX, hook-abi.h), and the call hook
 *    stops recording before the call runs (instr__sandbox_call_site);
 *  - with the sud detector, the interval's first system call traps into
 *    our SIGSYS handler before it runs: prctl(PR_SET_SECCOMP),
 *    prctl(PR_SET_NO_NEW_PRIVS) (what an unprivileged process must do
 *    first) and seccomp() stop recording there, from any code.
 * Not seen: without sud, a filter installed from uninstrumented code (a
 * library calling prctl itself, a raw syscall instruction), with an option
 * that is not a constant, or by a later system call of the same interval
 * (a library such as libseccomp making several calls between two hooks) -
 * then the next runtime system call meets the filter: refused with an
 * errno, recording stops with one line on stderr; a KILL or strict filter
 * ends the process.  A filter inherited at start (containers, systemd
 * services) allowed the exec and is assumed to allow the ordinary calls
 * the runtime makes.
 *
 * The thread that enters the sandbox stops at once, without even a tick:
 * strict mode also disables the TSC for it (rdtsc then raises SIGSEGV), so
 * its hooks only count their events as dropped from then on.  A
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV) that sud sees stops the thread the
 * same way, before the call runs.  A thread whose TSC goes away unseen
 * (no sud) faults once in a hook: fatal-signals.c recognises our own
 * rdtsc and does the same.
 *
 * Async-signal-safe: called from the SIGSYS and SIGSEGV handlers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "fatal-signals.h"
#include "internal.h"

static int sandboxed;

int instr__may_syscall(void)
{
    return !__atomic_load_n(&sandboxed, __ATOMIC_ACQUIRE);
}

void instr__sandbox_enter(const char *why)
{
    if (__atomic_exchange_n(&sandboxed, 1, __ATOMIC_ACQ_REL))
        return;
    instr__rt.stopped = 1;
    struct instr_dump_header *h = instr__rt.header;
    if (!h)
        return;
    size_t n = strnlen(why, sizeof h->stop_reason - 1);
    memcpy(h->stop_reason, why, n);
    h->stop_reason[n] = 0;
}

__thread int instr__tsc_gone __attribute__((tls_model("initial-exec")));

void instr__sandbox_thread_stop(int tsc_gone)
{
    if (tsc_gone)
        instr__tsc_gone = 1;
    if (instr__thread_own(instr__tls))
        instr__tls = &instr__lost_thread; /* busy == LOST: count, no tick */
}

/* The last moment the runtime may make a system call, if no filter is
 * there yet (a second filter: the first may forbid anything). */
static void last_call(void)
{
    int saved = errno;
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0)
        instr__fatal_signals_oneshot();
    errno = saved;
}

void instr__sandbox_tsc_gone(void)
{
    instr__sandbox_enter("the TSC was disabled on a thread (seccomp strict mode, or PR_SET_TSC)");
    instr__sandbox_thread_stop(1);
}

int instr__sandbox_syscall(long nr, unsigned long arg0, unsigned long arg1)
{
    if (nr == SYS_prctl && arg0 == PR_SET_TSC && arg1 == PR_TSC_SIGSEGV) {
        /* rdtsc faults on this thread from the call on, and the next trap
         * of sud may come before any hook's rdtsc could tell. */
        instr__sandbox_tsc_gone();
        return 1;
    }
    if (nr == SYS_seccomp || (nr == SYS_prctl && arg0 == PR_SET_SECCOMP))
        instr__sandbox_enter("the program installs a seccomp filter");
    else if (nr == SYS_prctl && arg0 == PR_SET_NO_NEW_PRIVS)
        instr__sandbox_enter("the program sets no_new_privs (a seccomp filter follows)");
    else
        return 0;
    last_call();
    /* Strict mode takes the thread's TSC away with its system calls. */
    instr__sandbox_thread_stop((nr == SYS_seccomp && arg0 == SECCOMP_SET_MODE_STRICT) ||
                               (nr == SYS_prctl && arg1 == SECCOMP_MODE_STRICT));
    return 1;
}

void instr__sandbox_call_site(int strict)
{
    if (instr__may_syscall()) {
        instr__sandbox_enter("the program installs a seccomp filter (seen at its call site)");
        last_call();
    }
    instr__sandbox_thread_stop(strict);
}

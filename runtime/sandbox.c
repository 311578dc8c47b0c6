/* sandbox.c - may the runtime make a system call now?
 *
 * A program may put itself in a seccomp sandbox (a filter, or strict mode)
 * and go on computing.  The filter was written for the program's own
 * system calls, not for the runtime's: an open, mmap or munmap of a chunk
 * switch, a sigaction of the sud detector or a read of the thread CPU clock
 * would then fail, raise SIGSYS or kill the process.  So once a sandbox is
 * seen coming, the runtime makes no system call at all: recording stops,
 * every later event is counted as dropped in the header (shared memory, no
 * call needed), the header's detector_detail says why, and the program
 * runs on unchanged.  Nothing is said on stderr (the filter may forbid
 * that write too).
 *
 * Seen coming (before the filter exists):
 *  - with the sud detector, the interval's first system call traps into
 *    our SIGSYS handler before it runs: prctl(PR_SET_SECCOMP),
 *    prctl(PR_SET_NO_NEW_PRIVS) (what an unprivileged process must do
 *    first) and seccomp() stop recording there;
 * Not seen: without sud, or when the filter is installed by a later system
 * call of the same interval (a library such as libseccomp making several
 * calls between two hooks) - then the next runtime system call meets the
 * filter: refused with an errno, recording stops with one line on stderr;
 * a KILL or strict filter ends the process.  A filter inherited at start
 * (containers, systemd services) allowed the exec and is assumed to allow
 * the ordinary calls the runtime makes.
 *
 * Async-signal-safe: called from the SIGSYS handler.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

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
    /* "...; recording stopped: why", cut to the field. */
    static const char lead[] = "; recording stopped: ";
    char *d = h->detector_detail;
    size_t room = sizeof h->detector_detail - 1, used = strnlen(d, room);
    for (const char *s = lead; *s && used < room; s++)
        d[used++] = *s;
    for (const char *s = why; *s && used < room; s++)
        d[used++] = *s;
    d[used] = 0;
}

int instr__sandbox_syscall(long nr, unsigned long arg0)
{
    if (nr == SYS_seccomp || (nr == SYS_prctl && arg0 == PR_SET_SECCOMP)) {
        instr__sandbox_enter("the program installs a seccomp filter");
        return 1;
    }
    if (nr == SYS_prctl && arg0 == PR_SET_NO_NEW_PRIVS) {
        instr__sandbox_enter("the program sets no_new_privs (a seccomp filter follows)");
        return 1;
    }
    return 0;
}

/* foreign-task.c - is the task running a hook the owner of its thread state?
 *
 * A child made by clone(CLONE_VM) without CLONE_THREAD (posix_spawn-like
 * helpers, some language runtimes) shares its parent's memory and TLS
 * pointer, so its hooks find the parent thread's state and would write into
 * it at the same time as the parent: a corrupt stream, a crash or a hang.
 * Such a child runs on a stack of its own, so its first hook's CFA lies far
 * from the top frame of the parent's shadow stack.  The fast paths send a
 * CFA more than INSTR_RT_STACK_SPAN away to the slow paths, which ask here
 * before touching the state: one gettid, only for such jumps (a signal
 * handler on an alternate stack, a coroutine, a longjmp repair, the first
 * frame of a thread).  A foreign task records nothing and writes nothing.
 *
 * A vfork child (the parent waits) runs on the parent's own stack: its
 * calls land in the parent's stream, as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"

int instr__foreign_task(const struct instr__thread *t)
{
    int saved = errno;
    /* Our own syscall must not look like the program's to the sud
     * detector: the selector is put back as it was. */
    uint8_t sel = instr__sud_state[0];
    instr__sud_state[0] = INSTR__SUD_ALLOW;
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    instr__sud_state[0] = sel;
    errno = saved;
    return tid != t->tid;
}

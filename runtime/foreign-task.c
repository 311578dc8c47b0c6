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
#include <sys/syscall.h>

#include "detector.h"
#include "internal.h"

int instr__foreign_task(const struct instr__thread *t)
{
    /* The sud selector is left alone: it is shared with the other task,
     * whose own put-back of a stale value could leave the owner trapping
     * its syscalls with every signal blocked (a kill by SIGSYS).  The
     * other task never traps (the kernel clears syscall user dispatch in a
     * clone); the owner, asking this on another stack (a handler on its
     * alternate stack, with maybe no room for a SIGSYS frame), does not
     * either: instr__own_syscall is the region sud always allows. */
    return (uint32_t)instr__own_syscall(SYS_gettid, 0, 0, 0) != t->tid;
}

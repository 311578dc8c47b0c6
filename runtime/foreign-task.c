/* foreign-task.c - is the task running a hook the owner of its thread state?
 *
 * A child made by clone(CLONE_VM) without CLONE_THREAD (posix_spawn-like
 * helpers, some language runtimes) shares its parent's memory and TLS
 * pointer, so its hooks find the parent thread's state and would write into
 * it at the same time as the parent: a corrupt stream, a crash or a hang.
 * Such a child runs on a stack of its own, so its first hook's CFA lies far
 * from the top frame of the parent's shadow stack.  The fast paths send a
 * CFA more than INSTR_RT_STACK_SPAN away to the slow paths, which ask here
 * before touching the state (a signal handler on an alternate stack, a
 * coroutine, a longjmp repair, the first frame of a thread, or such a
 * child).  A foreign task records nothing and writes nothing of the stream.
 *
 * Only a system call (gettid) tells the tasks apart, and such a child sends
 * every one of its hooks here: one gettid per hook made a child computing
 * beside its parent thousands of times slower.  So ownership is decided per
 * stack: a gettid that finds a foreign task notes the stack around its CFA
 * (INSTR_RT_STACK_SPAN either side), and later hooks there are foreign
 * without a system call.  The note is asked again after FOREIGN_TRUST hooks
 * (one gettid in FOREIGN_TRUST: nothing against a hook's cost), and
 * forgotten as soon as the owner is found on a far stack.  What that
 * leaves: should the owner itself come to run on memory a foreign task ran
 * on (the child ended and its stack was given to the owner, as a coroutine
 * stack), its first hooks there, up to FOREIGN_TRUST of them, are taken for
 * the child's and not recorded.  The note's fields are written by foreign
 * tasks, maybe several at once: a torn or stale note only costs a gettid
 * (a foreign task not in it) or those hooks (the owner in it).
 *
 * A vfork child (the parent waits) runs on the parent's own stack: its
 * calls land in the parent's stream, as before.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>

#include "detector.h"
#include "internal.h"

#define FOREIGN_TRUST 4096u

int instr__foreign_task(struct instr__thread *t, uintptr_t cfa)
{
    uint32_t left = __atomic_load_n(&t->foreign_left, __ATOMIC_RELAXED);
    if (left && cfa - __atomic_load_n(&t->foreign_lo, __ATOMIC_RELAXED) < 2 * (uintptr_t)INSTR_RT_STACK_SPAN) {
        __atomic_store_n(&t->foreign_left, left - 1, __ATOMIC_RELAXED);
        return 1;
    }
    /* The sud selector is left alone: it is shared with the other task,
     * whose own put-back of a stale value could leave the owner trapping
     * its syscalls with every signal blocked (a kill by SIGSYS).  The
     * other task never traps (the kernel clears syscall user dispatch in a
     * clone); the owner, asking this on another stack (a handler on its
     * alternate stack, with maybe no room for a SIGSYS frame), does not
     * either: instr__own_syscall is the region sud always allows. */
    int foreign = (uint32_t)instr__own_syscall(SYS_gettid, 0, 0, 0) != t->tid;
    /* The static states (no owner, tid 0) are never written. */
    if (foreign && t->tid) {
        __atomic_store_n(&t->foreign_lo, cfa - INSTR_RT_STACK_SPAN, __ATOMIC_RELAXED);
        __atomic_store_n(&t->foreign_left, FOREIGN_TRUST - 1, __ATOMIC_RELAXED);
    } else if (!foreign && left) {
        __atomic_store_n(&t->foreign_left, 0, __ATOMIC_RELAXED);
    }
    return foreign;
}

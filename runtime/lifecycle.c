/* lifecycle.c - process exit and fork.
 *
 * Exit: on_exit (registered at the first bind, so it runs after every
 * atexit handler registered later, and gets the exit status) completes the
 * header, names the live threads and reads their CPU clocks (EXIT_CPU).  It closes nothing: instrumented
 * destructors run after it and their events still land in the live chunks
 * (whose used_bytes stays 0: the reader scans to the first zero byte).
 *
 * It returns at once in a vfork child that calls exit() instead of _exit():
 * the child shares the parent's memory, and the header is the parent's.
 * A process ended by a fatal signal never gets here: fatal-signals.c.
 *
 * _exit (a fork child's usual end: Redis's BGSAVE) skips on_exit.  Called
 * from instrumented code, the plugin's __instr_ending hook before it ends
 * the dump as at_exit does (instr__hook_ending).  From uninstrumented
 * code (a library's), its exit_group is seen before it runs when it is the
 * first system call after a hook (the call hook re-arms the sud trap,
 * detector-sud.c): instr__exit_group_seen then
 * records the end as at_exit would, with header stores only (it runs in
 * the SIGSYS handler).  What it leaves out: the thread names (read at the
 * report from the dump's tids only).  Not seen (no
 * sud, or another system call between the last hook and _exit): the dump
 * stays incomplete, as before.
 *
 * Fork: the child gets a dump of its own (INSTR_OUTPUT expanded again with
 * its pid), flagged FORK_CHILD, with the MODULE and FUNCTION records written
 * again under the same ids, at its first hook (a child that execs or exits
 * without running instrumented code has none); the forking thread, the
 * only one left, re-enters its open frames then.  The parent's dump is
 * never written by the child.  Sent signals wait (blocked) from before the
 * fork to the end of the child's handler, and again while its dump is
 * made; a fatal one before the first hook makes the dump and ends it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"

static void at_exit(int status, void *arg)
{
    (void)arg;
    struct instr_dump_header *h = instr__rt.header;
    /* Sandboxed (sandbox.c): getpid is a system call too; a vfork child
     * that calls exit() there is not told apart. */
    if (!h || (instr__may_syscall() && h->pid != (uint64_t)instr__getpid()))
        return;
    int saved = errno;
    struct instr__thread *t = instr__thread_own(instr__tls);
    uintptr_t was_busy = 1;
    if (t) {
        was_busy = t->busy;
        t->busy = 1;
        if (!INSTR__BUSY_IS_HOOK(was_busy) && instr__may_syscall())
            instr__deferred_flush_now(t); /* a switch a handler left waiting */
    }
    int calls = instr__may_syscall(); /* sandbox.c: only header stores then */
    if (calls)
        instr__thread_names_all();
    if (calls && !instr__tsc_gone)
        instr__thread_cpu_all(0); /* which threads were blocked in the kernel */
    if (calls)
        instr__count_flush(); /* count mode: the counts */
    if (calls) {
        instr__filter_flush_all();
        instr__filter_say_unmatched(); /* into the header's notes: the report says it */
    }
    if (!instr__tsc_gone) /* else the last event ends it (sandbox.c) */
        instr__header_end(h);
    h->exit_status = status;
    __atomic_fetch_or(&h->flags, INSTR_DUMP_COMPLETE, __ATOMIC_RELEASE);
    if (calls && t)
        instr__sampler_last_drain(t);
    if (t) {
        instr__detector_rearm(t);
        t->busy = was_busy;
    }
    errno = saved;
}

/* Slot INSTR_SLOT_ENDING: instrumented code calls _exit, _Exit or
 * quick_exit next, which run no exit handler: the end is recorded here as
 * exit() would record it (a vfork child's is its parent's header: left
 * alone, as at exit). */
void instr__hook_ending(long status)
{
    at_exit((int)status, NULL);
}

void instr__exit_group_seen(int status)
{
    struct instr_dump_header *h = instr__rt.header;
    /* A vfork child's _exit: the header is its parent's.  Count mode's
     * counts are written by at_exit only: without them the dump stays
     * incomplete ("no counts") rather than complete and empty. */
    if (!h || (h->flags & INSTR_DUMP_COUNTS) || (instr__may_syscall() && h->pid != (uint64_t)instr__getpid()) ||
        (__atomic_load_n(&h->flags, __ATOMIC_ACQUIRE) & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED)))
        return;
    /* The filters' counts of the exiting thread (header stores only): a
     * fork child's whole count; other threads' unflushed counts are lost
     * (their list is walked under a lock). */
    struct instr__thread *t = instr__thread_own(instr__tls);
    if (t && instr__filter.any)
        instr__filter_flush(t);
    if (!instr__tsc_gone)
        instr__header_end(h);
    h->exit_status = status;
    __atomic_fetch_or(&h->flags, INSTR_DUMP_COMPLETE, __ATOMIC_RELEASE);
}

/* The forking thread's signal mask before fork: the sent signals are
 * blocked from before the fork to the end of the child's dump setup, so
 * that a SIGTERM to the process group (kill(0, ...) right after fork) waits
 * for the child's dump to exist and then ends it as SIGNALED, instead of
 * killing the child with a dump file created but not yet written (a file
 * no reader takes).  Faults stay deliverable (blocked, they kill), and so
 * does SIGSYS (the sud detector's trap). */
static __thread sigset_t fork_mask __attribute__((tls_model("initial-exec")));
static __thread int fork_masked __attribute__((tls_model("initial-exec")));

static void block_sent_signals(void)
{
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    sigset_t all;
    sigfillset(&all);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&all, faults[i]);
    fork_masked = instr__may_syscall() && !pthread_sigmask(SIG_BLOCK, &all, &fork_mask);
}

static void unblock_sent_signals(void)
{
    if (fork_masked) {
        fork_masked = 0;
        pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
    }
}

static void before_fork(void)
{
    block_sent_signals();
    pthread_mutex_lock(&instr__rt.meta_lock);
    pthread_mutex_lock(&instr__rt.chunk_lock);
}

static void parent_after_fork(void)
{
    pthread_mutex_unlock(&instr__rt.chunk_lock);
    pthread_mutex_unlock(&instr__rt.meta_lock);
    int saved = errno;
    unblock_sent_signals();
    errno = saved;
}

/* A fork child whose dump is not made yet (instr__rt.fork_pending): whether
 * it was tried, and the forking thread with its state, until it resumes. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int made;                  /* the dump was tried */
    pthread_t self;            /* the forking thread */
    struct instr__thread *t;   /* its state, its open frames kept; NULL once resumed */
} pending;

/* The forking thread goes on in the child's new dump: its detectors are
 * the child's (SUD and perf events belong to the parent's thread), its
 * open frames are entered again, and it samples again. */
static void resume_thread(struct instr__thread *t)
{
    instr__detector_fork_child(t);
    pthread_mutex_lock(&instr__rt.meta_lock);
    t->next = instr__rt.threads;
    instr__rt.threads = t;
    pthread_mutex_unlock(&instr__rt.meta_lock);
    pthread_setspecific(instr__rt.key, t);
    instr__thread_restart(t);
    instr__sampler_fork_child(t);
    t->busy = 0;
}

/* The child's dump: created, with the MODULE and FUNCTION records written
 * again under the same ids.  -1 if it cannot be made (nothing recorded). */
static int child_dump(void)
{
    if (instr__dump_create(INSTR_DUMP_FORK_CHILD)) {
        instr__chunk_unmap(&instr__rt.meta_stage);
        instr__rt.meta = NULL;
        return -1;
    }
    instr__count_fork_child();
    pthread_mutex_lock(&instr__rt.meta_lock);
    instr__meta_reemit();
    instr__labels_reemit();
    pthread_mutex_unlock(&instr__rt.meta_lock);
    return 0;
}

/* A hook (or the API) of a fork child whose dump is pending, on a thread
 * without a state (thread-state.c): the dump is made now, by whichever
 * thread comes first; the forking thread takes its state back, which is
 * returned (NULL for any other thread, which makes one of its own).  Sent
 * signals wait meanwhile, as during an eager child's set-up.  From a
 * fatal signal's handler (in_signal): only if no other thread is at it,
 * and the forking thread's state becomes the thread's own at once. */
static struct instr__thread *resume(int in_signal)
{
    struct instr__thread *mine = NULL;
    if (!in_signal)
        block_sent_signals();
    if (in_signal ? pthread_mutex_trylock(&pending_lock) : pthread_mutex_lock(&pending_lock))
        return NULL;
    if (!pending.made) {
        pending.made = 1;
        if (child_dump() && pending.t) {
            instr__chunk_unmap(&pending.t->stage);
            instr__thread_unmap(pending.t);
            pending.t = NULL;
        }
    }
    if (pending.t && pthread_equal(pthread_self(), pending.self)) {
        mine = pending.t;
        pending.t = NULL;
        resume_thread(mine);
        if (in_signal)
            instr__tls = mine;
    }
    if (!pending.t)
        __atomic_store_n(&instr__rt.fork_pending, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pending_lock);
    if (!in_signal)
        unblock_sent_signals();
    return mine;
}

struct instr__thread *instr__fork_child_resume(void)
{
    return resume(0);
}

/* A fatal signal in a fork child that has not hooked yet (fatal-signals.c):
 * its dump is made, so that it says how the child ended (a child killed as
 * it is born, before it returns from fork into instrumented code). */
void instr__fork_child_signalled(void)
{
    /* The thread may be at its first hook, before it took the lock (its
     * state idle meanwhile): the handler makes the dump in its stead. */
    if (__atomic_load_n(&instr__rt.fork_pending, __ATOMIC_ACQUIRE) && instr__thread_own(instr__tls) == NULL)
        resume(1);
}

/* Fork child.  Its dump waits for its first hook (instr__fork_child_resume):
 * a child that runs no instrumented code leaves none, so a fork and exec
 * made inside an uninstrumented library (Tcl's exec, a spawn helper)
 * leaves no dump without an end, and costs what a plain fork costs.  Until
 * then nothing of the parent's dump is mapped or written.  Count mode
 * counts without hooks, and switchable code calls none while the switch
 * is off: their child's dump is made at once, as is the dump of a child
 * whose forking thread records nothing. */
static void child_after_fork(void)
{
    int saved = errno;
    pthread_mutex_init(&instr__rt.chunk_lock, NULL);
    pthread_mutex_init(&instr__rt.meta_lock, NULL);
    pthread_mutex_init(&pending_lock, NULL);
    if (!instr__rt.header)
        goto out;
    struct instr__thread *t = instr__thread_own(instr__tls);
    if (t) {
        t->busy = 1;
        instr__detector_fork_forget(t);
    }
    /* A thread stopped by the parent's limit (instr__thread_stopped) has
     * a state whose shadow stack stopped following its calls: the child
     * lets it go with the others and starts this thread afresh at its
     * next hook, in its own dump (its frames open now end as unmatched
     * exits). */
    int fresh = !t && instr__tls == &instr__lost_thread && instr__may_syscall() &&
                pthread_getspecific(instr__rt.key);
    if (fresh)
        pthread_setspecific(instr__rt.key, NULL);
    /* Made now when no hook may make it: count mode, the switch off
     * (switchable code's hooks are not called then), or a forking thread
     * that records nothing (the runtime's own, or lost for good: its
     * events are counted as dropped in the child's dump). */
    int eager = instr__count_active() || instr__switch_off() || !(t || fresh || !instr__tls);
    /* Let go of the parent's file without touching it. */
    munmap(instr__rt.header, INSTR_DUMP_HEADER_SIZE);
    instr__rt.header = NULL;
    instr__thread_drop_others(t);
    instr__rt.next_thread_index = 0;
    instr__rt.stack_overflows = 0;
    if (eager) {
        if (child_dump()) {
            if (t) {
                instr__chunk_unmap(&t->stage);
                instr__rt.threads = NULL;
                instr__tls = &instr__idle_thread;
                instr__thread_unmap(t);
            }
            if (fresh)
                instr__tls = &instr__idle_thread;
            goto out;
        }
        if (fresh)
            instr__tls = NULL;
        if (t) {
            instr__rt.threads = NULL; /* resume_thread puts it back */
            resume_thread(t);
        }
        goto out;
    }
    instr__dump_detach();
    instr__chunk_unmap(&instr__rt.meta_stage);
    instr__rt.meta = NULL;
    instr__rt.threads = NULL;
    pending.made = 0;
    pending.self = pthread_self();
    pending.t = t;
    if (t) {
        instr__chunk_unmap(&t->stage); /* the parent's: leave it as it is */
        t->chunk = NULL;
        pthread_setspecific(instr__rt.key, NULL); /* its end, if before any hook: nothing */
    }
    if (t || fresh)
        instr__tls = NULL;
    __atomic_store_n(&instr__rt.fork_pending, 1, __ATOMIC_RELEASE);
out:
    unblock_sent_signals(); /* a signal sent meanwhile is delivered now */
    errno = saved;
}

int instr__lifecycle_init(void)
{
    if (on_exit(at_exit, NULL)) {
        instr__say("cannot register the exit handler", "", "", "; not recording");
        return -1;
    }
    if (pthread_atfork(before_fork, parent_after_fork, child_after_fork))
        instr__say("cannot register fork handlers: forked children are not recorded", "", "", "");
    instr__fatal_signals_init();
    instr__calibrate(); /* the hooks' cost with these detectors, before any hook records */
    return 0;
}

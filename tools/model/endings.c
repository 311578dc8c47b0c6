/* endings.c - how a process that did not finish ended, when its record
 * stops inside a call that does not return: exec, _exit, daemon(),
 * MPI_Abort.
 *
 * The runtime gets no control at exec or _exit (no atexit handler runs,
 * and exec replaces its code), so such a dump has no end record and first
 * reads as unfinished.  But the call was recorded: the calling thread's
 * innermost open frame is the call-site frame of execvp, _exit or daemon,
 * and no other thread went on after it.  An exec with no call-site frame
 * to show it (from uninstrumented code, or callsites=none) is known when
 * the session holds the dump of the program that replaced it (same pid
 * and parent, started later); otherwise the dump keeps the reader's "did
 * not finish". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Callees that do not return to their caller when they succeed. */
static const struct ending {
    const char *callee;
    const char *how;
} endings[] = {
    {"execve", "replaced by exec"},   {"execv", "replaced by exec"},     {"execvp", "replaced by exec"},
    {"execvpe", "replaced by exec"},  {"execl", "replaced by exec"},     {"execlp", "replaced by exec"},
    {"execle", "replaced by exec"},   {"fexecve", "replaced by exec"},   {"execveat", "replaced by exec"},
    {"_exit", "ended by _exit"},      {"_Exit", "ended by _exit"},       {"quick_exit", "ended by quick_exit"},
    {"daemon", "ended in daemon(), whose parent half leaves with _exit (the daemon goes on as its fork child)"},
    /* Open MPI's leaves with _exit (the code given); MPICH's rank is
     * killed by its launcher: either way no end record. */
    {"MPI_Abort", "ended by MPI_Abort"},
    {"PMPI_Abort", "ended by MPI_Abort"},
};

/* Whether dump d has no end of its own to say: not complete, signalled,
 * sampled or counted. */
static int unended(const struct instr_dump *d)
{
    return !(d->hdr.flags & (INSTR_DUMP_COMPLETE | INSTR_DUMP_SIGNALED | INSTR_DUMP_SAMPLED | INSTR_DUMP_COUNTS |
                             INSTR_DUMP_SAMPLING_CUT));
}

/* The ending of dump i (an index in endings) and the thread whose record
 * ends in it; -1 when its record ends otherwise. */
static int ending_of(const struct instr_session *s, size_t i, const struct instr_pthread **thread)
{
    const struct instr_dump *d = &s->dumps[i];
    const struct instr_profile *p = &s->profiles[i];
    if (!unended(d))
        return -1;
    /* The thread that went on longest: the one that called. */
    const struct instr_pthread *last = NULL;
    for (size_t t = 0; t < p->nthreads; t++)
        if (!last || p->threads[t].end_tick > last->end_tick)
            last = &p->threads[t];
    if (!last || last->open_top >= p->nfuncs || !p->funcs[last->open_top].pseudo)
        return -1;
    for (size_t k = 0; k < sizeof endings / sizeof *endings; k++)
        if (!strcmp(endings[k].callee, p->funcs[last->open_top].pseudo)) {
            *thread = last;
            return (int)k;
        }
    return -1;
}

/* The dump of the program that replaced dump i's by an exec made where no
 * call-site frame shows it (an uninstrumented library, callsites=none),
 * when the session has it: the earliest later dump of the same pid,
 * parent and host that is not a fork child (the exec keeps the pid and the
 * parent; a reused pid would need the same parent too).  NULL if none. */
static const struct instr_dump *exec_successor(const struct instr_session *s, size_t i)
{
    const struct instr_dump *d = &s->dumps[i], *next = NULL;
    if (!unended(d))
        return NULL;
    for (size_t j = 0; j < s->ndumps; j++) {
        const struct instr_dump *e = &s->dumps[j];
        if (j != i && e->hdr.pid == d->hdr.pid && e->hdr.ppid == d->hdr.ppid &&
            !strncmp(e->hdr.host, d->hdr.host, sizeof d->hdr.host) && !(e->hdr.flags & INSTR_DUMP_FORK_CHILD) &&
            e->hdr.start_mono_ns > d->hdr.start_mono_ns && (!next || e->hdr.start_mono_ns < next->hdr.start_mono_ns))
            next = e;
    }
    return next;
}

int instr_session_ending(const struct instr_session *s, size_t i, char *buf, size_t len)
{
    const struct instr_profile *p = &s->profiles[i];
    const struct instr_pthread *last;
    int k = ending_of(s, i, &last);
    if (k < 0) {
        const struct instr_dump *next = exec_successor(s, i);
        if (!next)
            return 0;
        const char *exe = strrchr(next->hdr.exe_path, '/');
        snprintf(buf, len, "replaced by exec: pid %" PRIu64 " went on as %s, whose dump is %s", next->hdr.pid,
                 exe ? exe + 1 : next->hdr.exe_path, next->path);
        return 1;
    }
    const char *callee = endings[k].callee;
    char *caller = last->open_caller < p->nfuncs ? instr_profile_func_name(p, last->open_caller) : NULL;
    snprintf(buf, len, "%s: %s%s%s%s did not return", endings[k].how, callee, caller ? ", called from " : "",
             caller ? caller : "", caller ? "," : "");
    free(caller);
    return 1;
}

const char *instr_session_ending_call(const struct instr_session *s, size_t i)
{
    const struct instr_pthread *last;
    int k = ending_of(s, i, &last);
    return k < 0 ? NULL : endings[k].callee;
}

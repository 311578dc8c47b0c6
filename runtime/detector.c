/* detector.c - choosing the detector set (INSTR_DETECTOR) and the slow
 * part of the check.
 *
 * INSTR_DETECTOR=auto (default) runs every backend this kernel and these
 * permissions allow, each proved by its own start-up self-test;
 * INSTR_DETECTOR=none runs none; otherwise a list of names joined by '+'
 * or ',' (rseq_cs, sud, perf, rdpmc) asks for exactly those, and each one
 * that cannot run is named (log.c, INSTR_LOG) with its reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <string.h>

#include "detector.h"

struct instr__detector_info instr__detector;

static int wanted(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, "+,");
        if (k == n && !strncmp(p, name, n))
            return 1;
        p += k;
        p += *p != 0;
    }
    return 0;
}

static void detail_add(const char *s)
{
    char *d = instr__detector.detail;
    size_t used = strlen(d), room = sizeof instr__detector.detail - 1 - used;
    if (room > 2 && used) {
        strcat(d, "; ");
        room -= 2;
    }
    strncat(d, s, room);
}

/* In the order they are tried (and named in the report's detail).  A new
 * backend: its file, and its row here. */
static const struct instr__detector_ops *const backends[] = {
    &instr__det_rseq,
    &instr__det_sud,
    &instr__det_perf,
    &instr__det_rdpmc,
    &instr__det_cpuclock,
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

/* Fork child, the forking thread t (lifecycle.c): each backend's own rule
 * (SUD and perf events belong to the parent's thread, rseq_cs is
 * inherited).  At the fork, what the parent's thread held is let go of
 * (the perf ring is not mapped in a child: its range is freed before the
 * child maps anything there); on the child's thread, when it records
 * again, each backend arms anew, and the restart that follows re-arms. */
void instr__detector_fork_forget(struct instr__thread *t)
{
    int saved = errno;
    for (size_t i = 0; i < NBACKENDS; i++) {
        const struct instr__detector_ops *b = backends[i];
        if ((instr__detector.set & (1u << b->id)) && !b->fork_child && b->restart &&
            (t->det.on & b->on) && b->thread_end)
            b->thread_end(t);
    }
    errno = saved;
}

void instr__detector_fork_child(struct instr__thread *t)
{
    int saved = errno;
    for (size_t i = 0; i < NBACKENDS; i++) {
        const struct instr__detector_ops *b = backends[i];
        if (!(instr__detector.set & (1u << b->id)))
            continue;
        if (b->fork_child)
            b->fork_child(t);
        else if (b->restart) /* the parent's thread's: a new one for the child */
            b->thread(t);
    }
    errno = saved;
}

void instr__detector_init(void)
{
    const char *want = secure_getenv("INSTR_DETECTOR");
    struct instr__detector_info *info = &instr__detector;
    char why[128];
    memset(info, 0, sizeof *info);
    if (!want || !*want)
        want = "auto";
    if (!strcmp(want, "none")) {
        snprintf(info->detail, sizeof info->detail, "none (INSTR_DETECTOR=none)");
        return;
    }
    int all = !strcmp(want, "auto");
    if (!all) {
        char copy[256];
        int known = 0;
        snprintf(copy, sizeof copy, "%s", want);
        for (char *sv, *tok = strtok_r(copy, "+,", &sv); tok; tok = strtok_r(NULL, "+,", &sv)) {
            size_t i = 0;
            while (i < NBACKENDS && strcmp(tok, backends[i]->name))
                i++;
            if (i == NBACKENDS)
                instr__say("unknown detector '", tok, "' in INSTR_DETECTOR", ", ignored");
            known |= i < NBACKENDS;
        }
        /* Nothing left that names a backend (a typo): the default, said,
         * rather than no detector at all (Application = Elapsed). */
        if (!known) {
            instr__say("INSTR_DETECTOR=", want, " names no detector", "; using auto");
            all = 1;
        }
    }
    /* Each backend: on if asked for (or auto) and its self-test passes. */
    for (size_t i = 0; i < NBACKENDS; i++) {
        const struct instr__detector_ops *b = backends[i];
        if (!all && !wanted(want, b->name))
            continue;
        if (all && b->absent)
            continue; /* not on this architecture: auto need not say so each time */
        int saved = errno, rc = b->init(why, sizeof why);
        errno = saved;
        if (rc == 0) {
            info->set |= 1u << b->id;
            info->sees |= b->sees;
            if (!info->kind && b->is_kind)
                info->kind = b->id;
            detail_add(b->name);
        } else {
            detail_add(why);
            if (!all)
                instr__say("detector ", b->name, " unavailable: ", why);
        }
    }
}

unsigned instr__detector_sees_besides(unsigned id)
{
    unsigned sees = 0;
    for (size_t i = 0; i < NBACKENDS; i++)
        if (backends[i]->id != id && (instr__detector.set >> backends[i]->id & 1))
            sees |= backends[i]->sees;
    return sees;
}

void instr__detector_withdraw(void)
{
    int saved = errno;
    for (size_t i = 0; i < NBACKENDS; i++)
        if ((instr__detector.set >> backends[i]->id & 1) && backends[i]->withdraw)
            backends[i]->withdraw();
    errno = saved;
}

void instr__detector_thread(struct instr__thread *t)
{
    int saved = errno;
    instr__detector_none_thread(t);
    for (size_t i = 0; i < NBACKENDS; i++)
        if (instr__detector.set & (1u << backends[i]->id))
            backends[i]->thread(t);
    errno = saved;
}

void instr__detector_thread_end(struct instr__thread *t)
{
    int saved = errno;
    for (size_t i = NBACKENDS; i-- > 0;)
        if ((instr__detector.set & (1u << backends[i]->id)) && backends[i]->thread_end)
            backends[i]->thread_end(t);
    instr__detector_none_thread(t);
    errno = saved;
}

/* Something changed: say what, then re-arm.  v and p are the values the
 * check read from det_word and pf_word. */
__attribute__((noinline)) unsigned instr__detector_fired(struct instr__thread *t, uint64_t v,
                                                         uint64_t p)
{
    unsigned bits = 0, sched = 0;
    if (v != t->det_armed)
        sched = v == 0 ? INSTR_OS_SCHED : INSTR_OS_UNKNOWN; /* else: a library's own rseq_cs */
    if (instr__sud_state[0] != INSTR__SUD_BLOCK)
        bits |= instr__sud_fired(t);
    if (p != t->det.pf_armed) {
        unsigned k = instr__perf_kinds(t, t->det.pf_armed, p);
        bits |= k;
        /* rseq cleared but the ring saw no switch: a signal (or other work
         * the kernel did on the way back to user space). */
        if (sched == INSTR_OS_SCHED && !(k & INSTR_OS_SCHED))
            sched = INSTR_OS_SIGNAL;
    } else if (sched == INSTR_OS_SCHED && (t->det.on & INSTR__DET_ON_PERF)) {
        sched = INSTR_OS_SIGNAL;
    }
    bits |= sched;
    if (INSTR_UNLIKELY(t->det.on & INSTR__DET_ON_SUD_PAUSED))
        instr__sud_resume(t);
    /* perf's event, due: opened in this stretch, which the hook cuts as the
     * detectors' when something fired (bits), as here. */
    if (INSTR_UNLIKELY(t->det.perf_due_ns) && bits)
        instr__perf_late(t);
    instr__detector_rearm(t);
    /* The hook read the TSC, then this word: a switch (or signal) that
     * came between the two lies after the event's tick, in the interval
     * that starts here, yet only this check sees it.  The word cannot say
     * on which side it fell, so both intervals are flagged: the next one
     * too (one hook-to-hook interval, left out of Application), rather
     * than a whole off-CPU period counted as Application. */
    unsigned async = bits & (INSTR_OS_SCHED | INSTR_OS_SIGNAL | INSTR_OS_IRQ | INSTR_OS_UNKNOWN);
    if (async)
        t->pending_bits |= async;
    return bits;
}

/* The kernel ran instructions on this thread since the last check: what the
 * other backends already explained (seen) keeps its kinds; anything else was
 * an interrupt (or kernel work no other backend watches). */
__attribute__((noinline)) unsigned instr__rdpmc_fired(struct instr__thread *t, unsigned seen)
{
    uint64_t c = instr__rdpmc_read(t->det.pmc_page);
    if (c == t->det.pmc_armed)
        return seen;
    t->det.pmc_armed = c;
    if (seen)
        return seen;
    t->pending_bits |= INSTR_OS_IRQ; /* either side of the tick: see above */
    return INSTR_OS_IRQ;
}

int instr__perf_open(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
    a->size = sizeof *a;
    a->type = type;
    a->config = config;
    a->exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

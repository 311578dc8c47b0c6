/* detector.c - choosing the detector set (INSTR_DETECTOR) and the slow
 * part of the check.
 *
 * INSTR_DETECTOR=auto (default) runs every backend this kernel and these
 * permissions allow, each proved by its own start-up self-test;
 * INSTR_DETECTOR=none runs none; otherwise a list of names joined by '+'
 * or ',' (rseq_cs, sud, perf, rdpmc) asks for exactly those, and each one
 * that cannot run is named on stderr with its reason.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detector.h"

struct instr__detector_info instr__detector;

#define BIT(d) (1u << INSTR_DETECTOR_##d)

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

/* Arms the backends in set on thread t. */
static void arm(struct instr__thread *t, uint32_t set)
{
    if (set & BIT(RSEQ_CS))
        instr__rseq_thread(t);
    if (set & BIT(SUD))
        instr__sud_thread(t);
    if (set & BIT(PERF))
        instr__perf_thread(t);
    if (set & BIT(RDPMC))
        instr__rdpmc_thread(t);
    if (set & BIT(CPUCLOCK))
        instr__cpuclock_thread(t);
}

/* Fork child: SUD and the perf events belong to the parent's thread.  Runs
 * before lifecycle.c's child handler (registered earlier), which re-arms. */
static void child_after_fork(void)
{
    struct instr__thread *t = instr__tls;
    if (!t || t == &instr__idle_thread)
        return;
    if (t->det_on & INSTR__DET_ON_PERF)
        instr__perf_thread_end(t);
    if (t->det_on & INSTR__DET_ON_RDPMC)
        instr__rdpmc_thread_end(t);
    t->det_on &= ~(INSTR__DET_ON_SUD | INSTR__DET_ON_PERF); /* SUD is not inherited */
    /* rseq_cs stays armed (the area is per thread, inherited); the child's
     * CPU clock starts anew. */
    arm(t, instr__detector.set & ~BIT(RSEQ_CS));
}

/* In the order they are tried (and named in the report's detail). */
static const struct backend {
    const char *name;
    unsigned bit;
    int (*init)(char *why, size_t n); /* probe and self-test: 0, or -1 and why */
} backends[] = {
    {"rseq_cs", BIT(RSEQ_CS), instr__rseq_init},
    {"sud", BIT(SUD), instr__sud_init},
    {"perf", BIT(PERF), instr__perf_init},
    {"rdpmc", BIT(RDPMC), instr__rdpmc_init},
    /* not a detector of its own: exact off-CPU time where the others fire */
    {"cpuclock", BIT(CPUCLOCK), instr__cpuclock_init},
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

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
        snprintf(copy, sizeof copy, "%s", want);
        for (char *sv, *tok = strtok_r(copy, "+,", &sv); tok; tok = strtok_r(NULL, "+,", &sv)) {
            size_t i = 0;
            while (i < NBACKENDS && strcmp(tok, backends[i].name))
                i++;
            if (i == NBACKENDS)
                instr__say("unknown detector '", tok, "' in INSTR_DETECTOR", ", ignored");
        }
    }
    /* Each backend: on if asked for (or auto) and its self-test passes. */
    for (size_t i = 0; i < NBACKENDS; i++) {
        const struct backend *b = &backends[i];
        if (!all && !wanted(want, b->name))
            continue;
        if (b->init(why, sizeof why) == 0) {
            info->set |= b->bit;
            detail_add(b->name);
        } else {
            detail_add(why);
            if (!all)
                instr__say("detector ", b->name, " unavailable: ", why);
        }
    }
    if (info->set & BIT(RSEQ_CS)) {
        info->kind = INSTR_DETECTOR_RSEQ_CS;
        /* A signal clears rseq_cs like a switch; told apart only with sud
         * (the handler returns through rt_sigreturn) or perf (no switch
         * record).  Kernel task_work on return to user clears it too. */
        info->sees |= INSTR_OS_SCHED | INSTR_OS_SIGNAL | INSTR_OS_UNKNOWN;
    }
    if (info->set & BIT(SUD)) {
        if (!info->kind)
            info->kind = INSTR_DETECTOR_SUD;
        info->sees |= INSTR_OS_SYSCALL | INSTR_OS_SIGNAL;
    }
    if (info->set & BIT(PERF)) {
        if (!info->kind)
            info->kind = INSTR_DETECTOR_PERF;
        info->sees |= INSTR_OS_SCHED | INSTR_OS_FAULT;
    }
    if (info->set & BIT(RDPMC)) {
        if (!info->kind)
            info->kind = INSTR_DETECTOR_RDPMC;
        /* Kernel work on the thread of any kind; what no other backend
         * explains is reported as an interrupt. */
        info->sees |= INSTR_OS_SYSCALL | INSTR_OS_FAULT | INSTR_OS_SIGNAL | INSTR_OS_IRQ;
    }
    if (info->set & (BIT(SUD) | BIT(PERF) | BIT(RDPMC) | BIT(CPUCLOCK)))
        pthread_atfork(NULL, NULL, child_after_fork);
}

void instr__detector_thread(struct instr__thread *t)
{
    instr__detector_none_thread(t);
    arm(t, instr__detector.set);
}

void instr__detector_thread_end(struct instr__thread *t)
{
    if (t->det_on & INSTR__DET_ON_SUD)
        instr__sud_thread_end(t);
    if (t->det_on & INSTR__DET_ON_PERF)
        instr__perf_thread_end(t);
    if (t->det_on & INSTR__DET_ON_RDPMC)
        instr__rdpmc_thread_end(t);
    if (t->det_on & INSTR__DET_ON_RSEQ)
        instr__rseq_thread_end(t);
    instr__detector_none_thread(t);
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
    if (p != t->pf_armed) {
        unsigned k = instr__perf_kinds(t, t->pf_armed, p);
        bits |= k;
        /* rseq cleared but the ring saw no switch: a signal (or other work
         * the kernel did on the way back to user space). */
        if (sched == INSTR_OS_SCHED && !(k & INSTR_OS_SCHED))
            sched = INSTR_OS_SIGNAL;
    } else if (sched == INSTR_OS_SCHED && (t->det_on & INSTR__DET_ON_PERF)) {
        sched = INSTR_OS_SIGNAL;
    }
    bits |= sched;
    if (INSTR_UNLIKELY(t->det_on & INSTR__DET_ON_SUD_PAUSED))
        instr__sud_resume(t);
    instr__detector_rearm(t);
    return bits;
}

/* The kernel ran instructions on this thread since the last check: what the
 * other backends already explained (seen) keeps its kinds; anything else was
 * an interrupt (or kernel work no other backend watches). */
__attribute__((noinline)) unsigned instr__rdpmc_fired(struct instr__thread *t, unsigned seen)
{
    uint64_t c = instr__rdpmc_read(t->pmc_page);
    if (c == t->pmc_armed)
        return seen;
    t->pmc_armed = c;
    return seen ? seen : INSTR_OS_IRQ;
}

/* detector-perf.c - page faults and context switches from a per-thread perf
 * ring.
 *
 * perf: one software event per thread, PERF_COUNT_SW_PAGE_FAULTS with
 * sample_period 1 and exclude_kernel (the user's own faults, minor and
 * major), context_switch = 1 (a PERF_RECORD_SWITCH at every switch out and
 * in), mapped read-only (overwrite mode: nobody has to consume it).  The
 * hook watches data_head (t->det.pf_word); when it moved, the records written
 * since the last check say which kinds happened.  Needs perf_event_open
 * for the own thread (perf_event_paranoid <= 2, or CAP_PERFMON); costs two
 * pages per thread (the fd is closed once the ring is mapped: the mapping
 * holds the event, and the program's descriptor budget stays its own).
 * Exact on-CPU time (cap_user_time) is not used: it is not available on KVM guests with kvm-clock, where this was
 * built and tested.
 *
 * Opened late (INSTR_PERF_AFTER, default 1 ms): a thread's event is opened
 * at the first slow path (a chunk switch, another backend firing) once the
 * thread has run that long, and its page faults before then are not
 * watched (EXT UNSEEN's not-yet kinds: the report says how much time that
 * was).  The first page-fault event on a machine turns on a kernel static
 * key and the last one's close turns it off, each rewriting kernel text on
 * every CPU: on a VM about 0.1-0.2 ms an exec'd process, most of what the
 * detectors cost a short one (docs/performance.md).  A process that ends
 * within the delay never opens one.  INSTR_PERF_AFTER=0 opens it at each
 * thread's start, after a self-test at the process's start.
 * Interrupts are seen only by rdpmc (detector-rdpmc.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detector.h"

#define PAGE 4096u
#define DATA_PAGES 1u

static int open_event(void)
{
    struct perf_event_attr a = {
        .sample_period = 1,
        .sample_type = PERF_SAMPLE_ADDR, /* to tell our own faults from the program's */
        .exclude_kernel = 1,
        .context_switch = 1,
    };
    return instr__perf_open(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
}

static void *map_ring(int fd)
{
    void *m = mmap(NULL, (1 + DATA_PAGES) * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    return m == MAP_FAILED ? NULL : m;
}

static volatile uint64_t *head_of(void *m)
{
    return (volatile uint64_t *)&((struct perf_event_mmap_page *)m)->data_head;
}

static void arm(struct instr__thread *t, void *m)
{
    t->det.pf_map = m;
    t->det.pf_word = head_of(m);
    t->det.pf_armed = *t->det.pf_word;
    t->det.on |= INSTR__DET_ON_PERF;
}

/* A page fault must put a sample in the ring (the self-test: at start, or
 * at the process's first late open). */
static int faults_sampled(void *m)
{
    uint64_t h0 = *head_of(m);
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        *(volatile char *)p = 1;
        munmap(p, PAGE);
    }
    return *head_of(m) != h0;
}

/* INSTR_PERF_AFTER in ns (0: at the thread's start); the kinds only this
 * backend sees in the set that runs, unwatched until a thread's event is
 * open; whether a late open failed already (said once). */
static uint64_t after_ns = 1000000;
static uint8_t late_kinds;
static int late_failed;

static void read_after(void)
{
    const char *e = secure_getenv("INSTR_PERF_AFTER");
    if (!e || !*e)
        return;
    double ns = instr__parse_ns(e);
    if (ns < 0 || ns > 3600e9) {
        instr__say("INSTR_PERF_AFTER=", e, " is not a duration (0, 500us, 1ms, 2s)", "; using 1ms");
        return;
    }
    after_ns = (uint64_t)ns;
}

/* The self-test's ring, kept for the thread that made it (its first
 * perf_thread): opening and closing a perf event each toggle a kernel
 * static key, which rewrites kernel text on every CPU (about 0.1 ms on a
 * virtual machine: issue 39's profile), so the test's event is not closed
 * only to open the same one again. */
static void *spare;
static uint32_t spare_tid;

static int perf_init(char *why, size_t n)
{
    read_after();
    if (after_ns) {
        /* Whether this process may open perf events on its threads at all
         * (perf_event_paranoid, CAP_PERFMON, a seccomp filter): a dummy
         * event, which turns on no static key.  The self-test runs at the
         * first late open. */
        struct perf_event_attr a = {.exclude_kernel = 1};
        int fd = instr__perf_open(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
        if (fd < 0) {
            snprintf(why, n, "perf off: perf_event_open refused (%s)", strerror(errno));
            return -1;
        }
        close(fd);
        return 0;
    }
    int fd = open_event();
    if (fd < 0) {
        snprintf(why, n, "perf off: perf_event_open refused (%s)", strerror(errno));
        return -1;
    }
    void *m = map_ring(fd);
    if (!m) {
        snprintf(why, n, "perf off: cannot map the ring (%s)", strerror(errno));
        close(fd);
        return -1;
    }
    int sampled = faults_sampled(m);
    close(fd); /* the mapping keeps the event alive */
    if (!sampled) {
        munmap(m, (1 + DATA_PAGES) * PAGE);
        snprintf(why, n, "perf off: self-test failed (a page fault left no sample)");
        return -1;
    }
    spare = m;
    spare_tid = instr__gettid();
    return 0;
}

static void perf_thread(struct instr__thread *t)
{
    if (after_ns) {
        if (!late_kinds)
            late_kinds = (uint8_t)(instr__det_perf.sees & ~instr__detector_sees_besides(INSTR_DETECTOR_PERF));
        uint64_t due = instr__mono_ns() + after_ns;
        t->det.perf_due_ns = due ? due : 1;
        t->det.notyet |= late_kinds;
        return;
    }
    void *s = __atomic_exchange_n(&spare, NULL, __ATOMIC_ACQ_REL);
    if (s && spare_tid == instr__gettid()) { /* the self-test's event is this thread's: keep it */
        arm(t, s);
        return;
    }
    if (s) /* another thread's (or, in a fork child, the parent's) */
        munmap(s, (1 + DATA_PAGES) * PAGE);
    int fd = open_event();
    void *m = fd >= 0 ? map_ring(fd) : NULL;
    if (!m) {
        if (fd >= 0)
            close(fd);
        return; /* this thread goes without (fd or mlock limits) */
    }
    close(fd); /* the mapping keeps the event alive: hold no fd of the program's */
    arm(t, m);
}

/* At a slow path of thread t, its event pending (t->det.perf_due_ns): opened
 * once due.  1 if it was opened now (the caller cuts the stretch as the
 * runtime's and re-arms), 0 otherwise.  The program's errno is kept. */
int instr__perf_late(struct instr__thread *t)
{
    if (instr__mono_ns() < t->det.perf_due_ns || !instr__may_syscall())
        return 0;
    int saved = errno;
    t->det.perf_due_ns = 0;
    instr__sud_state[0] = INSTR__SUD_ALLOW; /* our own calls: no trap (the caller re-arms) */
    int fd = open_event();
    void *m = fd >= 0 ? map_ring(fd) : NULL;
    char why[96];
    snprintf(why, sizeof why, "%s", fd < 0 ? strerror(errno) : !m ? "no memory for its ring" : "");
    if (fd >= 0)
        close(fd);
    /* The self-test, at the process's first open: 0 not yet, 1 passed,
     * -1 failed (no thread arms a ring after that, pending or not). */
    static int tested;
    int state = __atomic_load_n(&tested, __ATOMIC_ACQUIRE);
    if (m && state == 0 && __atomic_exchange_n(&tested, 1, __ATOMIC_ACQ_REL) == 0) {
        state = faults_sampled(m) ? 1 : -1;
        __atomic_store_n(&tested, state, __ATOMIC_RELEASE);
    }
    if (m && state < 0) {
        munmap(m, (1 + DATA_PAGES) * PAGE);
        m = NULL;
        snprintf(why, sizeof why, "self-test failed: a page fault left no sample");
        after_ns = UINT64_MAX / 2; /* threads that start later do not try */
    }
    if (!m) {
        if (!__atomic_exchange_n(&late_failed, 1, __ATOMIC_RELAXED))
            instr__say("detector perf: a thread's event could not be opened (", why, ")",
                       ": its page faults go unseen, as do those of threads that fail likewise");
        errno = saved;
        return 1;
    }
    arm(t, m);
    t->det.notyet &= (uint8_t)~late_kinds;
    errno = saved;
    return 1;
}

static void perf_thread_end(struct instr__thread *t)
{
    t->det.perf_due_ns = 0;
    t->det.notyet &= (uint8_t)~late_kinds;
    t->det.pf_word = &t->det.self;
    t->det.pf_armed = t->det.self;
    if (t->det.pf_map)
        munmap(t->det.pf_map, (1 + DATA_PAGES) * PAGE);
    t->det.pf_map = NULL;
    t->det.on &= ~INSTR__DET_ON_PERF;
}

/* The runtime's own first touches (a fresh page of the events chunk or of
 * the shadow stack, written by a hook after its check) are not the
 * program's: recognised by the fault address. */
static int ours(const struct instr__thread *t, uint64_t addr)
{
    uintptr_t c = (uintptr_t)t->chunk, s = (uintptr_t)t;
    return (c && addr - c < t->stage.csize) || addr - s < t->map_size;
}

static uint64_t ring_u64(const uint8_t *data, uint64_t at, uint64_t size)
{
    uint64_t v;
    for (unsigned i = 0; i < sizeof v; i++)
        ((uint8_t *)&v)[i] = data[(at + i) % size];
    return v;
}

/* Kinds of the records in [from, to) of the ring. */
unsigned instr__perf_kinds(struct instr__thread *t, uint64_t from, uint64_t to)
{
    const uint64_t size = DATA_PAGES * PAGE;
    if (!t->det.pf_map)
        return 0;
    if (to - from > size)
        return INSTR_OS_FAULT | INSTR_OS_SCHED; /* overwritten: both, most likely */
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* data_head before the records */
    const uint8_t *data = (const uint8_t *)t->det.pf_map + PAGE;
    unsigned bits = 0;
    for (uint64_t at = from; at < to;) {
        struct perf_event_header h;
        for (unsigned i = 0; i < sizeof h; i++)
            ((uint8_t *)&h)[i] = data[(at + i) % size];
        if (h.size < sizeof h)
            break;
        if (h.type == PERF_RECORD_SAMPLE) {
            if (h.size < sizeof h + 8 || !ours(t, ring_u64(data, at + sizeof h, size)))
                bits |= INSTR_OS_FAULT;
        }
        else if (h.type == PERF_RECORD_SWITCH || h.type == PERF_RECORD_SWITCH_CPU_WIDE)
            bits |= INSTR_OS_SCHED;
        at += h.size;
    }
    return bits;
}

const struct instr__detector_ops instr__det_perf = {
    .name = "perf",
    .id = INSTR_DETECTOR_PERF,
    .is_kind = 1,
    .sees = INSTR_OS_SCHED | INSTR_OS_FAULT,
    .init = perf_init,
    .thread = perf_thread,
    .thread_end = perf_thread_end,
    .on = INSTR__DET_ON_PERF,
    .restart = 1, /* the perf event belongs to the parent's thread */
};

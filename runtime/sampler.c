/* sampler.c - INSTR_SAMPLE=HZ: samples of (time, PC) beside the events
 * (the hybrid of issue 9; the report places them on the shadow stack).
 *
 * Per thread, one perf event: PERF_COUNT_SW_CPU_CLOCK every 1/HZ s of the
 * thread's CPU time, user space only, PERF_SAMPLE_IP | PERF_SAMPLE_TIME with
 * the time on CLOCK_MONOTONIC (use_clockid), written by the kernel into a
 * ring mapped here.  No signal is ever delivered (no fasync, no F_SETSIG,
 * no wakeup): the program sees nothing, and the detectors see no signal,
 * so no interval is flagged by sampling.  The fd is closed once the ring is
 * mapped (the mapping holds the event).
 *
 * The ring is drained only on the runtime's slow paths, whose time is
 * already nobody's: a chunk switch (inside the EXT RUNTIME interval it
 * writes), the thread's end, the process's exit.  Each sample becomes a
 * STACK record (one frame, the PC; INSTR_STACK_RUNTIME when the PC is in
 * this library) in the thread's own SAMPLES chunks (dump-format.h), its
 * tick the CLOCK_MONOTONIC ns of the sample: the tools convert them to
 * ticks with the header's calibration pairs.  Samples the kernel could not
 * write (ring full: a thread that ran long without a slow path) become a
 * LOST record, also those of a thread's last stretch (last_lost).  Beside
 * them, maps.c writes the executable mappings (MAP records), at the start
 * and, when objects were loaded or unloaded, at a drain before its
 * samples: the tools name a PC in an uninstrumented library with them.
 *
 * A fork child has none of the parent's events (the kernel does not copy a
 * perf ring's mapping into a child): its forking thread, the only one left,
 * lets go of the parent's state without touching it and opens its own
 * event, so the child is sampled into its own dump like the parent.  Where perf events are not allowed, one
 * line says so and the program is recorded without samples.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PAGE 4096u
/* The ring holds what the kernel writes between two drains, and a thread
 * in a long loop without a slow path (or with hooks too few to fill a
 * chunk) drains only at its end: the samples past a full ring are lost,
 * and the kernel says how many only at its next sample after a drain (a
 * thread's last overflow: last_lost).  The ring is sized for at least
 * RING_SECONDS of CPU time at the rate asked (32 bytes allowed a sample,
 * which takes 24: header, PC, time), up to RING_MAX_PAGES, while the
 * process's rings larger than RING_MIN_PAGES stay under
 * RING_BIG_BUDGET; the others get RING_MIN_PAGES, and a ring
 * the kernel refuses is halved down to that.  Perf rings count against
 * the user's locked-memory allowance (perf_event_mlock_kb per CPU, then
 * RLIMIT_MEMLOCK: about 9 MiB for an ordinary user on Debian), so large
 * rings for every thread of a process of many would leave the later
 * threads none: the first threads (the main one, a few workers) get
 * large ones, the rest what every thread got before. */
#define RING_SECONDS 10u
#define RING_MIN_PAGES 16u            /* 64 KiB: 2,700 samples */
#define RING_MAX_PAGES 256u           /* 1 MiB: 43,000 samples, 13 s at 3.2 kHz */
#define RING_BIG_BUDGET (2u << 20)    /* bytes of rings larger than the minimum, per process */
static size_t big_rings;              /* bytes of them mapped (never given back: a budget, not a count) */

struct instr__sampler {
    struct perf_event_mmap_page *ring;
    size_t pages;                     /* the ring's data pages (a power of two) */
    uint64_t period_ns;               /* CPU time between two samples */
    int full;                         /* the last drain found the ring (nearly) full: samples may be lost
                                         that no LOST record said yet */
    pid_t pid;                        /* the process the event belongs to */
    struct instr__stage stage;        /* the thread's SAMPLES chunks */
    struct instr_chunk_header *chunk; /* current one, or NULL */
    uint8_t *pos, *end;
    uint32_t seq;
    uint64_t last;                    /* ns of the previous record in the chunk */
};

static int rate_hz = -1;              /* INSTR_SAMPLE, -1 = not read yet, 0 = off */
static uintptr_t rt_start, rt_end;    /* this library's executable segment */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (me >= s && me < e) {
            rt_start = s;
            rt_end = e;
            return 1;
        }
    }
    return 0;
}

static int rate(void)
{
    if (rate_hz >= 0)
        return rate_hz;
    const char *e = getenv("INSTR_SAMPLE");
    char *end;
    long v = e && *e ? strtol(e, &end, 10) : 0;
    if (e && *e && (*end || v < 0 || v > 100000)) {
        instr__say("INSTR_SAMPLE=", e, ": not a rate in Hz (1..100000)", "; recording without samples");
        v = 0;
    }
    if (v > 0)
        dl_iterate_phdr(find_self, (void *)(uintptr_t)&rate);
    rate_hz = (int)v;
    return rate_hz;
}

void instr__sampler_thread(struct instr__thread *t)
{
    static int warned;
    int hz = rate();
    if (hz <= 0 || !instr__may_syscall())
        return;
    int saved = errno;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000000u / (unsigned)hz;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            instr__say("INSTR_SAMPLE: perf events are not allowed here (perf_event_open: ", strerror(errno),
                       "; sysctl kernel.perf_event_paranoid=2 allows them)", "; recording without samples");
        errno = saved;
        return;
    }
    size_t head = (sizeof(struct instr__sampler) + PAGE - 1) & ~(size_t)(PAGE - 1);
    size_t pages = RING_MAX_PAGES;
    while (pages > RING_MIN_PAGES && (uint64_t)pages * PAGE / 2 >= (uint64_t)hz * RING_SECONDS * 32)
        pages /= 2;
    if (pages > RING_MIN_PAGES &&
        __atomic_add_fetch(&big_rings, pages * PAGE, __ATOMIC_RELAXED) > RING_BIG_BUDGET)
        pages = RING_MIN_PAGES;
    void *ring = MAP_FAILED;
    for (; pages >= RING_MIN_PAGES; pages /= 2) {
        ring = mmap(NULL, (1 + pages) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (ring != MAP_FAILED)
            break;
    }
    close(fd);
    struct instr__sampler *s =
        ring == MAP_FAILED ? MAP_FAILED : mmap(NULL, head, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        if (ring != MAP_FAILED)
            munmap(ring, (1 + pages) * PAGE);
        errno = saved;
        return;
    }
    s->ring = ring;
    s->pages = pages;
    s->period_ns = a.sample_period;
    s->pid = instr__getpid();
    t->sampler = s;
    /* The rate asked, once per dump (a fork child's is a new dump). */
    static pid_t recorded;
    if (__atomic_exchange_n(&recorded, s->pid, __ATOMIC_RELAXED) != s->pid && instr__rt.header) {
        pthread_mutex_lock(&instr__rt.meta_lock);
        instr__meta_sampling((uint64_t)hz, a.sample_period, 0, "none: the PC on the shadow stack");
        pthread_mutex_unlock(&instr__rt.meta_lock);
    }
    instr__maps_check(); /* the executable mappings (maps.c): the first thread writes them */
    errno = saved;
}

/* Room for one record in the current chunk (a new one if needed); 0 = no
 * chunk (not recording). */
static int room(struct instr__thread *t, struct instr__sampler *s, uint64_t ns)
{
    if (s->chunk && s->pos + 64 <= s->end)
        return 1;
    if (s->chunk)
        __atomic_store_n(&s->chunk->used_bytes, (uint32_t)(s->pos - (uint8_t *)s->chunk - INSTR_CHUNK_HEADER_SIZE),
                         __ATOMIC_RELEASE);
    s->chunk = instr__chunk_map(&s->stage, INSTR_CHUNK_SAMPLES, t->index, t->tid, s->seq, ns);
    if (!s->chunk)
        return 0;
    s->seq++;
    s->pos = (uint8_t *)s->chunk + INSTR_CHUNK_HEADER_SIZE;
    s->end = (uint8_t *)s->chunk + s->stage.csize;
    s->last = ns;
    return 1;
}

/* One record: kind, payload length, then varint delta, weight and the rest. */
static void put_record(struct instr__sampler *s, unsigned kind, uint64_t ns, uint64_t a, uint64_t b, uint64_t pc)
{
    uint8_t body[48], *q = body;
    uint64_t delta = ns >= s->last ? ns - s->last : 0;
    s->last = ns > s->last ? ns : s->last;
    q = instr_put_varint(q, delta);
    q = instr_put_varint(q, a);
    if (kind == INSTR_SAMPLE_STACK) {
        q = instr_put_varint(q, b);
        q = instr_put_varint(q, 1);
        q = instr_put_varint(q, pc);
    }
    *s->pos++ = (uint8_t)kind;
    s->pos = instr_put_varint(s->pos, (uint64_t)(q - body));
    memcpy(s->pos, body, (size_t)(q - body));
    s->pos += q - body;
}

/* Writes the ring's records from data_tail on into the thread's chunks;
 * only the LOST ones when lost_only (the runtime's own sample that made
 * the kernel say them, see last_lost). */
static void drain_ring(struct instr__thread *t, struct instr__sampler *s, int lost_only)
{
    struct perf_event_mmap_page *m = s->ring;
    const uint8_t *data = (const uint8_t *)m + PAGE;
    const uint64_t size = (uint64_t)s->pages * PAGE;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
    /* Less room left than a sample and a LOST record take: the kernel
     * may have dropped samples it has not said yet. */
    s->full = head - tail + 64 > size;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        uint64_t rec[4] = {0};
        for (size_t i = 0; i < sizeof h; i++)
            ((uint8_t *)&h)[i] = data[(tail + i) % size];
        if (h.size < sizeof h || tail + h.size > head)
            break;
        size_t n = h.size - sizeof h < sizeof rec ? h.size - sizeof h : sizeof rec;
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)rec)[i] = data[(tail + sizeof h + i) % size];
        tail += h.size;
        if (h.type == PERF_RECORD_SAMPLE && !lost_only) { /* ip, time */
            if (!room(t, s, rec[1]))
                break;
            put_record(s, INSTR_SAMPLE_STACK, rec[1], 1,
                       rec[0] >= rt_start && rec[0] < rt_end ? INSTR_STACK_RUNTIME : 0, rec[0]);
        } else if (h.type == PERF_RECORD_LOST && rec[1]) { /* id, lost */
            if (!room(t, s, s->last))
                break;
            put_record(s, INSTR_SAMPLE_LOST, s->last, rec[1], 0, 0);
        }
    }
    __atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
    if (s->chunk)
        __atomic_store_n(&s->chunk->used_bytes, (uint32_t)(s->pos - (uint8_t *)s->chunk - INSTR_CHUNK_HEADER_SIZE),
                         __ATOMIC_RELEASE);
}

void instr__sampler_drain(struct instr__thread *t)
{
    struct instr__sampler *s = t->sampler;
    if (!s)
        return;
    if (s->pid != instr__getpid()) { /* a fork child: the parent's event (its ring is not mapped here) */
        t->sampler = NULL;
        instr__chunk_unmap(&s->stage);
        munmap(s, (sizeof *s + PAGE - 1) & ~(size_t)(PAGE - 1));
        return;
    }
    instr__maps_check(); /* a library loaded since the last drain: its map before its samples */
    drain_ring(t, s, 0);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return UINT64_MAX; /* no clock: give up at once */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The thread's last drain (its end, the process's exit).  A full ring
 * lost samples, and the kernel counts them in a LOST record written
 * before its next sample only: for a thread's last stretch, never (a
 * thread looping without a chunk switch drains only here).  Reading the
 * count (PERF_FORMAT_LOST) would need the event's descriptor, which the
 * runtime does not keep (the program sees none of ours).  So when the
 * drain found the ring full, the thread runs on here, in user mode (a
 * cpu-clock sample in the kernel is not taken), for up to four sampling
 * periods of its CPU time, until that next sample comes; its LOST record
 * is kept, the sample (the runtime's own) is not; at most 50 ms (below
 * 20 Hz the next sample may not come in that time, and the losses then
 * stay unsaid).  The time is after the thread's last event: nobody's. */
#define LAST_LOST_MAX_NS 50000000u
static void last_lost(struct instr__thread *t, struct instr__sampler *s)
{
    if (!s->full || !instr__may_syscall())
        return;
    volatile __u64 *head = &s->ring->data_head;
    uint64_t was = *head, t0 = thread_cpu_ns();
    if (t0 == UINT64_MAX)
        return; /* no CPU clock to bound the wait with */
    uint64_t wait = 4 * s->period_ns < LAST_LOST_MAX_NS ? 4 * s->period_ns : LAST_LOST_MAX_NS;
    for (uint32_t i = 1; *head == was; i++)
        if (!(i & 0xffff) && thread_cpu_ns() - t0 > wait)
            break;
    drain_ring(t, s, 1);
}

void instr__sampler_last_drain(struct instr__thread *t)
{
    instr__sampler_drain(t);
    if (t->sampler)
        last_lost(t, t->sampler);
}

/* Fork child, after the thread restarted in the child's dump: the parent's
 * chunks are the parent's file (dropped unwritten) and its ring is not
 * mapped here (perf mappings are not copied: never munmap its address,
 * the child's own mappings may lie there now); sample this thread anew. */
void instr__sampler_fork_child(struct instr__thread *t)
{
    struct instr__sampler *s = t->sampler;
    if (s) {
        t->sampler = NULL;
        instr__chunk_unmap(&s->stage);
        munmap(s, (sizeof *s + PAGE - 1) & ~(size_t)(PAGE - 1));
    }
    instr__sampler_thread(t);
}

void instr__sampler_thread_end(struct instr__thread *t)
{
    struct instr__sampler *s = t->sampler;
    if (!s)
        return;
    instr__sampler_last_drain(t);
    if (!(s = t->sampler))
        return;
    t->sampler = NULL;
    munmap(s->ring, (1 + s->pages) * PAGE);
    instr__chunk_unmap(&s->stage);
    munmap(s, (sizeof *s + PAGE - 1) & ~(size_t)(PAGE - 1));
}

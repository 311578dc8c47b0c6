/* detector-rdpmc.c - kernel-mode instructions retired on this thread, read
 * in user space with rdpmc: the Visual Studio method, but per thread.
 *
 * A per-thread hardware event counts instructions with exclude_user=1, so it
 * moves only when the kernel runs on this thread's behalf: system calls,
 * page faults, signals, and also hardware interrupts and softirqs that
 * land on it, which no other backend sees.  Its perf page is mapped
 * read-only and read under the page's seqlock:
 *
 *     do { seq = pc->lock; idx = pc->index; count = pc->offset;
 *          if (idx) count += sign-extended rdpmc(idx - 1) over pmc_width bits;
 *     } while (pc->lock != seq);
 *
 * Needs a PMU that perf exposes (/sys/bus/event_source/devices/cpu), the
 * right to count kernel events (perf_event_paranoid <= 1 or CAP_PERFMON)
 * and user-space rdpmc (cap_user_rdpmc, /sys/.../rdpmc >= 1).  Machines
 * without a PMU (most VMs, including the one this was written on) fail the
 * probe and the backend stays off: it is compiled and its refusal tested
 * everywhere, its counting only where a PMU exists.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detector.h"

int instr__rdpmc_on;

static int open_counter(void)
{
    struct perf_event_attr a = {.exclude_user = 1}; /* kernel work only */
    return instr__perf_open(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
}

/* The counter's page, or NULL.  The mapping keeps the event alive, so the
 * descriptor is closed at once (a program's descriptor limit is its own). */
static struct perf_event_mmap_page *map_counter(char *why, size_t n)
{
    int fd = open_counter();
    if (fd < 0) {
        snprintf(why, n, "rdpmc off: %s", errno == ENOENT || errno == EOPNOTSUPP
                                               ? "no PMU"
                                               : strerror(errno));
        return NULL;
    }
    void *m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, n, "rdpmc off: cannot map the counter (%s)", strerror(errno));
        return NULL;
    }
    struct perf_event_mmap_page *pc = m;
    if (!pc->cap_user_rdpmc) {
        snprintf(why, n, "rdpmc off: the kernel does not allow rdpmc");
        munmap(m, (size_t)sysconf(_SC_PAGESIZE));
        return NULL;
    }
    return pc;
}

uint64_t instr__rdpmc_read(const volatile struct perf_event_mmap_page *pc)
{
    uint32_t seq, idx;
    uint64_t count;
    do {
        seq = pc->lock;
        __asm__ volatile("" ::: "memory");
        idx = pc->index;
        count = (uint64_t)pc->offset;
        if (idx) {
            unsigned width = pc->pmc_width;
            uint32_t lo, hi;
            __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
            int64_t raw = (int64_t)((uint64_t)hi << 32 | lo);
            raw = (int64_t)((uint64_t)raw << (64 - width)) >> (64 - width);
            count += (uint64_t)raw;
        }
        __asm__ volatile("" ::: "memory");
    } while (pc->lock != seq);
    return count;
}

static int rdpmc_init(char *why, size_t n)
{
    if (access("/sys/bus/event_source/devices/cpu/rdpmc", R_OK) != 0 &&
        access("/sys/bus/event_source/devices/cpu_core/rdpmc", R_OK) != 0) {
        snprintf(why, n, "rdpmc off: no PMU");
        return -1;
    }
    struct perf_event_mmap_page *pc = map_counter(why, n);
    if (!pc)
        return -1;
    /* Self-test: a system call must move the kernel-instruction count. */
    uint64_t c0 = instr__rdpmc_read(pc);
    (void)syscall(SYS_getppid);
    uint64_t c1 = instr__rdpmc_read(pc);
    munmap(pc, (size_t)sysconf(_SC_PAGESIZE));
    if (c1 == c0) {
        snprintf(why, n, "rdpmc off: self-test failed (a syscall did not count)");
        return -1;
    }
    instr__rdpmc_on = 1;
    return 0;
}

static void rdpmc_thread(struct instr__thread *t)
{
    char why[96];
    t->det.pmc_page = map_counter(why, sizeof why);
    if (t->det.pmc_page) {
        t->det.pmc_armed = instr__rdpmc_read(t->det.pmc_page);
        t->det.on |= INSTR__DET_ON_RDPMC;
    }
}

static void rdpmc_thread_end(struct instr__thread *t)
{
    if (t->det.pmc_page)
        munmap((void *)t->det.pmc_page, (size_t)sysconf(_SC_PAGESIZE));
    t->det.pmc_page = NULL;
    t->det.on &= ~INSTR__DET_ON_RDPMC;
}

const struct instr__detector_ops instr__det_rdpmc = {
    .name = "rdpmc",
    .id = INSTR_DETECTOR_RDPMC,
    .is_kind = 1,
    /* Kernel work on the thread of any kind; what no other backend explains
     * is reported as an interrupt. */
    .sees = INSTR_OS_SYSCALL | INSTR_OS_FAULT | INSTR_OS_SIGNAL | INSTR_OS_IRQ,
    .init = rdpmc_init,
    .thread = rdpmc_thread,
    .thread_end = rdpmc_thread_end,
    .on = INSTR__DET_ON_RDPMC,
    .restart = 1, /* the counter belongs to the parent's thread */
};

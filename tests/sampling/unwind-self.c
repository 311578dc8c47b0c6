/* unwind-self.c - instr-sample's unwinder (tools/sample/sample-unwind.c)
 * on a sample made without perf: this program takes its own registers
 * (getcontext) and a copy of the top of its stack in the innermost of
 * three calls, arranges them in perf's order for the architecture
 * (sample-regs.h), as a PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER
 * sample delivers them, with its executable mappings from
 * /proc/self/maps, and checks that instr_unwind walks back through the
 * three callers to main: each frame the return address that function
 * recorded.  It runs where perf does not (aarch64 under qemu-user), so the
 * architecture's registers and libunwind's unwinder for it are tested
 * there.  Exit 0 when every frame matches, 1 otherwise (saying which). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "sample-unwind.h"

#define NMAPS 256
#define STACK_COPY 16384

static struct instr_ufile files[NMAPS];
static struct instr_umap maps[NMAPS];
static size_t nmaps;
static uint64_t stack_end; /* end of the [stack] mapping */
static uint64_t ret_addr[3]; /* where inner, middle and outer return to */
static int failures;

/* The sample's registers from a ucontext, in perf's order: what the
 * kernel would copy at a sample taken where getcontext returned. */
static void uregs_of(const ucontext_t *uc, uint64_t *regs)
{
    memset(regs, 0, 8 * INSTR_UREGS);
#if defined(__x86_64__)
    static const int perf_of_greg[][2] = {
        {REG_RAX, 0}, {REG_RBX, 1}, {REG_RCX, 2},  {REG_RDX, 3},  {REG_RSI, 4},  {REG_RDI, 5},  {REG_RBP, 6},
        {REG_RSP, 7}, {REG_RIP, 8}, {REG_R8, 12},  {REG_R9, 13},  {REG_R10, 14}, {REG_R11, 15}, {REG_R12, 16},
        {REG_R13, 17}, {REG_R14, 18}, {REG_R15, 19}};
    for (size_t i = 0; i < sizeof perf_of_greg / sizeof *perf_of_greg; i++)
        regs[perf_of_greg[i][1]] = (uint64_t)uc->uc_mcontext.gregs[perf_of_greg[i][0]];
#elif defined(__aarch64__)
    for (int i = 0; i < 31; i++)
        regs[i] = uc->uc_mcontext.regs[i];
    regs[INSTR_UREG_SP] = uc->uc_mcontext.sp;
    regs[INSTR_UREG_IP] = uc->uc_mcontext.pc;
#else
#error "unwind-self.c: no register layout for this architecture"
#endif
}

static void read_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], perm[8], path[4096];
    if (!f) {
        perror("/proc/self/maps");
        exit(1);
    }
    while (fgets(line, sizeof line, f)) {
        uint64_t start, end, pgoff;
        path[0] = 0;
        int got = sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", &start, &end, perm, &pgoff,
                         path);
        if (got < 4)
            continue;
        if (!strcmp(path, "[stack]"))
            stack_end = end;
        if (perm[2] != 'x' || path[0] != '/' || nmaps == NMAPS)
            continue;
        struct instr_ufile *u = &files[nmaps];
        u->path = strdup(path);
        u->ok = instr_elf_open(&u->elf, path) == 0;
        instr_ufile_prepare(u);
        struct instr_umap *m = &maps[nmaps++];
        *m = (struct instr_umap){start, end, pgoff, 0, 0, u, 0};
        m->bias_ok = u->ok && instr_elf_bias(&u->elf, start, pgoff, &m->bias) == 0;
    }
    fclose(f);
}

static void check(const char *what, uint64_t got, uint64_t want)
{
    printf("%-26s %#" PRIx64 "%s\n", what, got, got == want ? "" : " (wrong)");
    if (got != want) {
        printf("  expected %#" PRIx64 "\n", want);
        failures++;
    }
}

/* The kernel's copy of the stack, made here: bytes of frames that are not
 * this function's (ASan, INSTR_SANITIZE, would call the read an overflow;
 * its memcpy is intercepted, so a plain loop). */
__attribute__((no_sanitize("address"))) static void copy_stack(uint8_t *to, uint64_t from, uint64_t size)
{
    for (uint64_t i = 0; i < size; i++)
        to[i] = ((const volatile uint8_t *)(uintptr_t)from)[i];
}

__attribute__((noinline)) static void inner(void)
{
    ret_addr[0] = (uint64_t)__builtin_extract_return_addr(__builtin_return_address(0));
    ucontext_t uc;
    static uint8_t stack[STACK_COPY];
    if (getcontext(&uc)) {
        perror("getcontext");
        exit(1);
    }
    struct instr_usample s = {{0}, stack, 0, maps, nmaps};
    uregs_of(&uc, s.regs);
    uint64_t sp = s.regs[INSTR_UREG_SP];
    s.stack_size = stack_end > sp && stack_end - sp < STACK_COPY ? stack_end - sp : STACK_COPY;
    copy_stack(stack, sp, s.stack_size);

    struct instr_unwinder *u;
    if (instr_unwinder_new(&u)) {
        puts("instr_unwinder_new failed");
        exit(1);
    }
    uint64_t frames[64];
    int truncated;
    size_t n = instr_unwind(u, &s, frames, 64, &truncated);
    printf("%s: %zu frames%s, %zu executable mappings, %" PRIu64 " bytes of stack\n", INSTR_UREGS_ARCH, n,
           truncated ? " (truncated)" : "", nmaps, s.stack_size);
    check("frame 0: the pc", frames[0], s.regs[INSTR_UREG_IP]);
    static const char *const names[3] = {"frame 1: in middle", "frame 2: in outer", "frame 3: in main"};
    for (int i = 0; i < 3; i++)
        check(names[i], n > (size_t)i + 1 ? frames[i + 1] : 0, ret_addr[i]);
    instr_unwinder_free(u);
}

__attribute__((noinline)) static void middle(void)
{
    ret_addr[1] = (uint64_t)__builtin_extract_return_addr(__builtin_return_address(0));
    inner();
    __asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) static void outer(void)
{
    ret_addr[2] = (uint64_t)__builtin_extract_return_addr(__builtin_return_address(0));
    middle();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    read_maps();
    outer();
    printf("%s\n", failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}

/* aarch64.cc - the instructions the plugin emits for aarch64 targets
 * (plugin/arch.h).
 *
 * A slot is read with adrp and a 12-bit offset load into x16, the
 * intra-procedure-call register AAPCS64 gives veneers (free at every call,
 * and the register a BTI `bti c` landing pad accepts a `br` through).  The
 * code reached indirectly (the no-op, the constructors) begins with
 * `hint #34` (bti c: a no-op on CPUs without BTI), as x86-64's with
 * endbr64. */
#include "../arch.h"

#include "hook-abi.h"

#include <elf.h>

#ifdef INSTR_RECORD_SETUID
#error "INSTR_RECORD_SETUID: the root-owned-path check of the binding is x86-64 only"
#endif

const char *const instr_arch_name = "aarch64";

static std::string slot_sym(unsigned slot)
{
    return std::string(INSTR_HOOK_TABLE "+") + std::to_string(8 * slot);
}

/* reg = the address of a local or hidden symbol (PC-relative: any module). */
static std::string address(const char *reg, const std::string &sym)
{
    return std::string("\tadrp\t") + reg + ", " + sym + "\n\tadd\t" + reg + ", " + reg + ", :lo12:" + sym + "\n";
}

std::string instr_arch_slot_jump(unsigned slot)
{
    return "\tadrp\tx16, " + slot_sym(slot) + "\n\tldr\tx16, [x16, #:lo12:" + slot_sym(slot) +
           "]\n\tbr\tx16\n";
}

std::string instr_arch_nop(void)
{
    return "\thint\t#34\n\tret\n";
}

std::string instr_arch_count_early(void)
{
    return "\thint\t#34\n\tstrb\twzr, [x1]\n\tret\n";
}

/* A frame record (x29, x30), so the calls keep sp 16-byte aligned and
 * unwinders find the caller; the probe keeps the allocator's name in x19
 * and dlsym (RTLD_DEFAULT) in x20 (callee-saved, saved under the record). */
std::string instr_arch_bind_ctor(void)
{
    std::string s = "\thint\t#34\n";
    /* From here on, unbound is for good: count mode's arming slot stops
     * undoing its callers' arming (hook-abi.h). */
    s += address("x17", INSTR_HOOK_NOP);
    s += "\tadrp\tx16, " + slot_sym(INSTR_SLOT_COUNT_ARM) + "\n\tstr\tx17, [x16, #:lo12:" +
         slot_sym(INSTR_SLOT_COUNT_ARM) + "]\n";
    /* Main instrumented elsewhere, or not at all: bind now. */
    s += "\tadrp\tx16, .Linstr_main_ref\n"
         "\tldr\tx16, [x16, #:lo12:.Linstr_main_ref]\n"
         "\tcbz\tx16, .Linstr_bind_now\n"
         "\tstp\tx29, x30, [sp, #-32]!\n"
         "\tmov\tx29, sp\n"
         "\tstp\tx19, x20, [sp, #16]\n";
    s += address("x19", ".Linstr_alloc_names");
    s += ".Linstr_bind_probe:\n"
         "\tmov\tx0, #0\n" /* RTLD_DEFAULT */
         "\tmov\tx1, x19\n"
         "\tbl\tdlsym\n"
         "\tmov\tx20, x0\n"
         "\tmov\tx0, #-1\n" /* RTLD_NEXT */
         "\tmov\tx1, x19\n"
         "\tbl\tdlsym\n"
         "\tcmp\tx0, x20\n"
         "\tb.ne\t.Linstr_bind_defer\n"
         ".Linstr_bind_skip:\n"
         "\tldrb\tw0, [x19], #1\n"
         "\tcbnz\tw0, .Linstr_bind_skip\n"
         "\tldrb\tw0, [x19]\n"
         "\tcbnz\tw0, .Linstr_bind_probe\n"
         "\tldp\tx19, x20, [sp, #16]\n"
         "\tldp\tx29, x30, [sp], #32\n"
         ".Linstr_bind_now:\n"
         "\tmov\tw0, #" + std::to_string(INSTR_HOOK_ABI_VERSION) + "\n"
         "\tb\t__instr_bind_body\n"
         ".Linstr_bind_defer:\n"
         "\tmov\tw0, #1\n"
         "\tadrp\tx16, .Linstr_deferred\n"
         "\tstrb\tw0, [x16, #:lo12:.Linstr_deferred]\n"
         "\tldp\tx19, x20, [sp, #16]\n"
         "\tldp\tx29, x30, [sp], #32\n"
         "\tret\n";
    return s;
}

/* Then the threshold records the units' constructors sent to the unbound
 * table: x19 walks .Linstr_late_units' array up to x20. */
std::string instr_arch_bind_late(void)
{
    std::string s = "\thint\t#34\n"
                    "\tadrp\tx16, .Linstr_deferred\n"
                    "\tldrb\tw0, [x16, #:lo12:.Linstr_deferred]\n"
                    "\tcbnz\tw0, .Linstr_bind_late\n"
                    "\tret\n"
                    ".Linstr_bind_late:\n"
                    "\tstrb\twzr, [x16, #:lo12:.Linstr_deferred]\n"
                    "\tstp\tx29, x30, [sp, #-32]!\n"
                    "\tmov\tx29, sp\n"
                    "\tstp\tx19, x20, [sp, #16]\n"
                    "\tmov\tw0, #" + std::to_string(INSTR_HOOK_ABI_VERSION | INSTR_BIND_LATE) + "\n"
                    "\tbl\t__instr_bind_body\n";
    s += address("x16", ".Linstr_late_units");
    s += "\tldp\tx19, x20, [x16]\n"
         ".Linstr_bind_unit:\n"
         "\tcmp\tx19, x20\n"
         "\tb.hs\t.Linstr_bind_units_done\n"
         "\tldr\tx0, [x19], #8\n"
         "\tadrp\tx16, " + slot_sym(INSTR_SLOT_UNIT) + "\n\tldr\tx16, [x16, #:lo12:" + slot_sym(INSTR_SLOT_UNIT) +
         "]\n\tblr\tx16\n"
         "\tb\t.Linstr_bind_unit\n"
         ".Linstr_bind_units_done:\n"
         "\tldp\tx19, x20, [sp, #16]\n"
         "\tldp\tx29, x30, [sp], #32\n"
         "\tret\n";
    return s;
}

/* Entered as a function (a call or a tail jump), bind's abi argument in w0,
 * kept beside the frame record. */
std::string instr_arch_bind_body(unsigned dlopen_flags)
{
    std::string s = "\tstp\tx29, x30, [sp, #-32]!\n"
                    "\tmov\tx29, sp\n"
                    "\tstr\tw0, [sp, #16]\n";
    s += "\tmov\tx0, #" + std::to_string(AT_SECURE) + "\n"
         "\tbl\tgetauxval\n"
         "\tcbnz\tx0, .Linstr_bind_done\n";
    s += address("x0", ".Linstr_runtime_path");
    s += "\tmov\tw1, #" + std::to_string(dlopen_flags) + "\n"
         "\tbl\tdlopen\n"
         "\tcbz\tx0, .Linstr_bind_done\n";
    s += address("x1", ".Linstr_bind_symbol");
    s += "\tbl\tdlsym\n"
         "\tcbz\tx0, .Linstr_bind_done\n"
         "\tmov\tx16, x0\n";
    s += address("x0", INSTR_HOOK_TABLE);
    s += "\tmov\tw1, #" + std::to_string(INSTR_SLOT_COUNT) + "\n"
         "\tldr\tw2, [sp, #16]\n"
         "\tblr\tx16\n"
         ".Linstr_bind_done:\n"
         "\tldp\tx29, x30, [sp], #32\n"
         "\tret\n";
    return s;
}

std::string instr_arch_unit_ctor(unsigned slot)
{
    return "\thint\t#34\n" + address("x0", ".Linstr_unit") + instr_arch_slot_jump(slot);
}

/* Count mode (hook-abi.h, "Count mode").  AArch64 has no one-instruction
 * increment of memory but LSE's atomic stadd (ARMv8.1), so the base ISA's
 * is a load/store-exclusive loop:
 *
 *   1: ldxr  x1, [cell]
 *      add   x1, x1, #1
 *      stxr  w2, x1, [cell]      w2 = 0: stored
 *      cbnz  w2, 1b
 *
 * A signal handler of the thread that runs between the ldxr and the stxr
 * counts in the same cell; the exception return clears the exclusive
 * monitor (ARMv8: every exception return does), so the stxr fails and the
 * loop loads the handler's count again: nothing is lost, at any
 * optimisation level.  The cell is this thread's (a TLS cell, or its copy
 * of the section), so the loop never meets another CPU's store and fails
 * only after an exception.  x1 and w2 are scratch outputs, allocated by
 * the compiler; the cell's address is the "Q" operand (one base register,
 * no offset: what ldxr takes), which GCC computes for a local-exec TLS
 * cell as it does for any: mrs tpidr_el0, add :tprel_hi12:, add
 * :tprel_lo12_nc:. */
const char *instr_arch_count_refusal(void)
{
    return NULL;
}

const struct instr_arch_count_asm *instr_arch_count_increment(void)
{
    static const instr_arch_count_asm a = {"1:\tldxr\t%1, %0\n\t"
                                           "add\t%1, %1, #1\n\t"
                                           "stxr\t%w2, %1, %0\n\t"
                                           "cbnz\t%w2, 1b",
                                           "Q", 2, NULL};
    return &a;
}

/* The test reads the byte through one scratch register; the rare path
 * keeps x30 (and x29, to keep sp 16-byte aligned) on the stack around the
 * bl, which needs no frame from the function (AAPCS64 has no red zone:
 * nothing lives below sp).  The trampoline keeps the other general
 * registers, NZCV, and through the runtime's entry the FP/SIMD state.
 * x16 and x17 are said clobbered: a bl out of range goes through a
 * linker veneer that writes them before the trampoline runs (the test is
 * at the function's entry, where the ABI holds nothing there). */
const struct instr_arch_count_asm *instr_arch_count_arming(void)
{
    static const char *const clobbers[] = {"x16", "x17", NULL};
    static const instr_arch_count_asm a = {"mrs\t%0, tpidr_el0\n\t"
                                           "add\t%0, %0, #:tprel_hi12:" INSTR_COUNT_ARMED ", lsl #12\n\t"
                                           "ldrb\t%w0, [%0, #:tprel_lo12_nc:" INSTR_COUNT_ARMED "]\n\t"
                                           "cbnz\t%w0, 1f\n\t"
                                           "stp\tx29, x30, [sp, #-16]!\n\t"
                                           "bl\t" INSTR_COUNT_ARM "\n\t"
                                           "ldp\tx29, x30, [sp], #16\n"
                                           "1:",
                                           NULL, 1, clobbers};
    return &a;
}

/* Data cannot hold a thread-pointer offset on aarch64 (the static linker
 * takes no R_AARCH64_TLS_TPREL64 outside the dynamic relocations), but it
 * resolves the local-exec relocations of an add's immediate wherever they
 * are: the field is two words whose bits 10-21 the linker fills with the
 * offset's low 12 bits and its next 12 (the 16 MiB of -mtls-size=24, GCC's
 * default; beyond it the link fails), as it does in the code's adds. */
std::string instr_arch_tls_offset(const char *sym)
{
    std::string s(sym);
    return "\t.reloc\t., R_AARCH64_TLSLE_ADD_TPREL_LO12_NC, " + s + "\n\t.reloc\t.+4, R_AARCH64_TLSLE_ADD_TPREL_HI12, " +
           s + "\n\t.word\t0, 0\n";
}

/* x0-x18 (x16 and x17 too, although the arming test says them
 * clobbered) and NZCV in a 176-byte frame under the frame record; the asm
 * around the bl keeps x30.  Arguments: x0 the module, x1 the byte, x2 the
 * thread pointer. */
std::string instr_arch_count_arm(void)
{
    std::string s = "\thint\t#34\n"
                    "\tstp\tx29, x30, [sp, #-176]!\n"
                    "\tmov\tx29, sp\n";
    for (int i = 0; i < 18; i += 2)
        s += "\tstp\tx" + std::to_string(i) + ", x" + std::to_string(i + 1) + ", [sp, #" + std::to_string(16 + 8 * i) +
             "]\n";
    s += "\tmrs\tx0, nzcv\n"
         "\tstp\tx18, x0, [sp, #160]\n"
         "\tmrs\tx2, tpidr_el0\n"
         "\tadd\tx1, x2, #:tprel_hi12:" INSTR_COUNT_ARMED ", lsl #12\n"
         "\tadd\tx1, x1, #:tprel_lo12_nc:" INSTR_COUNT_ARMED "\n"
         "\tmov\tw0, #1\n"
         "\tstrb\tw0, [x1]\n";
    s += address("x0", INSTR_COUNT_MODULE);
    s += "\tadrp\tx16, " + slot_sym(INSTR_SLOT_COUNT_ARM) + "\n\tldr\tx16, [x16, #:lo12:" +
         slot_sym(INSTR_SLOT_COUNT_ARM) + "]\n\tblr\tx16\n";
    s += "\tldp\tx18, x0, [sp, #160]\n"
         "\tmsr\tnzcv, x0\n";
    for (int i = 0; i < 18; i += 2)
        s += "\tldp\tx" + std::to_string(i) + ", x" + std::to_string(i + 1) + ", [sp, #" + std::to_string(16 + 8 * i) +
             "]\n";
    s += "\tldp\tx29, x30, [sp], #176\n"
         "\tret\n";
    return s;
}

/* The delta's address: initial exec, its offset from the GOT. */
std::string instr_arch_count_thread(void)
{
    return "\thint\t#34\n" + address("x0", INSTR_COUNT_MODULE) +
           "\tmrs\tx1, tpidr_el0\n"
           "\tadrp\tx16, :gottprel:" INSTR_COUNT_DELTA "\n"
           "\tldr\tx16, [x16, #:gottprel_lo12:" INSTR_COUNT_DELTA "]\n"
           "\tadd\tx1, x1, x16\n" +
           instr_arch_slot_jump(INSTR_SLOT_COUNT_THREAD);
}

unsigned instr_arch_first_arg_regno(void)
{
    return 0; /* GCC's R0_REGNUM, AAPCS64: x0 */
}

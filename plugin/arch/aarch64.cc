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
 * unwinders find the caller. */
std::string instr_arch_bind_ctor(unsigned dlopen_flags)
{
    std::string s = "\thint\t#34\n"
                    "\tstp\tx29, x30, [sp, #-16]!\n"
                    "\tmov\tx29, sp\n";
    /* From here on, unbound is for good: count mode's arming slot stops
     * undoing its callers' arming (hook-abi.h). */
    s += address("x17", INSTR_HOOK_NOP);
    s += "\tadrp\tx16, " + slot_sym(INSTR_SLOT_COUNT_ARM) + "\n\tstr\tx17, [x16, #:lo12:" +
         slot_sym(INSTR_SLOT_COUNT_ARM) + "]\n";
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
         "\tmov\tw2, #" + std::to_string(INSTR_HOOK_ABI_VERSION) + "\n"
         "\tblr\tx16\n"
         ".Linstr_bind_done:\n"
         "\tldp\tx29, x30, [sp], #16\n"
         "\tret\n";
    return s;
}

std::string instr_arch_unit_ctor(unsigned slot)
{
    return "\thint\t#34\n" + address("x0", ".Linstr_unit") + instr_arch_slot_jump(slot);
}

/* Count mode's x86-64 code (one `addq $1` to a TLS or per-thread cell, the
 * arming test's trampoline) has no aarch64 form yet: AArch64 has no
 * single-instruction increment of memory but LSE's atomic stadd, and a
 * signal handler between a load and a store would lose a count. */
const char *instr_arch_count_refusal(void)
{
    return "mode=count is not available for aarch64 yet (only x86-64)";
}

/* Never reached (the refusal above): if they were, the assembler stops. */
#define NO_COUNT_MODE ".error \"instr: count mode has no aarch64 code\""

const char *instr_arch_count_increment(void)
{
    return NO_COUNT_MODE;
}

const char *instr_arch_count_arming(void)
{
    return NO_COUNT_MODE;
}

std::string instr_arch_tls_offset(const char *sym)
{
    return std::string(sym) + "\n" NO_COUNT_MODE "\n";
}

std::string instr_arch_count_arm(void)
{
    return NO_COUNT_MODE "\n";
}

std::string instr_arch_count_thread(void)
{
    return NO_COUNT_MODE "\n";
}

unsigned instr_arch_first_arg_regno(void)
{
    return 0; /* GCC's R0_REGNUM, AAPCS64: x0 */
}

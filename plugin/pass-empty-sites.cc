/* pass-empty-sites.cc - call-site hooks where the call became no call.
 *
 * The GIMPLE pass brackets call statements, but whether a call statement
 * becomes a call instruction is only final once it is expanded to RTL:
 *
 *   __builtin_memcpy (d, s, n)   n unknown   -> call memcpy     (a real call)
 *   memcpy (d, s, 16)                        -> two moves       (no call)
 *   strcmp (s, "a")              at -O2      -> inline compare  (no call)
 *   sqrt (x), hoisted out of a loop by LIM   -> no call left inside the loop
 *
 * So the GIMPLE pass hooks every call that may become one (library
 * builtins included), and this pass, right after expansion, removes each
 * hook pair that brackets no call instruction:
 *
 *   call __instr_call     <- removed        call __instr_call     <- kept
 *   (moves, compares)                       call memcpy
 *   call __instr_return   <- removed        call __instr_return   <- kept
 *
 * A frame then exists exactly when a call instruction does (what valgrind's
 * callgrind counts).  A pair is recognised by its site argument; the
 * instructions that loaded the
 * hooks' arguments stay behind as dead register moves (removed by later
 * passes when optimising; a few bytes at -O0).
 */
#include "pass-empty-sites.h"

#include "arch.h"
#include "hook-abi.h"

/* The name of the function a call instruction calls directly, else NULL. */
static const char *direct_callee(const rtx_insn *insn)
{
    rtx call = get_call_rtx_from(insn);
    if (!call)
        return NULL;
    rtx addr = XEXP(XEXP(call, 0), 0);
    return GET_CODE(addr) == SYMBOL_REF ? XSTR(addr, 0) : NULL;
}

/* The value a hook call passes as its first argument (the site
 * descriptor's address), as set up by the expander right before the call:
 * "(set (reg di) SRC)" on x86-64, where SRC may be a pseudo set a few insns earlier.
 * NULL if it cannot be found among the insns just before the call. */
static rtx first_argument(rtx_insn *call)
{
    unsigned regno = instr_arch_first_arg_regno();
    int budget = 32;
    for (rtx_insn *i = PREV_INSN(call); i && budget-- > 0; i = PREV_INSN(i)) {
        if (LABEL_P(i) || CALL_P(i) || JUMP_P(i))
            return NULL;
        if (!NONJUMP_INSN_P(i))
            continue;
        rtx set = single_set(i);
        if (!set || !REG_P(SET_DEST(set)) || REGNO(SET_DEST(set)) != regno)
            continue;
        rtx src = SET_SRC(set);
        if (!REG_P(src) || HARD_REGISTER_P(src))
            return src;
        regno = REGNO(src); /* a pseudo: find where it was set */
    }
    return NULL;
}

/* The __instr_return hook of the same site as the __instr_call hook at
 * call, if no other call instruction lies between them, else NULL.  The
 * expansion of one call statement is contiguous in the insn stream, even
 * when it has branches of its own (an inline strcmp), so the walk follows
 * the stream across labels and jumps. */
static rtx_insn *empty_pair_end(rtx_insn *call)
{
    for (rtx_insn *i = NEXT_INSN(call); i; i = NEXT_INSN(i)) {
        if (!CALL_P(i))
            continue;
        const char *name = direct_callee(i);
        if (!name || strcmp(name, INSTR_HOOK_RETURN) != 0)
            return NULL; /* a real call (or another hook): the pair stays */
        rtx a = first_argument(call), b = first_argument(i);
        return a && b && rtx_equal_p(a, b) ? i : NULL;
    }
    return NULL;
}

/* The site arguments of the function's __instr_return hooks. */
static std::vector<rtx> return_sites(void)
{
    std::vector<rtx> v;
    for (rtx_insn *i = get_insns(); i; i = NEXT_INSN(i)) {
        const char *name = CALL_P(i) ? direct_callee(i) : NULL;
        if (name && !strcmp(name, INSTR_HOOK_RETURN)) {
            rtx a = first_argument(i);
            if (a)
                v.push_back(a);
        }
    }
    return v;
}

/* How many of the __instr_return hooks pass site a. */
static size_t returns_of(const std::vector<rtx> &v, rtx a)
{
    size_t n = 0;
    for (rtx r : v)
        n += rtx_equal_p(r, a);
    return n;
}

static unsigned remove_empty_pairs(void)
{
    unsigned removed = 0;
    rtx_insn *insn, *next;
    /* A site whose call statement GIMPLE split into blocks of its own
     * (tree-call-cdce: an inline sqrt, the errno library call in another
     * block) has an __instr_return on each path: the first found after the
     * __instr_call may end an empty path while another path makes the
     * call, and removing the __instr_call would leave that path's return
     * unmatched.  Such a site keeps its hooks (an empty frame on the inline
     * path, as it has). */
    std::vector<rtx> returns = return_sites();
    for (insn = get_insns(); insn; insn = next) {
        next = NEXT_INSN(insn);
        if (!CALL_P(insn))
            continue;
        const char *name = direct_callee(insn);
        if (!name || strcmp(name, INSTR_HOOK_CALL) != 0)
            continue;
        rtx_insn *end = empty_pair_end(insn);
        if (!end)
            continue;
        rtx site = first_argument(insn);
        if (!site || returns_of(returns, site) != 1) {
            if (dump_file)
                fprintf(dump_file, "instr: call-site hooks kept: the site of insn %d returns on several paths\n",
                        INSN_UID(insn));
            continue;
        }
        if (dump_file)
            fprintf(dump_file, "instr: call-site hooks removed: no call between insns %d and %d\n",
                    INSN_UID(insn), INSN_UID(end));
        next = NEXT_INSN(end);
        delete_insn(insn);
        delete_insn(end);
        removed++;
    }
    return removed;
}

namespace {

const pass_data empty_sites_pass_data = {
    RTL_PASS,
    INSTR_EMPTY_SITES_PASS_NAME,
    OPTGROUP_NONE,
    TV_NONE,
    PROP_rtl, /* properties_required */
    0,        /* properties_provided */
    0,        /* properties_destroyed */
    0,        /* todo_flags_start */
    0,        /* todo_flags_finish */
};

class empty_sites_pass : public rtl_opt_pass {
public:
    empty_sites_pass(gcc::context *ctxt) : rtl_opt_pass(empty_sites_pass_data, ctxt) {}

    unsigned int execute(function *) final override
    {
        unsigned removed = remove_empty_pairs();
        if (dump_file)
            fprintf(dump_file, "instr: %u call-site hook pairs removed\n\n", removed);
        return 0;
    }
};

} // namespace

opt_pass *instr_make_empty_sites_pass(gcc::context *ctxt)
{
    return new empty_sites_pass(ctxt);
}

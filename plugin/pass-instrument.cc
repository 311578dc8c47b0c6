/* pass-instrument.cc - inserting the enter/exit/landing and call-site hooks.
 *
 * Per instrumented function:
 *
 *   entry:        cfa = __builtin_dwarf_cfa (); __instr_enter (&desc, cfa);
 *   each return:  cfa = __builtin_dwarf_cfa (); __instr_exit (&desc, cfa);
 *   each landing  <post landing pad label>:
 *   pad:          cfa = __builtin_dwarf_cfa (); __instr_landing (&desc, cfa);
 *   each call     cfa = __builtin_dwarf_cfa (); __instr_call (&site, cfa, target);
 *   (callsites=): lhs = CALLEE (args);
 *                 cfa = __builtin_dwarf_cfa (); __instr_return (&site, cfa);
 *
 * Exceptions leave a frame without passing a return, so the runtime learns
 * about them at the next landing pad that runs: the frame owning that pad is
 * still live and every deeper frame it had open is gone.  This needs no new
 * EH regions, which keeps the IR surgery to plain call insertion. */
#include "pass-instrument.h"

#include "count-mode.h"
#include "fn-descriptor.h"
#include "hook-abi.h"
#include "options.h"
#include "pass-switch.h"
#include "threshold.h"

static GTY(()) tree hook_enter;
static GTY(()) tree hook_exit;
static GTY(()) tree hook_landing;
static GTY(()) tree hook_call;
static GTY(()) tree hook_return;
static GTY(()) tree hook_ending;
static GTY(()) tree hook_bind_late;

const struct ggc_root_tab instr_pass_gc_roots[] = {
    {&hook_enter, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_exit, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_landing, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_call, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_return, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_ending, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_bind_late, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

static unsigned instrumented_count;
static unsigned left_out_count;
static bool main_here;

unsigned instr_instrumented_count(void)
{
    return instrumented_count;
}

unsigned instr_left_out_count(void)
{
    return left_out_count;
}

bool instr_main_here(void)
{
    return main_here;
}

/* skip_reason's answer for threshold=N, compared by address. */
static const char threshold_reason[] = "under threshold= (no loop, no call)";
/* Reasons after which not even count mode's arming test may be added. */
static const char no_instrument_reason[] = "no_instrument_function";
static const char naked_reason[] = "naked";

/* extern void HOOK (void *desc, void *cfa): hidden because every module has
 * its own trampolines (binding-asm.cc), so calls go straight to them with no
 * PLT; nothrow so no EH edges are needed; leaf because the runtime never
 * calls back into the program, which keeps the optimiser's knowledge of the
 * TU's static variables across the call (all but __instr_bind_late:
 * bind_late_decl). */
static tree hook_decl(const char *name, tree type, bool leaf = true)
{
    tree decl = build_fn_decl(name, type);
    TREE_PUBLIC(decl) = 1;
    DECL_EXTERNAL(decl) = 1;
    DECL_ARTIFICIAL(decl) = 1;
    TREE_NOTHROW(decl) = 1;
    DECL_VISIBILITY(decl) = VISIBILITY_HIDDEN;
    DECL_VISIBILITY_SPECIFIED(decl) = 1;
    tree attrs = tree_cons(get_identifier("nothrow"), NULL_TREE, NULL_TREE);
    DECL_ATTRIBUTES(decl) = leaf ? tree_cons(get_identifier("leaf"), NULL_TREE, attrs) : attrs;
    return decl;
}

static tree build_hook_decl(const char *name, bool three_args = false)
{
    return hook_decl(name, three_args ? build_function_type_list(void_type_node, ptr_type_node, ptr_type_node,
                                                                 ptr_type_node, NULL_TREE)
                                      : build_function_type_list(void_type_node, ptr_type_node, ptr_type_node,
                                                                 NULL_TREE));
}

static void build_hook_decls(void)
{
    if (hook_enter)
        return;
    hook_enter = build_hook_decl(INSTR_HOOK_ENTER);
    hook_exit = build_hook_decl(INSTR_HOOK_EXIT);
    hook_landing = build_hook_decl(INSTR_HOOK_LANDING);
    hook_call = build_hook_decl(INSTR_HOOK_CALL, true);
    hook_return = build_hook_decl(INSTR_HOOK_RETURN);
    /* void __instr_ending (long status) */
    hook_ending = hook_decl(INSTR_HOOK_ENDING, build_function_type_list(void_type_node, long_integer_type_node,
                                                                         NULL_TREE));
}

/* void __instr_bind_late (void): not leaf, unlike the hooks: it loads the
 * runtime, and the dynamic linker calls the program's own malloc and free
 * meanwhile (hook-abi.h, "Deferred binding"), which may read and write
 * this unit's variables. */
static tree bind_late_decl(void)
{
    return hook_decl(INSTR_BIND_LATE_HOOK, build_function_type_list(void_type_node, NULL_TREE), false);
}

/* Why a function gets no hooks, or NULL if it gets them. */
static const char *skip_reason(tree fndecl)
{
    /* The attribute, not DECL_NO_INSTRUMENT_FUNCTION_ENTRY_EXIT: by the time
     * the function reaches this pass the gimplifier has set that flag on
     * every function (so -finstrument-functions never instruments twice). */
    if (lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(fndecl)))
        return no_instrument_reason;
    /* A naked function has no prologue: a call would clobber the caller's
     * registers and stack. */
    if (lookup_attribute("naked", DECL_ATTRIBUTES(fndecl)))
        return naked_reason;
    /* What GCC makes for its own purposes and marks artificial (the C++
     * static-initialisation functions _GLOBAL__sub_I_* and
     * __static_initialization_and_destruction_0, implicitly defined special
     * members, thunks) has no source of its own to show; its work is charged
     * to its caller, and what it calls is still recorded.  IPA clones
     * (foo.part.0, foo.constprop.0, foo.isra.0) are judged by the function
     * they were cloned from, because they are that function's code. */
    tree origin = DECL_ORIGIN(fndecl);
    if (DECL_ARTIFICIAL(fndecl) && (origin == fndecl || DECL_ARTIFICIAL(origin)))
        return "artificial";
    if (!instr_options_select(fndecl))
        return "not selected by include/exclude/exclude-file";
    if (instr_threshold_leaves_out(fndecl))
        return threshold_reason;
    return NULL;
}

static location_t or_fallback(location_t loc, location_t fallback)
{
    return loc == UNKNOWN_LOCATION ? fallback : loc;
}

/* Inserts "cfa = __builtin_dwarf_cfa (); HOOK (&desc, cfa);" before *gsi.
 * The CFA is the caller's stack pointer before the call: the same at every
 * hook of a frame, and higher for older frames.  It needs no frame pointer,
 * since GCC computes it from the stack pointer at a known offset. */
static void insert_hook(gimple_stmt_iterator *gsi, tree hook, tree desc,
                        location_t loc)
{
    gcall *cfa_call = gimple_build_call(builtin_decl_explicit(BUILT_IN_DWARF_CFA), 0);
    tree cfa = make_ssa_name(ptr_type_node, cfa_call);
    gimple_call_set_lhs(cfa_call, cfa);
    gimple_set_location(cfa_call, loc);

    tree desc_addr = build_fold_addr_expr_with_type(desc, ptr_type_node);
    gcall *hook_call = gimple_build_call(hook, 2, desc_addr, cfa);
    gimple_set_location(hook_call, loc);

    gsi_insert_before(gsi, cfa_call, GSI_SAME_STMT);
    gsi_insert_before(gsi, hook_call, GSI_SAME_STMT);

    /* After IPA the call graph is no longer rebuilt for us, so the new calls
     * get their edges here (before inlining a later pass rebuilds them). */
    cgraph_node *node = cgraph_node::get(current_function_decl);
    node->create_edge(cgraph_node::get_create(gimple_call_fndecl(cfa_call)),
                      cfa_call, gimple_bb(cfa_call)->count);
    node->create_edge(cgraph_node::get_create(hook), hook_call,
                      gimple_bb(hook_call)->count);
}

/* The same two statements as insert_hook, for a call hook: three arguments
 * (site, cfa, target) or two (site, cfa); inserted before *gsi, or after it
 * when after is set (the iterator then points at the hook). */
static void insert_site_hook(gimple_stmt_iterator *gsi, bool after, tree hook, tree site,
                             tree target, location_t loc)
{
    gcall *cfa_call = gimple_build_call(builtin_decl_explicit(BUILT_IN_DWARF_CFA), 0);
    tree cfa = make_ssa_name(ptr_type_node, cfa_call);
    gimple_call_set_lhs(cfa_call, cfa);
    gimple_set_location(cfa_call, loc);
    tree site_addr = build_fold_addr_expr_with_type(site, ptr_type_node);
    gcall *hook_call = target ? gimple_build_call(hook, 3, site_addr, cfa, target)
                              : gimple_build_call(hook, 2, site_addr, cfa);
    gimple_set_location(hook_call, loc);
    if (after) {
        gsi_insert_after(gsi, cfa_call, GSI_NEW_STMT);
        gsi_insert_after(gsi, hook_call, GSI_NEW_STMT);
    } else {
        gsi_insert_before(gsi, cfa_call, GSI_SAME_STMT);
        gsi_insert_before(gsi, hook_call, GSI_SAME_STMT);
    }
    cgraph_node *node = cgraph_node::get(current_function_decl);
    node->create_edge(cgraph_node::get_create(gimple_call_fndecl(cfa_call)),
                      cfa_call, gimple_bb(cfa_call)->count);
    node->create_edge(cgraph_node::get_create(hook), hook_call,
                      gimple_bb(hook_call)->count);
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Why a call statement gets no call-site hooks, or NULL if it gets them.
 *
 * The rule: hook every call that can reach code outside this function,
 * skip what cannot be a real call or cannot be bracketed.
 *  - internal functions (IFN_*: overflow checks, vector loads...) are
 *    never calls;
 *  - machine builtins always expand inline; "normal" builtins without a
 *    library fallback (their assembler name starts with __builtin_,
 *    __sync_ or __atomic_: __builtin_expect, __builtin_alloca,
 *    __builtin_dwarf_cfa...) expand inline too.  Builtins that are library
 *    functions stay, however they are spelled (memcpy, __builtin_memcpy:
 *    the assembler name of both is "memcpy"; __builtin_memcmp_eq, named
 *    after the memcmp it falls back to: library_fallback): GCC may or may not expand
 *    them, which is only known after expansion, where the hook pairs around
 *    calls that became no call are removed (pass-empty-sites.cc);
 *  - our own hooks (__instr_*), and the public API instr_event /
 *    instr_counter: a mark only splits an interval, it is not a frame;
 *  - callees marked no_instrument_function: the user asked for them not to
 *    be seen, so their time stays with the caller;
 *  - noreturn calls (exit, abort, __cxa_throw, longjmp, _Unwind_Resume)
 *    have no "after" point, so their frame could only ever be closed by a
 *    repair; returns_twice calls (setjmp, vfork) would run the "after"
 *    hook twice for one "before";
 *  - a call whose only ways out are EH or abnormal edges, for the same
 *    reason as noreturn;
 *  - callsites=external: callees defined in this unit and instrumented
 *    (their entry hook already gives them a frame). */
/* The library function a builtin spelled __builtin_ becomes when GCC does
 * not expand it inline, or NULL: the folders turn memcmp (...) == 0 into
 * __builtin_memcmp_eq, strcmp and strncmp compared with 0 into
 * __builtin_str(n)cmp_eq, and expansion calls memcmp, strcmp or strncmp
 * unless the length is small and known.  Lua's string interning made 2,386
 * calls of memcmp that had no frame. */
static const char *library_fallback(tree fndecl)
{
    switch (DECL_FUNCTION_CODE(fndecl)) {
    case BUILT_IN_MEMCMP_EQ:
        return "memcmp";
    case BUILT_IN_STRCMP_EQ:
        return "strcmp";
    case BUILT_IN_STRNCMP_EQ:
        return "strncmp";
    default:
        return NULL;
    }
}

static const char *site_skip_reason(gcall *call, tree *callee_name, tree *target)
{
    *callee_name = NULL_TREE;
    *target = NULL_TREE;
    if (gimple_call_internal_p(call))
        return "internal function";
    int flags = gimple_call_flags(call);
    if (flags & (ECF_NORETURN | ECF_RETURNS_TWICE))
        return "noreturn or returns_twice";
    if (gimple_call_must_tail_p(call))
        return "must tail-call";
    tree fndecl = gimple_call_fndecl(call);
    if (fndecl) {
        if (fndecl_built_in_p(fndecl, BUILT_IN_MD))
            return "machine builtin";
        const char *mangled = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));
        if (fndecl_built_in_p(fndecl, BUILT_IN_NORMAL) &&
            (has_prefix(mangled, "__builtin_") || has_prefix(mangled, "__sync_") ||
             has_prefix(mangled, "__atomic_"))) {
            if (const char *lib = library_fallback(fndecl)) {
                *callee_name = get_identifier(lib);
                return NULL;
            }
            return "builtin expanded inline";
        }
        if (has_prefix(mangled, "__instr_"))
            return "instr hook";
        /* A mark or counter splits an interval; it is not a frame (data-values.md). */
        if (!strcmp(mangled, INSTR_API_EVENT) || !strcmp(mangled, INSTR_API_COUNTER) ||
            !strcmp(mangled, INSTR_API_START) || !strcmp(mangled, INSTR_API_STOP))
            return "instr API call";
        if (lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(fndecl)))
            return "callee is no_instrument_function";
        /* Left out on purpose: its time goes to the caller, so the call
         * gets no pseudo-frame either (that would cost the same hooks). */
        if (instr_options_excluded_callee(fndecl))
            return "callee excluded (exclude=)";
        {
            cgraph_node *cn = cgraph_node::get(fndecl);
            if (cn && cn->definition && instr_threshold_leaves_out(fndecl))
                return "callee left out (threshold=)";
        }
        if (instr_opts.callsites == instr_options::CALLSITES_EXTERNAL) {
            cgraph_node *cn = cgraph_node::get(fndecl);
            if (cn && cn->definition && !skip_reason(fndecl))
                return "callee instrumented in this unit (callsites=external)";
        }
        *callee_name = DECL_ASSEMBLER_NAME(fndecl);
        return NULL;
    }
    tree fn = gimple_call_fn(call);
    if (TREE_CODE(fn) == OBJ_TYPE_REF)
        fn = OBJ_TYPE_REF_EXPR(fn); /* a virtual call: the loaded vtable slot */
    if (!is_gimple_val(fn) || !POINTER_TYPE_P(TREE_TYPE(fn)))
        return "unusual callee expression";
    *target = fn;
    return NULL;
}

/* The statement after which a call's "after" hook goes: the call, or,
 * after strncpy, stpncpy or strncat, the store that follows it in its
 * block.  GCC's -Wstringop-truncation stays quiet when the statement right
 * after such a call stores into its destination (dst[N - 1] = '\0';
 * maybe_diag_stxncpy_trunc looks at the next statement only): with the
 * hook between the two, the instrumented build warned where the plain
 * one does not, and broke -Werror builds (Redis's config.c and module.c).
 * The store, one instruction, is then timed with the callee. */
static gimple *after_hook_anchor(gcall *call)
{
    tree fndecl = gimple_call_fndecl(call);
    if (!fndecl || !fndecl_built_in_p(fndecl, BUILT_IN_NORMAL))
        return call;
    switch (DECL_FUNCTION_CODE(fndecl)) {
    case BUILT_IN_STRNCPY:
    case BUILT_IN_STPNCPY:
    case BUILT_IN_STRNCAT:
        break;
    default:
        return call;
    }
    gimple_stmt_iterator gsi = gsi_for_stmt(call);
    gsi_next_nondebug(&gsi);
    if (gsi_end_p(gsi))
        return call;
    gimple *next = gsi_stmt(gsi);
    if (!is_gimple_assign(next) || !gimple_store_p(next) || gimple_has_volatile_ops(next) ||
        stmt_could_throw_p(cfun, next))
        return call;
    return next;
}

/* Calls that may put the thread in a seccomp sandbox (INSTR_SITE_SANDBOX,
 * runtime/sandbox.c): once the filter exists, a system call of the
 * runtime's may kill the process, so the runtime stops recording before
 * such a call runs.  With the sud detector it sees the system call itself;
 * this is what it sees without sud.  The option is a constant in nearly
 * every program; a call whose option is not (a wrapper passing it on)
 * is not marked, but seccomp_load () of libseccomp always is.  Linux
 * x86-64 numbers, spelled here: the GCC headers poison the system ones. */
enum {
    NR_PRCTL = 157,
    NR_SECCOMP = 317,
    PR_SET_SECCOMP_ = 22,
    PR_SET_NO_NEW_PRIVS_ = 38,
    SECCOMP_MODE_STRICT_ = 1,    /* prctl (PR_SET_SECCOMP, mode) */
    SECCOMP_SET_MODE_STRICT_ = 0 /* seccomp (operation, ...) */
};

/* Whether argument i of call is the integer constant v (-1: not a constant). */
static int const_arg(gcall *call, unsigned i, HOST_WIDE_INT v)
{
    if (i >= gimple_call_num_args(call))
        return -1;
    tree a = gimple_call_arg(call, i);
    if (TREE_CODE(a) != INTEGER_CST || !tree_fits_shwi_p(a))
        return -1;
    return tree_to_shwi(a) == v;
}

/* prctl's arguments from argument i on: its INSTR_SITE_SANDBOX* bits. */
static unsigned prctl_sandbox(gcall *call, unsigned i)
{
    if (const_arg(call, i, PR_SET_NO_NEW_PRIVS_) == 1)
        return INSTR_SITE_SANDBOX;
    if (const_arg(call, i, PR_SET_SECCOMP_) == 1)
        return INSTR_SITE_SANDBOX |
               (const_arg(call, i + 1, SECCOMP_MODE_STRICT_) != 0 ? INSTR_SITE_SANDBOX_STRICT : 0);
    return 0;
}

static unsigned sandbox_flags(gcall *call, const char *callee)
{
    if (!callee)
        return 0;
    if (!strcmp(callee, "seccomp_load"))
        return INSTR_SITE_SANDBOX;
    if (!strcmp(callee, "prctl"))
        return prctl_sandbox(call, 0);
    if (!strcmp(callee, "syscall")) {
        if (const_arg(call, 0, NR_SECCOMP) == 1)
            return INSTR_SITE_SANDBOX |
                   (const_arg(call, 1, SECCOMP_SET_MODE_STRICT_) != 0 ? INSTR_SITE_SANDBOX_STRICT : 0);
        if (const_arg(call, 0, NR_PRCTL) == 1)
            return prctl_sandbox(call, 1);
    }
    return 0;
}

/* The normal way out of a call that ends its block (it can throw): the one
 * successor edge that is neither EH nor abnormal, or NULL. */
static edge fallthrough_edge(basic_block bb)
{
    edge found = NULL, e;
    edge_iterator ei;
    FOR_EACH_EDGE(e, ei, bb->succs) {
        if (e->flags & (EDGE_EH | EDGE_ABNORMAL))
            continue;
        if (found)
            return NULL;
        found = e;
    }
    return found;
}

/* Whether stmt is a call to the hook named name. */
static bool calls_hook(gimple *stmt, const char *name)
{
    gcall *call = dyn_cast<gcall *>(stmt);
    tree fndecl = call ? gimple_call_fndecl(call) : NULL_TREE;
    return fndecl && !strcmp(IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl)), name);
}

/* Whether call lies inside a call-site hook pair: walking back in its
 * block, an __instr_call comes before any other hook (the pair the first
 * pass put around it, or around a call a later pass rewrote into several).
 * A call outside every pair was made after the first pass. */
static bool inside_site(gimple *call)
{
    gimple_stmt_iterator gsi = gsi_for_stmt(call);
    for (gsi_prev(&gsi); !gsi_end_p(gsi); gsi_prev(&gsi)) {
        gimple *stmt = gsi_stmt(gsi);
        if (calls_hook(stmt, INSTR_HOOK_CALL))
            return true;
        if (calls_hook(stmt, INSTR_HOOK_RETURN) || calls_hook(stmt, INSTR_HOOK_ENTER) ||
            calls_hook(stmt, INSTR_HOOK_LANDING))
            return false;
    }
    return false;
}

/* Brackets each hookable call with __instr_call/__instr_return.  Calls are
 * collected first, so the hooks inserted here (and the other hooks, inserted
 * later) are never candidates.  The "after" hook goes right after the call,
 * or at the head of a new block on its fallthrough edge when the call ends
 * its block; the EH edge gets nothing: an exception leaving the call is
 * closed by the landing hook of the frame that catches it (hook-abi.h).
 * late: only the calls outside every hook pair (the late pass).
 *
 * Calls to const and pure functions are left to the late pass (the last
 * before expansion, which brackets every call outside a pair): the hooks
 * are calls that may write memory and may not return, so a pure call next
 * to them could no longer be merged with an equal one (FRE, PRE: the hooks
 * clobber what it reads) nor hoisted out of its loop (LIM moves a call
 * only while no call that may not return precedes it in its block).  A
 * pure function called with the same argument in a loop ran 4 times plain
 * and 14,400 times instrumented.  Left alone until the late pass, such
 * calls are merged, hoisted or removed as in the plain build, and the ones
 * left get their hooks there. */
static unsigned instrument_call_sites(function *fun, tree fn_desc, bool late = false)
{
    if (instr_opts.callsites == instr_options::CALLSITES_NONE)
        return 0;
    auto_vec<gcall *> calls;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fun) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi))
            if (gcall *call = dyn_cast<gcall *>(gsi_stmt(gsi))) {
                if (late ? inside_site(call) : (gimple_call_flags(call) & (ECF_CONST | ECF_PURE)) != 0)
                    continue;
                calls.safe_push(call);
            }
    }
    unsigned count = 0, i;
    gcall *call;
    FOR_EACH_VEC_ELT(calls, i, call) {
        tree callee, target;
        const char *why = site_skip_reason(call, &callee, &target);
        basic_block cbb = gimple_bb(call);
        edge out = NULL;
        if (!why && stmt_ends_bb_p(call) && !(out = fallthrough_edge(cbb)))
            why = "no normal way out";
        location_t loc = or_fallback(gimple_location(call), DECL_SOURCE_LOCATION(fun->decl));
        if (why) {
            if (dump_file) {
                fprintf(dump_file, "instr: call site skipped (%s): ", why);
                print_gimple_stmt(dump_file, call, 0, TDF_SLIM);
            }
            continue;
        }
        const char *name = callee ? IDENTIFIER_POINTER(callee) : NULL;
        unsigned flags = (callee == NULL_TREE ? INSTR_SITE_INDIRECT : 0) | sandbox_flags(call, name);
        if (dump_file && (flags & INSTR_SITE_SANDBOX)) {
            fprintf(dump_file, "instr: call site may enter a seccomp sandbox%s: ",
                    flags & INSTR_SITE_SANDBOX_STRICT ? " (strict)" : "");
            print_gimple_stmt(dump_file, call, 0, TDF_SLIM);
        }
        tree site = instr_build_site_descriptor(fn_desc, name, flags, loc);
        gimple_stmt_iterator gsi = gsi_for_stmt(call);
        gimple_call_set_tail(call, false); /* the "after" hook follows it now */
        if (target) {
            /* (void *) target, evaluated right before the call. */
            tree t = make_ssa_name(ptr_type_node);
            gassign *conv = gimple_build_assign(t, NOP_EXPR, target);
            gimple_set_location(conv, loc);
            gsi_insert_before(&gsi, conv, GSI_SAME_STMT);
            target = t;
        } else {
            target = null_pointer_node;
        }
        insert_site_hook(&gsi, false, hook_call, site, target, loc);
        if (out) {
            basic_block nb = split_edge(out);
            gimple_stmt_iterator after = gsi_after_labels(nb);
            insert_site_hook(&after, false, hook_return, site, NULL_TREE, loc);
        } else {
            gimple_stmt_iterator after = gsi_for_stmt(after_hook_anchor(call));
            insert_site_hook(&after, true, hook_return, site, NULL_TREE, loc);
        }
        count++;
    }
    return count;
}

/* Calls that end the process without running any exit handler (_exit,
 * _Exit; quick_exit runs only its own): noreturn, so they get no call-site
 * hooks, and the runtime would see no end (only the sud detector catches
 * the exit_group that follows a hook).  Before each, __instr_ending
 * (status) records the end as exit() would, whatever the callsites= and
 * the detectors.  Returns how many were found. */
static unsigned instrument_endings(function *fun)
{
    unsigned n = 0;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fun) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
            gcall *call = dyn_cast<gcall *>(gsi_stmt(gsi));
            tree fndecl = call ? gimple_call_fndecl(call) : NULL_TREE;
            if (!fndecl || gimple_call_num_args(call) != 1 || !(gimple_call_flags(call) & ECF_NORETURN))
                continue;
            const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));
            if (strcmp(name, "_exit") && strcmp(name, "_Exit") && strcmp(name, "quick_exit"))
                continue;
            location_t loc = or_fallback(gimple_location(call), DECL_SOURCE_LOCATION(fun->decl));
            tree arg = gimple_call_arg(call, 0), status;
            if (is_gimple_min_invariant(arg)) {
                status = fold_convert(long_integer_type_node, arg);
            } else {
                status = make_ssa_name(long_integer_type_node);
                gassign *conv = gimple_build_assign(status, NOP_EXPR, arg);
                gimple_set_location(conv, loc);
                gsi_insert_before(&gsi, conv, GSI_SAME_STMT);
            }
            gcall *hook = gimple_build_call(hook_ending, 1, status);
            gimple_set_location(hook, loc);
            gsi_insert_before(&gsi, hook, GSI_SAME_STMT);
            cgraph_node::get(current_function_decl)
                ->create_edge(cgraph_node::get_create(hook_ending), hook, gimple_bb(hook)->count);
            n++;
        }
    }
    return n;
}

/* The entry hook must run once per call, so it needs a block that is not a
 * loop header: if the first block has PHIs or several predecessors (a loop
 * starting at the first statement), a fresh block on the entry edge. */
static void instrument_entry(function *fun, tree desc)
{
    edge e = single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun));
    basic_block bb = e->dest;
    if (!single_pred_p(bb) || !gimple_seq_empty_p(phi_nodes(bb)))
        bb = split_edge(e);
    gimple_stmt_iterator gsi = gsi_after_labels(bb);
    insert_hook(&gsi, hook_enter, desc,
                or_fallback(DECL_SOURCE_LOCATION(fun->decl), fun->function_start_locus));
}

/* main's first statement, before its entry hook (so that main is recorded
 * when the binding was deferred to it): __instr_bind_late (), the binding
 * its module's constructor left to main if the program defines its own
 * allocator (hook-abi.h, "Deferred binding"); and the unit says main is
 * here (instr_main_here).  Time mode only: count mode's counts before the
 * binding are not lost, and its modules bind in the constructor as
 * before. */
static void instrument_main(function *fun)
{
    if (strcmp(IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fun->decl)), "main") || !TREE_PUBLIC(fun->decl))
        return;
    if (!hook_bind_late)
        hook_bind_late = bind_late_decl();
    basic_block bb = single_succ(ENTRY_BLOCK_PTR_FOR_FN(fun));
    gimple_stmt_iterator gsi = gsi_after_labels(bb);
    gcall *call = gimple_build_call(hook_bind_late, 0);
    gimple_set_location(call, or_fallback(DECL_SOURCE_LOCATION(fun->decl), fun->function_start_locus));
    gsi_insert_before(&gsi, call, GSI_SAME_STMT);
    cgraph_node::get(current_function_decl)
        ->create_edge(cgraph_node::get_create(hook_bind_late), call, gimple_bb(call)->count);
    main_here = true;
}

/* Every return, so every normal exit path is closed.  A call right before a
 * return is no longer in tail position once the hook sits between them. */
static unsigned instrument_returns(function *fun, tree desc)
{
    auto_vec<gimple *> returns;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fun) {
        gimple_stmt_iterator gsi = gsi_last_nondebug_bb(bb);
        if (!gsi_end_p(gsi) && gimple_code(gsi_stmt(gsi)) == GIMPLE_RETURN)
            returns.safe_push(gsi_stmt(gsi));
    }

    unsigned i;
    gimple *ret;
    FOR_EACH_VEC_ELT(returns, i, ret) {
        gimple_stmt_iterator gsi = gsi_for_stmt(ret);
        gimple_stmt_iterator prev = gsi;
        gsi_prev_nondebug(&prev);
        if (!gsi_end_p(prev))
            if (gcall *call = dyn_cast<gcall *>(gsi_stmt(prev)))
                gimple_call_set_tail(call, false);
        insert_hook(&gsi, hook_exit, desc,
                    or_fallback(gimple_location(ret), fun->function_end_locus));
    }
    return returns.length();
}

/* The post landing pad is where control arrives when an exception unwinds
 * into this frame, for catch handlers and cleanups alike.  Several pads may
 * share one block after CFG cleanup; it gets one hook.  Should such a block
 * also be reachable normally, the extra hook is harmless: the frame is live
 * and has no deeper frames open at that point. */
static unsigned instrument_landing_pads(function *fun, tree desc)
{
    if (!fun->eh)
        return 0;
    auto_bitmap done;
    unsigned count = 0;
    unsigned i;
    eh_landing_pad lp;
    FOR_EACH_VEC_SAFE_ELT(fun->eh->lp_array, i, lp) {
        if (!lp || !lp->post_landing_pad)
            continue;
        basic_block bb = label_to_block(fun, lp->post_landing_pad);
        if (!bb || !bitmap_set_bit(done, bb->index))
            continue;
        gimple_stmt_iterator gsi = gsi_after_labels(bb);
        location_t loc = gsi_end_p(gsi) ? UNKNOWN_LOCATION
                                        : gimple_location(gsi_stmt(gsi));
        insert_hook(&gsi, hook_landing, desc, or_fallback(loc, fun->function_end_locus));
        count++;
    }
    return count;
}

/* Library builtins that stay calls: GCC never expands them inline (it may
 * turn printf into puts or putchar, a call still), so count mode counts
 * them as the time build's call-site hooks record them. */
static bool builtin_stays_call(tree fndecl)
{
    switch (DECL_FUNCTION_CODE(fndecl)) {
    case BUILT_IN_MALLOC:
    case BUILT_IN_CALLOC:
    case BUILT_IN_REALLOC:
    case BUILT_IN_FREE:
    case BUILT_IN_ALIGNED_ALLOC:
    case BUILT_IN_POSIX_MEMALIGN:
    case BUILT_IN_STRDUP:
    case BUILT_IN_STRNDUP:
    case BUILT_IN_PRINTF:
    case BUILT_IN_FPRINTF:
    case BUILT_IN_SPRINTF:
    case BUILT_IN_SNPRINTF:
    case BUILT_IN_VPRINTF:
    case BUILT_IN_VFPRINTF:
    case BUILT_IN_VSPRINTF:
    case BUILT_IN_VSNPRINTF:
    case BUILT_IN_PUTS:
    case BUILT_IN_FPUTS:
    case BUILT_IN_PUTCHAR:
    case BUILT_IN_FPUTC:
    case BUILT_IN_FWRITE:
    case BUILT_IN_FORK:
        return true;
    default:
        return false;
    }
}

/* Count mode: the counted functions' descriptors, for the late pass. */
static std::unordered_map<tree, tree> counted_desc;

/* mode=count: the calls that would get call-site hooks get a counter
 * instead; library builtins GCC may expand inline (memcpy...) are left
 * out, since no pass after expansion can take a counter back out (those
 * that stay calls, malloc, free, printf..., are counted).  As
 * with hooks (instrument_call_sites), calls to const and pure functions
 * are counted by the late pass (late), after the optimiser merged,
 * hoisted or removed them as in the plain build: a counter left in a loop
 * the call was hoisted out of would count calls that are not made. */
static std::vector<instr_count_site> count_sites(function *fun, bool late)
{
    std::vector<instr_count_site> sites;
    if (instr_opts.callsites == instr_options::CALLSITES_NONE)
        return sites;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fun) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
            gcall *call = dyn_cast<gcall *>(gsi_stmt(gsi));
            if (!call || late != ((gimple_call_flags(call) & (ECF_CONST | ECF_PURE)) != 0))
                continue;
            tree callee, target;
            if (site_skip_reason(call, &callee, &target))
                continue;
            tree fndecl = gimple_call_fndecl(call);
            if (fndecl && fndecl_built_in_p(fndecl, BUILT_IN_NORMAL) && !builtin_stays_call(fndecl))
                continue;
            location_t loc = or_fallback(gimple_location(call), DECL_SOURCE_LOCATION(fun->decl));
            sites.push_back({call, callee ? IDENTIFIER_POINTER(callee) : NULL, loc});
        }
    }
    return sites;
}

static unsigned count_mode(function *fun, tree desc)
{
    std::vector<instr_count_site> sites = count_sites(fun, false);
    counted_desc[fun->decl] = desc;
    unsigned todo = instr_count_function(fun, desc, sites);
    if (instrument_endings(fun)) { /* the counts are written at the end */
        mark_virtual_operands_for_renaming(fun);
        todo |= TODO_update_ssa_only_virtuals;
    }
    instrumented_count++;
    if (dump_file)
        fprintf(dump_file, "instr: counted: entry and %u call sites\n\n", (unsigned)sites.size());
    if (instr_opts.verbose)
        inform(DECL_SOURCE_LOCATION(fun->decl), "%s: counted %qs (%u call sites)",
               instr_opts.plugin_name.c_str(), IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fun->decl)),
               (unsigned)sites.size());
    return todo;
}

namespace {

const pass_data instrument_pass_data = {
    GIMPLE_PASS,
    INSTR_PASS_NAME,
    OPTGROUP_NONE,
    TV_NONE,
    PROP_cfg | PROP_ssa, /* properties_required */
    0,                   /* properties_provided */
    0,                   /* properties_destroyed */
    0,                   /* todo_flags_start */
    0,                   /* todo_flags_finish: execute() says what it changed */
};

class instrument_pass : public gimple_opt_pass {
public:
    instrument_pass(gcc::context *ctxt)
        : gimple_opt_pass(instrument_pass_data, ctxt)
    {
    }

    unsigned int execute(function *fun) final override
    {
        /* switchable: a hooked copy is hooked as the function it copies,
         * which already passed skip_reason (pass-switch.cc). */
        tree named = instr_opts.switchable ? instr_switch_origin(fun->decl) : NULL_TREE;
        const char *why = named ? NULL : skip_reason(fun->decl);
        if (why == threshold_reason) {
            left_out_count++;
            if (dump_file)
                fprintf(dump_file, "instr: skipped: under threshold=%u (%u statements, no loop, no call)\n\n",
                        instr_opts.threshold, instr_threshold_statements(fun->decl));
            if (instr_opts.verbose)
                inform(DECL_SOURCE_LOCATION(fun->decl), "%s: left out %qs: %u statements, under threshold=%u",
                       instr_opts.plugin_name.c_str(),
                       IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fun->decl)),
                       instr_threshold_statements(fun->decl), instr_opts.threshold);
            return 0;
        }
        if (why) {
            if (dump_file)
                fprintf(dump_file, "instr: skipped: %s\n\n", why);
            /* Count mode: a thread may begin in an excluded or artificial
             * function and only then reach counted code (count-mode.h). */
            if (instr_opts.mode == instr_options::MODE_COUNT && why != naked_reason &&
                why != no_instrument_reason && instr_count_arm_only(fun))
                return TODO_update_ssa_only_virtuals;
            return 0;
        }
        build_hook_decls();
        if (instr_opts.switchable && !named)
            return instr_switch_split(fun);

        tree desc = instr_build_fn_descriptor(named ? named : fun->decl, named != NULL_TREE);
        if (instr_opts.mode == instr_options::MODE_COUNT)
            return count_mode(fun, desc);
        /* Call sites first: they collect the calls that are in the body now. */
        unsigned sites = instrument_call_sites(fun, desc);
        instrument_endings(fun);
        unsigned landings = instrument_landing_pads(fun, desc);
        unsigned exits = instrument_returns(fun, desc);
        instrument_entry(fun, desc);
        if (!named)
            instrument_main(fun);
        instrumented_count++;

        const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fun->decl));
        if (dump_file)
            fprintf(dump_file, "instr: instrumented: %u exits, %u landing pads, %u call sites\n\n",
                    exits, landings, sites);
        if (instr_opts.verbose)
            inform(DECL_SOURCE_LOCATION(fun->decl),
                   "%s: instrumented %qs (%u exits, %u landing pads, %u call sites)",
                   instr_opts.plugin_name.c_str(), name, exits, landings, sites);

        /* The hook calls read and write memory, so they need virtual
         * operands threaded through the function; letting the SSA updater
         * rename the virtual web is simpler than splicing vdefs by hand. */
        mark_virtual_operands_for_renaming(fun);
        return TODO_update_ssa_only_virtuals;
    }
};

} // namespace

opt_pass *instr_make_instrument_pass(gcc::context *ctxt)
{
    return new instrument_pass(ctxt);
}

/* Smaller aggregates are always copied by moves (x86-64: two 8-byte moves
 * at most), so their assignments need no hooks. */
#define INSTR_BLOCK_MOVE_MIN 17

/* The library function a statement may expand into a call of, when it is
 * an aggregate assignment: a struct or array copied (memcpy) or cleared
 * (memset) as a block.  Whether that becomes a call or moves is decided
 * in expansion, like a builtin's; NULL_TREE for anything else. */
static tree block_move_callee(gimple *stmt)
{
    if (!gimple_assign_single_p(stmt) || gimple_clobber_p(stmt) || stmt_ends_bb_p(stmt))
        return NULL_TREE;
    tree lhs = gimple_assign_lhs(stmt), rhs = gimple_assign_rhs1(stmt);
    if (!AGGREGATE_TYPE_P(TREE_TYPE(lhs)) || TREE_CODE(lhs) == SSA_NAME)
        return NULL_TREE;
    tree size = TYPE_SIZE_UNIT(TREE_TYPE(lhs));
    if (size && tree_fits_uhwi_p(size) && tree_to_uhwi(size) < INSTR_BLOCK_MOVE_MIN)
        return NULL_TREE;
    if (TREE_CODE(rhs) == CONSTRUCTOR)
        return CONSTRUCTOR_NELTS(rhs) == 0 ? builtin_decl_explicit(BUILT_IN_MEMSET) : NULL_TREE;
    return builtin_decl_explicit(BUILT_IN_MEMCPY);
}

/* Brackets every block-move assignment outside a hook pair with the hooks
 * of a call to its library function (the RTL pass removes the pair when
 * the move became no call). */
static unsigned instrument_block_moves(function *fun, tree fn_desc)
{
    auto_vec<gimple *> moves;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fun) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi))
            if (block_move_callee(gsi_stmt(gsi)))
                moves.safe_push(gsi_stmt(gsi));
    }
    unsigned count = 0, i;
    gimple *stmt;
    FOR_EACH_VEC_ELT(moves, i, stmt) {
        tree fndecl = block_move_callee(stmt);
        if (!fndecl || inside_site(stmt) || instr_options_excluded_callee(fndecl))
            continue;
        const char *callee = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));
        location_t loc = or_fallback(gimple_location(stmt), DECL_SOURCE_LOCATION(fun->decl));
        tree site = instr_build_site_descriptor(fn_desc, callee, false, loc);
        gimple_stmt_iterator gsi = gsi_for_stmt(stmt);
        insert_site_hook(&gsi, false, hook_call, site, null_pointer_node, loc);
        gsi = gsi_for_stmt(stmt);
        insert_site_hook(&gsi, true, hook_return, site, NULL_TREE, loc);
        if (dump_file) {
            fprintf(dump_file, "instr: block move hooked as a call to %s: ", callee);
            print_gimple_stmt(dump_file, stmt, 0, TDF_SLIM);
        }
        count++;
    }
    return count;
}

/* The descriptor the function's own entry hook passes (&desc), found on the
 * straight path from the function's entry; NULL_TREE if the function has no
 * entry hook (not instrumented). */
static tree own_descriptor(function *fun)
{
    basic_block bb = single_succ(ENTRY_BLOCK_PTR_FOR_FN(fun));
    for (int n = 0; n < 8 && bb && bb != EXIT_BLOCK_PTR_FOR_FN(fun); n++) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi))
            if (calls_hook(gsi_stmt(gsi), INSTR_HOOK_ENTER)) {
                tree arg = gimple_call_arg(as_a<gcall *>(gsi_stmt(gsi)), 0);
                return TREE_CODE(arg) == ADDR_EXPR && VAR_P(TREE_OPERAND(arg, 0)) ? TREE_OPERAND(arg, 0)
                                                                                  : NULL_TREE;
            }
        bb = single_succ_p(bb) ? single_succ(bb) : NULL;
    }
    return NULL_TREE;
}

namespace {

const pass_data late_sites_pass_data = {
    GIMPLE_PASS,
    INSTR_LATE_PASS_NAME,
    OPTGROUP_NONE,
    TV_NONE,
    PROP_cfg | PROP_ssa, /* properties_required */
    0,                   /* properties_provided */
    0,                   /* properties_destroyed */
    0,                   /* todo_flags_start */
    0,                   /* todo_flags_finish: execute() says what it changed */
};

/* Calls the instrument pass could not see: loop distribution turns a loop
 * that clears or copies an array into a call to memset, memcpy or memmove
 * (-ftree-loop-distribute-patterns, on at -O2) after it ran, and expansion
 * turns a large struct or array assignment into a memcpy or memset call
 * (a block move): call instructions with no hooks around them.  This pass,
 * the last before expansion, gives each its pair, by the same rules; the
 * RTL pass then removes the pairs around what expanded to no call, like
 * the others. */
class late_sites_pass : public gimple_opt_pass {
public:
    late_sites_pass(gcc::context *ctxt) : gimple_opt_pass(late_sites_pass_data, ctxt) {}

    unsigned int execute(function *fun) final override
    {
        if (instr_opts.mode == instr_options::MODE_COUNT) {
            auto it = counted_desc.find(fun->decl);
            if (it == counted_desc.end())
                return 0; /* not counted */
            std::vector<instr_count_site> sites = count_sites(fun, true);
            if (dump_file)
                fprintf(dump_file, "instr: counted: %u call sites of const or pure functions\n\n",
                        (unsigned)sites.size());
            return instr_count_sites(fun, it->second, sites);
        }
        if (!hook_call)
            return 0; /* nothing instrumented in this unit */
        tree desc = own_descriptor(fun);
        if (!desc)
            return 0;
        unsigned sites = instrument_call_sites(fun, desc, true);
        unsigned moves = instrument_block_moves(fun, desc);
        if (dump_file)
            fprintf(dump_file, "instr: %u call sites made after the instrument pass, %u block moves\n\n", sites,
                    moves);
        sites += moves;
        if (!sites)
            return 0;
        mark_virtual_operands_for_renaming(fun);
        return TODO_update_ssa_only_virtuals;
    }
};

} // namespace

opt_pass *instr_make_late_sites_pass(gcc::context *ctxt)
{
    return new late_sites_pass(ctxt);
}

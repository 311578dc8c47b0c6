/* pass-instrument.cc - inserting __instr_enter/__instr_exit/__instr_landing.
 *
 * Per instrumented function:
 *
 *   entry:        cfa = __builtin_dwarf_cfa (); __instr_enter (&desc, cfa);
 *   each return:  cfa = __builtin_dwarf_cfa (); __instr_exit (&desc, cfa);
 *   each landing  <post landing pad label>:
 *   pad:          cfa = __builtin_dwarf_cfa (); __instr_landing (&desc, cfa);
 *
 * Exceptions leave a frame without passing a return, so the runtime learns
 * about them at the next landing pad that runs: the frame owning that pad is
 * still live and every deeper frame it had open is gone.  This needs no new
 * EH regions, which keeps the IR surgery to plain call insertion. */
#include "pass-instrument.h"

#include "fn-descriptor.h"
#include "hook-abi.h"
#include "options.h"

static GTY(()) tree hook_enter;
static GTY(()) tree hook_exit;
static GTY(()) tree hook_landing;

const struct ggc_root_tab instr_pass_gc_roots[] = {
    {&hook_enter, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_exit, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&hook_landing, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

static unsigned instrumented_count;

unsigned instr_instrumented_count(void)
{
    return instrumented_count;
}

/* extern void HOOK (void *desc, void *cfa): hidden because every module has
 * its own trampolines (binding-asm.cc), so calls go straight to them with no
 * PLT; nothrow so no EH edges are needed; leaf because the runtime never
 * calls back into the program, which keeps the optimiser's knowledge of the
 * TU's static variables across the call. */
static tree build_hook_decl(const char *name)
{
    tree type = build_function_type_list(void_type_node, ptr_type_node,
                                         ptr_type_node, NULL_TREE);
    tree decl = build_fn_decl(name, type);
    TREE_PUBLIC(decl) = 1;
    DECL_EXTERNAL(decl) = 1;
    DECL_ARTIFICIAL(decl) = 1;
    TREE_NOTHROW(decl) = 1;
    DECL_VISIBILITY(decl) = VISIBILITY_HIDDEN;
    DECL_VISIBILITY_SPECIFIED(decl) = 1;
    DECL_ATTRIBUTES(decl) =
        tree_cons(get_identifier("leaf"), NULL_TREE,
                  tree_cons(get_identifier("nothrow"), NULL_TREE, NULL_TREE));
    return decl;
}

static void build_hook_decls(void)
{
    if (hook_enter)
        return;
    hook_enter = build_hook_decl(INSTR_HOOK_ENTER);
    hook_exit = build_hook_decl(INSTR_HOOK_EXIT);
    hook_landing = build_hook_decl(INSTR_HOOK_LANDING);
}

/* Why a function gets no hooks, or NULL if it gets them. */
static const char *skip_reason(tree fndecl)
{
    /* The attribute, not DECL_NO_INSTRUMENT_FUNCTION_ENTRY_EXIT: by the time
     * the function reaches this pass the gimplifier has set that flag on
     * every function (so -finstrument-functions never instruments twice). */
    if (lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(fndecl)))
        return "no_instrument_function";
    /* A naked function has no prologue: a call would clobber the caller's
     * registers and stack. */
    if (lookup_attribute("naked", DECL_ATTRIBUTES(fndecl)))
        return "naked";
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

        const char *why = skip_reason(fun->decl);
        if (why) {
            if (dump_file)
                fprintf(dump_file, "instr: skipped: %s\n\n", why);
            return 0;
        }
        build_hook_decls();

        tree desc = instr_build_fn_descriptor(fun->decl);
        unsigned landings = instrument_landing_pads(fun, desc);
        unsigned exits = instrument_returns(fun, desc);
        instrument_entry(fun, desc);
        instrumented_count++;

        const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fun->decl));
        if (dump_file)
            fprintf(dump_file, "instr: instrumented: %u exits, %u landing pads\n\n",
                    exits, landings);
        if (instr_opts.verbose)
            inform(DECL_SOURCE_LOCATION(fun->decl),
                   "%s: instrumented %qs (%u exits, %u landing pads)",
                   instr_opts.plugin_name.c_str(), name, exits, landings);

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

/* pass-switch.cc - switchable: hooks switched off at run time without
 * changing the code that runs while they are off.
 *
 * A hook that is an ordinary call changes the code around it even when it
 * returns at once (registers saved across it, spills, lost scheduling:
 * docs/switchable.md has the measurement), so a flag tested before each
 * hook keeps the distortion.  Instead each function the instrument pass
 * would hook is split in two, after inlining and the IPA passes:
 *
 *   foo (args):          t = __instr_on;          (a slot of the module's
 *                        if (t != 0)               hook table, hook-abi.h)
 *                          return foo.instr_on.N (args);   (unlikely; a tail call)
 *                        ... foo's body, no hook ...
 *   foo.instr_on.N:      a copy of foo's body, hooked as foo (foo's name
 *                        and descriptor), local to the unit
 *
 * foo keeps its symbol, so every caller, function pointer and the
 * debugger see the same function; while off it runs the body the plain
 * build would (plus the load and a branch the predictor learns), and its
 * samples land under its own name.  A switch takes effect at the next
 * function entry: a hooked copy already running finishes hooked, so every
 * frame it opened is closed.
 *
 * The copy is made with the call graph's versioning (the body as it is
 * when the instrument pass runs: the late pipeline's first pass), handed
 * to the symbol table as a new function and compiled after the unit's
 * other functions, through the whole late pipeline, where the instrument
 * pass hooks it.  Functions that cannot forward their arguments and result
 * in one call are left out, unhooked: variadic ones, nested functions
 * (static chain), those that call setjmp (a second return through the
 * dispatch), noreturn ones, aggregate results (a return slot) and bodies
 * GCC will not copy (noclone, non-local labels). */
#include "pass-switch.h"

#include "hook-abi.h"
#include "options.h"

#include "cfgloop.h"
#include "tree-dfa.h"
#include "tree-inline.h"

static GTY(()) tree on_var;

const struct ggc_root_tab instr_switch_gc_roots[] = {
    {&on_var, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

/* The copies made in this unit and the function each was copied from.
 * Both decls stay alive in the symbol table until the unit ends. */
static std::vector<std::pair<tree, tree>> copies;
static unsigned split_count, skipped_count;

unsigned instr_switch_split_count(void)
{
    return split_count;
}

unsigned instr_switch_skipped_count(void)
{
    return skipped_count;
}

/* extern hidden unsigned long __instr_on: slot INSTR_SLOT_ON of the
 * module's hook table (binding-asm.cc), one RIP-relative load. */
static tree build_on_var(void)
{
    if (on_var)
        return on_var;
    on_var = build_decl(BUILTINS_LOCATION, VAR_DECL, get_identifier(INSTR_SWITCH_ON), long_unsigned_type_node);
    TREE_PUBLIC(on_var) = 1;
    DECL_EXTERNAL(on_var) = 1;
    TREE_STATIC(on_var) = 0;
    DECL_ARTIFICIAL(on_var) = 1;
    DECL_VISIBILITY(on_var) = VISIBILITY_HIDDEN;
    DECL_VISIBILITY_SPECIFIED(on_var) = 1;
    return on_var;
}

/* Whether fun's exception regions carry the type filters GCC assigns
 * after inlining: a try with catch clauses, an exception specification.
 * tree_function_versioning copies regions as inlining does, and GCC's
 * copy asserts there are none yet (duplicate_eh_regions_1: an internal
 * compiler error on every switchable C++ function with try/catch). */
static bool has_eh_filters(function *fun)
{
    if (!fun->eh || !fun->eh->region_array)
        return false;
    for (eh_region r : *fun->eh->region_array)
        if (r && (r->type == ERT_TRY || r->type == ERT_ALLOWED_EXCEPTIONS))
            return true;
    return false;
}

static const char *cannot_split(function *fun)
{
    tree decl = fun->decl;
    if (stdarg_p(TREE_TYPE(decl)))
        return "variadic";
    if (DECL_STATIC_CHAIN(decl))
        return "nested function (static chain)";
    if (fun->calls_setjmp)
        return "calls setjmp";
    if (TREE_THIS_VOLATILE(decl))
        return "noreturn";
    tree res = DECL_RESULT(decl);
    if (res && !VOID_TYPE_P(TREE_TYPE(res)) && (DECL_BY_REFERENCE(res) || !is_gimple_reg_type(TREE_TYPE(res))))
        return "returns an aggregate";
    if (!tree_versionable_function_p(decl))
        return "body cannot be copied";
    if (has_eh_filters(fun))
        return "catches exceptions (try/catch or an exception specification)";
    return NULL;
}

/* fun's arguments as values at its entry, before *gsi. */
static vec<tree> entry_args(function *fun, gimple_stmt_iterator *gsi)
{
    vec<tree> args = vNULL;
    for (tree p = DECL_ARGUMENTS(fun->decl); p; p = DECL_CHAIN(p)) {
        tree v;
        if (is_gimple_reg(p)) {
            v = get_or_create_ssa_default_def(fun, p);
        } else if (is_gimple_reg_type(TREE_TYPE(p))) {
            /* A scalar whose address is taken lives in memory: load it. */
            v = make_ssa_name(TREE_TYPE(p));
            gsi_insert_before(gsi, gimple_build_assign(v, p), GSI_SAME_STMT);
        } else {
            v = p; /* an aggregate passed by value: copied again, as the ABI says */
        }
        args.safe_push(v);
    }
    return args;
}

/* The flag test on fun's entry edge and the forwarding call to copy. */
static void add_dispatch(function *fun, cgraph_node *copy)
{
    basic_block disp = split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun)));
    location_t loc = DECL_SOURCE_LOCATION(fun->decl);
    gimple_stmt_iterator gsi = gsi_last_bb(disp);
    tree t = make_ssa_name(long_unsigned_type_node);
    gassign *ld = gimple_build_assign(t, build_on_var());
    gimple_set_location(ld, loc);
    gsi_insert_after(&gsi, ld, GSI_NEW_STMT);
    gcond *cond = gimple_build_cond(NE_EXPR, t, build_int_cst(long_unsigned_type_node, 0), NULL_TREE, NULL_TREE);
    gimple_set_location(cond, loc);
    gsi_insert_after(&gsi, cond, GSI_NEW_STMT);

    edge e_off = single_succ_edge(disp);
    e_off->flags = (e_off->flags & ~EDGE_FALLTHRU) | EDGE_FALSE_VALUE;
    basic_block on = create_empty_bb(disp);
    if (current_loops)
        add_bb_to_loop(on, disp->loop_father);
    edge e_on = make_edge(disp, on, EDGE_TRUE_VALUE);
    /* Off is the case the layout is for: the body falls through. */
    e_on->probability = profile_probability::unlikely();
    e_off->probability = e_on->probability.invert();
    on->count = disp->count.apply_probability(e_on->probability);
    make_single_succ_edge(on, EXIT_BLOCK_PTR_FOR_FN(fun), 0);

    /* The return goes in first, so the argument loads can go before it;
     * its operand is set before it is in the IL, for the operand caches. */
    gimple_stmt_iterator og = gsi_start_bb(on);
    tree res = DECL_RESULT(fun->decl);
    tree r = res && !VOID_TYPE_P(TREE_TYPE(res)) ? make_ssa_name(TREE_TYPE(res)) : NULL_TREE;
    greturn *ret = gimple_build_return(r);
    gimple_set_location(ret, loc);
    gsi_insert_after(&og, ret, GSI_NEW_STMT);
    vec<tree> args = entry_args(fun, &og);
    gcall *call = gimple_build_call_vec(copy->decl, args);
    args.release();
    gimple_set_location(call, loc);
    if (r) {
        gimple_call_set_lhs(call, r);
        SSA_NAME_DEF_STMT(r) = call;
    }
    gimple_call_set_tail(call, true);
    gsi_insert_before(&og, call, GSI_SAME_STMT);

    /* Memory SSA by hand: every new statement sees memory as it is at
     * entry, and the call's store reaches only the return.  (Left to the
     * incremental SSA updater, the new block's operands stayed unrenamed.) */
    tree vop0 = get_or_create_ssa_default_def(fun, gimple_vop(fun));
    for (basic_block bb : {disp, on})
        for (gimple_stmt_iterator it = gsi_start_bb(bb); !gsi_end_p(it); gsi_next(&it)) {
            gimple *st = gsi_stmt(it);
            if (st == ret)
                continue;
            if (gimple_vuse(st))
                gimple_set_vuse(st, vop0);
            if (gimple_vdef(st)) {
                tree vd = make_ssa_name(gimple_vop(fun), st);
                gimple_set_vdef(st, vd);
                if (gimple_vuse(ret))
                    gimple_set_vuse(ret, vd);
            }
        }
    if (gimple_vuse(ret) && !gimple_vdef(call))
        gimple_set_vuse(ret, vop0);
    /* The operand scanner asked for the renaming done above. */
    fun->gimple_df->ssa_renaming_needed = 0;
    fun->gimple_df->rename_vops = 0;
    cgraph_node::get(fun->decl)->create_edge(copy, call, on->count);
}

/* The symbol table's insertion hooks, a private member reached through
 * an explicit instantiation (which may name private members). */
template <typename Tag, typename Tag::type M> struct instr_member {
    friend typename Tag::type instr_member_of(Tag) { return M; }
};
struct insertion_hooks_tag {
    typedef cgraph_node_hook_list *symbol_table::*type;
    friend type instr_member_of(insertion_hooks_tag);
};
template struct instr_member<insertion_hooks_tag, &symbol_table::m_first_cgraph_insertion_hook>;

/* The symbol table calls its insertion hooks for the new function too,
 * when it compiles it (process_new_functions), and some IPA passes' hooks
 * are still registered after the IPA passes ran (ipa-prop's, when IPA-CP
 * had work in the unit): their analysis crashes on a late body, and their
 * summaries are not read any more.  So the hooks are set aside while the
 * unit's functions are expanded, once a copy exists. */
static cgraph_node_hook_list *saved_hooks;
static bool hooks_set_aside;

static void set_hooks_aside(void)
{
    if (hooks_set_aside)
        return;
    saved_hooks = symtab->*instr_member_of(insertion_hooks_tag());
    symtab->*instr_member_of(insertion_hooks_tag()) = NULL;
    hooks_set_aside = true;
}

void instr_switch_unit_end(void)
{
    if (!hooks_set_aside)
        return;
    /* None is added during expansion (the list's type is opaque here, so
     * a later one could not be chained). */
    cgraph_node_hook_list *&head = symtab->*instr_member_of(insertion_hooks_tag());
    if (!head)
        head = saved_hooks;
    hooks_set_aside = false;
}

/* What cgraph_node::create_version_clone_with_body does, without calling
 * the symbol table's insertion hooks: by the time functions are expanded
 * some IPA passes' hooks are still registered (ipa-prop's, when IPA-CP had
 * work in the unit) and their analysis crashes on a late body. */
static cgraph_node *make_copy(cgraph_node *node)
{
    tree old_decl = node->decl;
    tree new_decl = copy_node(old_decl);
    tree fnname = clone_function_name_numbered(old_decl, "instr_on");
    DECL_NAME(new_decl) = fnname;
    SET_DECL_ASSEMBLER_NAME(new_decl, fnname);
    SET_DECL_RTL(new_decl, NULL);
    DECL_VIRTUAL_P(new_decl) = 0;
    DECL_STATIC_CONSTRUCTOR(new_decl) = 0;
    DECL_STATIC_DESTRUCTOR(new_decl) = 0;
    DECL_SET_IS_OPERATOR_NEW(new_decl, 0);
    DECL_SET_IS_OPERATOR_DELETE(new_decl, 0);
    DECL_IS_REPLACEABLE_OPERATOR(new_decl) = 0;
    cgraph_node *copy = node->create_version_clone(new_decl, vNULL, NULL, "instr_on");
    tree_function_versioning(old_decl, new_decl, NULL, NULL, false, NULL, NULL);
    copy->make_decl_local();
    DECL_VIRTUAL_P(copy->decl) = 0;
    copy->externally_visible = 0;
    copy->local = 1;
    copy->lowered = true;
    if (!node->implicit_section)
        copy->set_section(*node);
    return copy;
}

tree instr_switch_origin(tree decl)
{
    for (const auto &c : copies)
        if (c.first == decl)
            return c.second;
    return NULL_TREE;
}

unsigned instr_switch_split(function *fun)
{
    const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fun->decl));
    if (const char *why = cannot_split(fun)) {
        skipped_count++;
        if (dump_file)
            fprintf(dump_file, "instr: switchable: left out (%s)\n\n", why);
        if (instr_opts.verbose)
            inform(DECL_SOURCE_LOCATION(fun->decl), "%s: left out %qs: %s, cannot be switchable",
                   instr_opts.plugin_name.c_str(), name, why);
        return 0;
    }
    /* The symbol table compiles a new function at once only once it
     * expands functions (after the IPA passes); before, the copy would be
     * inlined and cloned like any function, hooks and all. */
    if (symtab->state != EXPANSION) {
        error("%s: switchable needs the instrument pass after the IPA passes", instr_opts.plugin_name.c_str());
        return 0;
    }
    set_hooks_aside();
    cgraph_node *copy = make_copy(cgraph_node::get(fun->decl));
    copies.emplace_back(copy->decl, fun->decl);
    cgraph_node::add_new_function(copy->decl, true);
    add_dispatch(fun, copy);
    split_count++;
    if (dump_file)
        fprintf(dump_file, "instr: switchable: hooks in %s\n\n", IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(copy->decl)));
    return TODO_cleanup_cfg;
}

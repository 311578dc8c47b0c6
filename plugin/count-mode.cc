/* count-mode.cc - mode=count: counters instead of hooks.
 *
 * What the code added does, and how the runtime reads it, is in hook-abi.h
 * ("Count mode").  In GIMPLE, per function:
 *
 *   head:  d1 = __instr_count_delta;              (initial-exec TLS)
 *          if (d1 == 0) goto slow; else goto join;
 *   slow:  __instr_count_thread ();               (very unlikely: a thread's
 *          d2 = __instr_count_delta;               first count in the module)
 *   join:  d = PHI <d1 (head), d2 (slow)>
 *          p = &entry_cell + d;  *p = *p + 1;
 *          ... original body; before each counted call:
 *          q = &site_cell + d;   *q = *q + 1;
 *
 * The delta is read once per call of the function and kept in a register
 * (or its spill slot) for the call sites: join dominates the whole body.
 * A plain load, add and store, not an atomic one: each thread has its own
 * copy of the counters (a `lock add` costs 7-9 ns per increment on this
 * machine class, measured in bench/count-atomic.c, more than the whole
 * budget of a call). */
#include "count-mode.h"

#include "fn-descriptor.h"
#include "hook-abi.h"
#include "options.h"

#include "cfgloop.h"
#include "dominance.h"

static GTY(()) tree rec_type;
static GTY(()) tree rec_fields[5];
static GTY(()) tree delta_var;
static GTY(()) tree thread_fn;

const struct ggc_root_tab instr_count_gc_roots[] = {
    {&rec_type, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&rec_fields[0], 5, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&delta_var, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&thread_fn, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

static unsigned cell_count;

bool instr_count_used(void)
{
    return cell_count != 0;
}

static void build_decls(void)
{
    if (rec_type)
        return;
    /* struct instr_count_rec (hook-abi.h) */
    static const char *const names[5] = {"counter", "fn", "callee", "line", "flags"};
    tree types[5] = {build_pointer_type(uint64_type_node), ptr_type_node, const_ptr_type_node,
                     uint32_type_node, uint32_type_node};
    rec_type = make_node(RECORD_TYPE);
    tree chain = NULL_TREE;
    for (int i = 0; i < 5; i++) {
        rec_fields[i] = build_decl(BUILTINS_LOCATION, FIELD_DECL, get_identifier(names[i]), types[i]);
        DECL_CHAIN(rec_fields[i]) = chain; /* finish_builtin_struct wants them reversed */
        chain = rec_fields[i];
    }
    finish_builtin_struct(rec_type, "instr_count_rec", chain, NULL_TREE);
    gcc_assert(tree_to_uhwi(TYPE_SIZE_UNIT(rec_type)) == sizeof(struct instr_count_rec));

    /* extern __thread size_t __instr_count_delta, defined by the count
     * binding of the module (hidden: each module has its own).  Initial
     * exec: one load from the GOT and one %fs-relative load, no call to
     * __tls_get_addr; the linker relaxes it to a constant offset in an
     * executable. */
    delta_var = build_decl(BUILTINS_LOCATION, VAR_DECL, get_identifier(INSTR_COUNT_DELTA), sizetype);
    TREE_PUBLIC(delta_var) = 1;
    DECL_EXTERNAL(delta_var) = 1;
    TREE_STATIC(delta_var) = 0;
    DECL_ARTIFICIAL(delta_var) = 1;
    TREE_ADDRESSABLE(delta_var) = 1;
    DECL_VISIBILITY(delta_var) = VISIBILITY_HIDDEN;
    DECL_VISIBILITY_SPECIFIED(delta_var) = 1;
    set_decl_tls_model(delta_var, TLS_MODEL_INITIAL_EXEC);

    /* void __instr_count_thread (void): hidden trampoline of the binding;
     * nothrow (no EH edge); not leaf: it writes __instr_count_delta. */
    thread_fn = build_fn_decl(INSTR_COUNT_THREAD, build_function_type_list(void_type_node, NULL_TREE));
    TREE_PUBLIC(thread_fn) = 1;
    DECL_EXTERNAL(thread_fn) = 1;
    DECL_ARTIFICIAL(thread_fn) = 1;
    TREE_NOTHROW(thread_fn) = 1;
    DECL_VISIBILITY(thread_fn) = VISIBILITY_HIDDEN;
    DECL_VISIBILITY_SPECIFIED(thread_fn) = 1;
    DECL_ATTRIBUTES(thread_fn) = tree_cons(get_identifier("nothrow"), NULL_TREE, NULL_TREE);
}

/* A local, never-referenced-by-name static variable, kept in section. */
static tree static_var(const char *prefix, tree type, tree init, const char *section,
                       location_t loc)
{
    char name[32];
    snprintf(name, sizeof name, "%s.%u", prefix, cell_count);
    tree var = build_decl(loc, VAR_DECL, get_identifier(name), type);
    SET_DECL_ASSEMBLER_NAME(var, DECL_NAME(var));
    TREE_STATIC(var) = 1;
    TREE_PUBLIC(var) = 0;
    TREE_READONLY(var) = 0; /* counted into; the records hold relocated pointers */
    TREE_ADDRESSABLE(var) = 1;
    TREE_USED(var) = 1;
    DECL_ARTIFICIAL(var) = 1;
    DECL_IGNORED_P(var) = 1;
    DECL_PRESERVE_P(var) = 1; /* the records are only reached through their section */
    SET_DECL_ALIGN(var, 64);  /* bits: 8-byte cells and records, packed */
    DECL_USER_ALIGN(var) = 1;
    DECL_INITIAL(var) = init;
    set_decl_section_name(var, section);
    varpool_node::finalize_decl(var);
    return var;
}

/* A counter cell and its record; returns the cell. */
static tree new_counter(tree fn_desc, const char *callee, unsigned flags, location_t loc)
{
    tree cell = static_var("__instr_cc", uint64_type_node, build_int_cst(uint64_type_node, 0),
                           INSTR_COUNT_SECTION, loc);
    expanded_location xl = expand_location(loc);
    vec<constructor_elt, va_gc> *v = NULL;
    CONSTRUCTOR_APPEND_ELT(v, rec_fields[0],
                           build_fold_addr_expr_with_type(cell, TREE_TYPE(rec_fields[0])));
    CONSTRUCTOR_APPEND_ELT(v, rec_fields[1], build_fold_addr_expr_with_type(fn_desc, ptr_type_node));
    if (callee) {
        tree str = build_string_literal(strlen(callee) + 1, callee);
        CONSTRUCTOR_APPEND_ELT(v, rec_fields[2], fold_convert(const_ptr_type_node, str));
    }
    CONSTRUCTOR_APPEND_ELT(v, rec_fields[3],
                           build_int_cst(uint32_type_node, (flags & INSTR_COUNT_SITE) ? xl.line : 0));
    CONSTRUCTOR_APPEND_ELT(v, rec_fields[4], build_int_cst(uint32_type_node, flags));
    tree init = build_constructor(rec_type, v);
    TREE_CONSTANT(init) = 1;
    TREE_STATIC(init) = 1;
    static_var("__instr_cr", rec_type, init, INSTR_COUNT_REC_SECTION, loc);
    cell_count++;
    return cell;
}

/* "*(cell + d) += 1" before *gsi. */
static void insert_increment(gimple_stmt_iterator *gsi, tree cell, tree d, location_t loc)
{
    tree pt = build_pointer_type(uint64_type_node);
    tree p = make_ssa_name(pt);
    gassign *a = gimple_build_assign(p, POINTER_PLUS_EXPR, build_fold_addr_expr_with_type(cell, pt), d);
    tree mem = build2(MEM_REF, uint64_type_node, p, build_int_cst(pt, 0));
    tree v = make_ssa_name(uint64_type_node);
    gassign *ld = gimple_build_assign(v, mem);
    tree v2 = make_ssa_name(uint64_type_node);
    gassign *add = gimple_build_assign(v2, PLUS_EXPR, v, build_int_cst(uint64_type_node, 1));
    gassign *st = gimple_build_assign(build2(MEM_REF, uint64_type_node, p, build_int_cst(pt, 0)), v2);
    gimple *stmts[4] = {a, ld, add, st};
    for (gimple *s : stmts) {
        gimple_set_location(s, loc);
        gsi_insert_before(gsi, s, GSI_SAME_STMT);
    }
}

unsigned instr_count_function(function *fun, tree desc, const std::vector<instr_count_site> &sites)
{
    build_decls();
    location_t loc = DECL_SOURCE_LOCATION(fun->decl);

    /* head, on the entry edge, so it runs once per call even when the
     * body starts with a loop. */
    basic_block head = split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun)));
    gimple_stmt_iterator gsi = gsi_last_bb(head);
    tree d1 = make_ssa_name(sizetype);
    gassign *ld = gimple_build_assign(d1, delta_var);
    gimple_set_location(ld, loc);
    gsi_insert_after(&gsi, ld, GSI_NEW_STMT);
    gcond *cond = gimple_build_cond(EQ_EXPR, d1, build_int_cst(sizetype, 0), NULL_TREE, NULL_TREE);
    gimple_set_location(cond, loc);
    gsi_insert_after(&gsi, cond, GSI_NEW_STMT);

    /* head -> join -> (old first block); head -> slow -> join. */
    basic_block join = split_edge(single_succ_edge(head));
    edge e_false = single_succ_edge(head);
    e_false->flags = (e_false->flags & ~EDGE_FALLTHRU) | EDGE_FALSE_VALUE;
    basic_block slow = create_empty_bb(head);
    if (current_loops)
        add_bb_to_loop(slow, head->loop_father);
    edge e_true = make_edge(head, slow, EDGE_TRUE_VALUE);
    edge e_back = make_edge(slow, join, EDGE_FALLTHRU);
    e_true->probability = profile_probability::very_unlikely();
    e_false->probability = e_true->probability.invert();
    e_back->probability = profile_probability::always();
    slow->count = head->count.apply_probability(e_true->probability);

    gimple_stmt_iterator sg = gsi_start_bb(slow);
    gcall *call = gimple_build_call(thread_fn, 0);
    gimple_set_location(call, loc);
    gsi_insert_after(&sg, call, GSI_NEW_STMT);
    tree d2 = make_ssa_name(sizetype);
    gassign *reload = gimple_build_assign(d2, delta_var);
    gimple_set_location(reload, loc);
    gsi_insert_after(&sg, reload, GSI_NEW_STMT);
    cgraph_node::get(current_function_decl)
        ->create_edge(cgraph_node::get_create(thread_fn), call, slow->count);

    tree d = make_ssa_name(sizetype);
    gphi *phi = create_phi_node(d, join);
    add_phi_arg(phi, d1, e_false, UNKNOWN_LOCATION);
    add_phi_arg(phi, d2, e_back, UNKNOWN_LOCATION);

    gimple_stmt_iterator jg = gsi_after_labels(join);
    insert_increment(&jg, new_counter(desc, NULL, 0, loc), d, loc);
    for (const instr_count_site &s : sites) {
        gimple_stmt_iterator cg = gsi_for_stmt(s.call);
        unsigned flags = INSTR_COUNT_SITE | (s.callee ? 0 : INSTR_COUNT_INDIRECT);
        insert_increment(&cg, new_counter(desc, s.callee, flags, s.loc), d, s.loc);
    }
    free_dominance_info(CDI_DOMINATORS);
    free_dominance_info(CDI_POST_DOMINATORS);
    mark_virtual_operands_for_renaming(fun);
    return TODO_update_ssa_only_virtuals | TODO_cleanup_cfg;
}

std::string instr_count_binding_asm(void)
{
#define CGROUP "__instr_count_binding"
    std::string s = "\t/* instr: count binding, see hook-abi.h (Count mode) */\n";
    s += "\t.pushsection .text." CGROUP ",\"axG\",@progbits," CGROUP ",comdat\n";
    /* __instr_count_thread: the module and this thread's delta's address
     * to the runtime (slot INSTR_SLOT_COUNT_THREAD); unbound, a no-op. */
    s += "\t.weak\t" INSTR_COUNT_THREAD "\n\t.hidden\t" INSTR_COUNT_THREAD "\n\t.type\t" INSTR_COUNT_THREAD
         ", @function\n" INSTR_COUNT_THREAD ":\n\tendbr64\n"
         "\tleaq\t" INSTR_COUNT_MODULE "(%rip), %rdi\n"
         "\tmovq\t%fs:0, %rsi\n"
         "\taddq\t" INSTR_COUNT_DELTA "@gottpoff(%rip), %rsi\n"
         "\tjmp\t*" INSTR_HOOK_TABLE "+" + std::to_string(8 * INSTR_SLOT_COUNT_THREAD) + "(%rip)\n"
         "\t.size\t" INSTR_COUNT_THREAD ", .-" INSTR_COUNT_THREAD "\n";
    s += "\t.section .tbss." CGROUP ",\"awTG\",@nobits," CGROUP ",comdat\n\t.p2align 3\n";
    s += "\t.weak\t" INSTR_COUNT_DELTA "\n\t.hidden\t" INSTR_COUNT_DELTA "\n\t.type\t" INSTR_COUNT_DELTA
         ", @object\n" INSTR_COUNT_DELTA ":\n\t.zero\t8\n\t.size\t" INSTR_COUNT_DELTA ", 8\n";
    /* The section bounds the linker defines for sections named like C
     * identifiers; hidden, so each module's refer to its own sections. */
    s += "\t.section .data.rel.ro." CGROUP ",\"awG\",@progbits," CGROUP ",comdat\n\t.p2align 3\n";
    for (const char *sec : {INSTR_COUNT_SECTION, INSTR_COUNT_REC_SECTION})
        s += std::string("\t.hidden\t__start_") + sec + "\n\t.hidden\t__stop_" + sec + "\n";
    s += "\t.weak\t" INSTR_COUNT_MODULE "\n\t.hidden\t" INSTR_COUNT_MODULE "\n\t.type\t" INSTR_COUNT_MODULE
         ", @object\n" INSTR_COUNT_MODULE ":\n";
    s += "\t.quad\t__start_" INSTR_COUNT_SECTION ", __stop_" INSTR_COUNT_SECTION "\n";
    s += "\t.quad\t__start_" INSTR_COUNT_REC_SECTION ", __stop_" INSTR_COUNT_REC_SECTION "\n";
    s += "\t.size\t" INSTR_COUNT_MODULE ", 32\n";
    s += "\t.popsection\n";
    return s;
#undef CGROUP
}

/* count-mode.cc - mode=count: counters instead of hooks.
 *
 * What the code added does, and how the runtime reads it, is in hook-abi.h
 * ("Count mode").  Two forms, by what the unit is compiled into.
 *
 * (x86-64's instructions shown: each target's are in plugin/arch/<cpu>.cc;
 * aarch64's count is an ldxr/stxr loop on the cell, its records' offsets
 * two add-immediate words, its trampoline's frame x0-x18 and NZCV.)
 *
 * Code for an executable (not -fPIC): each counter is a local-exec TLS
 * variable, so a count is one instruction, `addq $1, %fs:cell@tpoff`, with
 * no register, no test and no call; the code around it is compiled as the
 * plain build's.  A function a thread can start in (one that is not only
 * called directly: public, or its address taken) first tests the module's
 * TLS byte __instr_count_armed, in an asm statement whose rare path calls
 * __instr_count_arm with the red zone stepped over; the trampoline saves
 * the general registers, the flags and xmm0-15, and the runtime's entry
 * for the slot the rest of the vector state (runtime/arch/<arch>/count-arm.c), so the
 * code around needs no frame for it and keeps any register live across.
 * The records, which hold each cell's @tpoff, are assembly emitted at the
 * end of the unit (a tree initializer cannot hold a TLS offset).
 *
 * Code for a shared object (-fPIC, which may be dlopen'd: static TLS of
 * that size may not be there), per function in GIMPLE:
 *
 *   head:  d1 = __instr_count_delta;              (initial-exec TLS)
 *          if (d1 == 0) goto slow; else goto join;
 *   slow:  __instr_count_thread ();               (very unlikely: a thread's
 *          d2 = __instr_count_delta;               first count in the module)
 *   join:  d = PHI <d1 (head), d2 (slow)>
 *          p = &entry_cell + d;  asm volatile ("addq $1, %0" : "=m" (*p) : "m" (*p));
 *          ... original body; before each counted call:
 *          q = &site_cell + d;   (the same increment of *q)
 *
 * The delta is read once per call of the function and kept in a register
 * (or its spill slot) for the call sites: join dominates the whole body.
 * One add to memory, not an atomic one: each thread has its own copy of
 * the counters (a `lock add` costs 7-9 ns per increment on this machine
 * class, measured in bench/count-atomic.c, more than the whole budget of
 * a call), and one instruction, so a signal handler of the same thread
 * cannot count between its load and its store, at -O0 either (aarch64:
 * a load/store-exclusive loop, which a handler in between makes retry).
 * The asm's scratch registers, where the target needs some, are its
 * outputs: the compiler allocates around them. */
#include "count-mode.h"

#include "arch.h"
#include "fn-descriptor.h"
#include "hook-abi.h"
#include "options.h"

#include "cfgloop.h"
#include "dominance.h"

static GTY(()) tree rec_type;
static GTY(()) tree rec_fields[5];
static GTY(()) tree delta_var;
static GTY(()) tree thread_fn;
static GTY(()) tree cc_clobber;

const struct ggc_root_tab instr_count_gc_roots[] = {
    {&rec_type, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&rec_fields[0], 5, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&delta_var, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&thread_fn, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&cc_clobber, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

static unsigned cell_count;
static bool tls_used;
static std::string tls_records, tls_strings; /* assembly for the end of the unit */

bool instr_count_used(void)
{
    return cell_count != 0 || tls_used;
}

/* TLS cells where the unit is compiled for an executable (-fPIE or not
 * PIC): local-exec offsets are then link-time constants. */
static bool tls_cells(void)
{
    return !flag_shlib;
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

/* A local static variable, kept although nothing refers to it by name:
 * in section, or (section NULL) a local-exec TLS variable. */
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
    if (section)
        set_decl_section_name(var, section);
    else
        set_decl_tls_model(var, TLS_MODEL_LOCAL_EXEC);
    varpool_node::finalize_decl(var);
    return var;
}

/* A TLS counter cell, and its record in assembly (emitted at the end of
 * the unit by instr_count_binding_asm); returns the cell. */
static tree new_tls_counter(tree fn_desc, const char *callee, unsigned flags, location_t loc)
{
    tree cell = static_var("__instr_tc", uint64_type_node, build_int_cst(uint64_type_node, 0), NULL, loc);
    const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(cell));

    /* The descriptor is referred to by the assembly only: keep it. */
    varpool_node *dn = varpool_node::get(fn_desc);
    if (dn)
        dn->force_output = 1;
    DECL_PRESERVE_P(fn_desc) = 1;

    expanded_location xl = expand_location(loc);
    std::string callee_ref = "0";
    if (callee) {
        callee_ref = ".Linstr_callee." + std::to_string(cell_count);
        tls_strings += callee_ref + ":\n\t.string\t\"" + callee + "\"\n";
    }
    tls_records += instr_arch_tls_offset(name) + "\t.quad\t" + IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fn_desc)) + ", " + callee_ref + "\n\t.long\t" +
                   std::to_string((flags & INSTR_COUNT_SITE) ? xl.line : 0) + ", " +
                   std::to_string(flags | INSTR_COUNT_TLS) + "\n";
    cell_count++;
    tls_used = true;
    return cell;
}

/* A counter cell and its record; returns the cell. */
static tree new_counter(tree fn_desc, const char *callee, unsigned flags, location_t loc)
{
    if (tls_cells())
        return new_tls_counter(fn_desc, callee, flags, loc);
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

/* A volatile asm statement of count mode (arch.h) that clobbers the flags,
 * before *gsi: the memory operand mem (NULL_TREE: none), as an output and
 * again as an input (a tree is not shared between two operands, so
 * mem_again builds it once more), then a.scratch early-clobber scratch
 * registers, outputs defining SSA names nothing reads, and the
 * registers a clobbers. */
static void insert_asm(gimple_stmt_iterator *gsi, const instr_arch_count_asm &a, tree mem, tree mem_again,
                       location_t loc)
{
    if (!cc_clobber)
        cc_clobber = tree_cons(NULL_TREE, build_string(3, "cc"), NULL_TREE);
    vec<tree, va_gc> *out = NULL, *in = NULL, *clob = NULL;
    vec_safe_push(clob, cc_clobber);
    for (const char *const *c = a.clobbers; c && *c; c++)
        vec_safe_push(clob, tree_cons(NULL_TREE, build_string(strlen(*c) + 1, *c), NULL_TREE));
    if (mem) {
        std::string o = std::string("=") + a.mem;
        vec_safe_push(out, build_tree_list(build_tree_list(NULL_TREE, build_string(o.size() + 1, o.c_str())), mem));
        vec_safe_push(in, build_tree_list(build_tree_list(NULL_TREE, build_string(strlen(a.mem) + 1, a.mem)),
                                          mem_again));
    }
    std::vector<tree> scratch;
    for (unsigned i = 0; i < a.scratch; i++) {
        scratch.push_back(make_ssa_name(uint64_type_node));
        vec_safe_push(out, build_tree_list(build_tree_list(NULL_TREE, build_string(4, "=&r")), scratch.back()));
    }
    gasm *g = gimple_build_asm_vec(a.text, in, out, clob, NULL);
    gimple_asm_set_volatile(g, true);
    gimple_set_location(g, loc);
    for (tree t : scratch)
        SSA_NAME_DEF_STMT(t) = g;
    gsi_insert_before(gsi, g, GSI_SAME_STMT);
}

/* "*(cell + d) += 1" before *gsi (d NULL: a TLS cell, "cell += 1"), as
 * the target's increment (arch.h) at every optimisation level: an asm
 * statement, since -O0 would load, add and store, and a signal handler
 * counting in between would lose its count.  The TLS form's operand is
 * the cell (x86-64: %fs:cell@tpoff), the per-thread copies' (cell + d)
 * in a register. */
static void insert_increment(gimple_stmt_iterator *gsi, tree cell, tree d, location_t loc)
{
    tree pt = build_pointer_type(uint64_type_node), p = NULL_TREE;
    if (d) {
        p = make_ssa_name(pt);
        gassign *a = gimple_build_assign(p, POINTER_PLUS_EXPR, build_fold_addr_expr_with_type(cell, pt), d);
        gimple_set_location(a, loc);
        gsi_insert_before(gsi, a, GSI_SAME_STMT);
    }
    auto operand = [&]() { return p ? build2(MEM_REF, uint64_type_node, p, build_int_cst(pt, 0)) : cell; };
    insert_asm(gsi, *instr_arch_count_increment(), operand(), operand(), loc);
}

/* The counter of call site s of the function of descriptor desc, before
 * the call (d: as for insert_increment). */
static void insert_site_count(tree desc, const instr_count_site &s, tree d)
{
    gimple_stmt_iterator cg = gsi_for_stmt(s.call);
    unsigned flags = INSTR_COUNT_SITE | (s.callee ? 0 : INSTR_COUNT_INDIRECT);
    insert_increment(&cg, new_counter(desc, s.callee, flags, s.loc), d, s.loc);
}

/* Whether a thread can begin in fun: it is public or its address is
 * taken (a static function only called directly is reached from a
 * function that has the arming test). */
static bool may_begin_thread(function *fun)
{
    cgraph_node *node = cgraph_node::get(fun->decl);
    return !node || !node->only_called_directly_p();
}

/* The arming test, first in head. */
static void insert_arming(function *fun, basic_block head)
{
    gimple_stmt_iterator gsi = gsi_after_labels(head);
    insert_asm(&gsi, *instr_arch_count_arming(), NULL_TREE, NULL_TREE, DECL_SOURCE_LOCATION(fun->decl));
    tls_used = true;
}

bool instr_count_arm_only(function *fun)
{
    if (!tls_cells() || !may_begin_thread(fun))
        return false;
    insert_arming(fun, split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun))));
    return true;
}

static unsigned count_function_tls(function *fun, tree desc, const std::vector<instr_count_site> &sites)
{
    location_t loc = DECL_SOURCE_LOCATION(fun->decl);
    /* head, on the entry edge: its count, then (first) the arming test. */
    basic_block head = split_edge(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fun)));
    gimple_stmt_iterator hg = gsi_after_labels(head);
    insert_increment(&hg, new_counter(desc, NULL, 0, loc), NULL_TREE, loc);
    if (may_begin_thread(fun))
        insert_arming(fun, head);
    for (const instr_count_site &s : sites)
        insert_site_count(desc, s, NULL_TREE);
    mark_virtual_operands_for_renaming(fun);
    return TODO_update_ssa_only_virtuals;
}

unsigned instr_count_function(function *fun, tree desc, const std::vector<instr_count_site> &sites)
{
    build_decls();
    if (tls_cells())
        return count_function_tls(fun, desc, sites);
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
    for (const instr_count_site &s : sites)
        insert_site_count(desc, s, d);
    free_dominance_info(CDI_DOMINATORS);
    free_dominance_info(CDI_POST_DOMINATORS);
    mark_virtual_operands_for_renaming(fun);
    return TODO_update_ssa_only_virtuals | TODO_cleanup_cfg;
}

unsigned instr_count_sites(function *fun, tree desc, const std::vector<instr_count_site> &sites)
{
    build_decls();
    for (const instr_count_site &s : sites) {
        tree d = NULL_TREE;
        if (!tls_cells()) {
            /* The delta again: the entry's is out of reach this late.  It
             * is this thread's (the entry took a copy), or 0 when no
             * copy could be had: the count goes to the section then, as
             * the entry's does (runtime/count.c). */
            d = make_ssa_name(sizetype);
            gassign *ld = gimple_build_assign(d, delta_var);
            gimple_set_location(ld, s.loc);
            gimple_stmt_iterator cg = gsi_for_stmt(s.call);
            gsi_insert_before(&cg, ld, GSI_SAME_STMT);
        }
        insert_site_count(desc, s, d);
    }
    if (sites.empty())
        return 0;
    mark_virtual_operands_for_renaming(fun);
    return TODO_update_ssa_only_virtuals;
}

/* What the units with TLS cells add (executables only: local-exec
 * relocations), in a COMDAT group of their own so that a module mixing
 * -fPIC units and others keeps both groups:
 *   __instr_count_armed   TLS byte: this thread was given to the runtime
 *   __instr_count_arm     the trampoline the arming test calls: sets the
 *                         byte, saves the call-clobbered registers (the
 *                         general ones, the flags and xmm0-15) and calls
 *                         slot INSTR_SLOT_COUNT_ARM (module, &armed, tp)
 *   one empty cell in instr_cnt and one empty record (fn NULL) in
 *                         instr_crec, so that the sections and their bounds
 *                         exist whatever the module's units hold;
 * then this unit's records and the callees' names. */
static std::string tls_binding_asm(void)
{
#define AGROUP "__instr_count_arm_binding"
    std::string s = "\t.pushsection .text." AGROUP ",\"axG\",@progbits," AGROUP ",comdat\n";
    s += "\t.weak\t" INSTR_COUNT_ARM "\n\t.hidden\t" INSTR_COUNT_ARM "\n\t.type\t" INSTR_COUNT_ARM
         ", @function\n" INSTR_COUNT_ARM ":\n" + instr_arch_count_arm() + "\t.size\t" INSTR_COUNT_ARM ", .-" INSTR_COUNT_ARM "\n";
    s += "\t.section .tbss." AGROUP ",\"awTG\",@nobits," AGROUP ",comdat\n";
    s += "\t.weak\t" INSTR_COUNT_ARMED "\n\t.hidden\t" INSTR_COUNT_ARMED "\n\t.type\t" INSTR_COUNT_ARMED
         ", @object\n" INSTR_COUNT_ARMED ":\n\t.zero\t1\n\t.size\t" INSTR_COUNT_ARMED ", 1\n";
    s += "\t.section " INSTR_COUNT_SECTION ",\"awG\",@progbits," AGROUP ",comdat\n\t.p2align 3\n\t.zero\t8\n";
    s += "\t.section " INSTR_COUNT_REC_SECTION ",\"awG\",@progbits," AGROUP ",comdat\n\t.p2align 3\n\t.zero\t" +
         std::to_string(sizeof(struct instr_count_rec)) + "\n";
    s += "\t.popsection\n";
#undef AGROUP
    s += "\t.pushsection " INSTR_COUNT_REC_SECTION ",\"aw\",@progbits\n\t.p2align 3\n" + tls_records;
    s += "\t.section .rodata.str1.1,\"aMS\",@progbits,1\n" + tls_strings + "\t.popsection\n";
    return s;
}

std::string instr_count_binding_asm(void)
{
#define CGROUP "__instr_count_binding"
    std::string s = "\t/* instr: count binding, see hook-abi.h (Count mode) */\n";
    s += "\t.pushsection .text." CGROUP ",\"axG\",@progbits," CGROUP ",comdat\n";
    /* __instr_count_thread: the module and this thread's delta's address
     * to the runtime (slot INSTR_SLOT_COUNT_THREAD); unbound, a no-op. */
    s += "\t.weak\t" INSTR_COUNT_THREAD "\n\t.hidden\t" INSTR_COUNT_THREAD "\n\t.type\t" INSTR_COUNT_THREAD
         ", @function\n" INSTR_COUNT_THREAD ":\n" + instr_arch_count_thread() + "\t.size\t" INSTR_COUNT_THREAD
         ", .-" INSTR_COUNT_THREAD "\n";
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
    if (tls_used)
        s += tls_binding_asm();
    return s;
#undef CGROUP
}

/* threshold.cc - which functions threshold=N leaves out.
 *
 * A function is left out when it has fewer than N GIMPLE statements (not
 * counting labels, debug statements and nops), no loop (no back edge in a
 * depth-first walk of its CFG) and no call (builtins that expand inline
 * and internal functions are not calls).  Such a function runs in a
 * bounded, small number of instructions, so its hooks (tens of ns) can
 * cost more than the function itself; leaving it out puts its time into
 * its caller, as if it had been inlined.  Calls to it from this unit lose
 * their call-site hooks too (pass-instrument.cc), else it would reappear
 * as a pseudo-frame at the same cost. */
#include "threshold.h"

#include "options.h"

#include <map>

struct decision {
    bool left_out;
    unsigned statements;
};

/* By DECL_UID: decisions for functions of this unit. */
static std::map<unsigned, decision> decisions;

static bool prefixed(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* A call that stays a call instruction (or may): what the call-site pass
 * would bracket, leaving aside the reasons that concern hooks only. */
static bool real_call(gcall *call)
{
    if (gimple_call_internal_p(call))
        return false;
    tree fndecl = gimple_call_fndecl(call);
    if (!fndecl)
        return true;
    if (fndecl_built_in_p(fndecl, BUILT_IN_MD))
        return false;
    const char *name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));
    if (fndecl_built_in_p(fndecl, BUILT_IN_NORMAL) &&
        (prefixed(name, "__builtin_") || prefixed(name, "__sync_") || prefixed(name, "__atomic_")))
        return false;
    return true;
}

/* A back edge in a depth-first walk from the entry block: a loop (or an
 * irreducible cycle, which counts as one). */
static bool has_cycle(function *fn)
{
    std::vector<char> state(last_basic_block_for_fn(fn), 0); /* 1 on the path, 2 done */
    std::vector<std::pair<basic_block, unsigned>> path;
    basic_block entry = ENTRY_BLOCK_PTR_FOR_FN(fn);
    state[entry->index] = 1;
    path.push_back({entry, 0});
    while (!path.empty()) {
        basic_block bb = path.back().first;
        unsigned i = path.back().second;
        if (i == EDGE_COUNT(bb->succs)) {
            state[bb->index] = 2;
            path.pop_back();
            continue;
        }
        path.back().second++;
        basic_block next = EDGE_SUCC(bb, i)->dest;
        if (state[next->index] == 1)
            return true;
        if (state[next->index] == 0) {
            state[next->index] = 1;
            path.push_back({next, 0});
        }
    }
    return false;
}

static bool decide(tree fndecl, decision *out)
{
    function *fn = DECL_STRUCT_FUNCTION(fndecl);
    if (!fn || !fn->cfg)
        return false;
    unsigned statements = 0;
    bool calls = false;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fn) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
            gimple *stmt = gsi_stmt(gsi);
            if (is_gimple_debug(stmt) || gimple_code(stmt) == GIMPLE_LABEL ||
                gimple_code(stmt) == GIMPLE_NOP || gimple_code(stmt) == GIMPLE_PREDICT)
                continue;
            statements++;
            if (gcall *call = dyn_cast<gcall *>(stmt))
                calls |= real_call(call);
        }
    }
    out->statements = statements;
    out->left_out = statements < instr_opts.threshold && !calls && !has_cycle(fn);
    return true;
}

static const decision *lookup(tree fndecl)
{
    if (instr_opts.threshold == 0)
        return NULL;
    auto it = decisions.find(DECL_UID(fndecl));
    if (it != decisions.end())
        return &it->second;
    decision d;
    if (!decide(fndecl, &d))
        return NULL;
    return &decisions.emplace(DECL_UID(fndecl), d).first->second;
}

bool instr_threshold_leaves_out(tree fndecl)
{
    const decision *d = lookup(fndecl);
    return d && d->left_out;
}

unsigned instr_threshold_statements(tree fndecl)
{
    const decision *d = lookup(fndecl);
    return d ? d->statements : 0;
}

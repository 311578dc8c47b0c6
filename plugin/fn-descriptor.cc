/* fn-descriptor.cc - building the descriptor variable of a function.
 *
 * The descriptor carries the function's names as plain bytes so the runtime
 * and the report need neither DWARF nor a symbol table, and it is writable
 * so the runtime can cache the id it assigns in place. */
#include "fn-descriptor.h"

#include "file-prefix-map.h"
#include "hook-abi.h"
#include "options.h"
#include "toplev.h"

static unsigned descriptor_count;

static void append_u32_le(std::string *s, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        s->push_back((char)((v >> (8 * i)) & 0xff));
}

/* The source file as the debug information names it: absolute (a
 * relative name joined to the compile directory, which is DWARF's
 * comp_dir), then -fdebug-prefix-map/-ffile-prefix-map applied.  The
 * report then finds the file whatever directory the program ran from. */
static std::string source_path(const char *file)
{
    if (!file || !*file)
        return "";
    std::string abs = file;
    const char *pwd = file[0] == '/' ? NULL : get_src_pwd();
    if (pwd && *pwd && strcmp(file, "<built-in>"))
        abs = std::string(pwd) + (pwd[strlen(pwd) - 1] == '/' ? "" : "/") + file;
    return remap_debug_filename(abs.c_str());
}

/* Where fndecl is defined.  DECL_SOURCE_LOCATION is its first
 * declaration's: for a program's own malloc, getpid or any function a
 * header declared first, that is the header (stdlib.h:553), not the
 * program's file.  The body's start (function_start_locus) is in the
 * defining file; when the two files differ, the definition's location is
 * the one a user looks for.  Otherwise the declaration's line stays (the
 * declarator's line, as other tools give it). */
static expanded_location definition_location(tree fndecl)
{
    expanded_location decl = expand_location(DECL_SOURCE_LOCATION(fndecl));
    function *fn = DECL_STRUCT_FUNCTION(fndecl);
    if (!fn || fn->function_start_locus == UNKNOWN_LOCATION)
        return decl;
    expanded_location body = expand_location(fn->function_start_locus);
    if (body.file && (!decl.file || strcmp(body.file, decl.file)))
        return body;
    return decl;
}

static std::string descriptor_bytes(tree fndecl, bool switchable)
{
    std::string s;
    const char *mangled = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));
    /* The demangled name goes into the object too, so a dump names C++
     * functions without a demangler.  GCC's own (libiberty, exported by
     * cc1 and cc1plus) gives the spelling instr-report uses for call-site
     * frames, so both agree.  NULL: not a mangled name (C). */
    char *demangled = instr_demangle(mangled);
    append_u32_le(&s, 0);                     /* id: set by the runtime */
    s.push_back((char)INSTR_HOOK_ABI_VERSION); /* abi */
    /* flags: inlined hooks share their host's CFA, see hook-abi.h */
    s.push_back((char)((instr_opts.inline_before ? INSTR_FN_SHARES_CFA : 0) |
                       (demangled ? INSTR_FN_DEMANGLED : 0) | (switchable ? INSTR_FN_SWITCHABLE : 0)));
    s.append(2, '\0');                        /* reserved */
    gcc_assert(s.size() == INSTR_FN_DESC_NAMES_OFFSET);

    /* The assembler name, not the source name: it is unique, C++ overloads
     * stay apart, and clones (foo.part.0, foo.constprop.0) keep their
     * suffix, which the report demangles to "[clone .part.0]". */
    s += mangled;
    s.push_back('\0');
    expanded_location loc = definition_location(fndecl);
    s += source_path(loc.file);
    s.push_back('\0');
    s += std::to_string(loc.line);
    s.push_back('\0');
    if (demangled) {
        s += demangled;
        s.push_back('\0');
        free(demangled);
    }
    return s;
}

tree instr_build_fn_descriptor(tree fndecl, bool switchable)
{
    std::string bytes = descriptor_bytes(fndecl, switchable);
    tree type = build_array_type_nelts(char_type_node, bytes.size());
    tree init = build_string(bytes.size(), bytes.data());
    TREE_TYPE(init) = type;

    /* A counter, not the function's name, keeps the label unique: clones and
     * GNU C nested functions have names that are only unique as symbols. */
    char name[32];
    snprintf(name, sizeof name, "__instr_fd.%u", descriptor_count++);
    tree var = build_decl(DECL_SOURCE_LOCATION(fndecl), VAR_DECL,
                          get_identifier(name), type);
    /* Set explicitly so no front end tries to mangle a decl it never saw. */
    SET_DECL_ASSEMBLER_NAME(var, DECL_NAME(var));
    TREE_STATIC(var) = 1;
    TREE_PUBLIC(var) = 0;
    TREE_READONLY(var) = 0; /* the runtime writes the id */
    TREE_ADDRESSABLE(var) = 1;
    TREE_USED(var) = 1;
    DECL_ARTIFICIAL(var) = 1;
    DECL_IGNORED_P(var) = 1; /* no debug info for our bookkeeping */
    SET_DECL_ALIGN(var, 64);
    DECL_USER_ALIGN(var) = 1;
    DECL_INITIAL(var) = init;

    /* The pass runs while functions are being expanded, after the symbol
     * table has been analysed: finalize_decl analyses the variable at once
     * and has it assembled with the other variables (or immediately under
     * -fno-toplevel-reorder, which -O0 implies). */
    varpool_node::finalize_decl(var);
    return var;
}

/* ---- call-site descriptors -------------------------------------------------
 *
 * struct instr_site_desc (hook-abi.h) as a GCC record type, so its two
 * pointers (the caller's descriptor, the callee's name) are ordinary
 * relocated initialisers. */

static GTY(()) tree site_type;
static GTY(()) tree site_fields[10];
static unsigned site_count;

const struct ggc_root_tab instr_site_gc_roots[] = {
    {&site_type, 1, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    {&site_fields[0], 10, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

static void build_site_type(void)
{
    if (site_type)
        return;
    static const char *const names[10] = {"id", "abi", "flags", "reserved", "line", "reserved2",
                                          "caller", "callee", "target", "reserved3"};
    tree types[10] = {uint32_type_node, unsigned_char_type_node, unsigned_char_type_node,
                      short_unsigned_type_node, uint32_type_node, uint32_type_node,
                      ptr_type_node, const_ptr_type_node, uint64_type_node,
                      uint64_type_node};
    site_type = make_node(RECORD_TYPE);
    tree chain = NULL_TREE;
    for (int i = 0; i < 10; i++) {
        site_fields[i] = build_decl(BUILTINS_LOCATION, FIELD_DECL, get_identifier(names[i]),
                                    types[i]);
        DECL_CHAIN(site_fields[i]) = chain; /* finish_builtin_struct wants them reversed */
        chain = site_fields[i];
    }
    finish_builtin_struct(site_type, "instr_site_desc", chain, NULL_TREE);
    gcc_assert(tree_to_uhwi(TYPE_SIZE_UNIT(site_type)) == sizeof(struct instr_site_desc));
}

tree instr_build_site_descriptor(tree caller_desc, const char *callee, unsigned flags,
                                 location_t loc)
{
    build_site_type();
    expanded_location xl = expand_location(loc);
    vec<constructor_elt, va_gc> *v = NULL;
    CONSTRUCTOR_APPEND_ELT(v, site_fields[0], build_int_cst(uint32_type_node, 0));
    CONSTRUCTOR_APPEND_ELT(v, site_fields[1],
                           build_int_cst(unsigned_char_type_node, INSTR_HOOK_ABI_VERSION));
    CONSTRUCTOR_APPEND_ELT(v, site_fields[2],
                           build_int_cst(unsigned_char_type_node, flags));
    CONSTRUCTOR_APPEND_ELT(v, site_fields[4], build_int_cst(uint32_type_node, xl.line));
    CONSTRUCTOR_APPEND_ELT(v, site_fields[6],
                           build_fold_addr_expr_with_type(caller_desc, ptr_type_node));
    if (callee) {
        tree str = build_string_literal(strlen(callee) + 1, callee);
        CONSTRUCTOR_APPEND_ELT(v, site_fields[7], fold_convert(const_ptr_type_node, str));
    }
    tree init = build_constructor(site_type, v);
    TREE_CONSTANT(init) = 1;
    TREE_STATIC(init) = 1;

    char name[32];
    snprintf(name, sizeof name, "__instr_sd.%u", site_count++);
    tree var = build_decl(loc, VAR_DECL, get_identifier(name), site_type);
    /* Same treatment as the function descriptor: local, writable (the
     * runtime caches ids and the last indirect target in it), no debug info. */
    SET_DECL_ASSEMBLER_NAME(var, DECL_NAME(var));
    TREE_STATIC(var) = 1;
    TREE_PUBLIC(var) = 0;
    TREE_READONLY(var) = 0;
    TREE_ADDRESSABLE(var) = 1;
    TREE_USED(var) = 1;
    DECL_ARTIFICIAL(var) = 1;
    DECL_IGNORED_P(var) = 1;
    SET_DECL_ALIGN(var, 64);
    DECL_USER_ALIGN(var) = 1;
    DECL_INITIAL(var) = init;
    varpool_node::finalize_decl(var);
    return var;
}

/* instr-plugin.cc - plugin entry: version check, options, registration.
 *
 * Usage: gcc -fplugin=/path/to/instr.so [-fplugin-arg-instr-<key>[=value]]...
 * (see options.h for the keys). */
#include "gcc-compat.h"
#include "plugin-version.h" /* gcc_version: what we were built against */

#include "binding-asm.h"
#include "count-mode.h"
#include "fn-descriptor.h"
#include "options.h"
#include "pass-empty-sites.h"
#include "pass-instrument.h"
#include "pass-switch.h"

INSTR_PLUGIN_EXPORT int plugin_is_GPL_compatible;

static struct plugin_info instr_plugin_info = {
    "0.1",
    "instr: auto-instrumenting profiler hooks\n"
    "  -fplugin-arg-instr-include=GLOB[,GLOB...]       only these functions\n"
    "  -fplugin-arg-instr-exclude=GLOB[,GLOB...]       not these functions\n"
    "  -fplugin-arg-instr-exclude-file=GLOB[,GLOB...]  not functions from these files\n"
    "  -fplugin-arg-instr-inline=after|before          hooks after (default) or before inlining\n"
    "  -fplugin-arg-instr-callsites=all|external|none  call-site hooks around which calls (default all)\n"
    "  -fplugin-arg-instr-threshold=N                  leave out functions under N statements\n"
    "                                                  with no loop and no call (default 0: none)\n"
"  -fplugin-arg-instr-mode=time|count              hooks that time every call (default), or\n"
    "                                                  exact call and edge counts only, no time\n"
    "  -fplugin-arg-instr-switchable                   hooks switched at run time (instr_start,\n"
    "                                                  INSTR_START=off), plain code while off\n"
    "  -fplugin-arg-instr-runtime=PATH                 runtime to load at start-up\n"
    "  -fplugin-arg-instr-verbose                      note each instrumented function\n",
};

/* Inline assembly in the last moments of the unit, so that it is only
 * emitted when a function was actually instrumented, and goes straight to
 * the assembly file: the symbol table's top-level asm list has already been
 * output by then. */
static void emit_binding(void *, void *)
{
    instr_switch_unit_end();
    if ((instr_instrumented_count() == 0 && instr_left_out_count() == 0 && !instr_count_used()) || seen_error())
        return;
    fputs(instr_binding_asm(instr_opts.runtime).c_str(), asm_out_file);
    if (instr_main_here())
        fputs(instr_main_here_asm().c_str(), asm_out_file);
    if (instr_count_used())
        fputs(instr_count_binding_asm().c_str(), asm_out_file);
    if (instr_opts.threshold)
        fputs(instr_unit_asm(instr_opts.threshold, instr_left_out_count(),
                             instr_instrumented_count(),
                             main_input_filename ? main_input_filename : "")
                  .c_str(),
              asm_out_file);
}

/* A plugin runs inside the compiler's process and shares its internal
 * structures, so it only works with the GCC it was built against; say which
 * to rebuild with rather than fail obscurely later. */
static bool version_ok(const struct plugin_name_args *info,
                       struct plugin_gcc_version *version)
{
    if (strcmp(version->basever, gcc_version.basever) != 0) {
        error("%s: %s was built for GCC %s but this is GCC %s: rebuild instr "
              "with this compiler (apt-get install gcc-%d-plugin-dev)",
              info->base_name, lbasename(info->full_name), gcc_version.basever,
              version->basever, atoi(version->basever));
        return false;
    }
    if (!plugin_default_version_check(version, &gcc_version)) {
        error("%s: %s was built for a different build of GCC %s (%s %s): "
              "rebuild instr with this compiler",
              info->base_name, lbasename(info->full_name), version->basever,
              gcc_version.datestamp, gcc_version.devphase);
        return false;
    }
    return true;
}

INSTR_PLUGIN_EXPORT int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
    const char *name = info->base_name;

    if (!version_ok(info, version))
        return 1;
    register_callback(name, PLUGIN_INFO, NULL, &instr_plugin_info);
    if (!instr_parse_options(info))
        return 0; /* the errors fail the compilation; nothing to register */

    struct register_pass_info pass;
    pass.pass = instr_make_instrument_pass(g);
    pass.pos_op = PASS_POS_INSERT_AFTER;
    pass.ref_pass_instance_number = 1;
    if (instr_opts.inline_before) {
        /* Right after the function is put into SSA form, before early
         * inlining: every function body, including those that will only
         * survive as inlined copies, gets its own hooks, so inlined calls
         * stay visible (at the cost of hooks in hot inlined code).  The
         * call graph edges of the new calls are rebuilt by the
         * rebuild_cgraph_edges pass at the end of this pass group. */
        pass.reference_pass_name = "ssa";
    } else {
        /* The first GIMPLE pass of the late pipeline, after the IPA passes:
         * inlining, cloning (.part/.constprop/.isra) and unreachable-function
         * removal have happened, so the hooks describe the program as it
         * will run.  EH dispatch has just been lowered but landing pads and
         * their post-landing-pad blocks are still in lp_array, and the
         * function is in SSA form with a CFG.  This pipeline also runs at
         * -O0, unlike the optimisation passes further down. */
        pass.reference_pass_name = "ehdisp";
    }
    register_callback(name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);

    /* Call-site passes, only where call sites are hooked.  The last GIMPLE
     * pass before expansion: the calls the optimiser made after the
     * instrument pass (loop distribution's memset) get their call-site
     * hooks too, so the next pass decides about them with the others.
     * Right after expansion to RTL, the first point where a call statement
     * is known to be a call instruction or not (builtins expanded inline,
     * folded copies): call-site hooks around no call are removed there
     * (pass-empty-sites.cc).  Before any RTL optimisation, so the hook calls
     * are still where the GIMPLE pass put them; this runs at -O0 too. */
    struct register_pass_info late, sites;
    late.pass = instr_make_late_sites_pass(g);
    late.pos_op = PASS_POS_INSERT_BEFORE;
    late.ref_pass_instance_number = 1;
    late.reference_pass_name = "optimized";
    sites.pass = instr_make_empty_sites_pass(g);
    sites.pos_op = PASS_POS_INSERT_AFTER;
    sites.ref_pass_instance_number = 1;
    sites.reference_pass_name = "expand";
    if (instr_opts.callsites != instr_options::CALLSITES_NONE) {
        /* Count mode counts its calls to const and pure functions in the
         * late pass; it has no hook pairs for the RTL pass to remove. */
        register_callback(name, PLUGIN_PASS_MANAGER_SETUP, NULL, &late);
        if (instr_opts.mode == instr_options::MODE_TIME)
            register_callback(name, PLUGIN_PASS_MANAGER_SETUP, NULL, &sites);
    }
    register_callback(name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                      const_cast<ggc_root_tab *>(instr_pass_gc_roots));
    register_callback(name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                      const_cast<ggc_root_tab *>(instr_site_gc_roots));
    register_callback(name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                      const_cast<ggc_root_tab *>(instr_count_gc_roots));
    register_callback(name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                      const_cast<ggc_root_tab *>(instr_switch_gc_roots));
    register_callback(name, PLUGIN_FINISH_UNIT, emit_binding, NULL);
    return 0;
}

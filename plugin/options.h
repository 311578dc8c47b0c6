/* options.h - the plugin's -fplugin-arg-instr-<key>[=value] arguments. */
#ifndef INSTR_PLUGIN_OPTIONS_H
#define INSTR_PLUGIN_OPTIONS_H

#include "gcc-compat.h"

struct instr_options {
    /* Function-name globs (fnmatch, no flags).  A function is selected when
     * its assembler (mangled) name or its plain source name matches. */
    std::vector<std::string> include; /* empty: every function */
    std::vector<std::string> exclude;
    /* Source-file globs matched against the file of the function's
     * declaration as GCC spells it (as written on the command line or in
     * #include), no fnmatch flags, so '*' also crosses '/'. */
    std::vector<std::string> exclude_file;
    bool inline_before = false; /* inline=before: hooks go into inlined copies */
    /* callsites=: which call statements get the call-site hooks. */
    enum callsites_mode { CALLSITES_ALL, CALLSITES_EXTERNAL, CALLSITES_NONE };
    callsites_mode callsites = CALLSITES_ALL;
    /* threshold=N: functions under N GIMPLE statements with no loop and no
     * call are left out (threshold.cc); 0: every function instrumented. */
    unsigned threshold = 0;
    /* mode=: what the added code records.  TIME (default): the hooks, every
     * call timed; COUNT: per-thread counters only, exact calls and call
     * edges, no time (count-mode.cc). */
    enum record_mode { MODE_TIME, MODE_COUNT };
    record_mode mode = MODE_TIME;
    /* switchable: each hooked function gets a plain twin chosen at its
     * entry while the module's switch is off (pass-switch.cc). */
    bool switchable = false;
    bool verbose = false;
    std::string runtime; /* absolute path of the runtime to dlopen() */
    std::string plugin_name; /* "instr", from the plugin file name */
};

extern instr_options instr_opts;

/* Parses the plugin's arguments into instr_opts, reporting every problem with
 * error().  Returns false if any argument was rejected. */
bool instr_parse_options(const struct plugin_name_args *info);

/* Whether the include/exclude/exclude-file globs select this function. */
bool instr_options_select(tree fndecl);

/* Whether an exclude= glob names this function (a callee: its call sites
 * get no hooks either, wherever it is defined). */
bool instr_options_excluded_callee(tree fndecl);

#endif

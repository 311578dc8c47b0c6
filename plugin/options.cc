/* options.cc - parsing and applying the plugin's arguments. */
#include "options.h"

#include "arch.h"
#include "hook-abi.h"

#include <fnmatch.h>

instr_options instr_opts;

static const char valid_keys[] =
    "include, exclude, exclude-file, inline, callsites, threshold, mode, switchable, runtime, verbose";

/* The argument as the user spelled it, for messages. */
static std::string arg_spelling(const char *plugin, const plugin_argument &arg)
{
    std::string s = std::string("-fplugin-arg-") + plugin + "-" + arg.key;
    if (arg.value)
        s += std::string("=") + arg.value;
    return s;
}

static bool need_value(const char *plugin, const plugin_argument &arg)
{
    if (arg.value && *arg.value)
        return true;
    error("%s: argument %qs needs a value", plugin,
          arg_spelling(plugin, arg).c_str());
    return false;
}

/* "@FILE": the globs of a file, one per line; blank lines and lines
 * starting with '#' are ignored, spaces around a glob too (the format
 * instr-report --suggest-exclude writes). */
static bool read_glob_file(const char *plugin, const plugin_argument &arg,
                           std::vector<std::string> *out)
{
    FILE *f = fopen(arg.value + 1, "r");
    if (!f) {
        error("%s: cannot read the file of %qs: %s", plugin,
              arg_spelling(plugin, arg).c_str(), xstrerror(errno));
        return false;
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        std::string g(line);
        size_t b = g.find_first_not_of(" \t\r\n");
        size_t e = g.find_last_not_of(" \t\r\n");
        if (b == std::string::npos || g[b] == '#')
            continue;
        out->push_back(g.substr(b, e - b + 1));
    }
    bool ok = !ferror(f);
    fclose(f);
    if (!ok)
        error("%s: cannot read the file of %qs", plugin, arg_spelling(plugin, arg).c_str());
    return ok;
}

/* "a,b,c" -> {a, b, c}; "@FILE" -> the globs in FILE.  An empty glob is
 * more likely a typo than a wish to match nothing, so it is refused. */
static bool split_globs(const char *plugin, const plugin_argument &arg,
                        std::vector<std::string> *out)
{
    if (!need_value(plugin, arg))
        return false;
    if (arg.value[0] == '@')
        return read_glob_file(plugin, arg, out);
    std::string all(arg.value);
    size_t start = 0;
    for (;;) {
        size_t comma = all.find(',', start);
        std::string glob = all.substr(start, comma == std::string::npos
                                                 ? std::string::npos
                                                 : comma - start);
        if (glob.empty()) {
            error("%s: empty glob in %qs", plugin,
                  arg_spelling(plugin, arg).c_str());
            return false;
        }
        out->push_back(glob);
        if (comma == std::string::npos)
            return true;
        start = comma + 1;
    }
}

/* The binding constructor dlopen()s by this path from wherever the program
 * runs, so it must not depend on the compiler's working directory.  A path
 * that does not exist yet (the runtime is installed later) is still made
 * absolute: a missing runtime only means an unrecorded run. */
static std::string absolute_path(const char *path)
{
    char resolved[PATH_MAX];
    if (realpath(path, resolved))
        return resolved;
    if (path[0] == '/')
        return path;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return path;
    return std::string(cwd) + "/" + path;
}

/* The runtime is installed next to the plugin, so an instrumented program
 * finds the runtime that matches the plugin that compiled it. */
static std::string default_runtime(const char *plugin_file)
{
    std::string self = absolute_path(plugin_file);
    size_t slash = self.rfind('/');
    std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
    return dir + "/" INSTR_RUNTIME_SONAME;
}

bool instr_parse_options(const struct plugin_name_args *info)
{
    const char *plugin = info->base_name;
    bool ok = true;

    instr_opts.plugin_name = plugin;
    instr_opts.runtime = default_runtime(info->full_name);
    for (int i = 0; i < info->argc; i++) {
        const plugin_argument &arg = info->argv[i];
        const char *key = arg.key;
        if (!strcmp(key, "include")) {
            ok &= split_globs(plugin, arg, &instr_opts.include);
        } else if (!strcmp(key, "exclude")) {
            ok &= split_globs(plugin, arg, &instr_opts.exclude);
        } else if (!strcmp(key, "exclude-file")) {
            ok &= split_globs(plugin, arg, &instr_opts.exclude_file);
        } else if (!strcmp(key, "inline")) {
            if (!need_value(plugin, arg)) {
                ok = false;
            } else if (!strcmp(arg.value, "after")) {
                instr_opts.inline_before = false;
            } else if (!strcmp(arg.value, "before")) {
                instr_opts.inline_before = true;
            } else {
                error("%s: bad value in %qs; valid: after, before", plugin,
                      arg_spelling(plugin, arg).c_str());
                ok = false;
            }
        } else if (!strcmp(key, "callsites")) {
            if (!need_value(plugin, arg)) {
                ok = false;
            } else if (!strcmp(arg.value, "all")) {
                instr_opts.callsites = instr_options::CALLSITES_ALL;
            } else if (!strcmp(arg.value, "external")) {
                instr_opts.callsites = instr_options::CALLSITES_EXTERNAL;
            } else if (!strcmp(arg.value, "none")) {
                instr_opts.callsites = instr_options::CALLSITES_NONE;
            } else {
                error("%s: bad value in %qs; valid: all, external, none", plugin,
                      arg_spelling(plugin, arg).c_str());
                ok = false;
            }
        } else if (!strcmp(key, "mode")) {
            if (!need_value(plugin, arg)) {
                ok = false;
            } else if (!strcmp(arg.value, "time")) {
                instr_opts.mode = instr_options::MODE_TIME;
            } else if (!strcmp(arg.value, "count")) {
                instr_opts.mode = instr_options::MODE_COUNT;
            } else {
                error("%s: bad value in %qs; valid: time, count", plugin,
                      arg_spelling(plugin, arg).c_str());
                ok = false;
            }
        } else if (!strcmp(key, "threshold")) {
            /* Decimal digits only: "-1", "5x" or "" are typos, not wishes. */
            const char *v = arg.value;
            bool digits = v && *v && strspn(v, "0123456789") == strlen(v) && strlen(v) <= 9;
            if (!need_value(plugin, arg)) {
                ok = false;
            } else if (!digits) {
                error("%s: bad value in %qs; expected a number of GIMPLE statements "
                      "(0 or more, 0 = every function)", plugin,
                      arg_spelling(plugin, arg).c_str());
                ok = false;
            } else {
                instr_opts.threshold = (unsigned)atoi(v);
            }
        } else if (!strcmp(key, "runtime")) {
            if (need_value(plugin, arg))
                instr_opts.runtime = absolute_path(arg.value);
            else
                ok = false;
        } else if (!strcmp(key, "switchable")) {
            if (arg.value) {
                error("%s: %qs takes no value", plugin, arg_spelling(plugin, arg).c_str());
                ok = false;
            }
            instr_opts.switchable = true;
        } else if (!strcmp(key, "verbose")) {
            if (arg.value) {
                error("%s: %qs takes no value", plugin,
                      arg_spelling(plugin, arg).c_str());
                ok = false;
            }
            instr_opts.verbose = true;
        } else {
            error("%s: unknown argument %qs; valid: %s", plugin,
                  arg_spelling(plugin, arg).c_str(), valid_keys);
            ok = false;
        }
    }
    /* The hooked copies are made after inlining and hold the timing hooks
     * (pass-switch.cc). */
    if (instr_opts.switchable && instr_opts.inline_before) {
        error("%s: %<-fplugin-arg-%s-switchable%> needs %<inline=after%>", plugin, plugin);
        ok = false;
    }
    if (instr_opts.switchable && instr_opts.mode == instr_options::MODE_COUNT) {
        error("%s: %<-fplugin-arg-%s-switchable%> switches the timing hooks; %<mode=count%> has none", plugin,
              plugin);
        ok = false;
    }
    /* Count mode's code is written per target (plugin/arch/<cpu>.cc). */
    if (instr_opts.mode == instr_options::MODE_COUNT && instr_arch_count_refusal()) {
        error("%s: %s", plugin, instr_arch_count_refusal());
        ok = false;
    }
    return ok;
}

static bool any_match(const std::vector<std::string> &globs, const char *s)
{
    for (const std::string &g : globs)
        if (fnmatch(g.c_str(), s, 0) == 0)
            return true;
    return false;
}

static bool name_matches(const std::vector<std::string> &globs, tree fndecl)
{
    const char *mangled = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fndecl));
    const char *plain = DECL_NAME(fndecl) ? IDENTIFIER_POINTER(DECL_NAME(fndecl))
                                          : mangled;
    return any_match(globs, mangled) || any_match(globs, plain);
}

bool instr_options_select(tree fndecl)
{
    if (!instr_opts.include.empty() && !name_matches(instr_opts.include, fndecl))
        return false;
    if (name_matches(instr_opts.exclude, fndecl))
        return false;
    const char *file = DECL_SOURCE_FILE(fndecl);
    if (file && any_match(instr_opts.exclude_file, file))
        return false;
    return true;
}

bool instr_options_excluded_callee(tree fndecl)
{
    return name_matches(instr_opts.exclude, fndecl);
}

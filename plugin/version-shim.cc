/* version-shim.cc - instr.so: load the plugin built for the running GCC.
 *
 * cc1 dlopen()s plugins with RTLD_NOW, so a plugin built against another
 * GCC release fails before plugin_init can say anything, with a message
 * such as "undefined symbol: _Z12copy_warningjj".  This shim uses no GCC
 * symbol at link time: it loads instr-gcc<major>.so from its own directory
 * (the build makes one per GCC it found plugin headers for) and forwards
 * plugin_init, or says which GCC to rebuild instr for; loaded by clang,
 * it stops the compile with the reason. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <string>

#include "gcc-plugin.h"
#include "plugin-version.h" /* gcc_version: static data, no symbols */

/* Exported by name: built with -fvisibility=hidden. */
#define INSTR_PLUGIN_EXPORT __attribute__((visibility("default")))

INSTR_PLUGIN_EXPORT int plugin_is_GPL_compatible;

typedef int (*plugin_init_fn)(struct plugin_name_args *, struct plugin_gcc_version *);
typedef void (*gcc_error_fn)(const char *, ...);

/* GCC's error(), looked up at run time: its mangled name has been the same
 * in every release we support, and cc1 exports it for plugins.  Without it
 * stderr is the only way to explain. */
static void report(const char *msg)
{
    gcc_error_fn error_fn = (gcc_error_fn)dlsym(RTLD_DEFAULT, "_Z5errorPKcz");
    if (error_fn)
        error_fn("%s", msg);
    else
        fprintf(stderr, "cc1: error: %s\n", msg);
}

/* clang also takes -fplugin=instr.so: it dlopen()s the file, never calls
 * plugin_init, and builds the program uninstrumented without a word.  Any
 * GCC that loads plugins exports its plugin API (plugin_default_version_check
 * among it); a process that does not is another compiler, or a program
 * that loaded this file for its own reasons.  A compiler is stopped: the
 * build the user asked for cannot be made. */
__attribute__((constructor)) static void refuse_other_compilers(void)
{
    if (dlsym(RTLD_DEFAULT, "plugin_default_version_check"))
        return;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    if (!strstr(base, "clang") && !strstr(base, "icx") && !strstr(base, "icc"))
        return; /* not a compiler we know of: nothing to stop */
    fprintf(stderr,
            "%s: error: instr.so is a GCC plugin, which %s cannot run: the program would be built "
            "without instrumentation; compile with gcc or g++ (instr was built for GCC %s)\n",
            base, base, gcc_version.basever);
    exit(1);
}

INSTR_PLUGIN_EXPORT int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
    std::string self = info->full_name;
    size_t slash = self.rfind('/');
    std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
    int major = atoi(version->basever);
    std::string real = dir + "/instr-gcc" + std::to_string(major) + ".so";

    void *handle = dlopen(real.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle && access(real.c_str(), F_OK) == 0) {
        report((std::string(info->base_name) + ": cannot load " + real + ": " + dlerror()).c_str());
        return 1;
    }
    if (!handle && major == atoi(gcc_version.basever)) {
        report((std::string(info->base_name) + ": " + real +
                " is missing: rebuild instr (it builds one plugin per GCC)").c_str());
        return 1;
    }
    if (!handle) {
        std::string msg = std::string(info->base_name) + ": " +
                          self.substr(slash + 1) + " was built for GCC " +
                          gcc_version.basever + " but this is GCC " +
                          version->basever +
                          ": rebuild instr with this compiler (apt-get install gcc-" +
                          std::to_string(major) + "-plugin-dev)";
        report(msg.c_str());
        return 1;
    }
    plugin_init_fn init = (plugin_init_fn)dlsym(handle, "plugin_init");
    if (!init) {
        report((real + ": no plugin_init").c_str());
        return 1;
    }
    return init(info, version);
}

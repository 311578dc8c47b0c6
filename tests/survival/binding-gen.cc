/* binding-gen.cc - prints the binding assembly (plugin/binding-asm.cc) for
 * a runtime path, as the plugin built with INSTR_RECORD_SETUID emits it, so
 * check-setuid-record.py can link small programs whose runtime lives where
 * the test chooses. */
#include <cstdio>

#include "binding-asm.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: binding-gen RUNTIME-PATH\n");
        return 2;
    }
    std::fputs(instr_binding_asm(argv[1]).c_str(), stdout);
    return 0;
}

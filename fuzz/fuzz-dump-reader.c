/* fuzz-dump-reader.c - any bytes as a dump file: open, validate, decode every
 * event, build the profile and every report, write the text form; then the
 * sampling side: every sample record, symbolised, in every table and the
 * folded stacks, the --diff of the dump with itself; and an instrumented
 * dump's samples (INSTR_SAMPLE) placed on its shadow stack (hybrid.c). */
#include <stdio.h>

#include "dump-reader.h"
#include "fuzz-common.h"
#include "hybrid.h"
#include "sample-report.h"

static void read_samples(const char *path)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        return;
    struct instr_dump d;
    char err[600];
    if (instr_dump_open(&d, path, err, sizeof err) < 0)
        return;
    struct instr_sprofile p;
    if (instr_sprofile_build(&p, &d, 1, INSTR_SPROFILE_LINES, err, sizeof err) == 0) {
        for (int f = 0; f < 3; f++)
            for (int v = INSTR_SVIEW_FUNCTIONS; v <= INSTR_SVIEW_PROCESSES; v++) {
                struct instr_sreport_opts o = {.view = (enum instr_sview)v, .format = f};
                instr_sreport_write(null, &p, &o);
            }
        instr_sprofile_sort(&p, "name");
        instr_sreport_folded(null, &p);
        instr_sreport_callgrind(null, &p);
        instr_sreport_pprof(null, &p);
        for (int f = 0; f < 3; f++) {
            struct instr_sreport_opts o = {.format = f};
            instr_sreport_calltree(null, &p, &o, 0);
            instr_sreport_relations(null, &p, &o, "[sh]", 1);
            instr_sreport_relations(null, &p, &o, "[sh]", 0);
            instr_sreport_diff(null, &p, &p, f, "exclusive", 0);
        }
        instr_sprofile_free(&p);
    }
    struct instr_hybrid h;
    if (instr_hybrid_has_samples(&d) && instr_hybrid_build(&h, &d, err, sizeof err) == 0) {
        for (int f = 0; f < 3; f++)
            instr_hybrid_write(null, &h, f, 0);
        instr_hybrid_free(&h);
    }
    instr_dump_close(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = instr_fuzz_file(0, data, size);
    if (path) {
        instr_fuzz_read_dump(path);
        read_samples(path);
    }
    return 0;
}

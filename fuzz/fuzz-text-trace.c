/* fuzz-text-trace.c - any bytes as the text form: parse and build a dump
 * (instr-dump --from-text), then read back whatever was built. */
#define _GNU_SOURCE
#include <stdio.h>

#include "fuzz-common.h"
#include "text-trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *out = instr_fuzz_file(1, NULL, 0);
    FILE *in = fmemopen((void *)data, size, "r");
    char err[600];
    if (!out || !in) {
        if (in)
            fclose(in);
        return 0;
    }
    if (size == 0) {
        fclose(in);
        return 0;
    }
    int rc = instr_text_to_dump(in, "fuzz", out, err, sizeof err);
    fclose(in);
    if (rc == 0)
        instr_fuzz_read_dump(out);
    return 0;
}

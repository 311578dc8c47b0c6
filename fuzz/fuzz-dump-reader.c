/* fuzz-dump-reader.c - any bytes as a dump file: open, validate, decode every
 * event, build the profile and every report, write the text form. */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = instr_fuzz_file(0, data, size);
    if (path)
        instr_fuzz_read_dump(path);
    return 0;
}

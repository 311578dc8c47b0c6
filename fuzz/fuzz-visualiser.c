/* fuzz-visualiser.c - any bytes as a profile-visualiser text file: convert
 * (tools/import-visualiser.c), then read back whatever was built through
 * every view and export. */
#include "fuzz-common.h"
#include "import-visualiser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *out = instr_fuzz_file(1, NULL, 0);
    struct instr_import_result r;
    char err[600];
    if (!out)
        return 0;
    instr_visualiser_sniff((const char *)data, size);
    int rc = instr_visualiser_import((const char *)data, size, "fuzz", out, &r, err, sizeof err);
    instr_import_result_free(&r);
    if (rc == 0)
        instr_fuzz_read_dump(out);
    return 0;
}

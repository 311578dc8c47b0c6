/* fuzz-common.h - what the fuzz targets share: an in-memory file whose path
 * the readers can open, and a full pass of the tools over a dump.
 *
 * Each target defines LLVMFuzzerTestOneInput; built with clang
 * -fsanitize=fuzzer it is a libFuzzer binary, linked with replay-main.c it
 * replays files (the regression test, any compiler). */
#ifndef INSTR_FUZZ_COMMON_H
#define INSTR_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* A memfd holding data; returns its /proc/self/fd path (static storage, one
 * per slot 0/1), or NULL. */
const char *instr_fuzz_file(int slot, const uint8_t *data, size_t size);

/* Opens path as a dump and runs everything that reads it: session, every
 * view in every format, the text form.  Output goes to /dev/null. */
void instr_fuzz_read_dump(const char *path);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

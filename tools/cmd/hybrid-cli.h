/* hybrid-cli.h - instr-report's front end for --view samples (prints). */
#ifndef INSTR_HYBRID_CLI_H
#define INSTR_HYBRID_CLI_H

#include <stddef.h>

#include "dump-reader.h"

/* format 0 text, 1 csv, 2 json.  Returns instr-report's exit code. */
int instr_hybrid_cli(const struct instr_dump *dumps, size_t nd, int format, size_t limit, const char *outpath);

#endif

/* sample-cli.h - instr-report's front end for sampling dumps (prints). */
#ifndef INSTR_SAMPLE_CLI_H
#define INSTR_SAMPLE_CLI_H

#include <stddef.h>

#include "dump-reader.h"

/* view: "functions", "threads", "modules", "processes", "calltree"
 * (depth levels, 0 = all), "callers" or "callees" (of func); format 0 text, 1
 * csv, 2 json; sort NULL = inclusive; export NULL, or "folded".  Returns instr-report's exit code. */
int instr_sample_cli(const struct instr_dump *dumps, size_t nd, const char *view, int format, const char *sort,
                     size_t limit, double threshold, const char *export, const char *outpath, const char *func,
                     size_t depth, unsigned build_flags);

/* --diff A B of two sampling dumps.  Returns instr-report's exit code. */
int instr_sample_diff_cli(const struct instr_dump *a, const struct instr_dump *b, int format, const char *sort,
                          double threshold, const char *outpath);

#endif

/* count-report.h - the report of count-mode dumps (plugin mode=count):
 * exact calls per function and per call edge, no time. */
#ifndef INSTR_COUNT_REPORT_H
#define INSTR_COUNT_REPORT_H

#include <stdio.h>

#include "dump-reader.h"

/* Whether d was written in count mode (INSTR_DUMP_COUNTS). */
int instr_dump_is_counted(const struct instr_dump *d);

/* The calls of dumps[0..nd) summed by function name, written to out in
 * format "text", "json" or "csv" (tools/README-json.md): view "functions"
 * (the table, then each function's callers and callees), "callers" or
 * "callees" of func.  Returns 0, INSTR_EARG (a view that needs time, or
 * func unknown: *why says which) or INSTR_ENOMEM. */
int instr_count_report(const struct instr_dump *dumps, size_t nd, const char *view, const char *func,
                       size_t limit, const char *format, FILE *out, const char **why);

/* --diff of two count-mode dumps: each function's calls in a and in b
 * (matched by mangled name), most changed first, in format "text", "json"
 * or "csv".  0, INSTR_EARG (an input not a count dump: *why) or
 * INSTR_ENOMEM. */
int instr_count_diff(const struct instr_dump *a, const struct instr_dump *b, const char *format, FILE *out,
                     const char **why);

#endif

/* line-table.h - the source line of a code address, from the DWARF line
 * table (libdw) of its module file or of the module's debug file found by
 * build-id (Debian's -dbgsym packages), each opened once.  Library code:
 * never prints or exits. */
#ifndef INSTR_LINE_TABLE_H
#define INSTR_LINE_TABLE_H

#include <stdint.h>

struct instr_line_tables;

/* 0, or INSTR_ENOMEM. */
int instr_line_tables_new(struct instr_line_tables **out);
void instr_line_tables_free(struct instr_line_tables *t);

/* (file, line) of vaddr (an address of the module file at path, as its
 * symbols count them): 0 found, 1 no line information, INSTR_ENOMEM.
 * file is the path the line table gives (absolute when the compiler knew
 * its directory), valid until t is freed. */
int instr_line_find(struct instr_line_tables *t, const char *path, uint64_t vaddr, const char **file, int *line);

#endif

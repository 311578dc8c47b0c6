/* output-file.h - instr-report's -o FILE written whole or not at all.
 *
 * A report or export is written under a new name in FILE's directory
 * (.FILE.XXXXXX, mode as fopen would give it, or the old file's) and
 * renamed over FILE only once all of it was written and the tool is to
 * exit 0 or 3: a refused export or a failed write leaves no empty or half
 * file behind, and a FILE that was there stays as it was.  Where that
 * cannot be (FILE a device or FIFO, /dev/stdout, a directory one may not
 * create files in), FILE is opened and written in place as fopen does; a
 * symbolic link is followed, so its target is what changes. */
#ifndef INSTR_OUTPUT_FILE_H
#define INSTR_OUTPUT_FILE_H

#include <stdio.h>

/* path NULL or "-": stdout.  NULL with errno set when FILE cannot be
 * written. */
FILE *instr_output_open(const char *path);

/* Closes f (stdout: flushes it), keeping what was written when keep is
 * set, removing it otherwise.  0, or -1 when a write, the close or the
 * rename failed (errno set; nothing kept). */
int instr_output_close(FILE *f, int keep);

#endif

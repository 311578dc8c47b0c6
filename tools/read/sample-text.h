/* sample-text.h - the text form of sampling records (README-text-format.md):
 *
 *   map MODULE START END off=PGOFF at=TICK       MAP record
 *   sampling rate=HZ period=NS stack=BYTES unwinder=TEXT
 *   cpu-time INDEX NS                            CPU_TIME record
 *   INDEX TICK stack [w=W] [flags=truncated,fp] PC,PC,...   a STACK sample (leaf first, hex)
 *   INDEX TICK lost N                            a LOST record
 */
#ifndef INSTR_SAMPLE_TEXT_H
#define INSTR_SAMPLE_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "dump-reader.h"
#include "dump-writer.h"

/* Writes d's sampling records; *nbad += the sample chunks that ended on
 * invalid bytes (each noted in a comment line). */
void instr_sample_text_write(FILE *out, const struct instr_dump *d, size_t *nbad);

/* Parses one line of ntok tokens if it is a sampling line: 1 done, 0 not a
 * sampling line, -1 bad (why says what). */
int instr_sample_text_parse(struct instr_dump_writer *w, int ntok, char *const *tok, char *why, size_t whylen);

#endif

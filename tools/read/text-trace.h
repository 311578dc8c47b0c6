/* text-trace.h - the text form of a dump, both directions.
 *
 * The same records as the binary dump, one per line, with absolute ticks,
 * so that tests can be written by hand.  Full description with examples in
 * tools/README-text-format.md.
 *
 *   instr-dump 1                               first line: format and version
 *   header KEY=VALUE...                        before any other record
 *   module ID PATH [load=ADDR]
 *   function ID module=M line=L file=F name=MANGLED
 *   thread INDEX [tid=T] [name=N]              a later line wins (like the records)
 *   label ID TEXT
 *   callsite ID caller=F line=L flags=direct|indirect callee=NAME module=M offset=X site=Y
 *   INDEX TICK EVENT [ARGS] [os=BITS]          an event of thread INDEX at absolute TICK
 *
 * Header keys (all optional, default 0): pid ppid exe start_tsc start_ns
 * real_ns end_tsc end_ns last_tsc last_ns (default: end_tsc/end_ns)
 * detector (none|rseq_cs|sud|perf|rdpmc|cpuclock) detectors (a+b...) sees (bits, as os=) flags
 * (complete,fork_child,tsc_invariant,signaled,no_transitions or none) dropped unmatched
 * exit_status chunk_size (bytes per chunk, default 65536) detail.
 *
 * Events: enter ID | exit | call SITE | return | reenter-site SITE | unwind REASON
 * (exception|stack|mismatch|N) | end | reenter ID | mark LABEL |
 * counter LABEL VALUE | resync ABS (the next tick counts from ABS) |
 * dropped N.
 * os=BITS: the OS acted in the interval this event ends; BITS is a comma
 * list of sched,syscall,fault,signal,irq,unknown, or none (flag without
 * bits), or a number (0x..).
 *
 * Ticks of a thread never go down, except right after a resync (the next
 * event's tick is >= ABS).  Values with spaces, '#', '"' or '\' are written
 * in double quotes with \" and \\ escapes.  '#' starts a comment (outside
 * quotes); blank lines are ignored.
 */
#ifndef INSTR_TEXT_TRACE_H
#define INSTR_TEXT_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "dump-reader.h"

/* Writes the text form of d to out.  *nbad receives the number of chunks
 * whose decoding stopped on invalid bytes (each noted in a comment line). */
int instr_text_write(FILE *out, const struct instr_dump *d, size_t *nbad, char *err, size_t errlen);

/* Parses the text form from in (named name in messages) and writes a
 * binary dump to out_path.  Errors are "name:line: reason". */
int instr_text_to_dump(FILE *in, const char *name, const char *out_path, char *err, size_t errlen);

/* Formats transition bits as in the text form ("sched,signal", "none",
 * "0x40").  Returns buf. */
const char *instr_os_bits_str(unsigned bits, char *buf, size_t len);

/* The words of the unwind reasons (INSTR_UNWIND_*, index 1..3) in the text
 * form, written by text-trace.c and read by text-trace-parse.c; [0] is
 * NULL: an unknown reason is written as its number. */
extern const char *const instr_text_unwind_names[4];

#endif

/* import-visualiser.h - reads the profile-visualiser text format
 * (../shared/spec/visualiser-format.md; T F S E V Y C D lines) into a dump,
 * so that every view of instr-report works on it.
 *
 * The dump has a 1 GHz tick rate (one microsecond of the file = 1000 ticks),
 * starts at time 0, ends at the file's latest time, and carries
 * INSTR_DUMP_NO_TRANSITIONS: the format has no kernel-transition data, so
 * Application values are unavailable.  Mapping:
 *
 *   T thread label        a thread (dense index in order of declaration,
 *                         tid = the file's thread id, name = label)
 *   F thread fn label     a function (one id per (thread, fn); name = label,
 *                         module = the file); the same label in two
 *                         threads is one function of the report
 *   S / E                 ENTER / EXIT.  E closes the innermost open call of
 *                         its function; calls still open above it close
 *                         there too (EXT UNWIND mismatch: counted repairs)
 *   V / Y                 a label, and EXT MARK on the thread
 *   C / D                 a label, and EXT COUNTER on a "[counters]" thread
 *                         (counters belong to no thread in the format)
 *
 * Calls still open at the end close at the file's latest time (incomplete,
 * counted).  A malformed line is skipped and reported as "name:line:
 * reason"; the rest is read.  Library code: no printing, no exits.
 */
#ifndef INSTR_IMPORT_VISUALISER_H
#define INSTR_IMPORT_VISUALISER_H

#include <stddef.h>
#include <stdint.h>

struct instr_import_result {
    size_t bad_lines; /* lines skipped */
    char **messages;  /* "name:line: reason", the first INSTR_IMPORT_MAX_MESSAGES of them */
    size_t nmessages;
};
#define INSTR_IMPORT_MAX_MESSAGES 100

/* Whether buf (the start of a file) looks like the visualiser format: its
 * first line that is not blank or a comment is a record line. */
int instr_visualiser_sniff(const char *buf, size_t len);

/* Converts buf[0..len) (named name in messages and as the program) into a
 * dump at out_path.  Returns 0 (r says which lines were bad) or a negative
 * INSTR_E* code with a reason in err (writing failed, out of memory). */
int instr_visualiser_import(const char *buf, size_t len, const char *name, const char *out_path,
                            struct instr_import_result *r, char *err, size_t errlen);
void instr_import_result_free(struct instr_import_result *r);

#endif

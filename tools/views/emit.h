/* emit.h - writing values out: CSV fields, JSON strings and numbers, and a
 * small JSON writer that places the commas, newlines and indentation.
 *
 * The bottom layer of the writers (report-*.c, report-views.c, diff.c,
 * the exporters): it knows no session, only FILE and values.
 *
 * Strings: JSON strings are written as UTF-8; a byte that is not part of a
 * valid UTF-8 sequence (a path or a name from a non-UTF-8 locale) becomes
 * U+FFFD, the Unicode replacement character, so the output is always valid
 * JSON.  Numbers: NaN and infinities (a dump without a tick rate, a process
 * killed before its first hook) are written as null, never as nan/inf.
 */
#ifndef INSTR_EMIT_H
#define INSTR_EMIT_H

#include <stdint.h>
#include <stdio.h>

/* s as one CSV field (RFC 4180 quoting when needed). */
void instr_csv_field(FILE *out, const char *s);

/* s as a JSON string (NULL: ""). */
void instr_json_str(FILE *out, const char *s);
/* A number of nanoseconds ("%.0f"), or null when not finite. */
void instr_json_ns(FILE *out, double ns);
/* x with the printf format fmt, or null when not finite. */
void instr_json_double(FILE *out, const char *fmt, double x);

/* ---- the writer ---- */

#define INSTR_JSON_MAX_DEPTH 16

/* A container's layout: one member per line, indented two spaces per level
 * (JSON_LINES), or all on one line separated by ", " (JSON_INLINE). */
enum instr_json_layout { INSTR_JSON_LINES, INSTR_JSON_INLINE };

struct instr_json {
    FILE *out;
    int depth;                                   /* open containers */
    unsigned char n[INSTR_JSON_MAX_DEPTH];       /* members written so far (saturates at 2) */
    unsigned char inl[INSTR_JSON_MAX_DEPTH];     /* INSTR_JSON_INLINE */
    char close[INSTR_JSON_MAX_DEPTH];            /* ']' or '}' */
};

void instr_json_init(struct instr_json *j, FILE *out);
/* Opens an object ('{') or array ('[') as the next member (key NULL in an
 * array or at the top). */
void instr_json_open(struct instr_json *j, const char *key, char brace, enum instr_json_layout layout);
void instr_json_close(struct instr_json *j);
/* Members; key NULL in an array. */
void instr_json_key_str(struct instr_json *j, const char *key, const char *s);
void instr_json_key_u64(struct instr_json *j, const char *key, uint64_t v);
void instr_json_key_num(struct instr_json *j, const char *key, const char *fmt, double x); /* null if not finite */
void instr_json_key_ns(struct instr_json *j, const char *key, double ns);                  /* "%.0f" or null */
void instr_json_key_bool(struct instr_json *j, const char *key, int b);
void instr_json_key_null(struct instr_json *j, const char *key);
/* The separator and key of the next member; its value is written by the caller. */
void instr_json_key(struct instr_json *j, const char *key);

#endif

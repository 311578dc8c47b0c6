/* text-tokens.h - reading the tokens of one line of the text form
 * (text-trace-parse.c for the event records, sample-text.c for the sampling
 * ones): numbers and key=value lookups. */
#ifndef INSTR_TEXT_TOKENS_H
#define INSTR_TEXT_TOKENS_H

#include <stdint.h>

/* An unsigned number, decimal or 0x hex, the whole token: 0, or -1. */
int instr_tok_u64(const char *s, uint64_t *v);

/* The value of key=... among tok[from..ntok), or NULL. */
const char *instr_tok_key(int ntok, char *const *tok, int from, const char *key);

/* An optional key=NUMBER: 0 when absent (*v unchanged) or read, -1 when
 * its value is not a number. */
int instr_tok_opt_u64(int ntok, char *const *tok, int from, const char *key, uint64_t *v);

#endif

/* strtab.h - a table of distinct strings, each with a dense index in the
 * order first seen (the string tables of the pprof and html exports). */
#ifndef INSTR_STRTAB_H
#define INSTR_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct instr_strtab {
    char **s;     /* the strings (copies), s[i] has index i */
    size_t n, cap;
    size_t *hash; /* open addressing: index + 1, 0 = empty */
    size_t mask;
};

/* The index of s (NULL counts as ""), added if new; UINT32_MAX when out of
 * memory (the table is unchanged then). */
uint32_t instr_strtab_id(struct instr_strtab *t, const char *s);
void instr_strtab_free(struct instr_strtab *t);

#endif

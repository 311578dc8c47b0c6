/* text-tokens.c - numbers and key=value tokens of the text form
 * (text-tokens.h). */
#include "text-tokens.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int instr_tok_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (*end || errno)
        return -1;
    *v = x;
    return 0;
}

const char *instr_tok_key(int ntok, char *const *tok, int from, const char *key)
{
    size_t l = strlen(key);
    for (int i = from; i < ntok; i++)
        if (!strncmp(tok[i], key, l) && tok[i][l] == '=')
            return tok[i] + l + 1;
    return NULL;
}

int instr_tok_opt_u64(int ntok, char *const *tok, int from, const char *key, uint64_t *v)
{
    const char *s = instr_tok_key(ntok, tok, from, key);
    return s ? instr_tok_u64(s, v) : 0;
}

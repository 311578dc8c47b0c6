/* strtab.c - a table of distinct strings (see strtab.h). */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

static size_t str_hash(const char *s)
{
    size_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Doubles the hash (at most half full), re-placing every string. */
static int grow(struct instr_strtab *t)
{
    size_t cap = t->hash ? (t->mask + 1) * 2 : 1024;
    size_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = str_hash(t->s[i]) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = i + 1;
    }
    free(t->hash);
    t->hash = h;
    t->mask = cap - 1;
    return 0;
}

uint32_t instr_strtab_id(struct instr_strtab *t, const char *s)
{
    if (!s)
        s = "";
    if ((t->n + 1) * 2 > (t->hash ? t->mask + 1 : 0) && grow(t) < 0)
        return UINT32_MAX;
    size_t j = str_hash(s) & t->mask;
    for (; t->hash[j]; j = (j + 1) & t->mask)
        if (!strcmp(t->s[t->hash[j] - 1], s))
            return (uint32_t)(t->hash[j] - 1);
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **a = realloc(t->s, nc * sizeof *a);
        if (!a)
            return UINT32_MAX;
        t->s = a;
        t->cap = nc;
    }
    if (!(t->s[t->n] = strdup(s)))
        return UINT32_MAX;
    t->hash[j] = ++t->n;
    return (uint32_t)(t->n - 1);
}

void instr_strtab_free(struct instr_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->hash);
}

/* arrays.c - growing arrays, freeing several, sorted searches, message lists (arrays.h). */
#define _GNU_SOURCE /* vasprintf */
#include "arrays.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h" /* INSTR_ENOMEM */

void *instr_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return arr;
    size_t nc = *cap ? *cap * 2 : first;
    while (nc < need)
        nc *= 2;
    void *a = realloc(arr, nc * elem);
    if (a)
        *cap = nc;
    return a;
}

void *instr_grow_zeroed(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t old = *cap;
    char *a = instr_grow(arr, cap, need, elem, first);
    if (a && *cap > old)
        memset(a + old * elem, 0, (*cap - old) * elem);
    return a;
}

void instr_free_all(void *const *ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ptrs[i]);
}

static uint64_t key_at(const void *base, size_t i, size_t elem, size_t key_off)
{
    uint64_t k;
    memcpy(&k, (const char *)base + i * elem + key_off, sizeof k);
    return k;
}

size_t instr_lower_bound(const void *base, size_t n, size_t elem, size_t key_off, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_at(base, mid, elem, key_off) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t instr_upper_bound(const void *base, size_t n, size_t elem, size_t key_off, uint64_t key)
{
    return key == UINT64_MAX ? n : instr_lower_bound(base, n, elem, key_off, key + 1);
}

int instr_msgs_vadd(char ***list, size_t *n, const char *fmt, va_list ap)
{
    char *msg;
    if (vasprintf(&msg, fmt, ap) < 0)
        return INSTR_ENOMEM;
    char **l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l) {
        free(msg);
        return INSTR_ENOMEM;
    }
    *list = l;
    l[(*n)++] = msg;
    return 0;
}

int instr_msgs_add(char ***list, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = instr_msgs_vadd(list, n, fmt, ap);
    va_end(ap);
    return rc;
}

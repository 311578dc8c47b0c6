/* Library builtins: a frame exactly when a call instruction is emitted
 * (plugin test "builtins"; see plugin/pass-empty-sites.cc). */
#include <stddef.h>
#include <string.h>

char dst[4096], src[4096];

/* Unknown sizes: GCC emits real calls, whatever the spelling. */
void copy_var(size_t n) { __builtin_memcpy(dst, src, n); }
void set_var(size_t n) { __builtin_memset(dst, 0, n); }
void move_var(size_t n) { __builtin_memmove(dst + 1, dst, n); }
void plain_var(size_t n) { memcpy(dst, src, n); }

/* Small constant sizes: expanded into moves, no call. */
void copy_const(void) { __builtin_memcpy(dst, src, 8); }
void plain_const(void) { memcpy(dst, src, 16); }

/* A one-character comparison: inline at -O2, a call at -O0. */
int cmp_const(const char *s) { return strcmp(s, "a"); }

/* Not a library function at all: never a frame. */
long expect(long x) { return __builtin_expect(x, 0); }

/* Loops the optimiser turns into library calls after the instrument pass
 * (loop distribution, at -O2): real calls, hooked by the late pass. */
void clear_loop(long *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = 0;
}
void copy_loop(long *restrict d, const long *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}

/* Aggregate assignments: expansion makes a large one a memcpy or memset
 * call (hooked by the late pass), a small one moves (no hooks left). */
struct big { char b[65536]; };
struct mid { long v[8]; };
void copy_big(struct big *a, const struct big *b) { *a = *b; }
void clear_big(struct big *a) { *a = (struct big){0}; }
void copy_mid(struct mid *a, const struct mid *b) { *a = *b; }

/* Comparisons with 0: GCC folds memcmp (...) == 0 into __builtin_memcmp_eq,
 * and strcmp with a string of known length into __builtin_strcmp_eq:
 * spelled as builtins, expanded into a call of memcmp (strcmp) unless the
 * length is small and known, when they become moves and compares (at -O2;
 * -O0 calls memcmp and strcmp). */
int eq_var(const char *a, size_t n) { return memcmp(dst, a, n) == 0; }
int eq_small(const char *a) { return memcmp(dst, a, 4) == 0; }
int streq_lit(void) { return strcmp(dst, "hello, world of strings") == 0; }

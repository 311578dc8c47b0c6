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

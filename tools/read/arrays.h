/* arrays.h - the small array helpers the reading library shares: growing
 * an array (zeroed or not), freeing several, searching one sorted by a
 * 64-bit key, and lists of messages (warnings, bad lines).  Pure: nothing here prints or exits. */
#ifndef INSTR_ARRAYS_H
#define INSTR_ARRAYS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Makes room for need elements of elem bytes in arr (capacity *cap, which
 * doubles, starting at first).  Returns the array, moved or not, or NULL
 * when out of memory (arr is then unchanged and still owned by the
 * caller). */
void *instr_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

/* instr_grow, the new elements zeroed. */
void *instr_grow_zeroed(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

/* Frees each of ptrs[0..n); INSTR_FREE_ALL(a, b, ...) frees a, b ...: the
 * release of a structure's arrays in one statement. */
void instr_free_all(void *const *ptrs, size_t n);
#define INSTR_FREE_ALL(...) \
    instr_free_all((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* In base[0..n) (elements of elem bytes, sorted by the uint64_t at byte
 * key_off of each): the number of elements whose key is < key (lower
 * bound), or <= key (upper bound). */
size_t instr_lower_bound(const void *base, size_t n, size_t elem, size_t key_off, uint64_t key);
size_t instr_upper_bound(const void *base, size_t n, size_t elem, size_t key_off, uint64_t key);

/* Appends a formatted message to the list *list of *n strings (each
 * malloc'd).  Returns 0 or INSTR_ENOMEM. */
int instr_msgs_add(char ***list, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int instr_msgs_vadd(char ***list, size_t *n, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif

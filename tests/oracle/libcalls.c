/* Calls GCC may or may not turn into call instructions (library builtins,
 * however they are spelled), beside ordinary calls: the oracle test
 * compares every function's call counts with callgrind's. */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))

static char dst[4096], src[4096];
static volatile size_t sink;
static volatile size_t base = 100; /* sizes the optimiser cannot know */

NOINLINE static void copies(size_t n)
{
    /* Distinct regions, each read back, so no copy is dead. */
    __builtin_memcpy(dst, src, n);        /* unknown size: a call to memcpy */
    __builtin_memcpy(dst + 512, src, 8);  /* two moves, no call */
    memcpy(dst + 576, src + 1, 16);       /* no call */
    memmove(dst + 1024, src + 3, n);      /* a call */
    __builtin_memset(dst + 2048, 0, n);   /* a call */
    memset(dst + 3072, 1, 4);             /* a store */
    sink += (size_t)dst[n - 1] + (size_t)dst[519] + (size_t)dst[591] + (size_t)dst[1024 + n - 1] +
            (size_t)dst[2048 + n - 1] + (size_t)dst[3075];
}

NOINLINE static int compares(const char *s)
{
    int r = strcmp(s, "a");             /* inline at -O2, a call at -O0 */
    r += strcmp(s, src);                /* a call */
    return r + (int)strlen(s);          /* a call */
}

NOINLINE static int by_value(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Loops that loop distribution turns into memset and memcpy calls at -O2,
 * after the plugin's instrument pass: real calls all the same. */
static long zeros[512], from[512], copy[512];

NOINLINE static void clear_and_copy(size_t n)
{
    for (size_t i = 0; i < n; i++)
        zeros[i] = 0;
    for (size_t i = 0; i < n; i++)
        copy[i] = from[i];
    from[n / 2] += 1;
    sink += (size_t)copy[n / 2] + (size_t)zeros[n / 3];
}

/* Struct assignments expansion makes into memcpy and memset calls (a
 * block move), and one it makes into moves. */
struct big { long v[4096]; };
struct small { long v[4]; };
static struct big big_a, big_b;
static struct small small_a, small_b;

NOINLINE static void assign(unsigned i)
{
    big_a = big_b;                     /* a call to memcpy */
    big_b = (struct big){0};           /* a call to memset */
    small_a = small_b;                 /* moves */
    big_b.v[i % 4096] = (long)i;
    small_b.v[i % 4] = (long)i;
    sink += (size_t)big_a.v[i % 4096] + (size_t)small_a.v[i % 4];
}

NOINLINE static unsigned depth(unsigned n)
{
    return n ? 1 + depth(n - 1) : 0;
}

int main(int argc, char **argv)
{
    int v[64];
    int (*cmp)(const void *, const void *) = argc > 99 ? NULL : by_value;
    memset(src, 'x', sizeof src - 1);
    for (unsigned i = 0; i < 300; i++) {
        copies(base + i % 7);
        sink += (size_t)compares(i % 3 ? argv[0] : "a");
        sink += depth(i % 20);
        clear_and_copy(base + i % 300);
        assign(i);
    }
    for (unsigned i = 0; i < 64; i++)
        v[i] = (int)((i * 2654435761u) >> 7) % 1000;
    qsort(v, 64, sizeof v[0], cmp);
    return v[0] > v[63];
}

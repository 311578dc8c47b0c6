/* defer-free.c - a program whose free (and, built -DWRAP_MALLOC, malloc
 * too) wraps libc's through a pointer its own constructor sets (issue 38
 * §2).  The dynamic linker calls them while dlopen() loads the runtime, so
 * a binding in a constructor that runs before the program's crashes it:
 * the binding waits for main.  From main on it counts its frees and
 * mallocs (the runtime's loading, at main's start, is not the program's
 * work) and prints them with write(2): the instrumented build's line is
 * the plain build's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void (*real_free)(void *);
static int counting, nfree;
#ifdef WRAP_MALLOC
static void *(*real_malloc)(size_t);
static int nmalloc;
#endif

__attribute__((noinline)) void free(void *p)
{
    nfree += counting;
    real_free(p);
}

#ifdef WRAP_MALLOC
__attribute__((noinline)) void *malloc(size_t n)
{
    nmalloc += counting;
    return real_malloc(n);
}
#endif

/* Runs before main: unrecorded once the binding waited for main. */
__attribute__((noinline)) static void init(void)
{
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
#ifdef WRAP_MALLOC
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
#endif
}

__attribute__((constructor)) static void before_main(void)
{
    init();
}

__attribute__((noinline)) static int work(int n)
{
    char *s = strdup("abc");
    int k = (int)strlen(s) + n;
    free(s);
    return k;
}

int main(void)
{
    counting = 1;
    int t = 0;
    for (int i = 0; i < 3; i++)
        t += work(i);
    counting = 0;
    /* snprintf and write(2): stdio's buffer would be one more malloc,
     * made after counting stopped. */
    char line[64];
#ifdef WRAP_MALLOC
    int n = snprintf(line, sizeof line, "t=%d nfree=%d nmalloc=%d\n", t, nfree, nmalloc);
#else
    int n = snprintf(line, sizeof line, "t=%d nfree=%d\n", t, nfree);
#endif
    return write(1, line, (size_t)n) == n ? 0 : 1;
}

/* next-malloc.c - a program whose malloc wraps libc's, reached through
 * dlsym(RTLD_NEXT, "malloc"): two functions of one name in two modules.
 * The report must keep them apart (issue 38 §2): the program's malloc
 * calls libc's malloc, not itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *(*real_malloc)(size_t);

__attribute__((noinline)) void *malloc(size_t n)
{
    if (!real_malloc)
        real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    return real_malloc(n);
}

int main(void)
{
    void *keep[10];
    for (int i = 0; i < 10; i++)
        keep[i] = malloc(16);
    printf("%p\n", keep[9] != keep[0] ? (void *)keep : NULL);
    return 0;
}

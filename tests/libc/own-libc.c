/* own-libc.c - a program that defines libc's malloc, free and getpid for
 * itself (an allocator wrapper, a test double), as programs do.  From main
 * on it counts the calls of its malloc and free, and at the end prints the
 * counts and the pid its getpid gives (always 1) with write(2): no stdio,
 * whose buffers would be more mallocs.  The runtime must call none of them
 * (issue 38 §2): the instrumented build's counts equal the plain build's,
 * its dump is named by the real pid, and the report counts the calls the
 * program made. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

static int counting, nmalloc, nfree;

__attribute__((noinline)) void *malloc(size_t n)
{
    nmalloc += counting;
    return __libc_malloc(n);
}

__attribute__((noinline)) void free(void *p)
{
    nfree += counting;
    __libc_free(p);
}

__attribute__((noinline)) pid_t getpid(void)
{
    return 1;
}

static void *keep[64];

__attribute__((noinline)) static void work(int i)
{
    keep[i] = malloc(32 + (size_t)i);
    if (i % 2)
        free(keep[i]);
}

static void say(const char *what, long v)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%s=%ld\n", what, v);
    if (write(1, buf, (size_t)n) != n)
        _exit(2);
}

int main(void)
{
    counting = 1;
    for (int i = 0; i < 40; i++)
        work(i);
    counting = 0;
    say("nmalloc", nmalloc);
    say("nfree", nfree);
    say("getpid", getpid());
    return 0;
}

/* clobber-vectors.c - an LD_PRELOAD shim for count-vectors: the
 * pthread_setspecific the runtime calls while it arms a thread first runs
 * vzeroupper, as glibc's AVX2 string and memory routines do before they
 * return, so the upper halves of ymm0-15 are zero when the runtime gives
 * control back to counted code.  Only loaded where the CPU has AVX. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

int pthread_setspecific(pthread_key_t key, const void *value)
{
    static int (*real)(pthread_key_t, const void *);
    if (!real)
        real = (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    __asm__ volatile("vzeroupper");
    return real(key, value);
}

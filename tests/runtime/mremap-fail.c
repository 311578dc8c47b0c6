/* mremap-fail.c - preloaded by check-registry-full.py: every mremap fails
 * with ENOMEM, as on a machine out of address space.  The runtime grows
 * its function and call-site registries (and nothing else) by mremap. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    (void)old;
    (void)old_size;
    (void)new_size;
    (void)flags;
    errno = ENOMEM;
    return MAP_FAILED;
}

/* planted.c - what an attacker puts where a set-user-ID program's runtime
 * would be: its constructor leaves a marker file (named by the directory it
 * sits in) saying with which effective user ID it ran. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void planted(void)
{
    Dl_info info;
    char path[4096];
    if (!dladdr((void *)planted, &info) || !info.dli_fname)
        return;
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash = strrchr(path, '/');
    if (!slash)
        return;
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "planted-ran");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) {
        dprintf(fd, "euid %d\n", (int)geteuid());
        close(fd);
    }
}

int instr__bind(void *table, unsigned slots, unsigned abi)
{
    (void)table, (void)slots, (void)abi;
    return -1;
}

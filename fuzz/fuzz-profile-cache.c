/* fuzz-profile-cache.c - any bytes as a kept profile (model/profile-cache.c)
 * of a dump: the input is a little-endian u32 n, n bytes of dump, then the
 * profile's body.  The dump is written to a private directory, the body
 * planted as its kept profile with a right head, key and checksum (what a
 * local attacker or a damaged disk could leave), and the dump reported in
 * every view and format: the profile is used if every count and index in
 * it is right, otherwise the dump is walked.  Either way, no crash. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump-reader.h"
#include "fuzz-common.h"
#include "profile-cache.h"
#include "report.h"

static char path[4200], dir_path[4100];

/* The directory, its cache and dump removed at exit. */
static void remove_dir(void)
{
    const char *cache;
    char why[256];
    instr_profile_cache_clear(&cache, why, sizeof why);
    if (cache)
        rmdir(cache);
    unlink(path);
    rmdir(dir_path);
}

/* A directory of this process's own, the cache inside it. */
static const char *dump_path(void)
{
    if (!path[0]) {
        char tmpl[] = "/tmp/instr-fuzz-cache-XXXXXX", cache[4100];
        const char *dir = mkdtemp(tmpl);
        if (!dir)
            return NULL;
        snprintf(cache, sizeof cache, "%s/cache", dir);
        setenv("INSTR_REPORT_CACHE", cache, 1);
        snprintf(path, sizeof path, "%s/d.instr", dir);
        snprintf(dir_path, sizeof dir_path, "%s", dir);
        atexit(remove_dir);
    }
    return path;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    for (size_t off = 0; off < size;) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    return close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = dump_path();
    uint32_t n;
    if (!path || size < sizeof n)
        return 0;
    memcpy(&n, data, sizeof n);
    if (n > size - sizeof n || write_file(path, data + sizeof n, n) < 0)
        return 0;
    struct instr_dump d;
    char err[600];
    if (instr_dump_open(&d, path, err, sizeof err) < 0)
        return 0;
    /* The wall mode the report of one dump asks (session.c). */
    int wall = instr_session_wants_wall(&d, 1) ? 2 : 0;
    instr_profile_cache_plant(&d, wall, data + sizeof n + n, size - sizeof n - n);
    instr_dump_close(&d);
    instr_fuzz_read_dump(path);
    return 0;
}

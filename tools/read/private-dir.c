/* private-dir.c - a directory of the user's own, its files untrusted input
 * (see private-dir.h). */
#define _GNU_SOURCE
#include "private-dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Why st is not a file or directory the user may trust: NULL, or the
 * reason. */
static const char *untrusted(const struct stat *st, char *buf, size_t len)
{
    if (st->st_uid != geteuid()) {
        snprintf(buf, len, "owned by uid %lu, not by this user (uid %lu)", (unsigned long)st->st_uid,
                 (unsigned long)geteuid());
        return buf;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(buf, len, "writable by %s (mode %04o)", st->st_mode & S_IWOTH ? "others" : "its group",
                 (unsigned)(st->st_mode & 07777));
        return buf;
    }
    return NULL;
}

/* mkdir -p of path's missing parents, each 0700. */
static void make_parents(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return;
    for (char *slash = buf; (slash = strchr(slash + 1, '/'));) {
        *slash = 0;
        mkdir(buf, 0700);
        *slash = '/';
    }
}

int instr_private_dir_open(const char *path, int create, char *why, size_t whylen)
{
    char reason[160];
    *why = 0;
    if (create && mkdir(path, 0700) < 0 && errno == ENOENT) {
        make_parents(path);
        mkdir(path, 0700);
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP || e == ENOTDIR)
            snprintf(why, whylen, "%s: %s", path, e == ELOOP ? "a symbolic link" : "not a directory");
        else if (e != ENOENT)
            snprintf(why, whylen, "%s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    const char *bad = fstat(fd, &st) < 0 ? strerror(errno) : untrusted(&st, reason, sizeof reason);
    if (bad) {
        snprintf(why, whylen, "%s: %s", path, bad);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

int instr_private_file_open(int dir, const char *name, struct stat *st, char *why, size_t whylen)
{
    char reason[160];
    *why = 0;
    /* O_NONBLOCK: a FIFO planted there never holds the open. */
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            snprintf(why, whylen, "%s: %s", name, errno == ELOOP ? "a symbolic link" : strerror(errno));
        return -1;
    }
    const char *bad = fstat(fd, st) < 0        ? strerror(errno)
                      : !S_ISREG(st->st_mode) ? "not a regular file"
                      : st->st_nlink != 1     ? "has other links"
                                              : untrusted(st, reason, sizeof reason);
    if (bad) {
        snprintf(why, whylen, "%s: %s", name, bad);
        close(fd);
        return -1;
    }
    return fd;
}

int instr_private_file_create(int dir, const char *base, char *tmp, size_t tmplen)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for (unsigned attempt = 0; attempt < 4; attempt++) {
        int n = snprintf(tmp, tmplen, "%s.%ld.%lx%u.tmp", base, (long)getpid(), (unsigned long)ts.tv_nsec, attempt);
        if (n < 0 || (size_t)n >= tmplen)
            return -1;
        int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int instr_private_file_commit(int dir, const char *tmp, const char *name)
{
    if (renameat(dir, tmp, dir, name) == 0)
        return 0;
    unlinkat(dir, tmp, 0);
    return -1;
}

struct entry {
    char *name;
    uint64_t bytes;
    struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

size_t instr_private_dir_trim(int dir, const char *suffix, uint64_t max_bytes,
                              int (*keep)(void *ctx, int dir, const char *name), void *ctx, uint64_t *left)
{
    size_t removed = 0, n = 0, cap = 0, slen = strlen(suffix);
    uint64_t total = 0;
    struct entry *e = NULL;
    int fd = dup(dir);
    DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dp) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    time_t now = time(NULL);
    for (struct dirent *de; (de = readdir(dp));) {
        struct stat st;
        size_t len = strlen(de->d_name);
        int is_tmp = strstr(de->d_name, ".tmp") != NULL;
        if ((!is_tmp && (len < slen || strcmp(de->d_name + len - slen, suffix))) ||
            fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        if (is_tmp) {
            if (st.st_mtime + 3600 < now && unlinkat(dir, de->d_name, 0) == 0)
                removed++;
            continue;
        }
        if (keep && !keep(ctx, dir, de->d_name)) {
            removed += unlinkat(dir, de->d_name, 0) == 0;
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            struct entry *g = realloc(e, nc * sizeof *e);
            if (!g)
                break;
            e = g;
            cap = nc;
        }
        if (!(e[n].name = strdup(de->d_name)))
            break;
        e[n].bytes = (uint64_t)st.st_size;
        e[n].mtime = st.st_mtim;
        total += e[n++].bytes;
    }
    closedir(dp);
    qsort(e, n, sizeof *e, older_first);
    for (size_t i = 0; i < n; i++) {
        if (total > max_bytes && unlinkat(dir, e[i].name, 0) == 0) {
            total -= e[i].bytes;
            removed++;
        }
        free(e[i].name);
    }
    free(e);
    if (left)
        *left = total;
    return removed;
}

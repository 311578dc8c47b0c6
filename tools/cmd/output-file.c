/* output-file.c - -o FILE written whole or not at all (output-file.h). */
#define _GNU_SOURCE
#include "output-file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The files open under a temporary name: a tool has one output at a time,
 * a few at most. */
static struct pending {
    FILE *f;
    char *tmp, *final;
} pending[8];

/* The temporary file next to final (its directory; final's own mode if it
 * exists, else 0666 less the umask).  -1 when none can be made there. */
static int make_temp(const char *final, const struct stat *old, char **tmp)
{
    const char *slash = strrchr(final, '/');
    int dirlen = slash ? (int)(slash - final + 1) : 0;
    if (asprintf(tmp, "%.*s.%s.XXXXXX", dirlen, final, slash ? slash + 1 : final) < 0) {
        *tmp = NULL;
        return -1;
    }
    int fd = mkostemp(*tmp, O_CLOEXEC);
    if (fd < 0) {
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, old ? old->st_mode & 07777 : 0666 & ~mask) < 0) {
        close(fd);
        unlink(*tmp);
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    return fd;
}

FILE *instr_output_open(const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    struct pending *p = NULL;
    for (size_t i = 0; i < sizeof pending / sizeof *pending && !p; i++)
        if (!pending[i].f)
            p = &pending[i];
    /* A link's target is what fopen would write. */
    char *final = realpath(path, NULL);
    struct stat st;
    int exists = final && stat(final, &st) == 0;
    if (!final && errno == ENOENT && lstat(path, &st) < 0)
        final = strdup(path); /* a new file */
    if (!p || !final || (exists && !S_ISREG(st.st_mode))) {
        free(final);
        return fopen(path, "w"); /* in place: a device, a FIFO, a dangling link */
    }
    char *tmp;
    int fd = make_temp(final, exists ? &st : NULL, &tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        free(final);
        return fopen(path, "w"); /* no file can be made beside it: in place */
    }
    *p = (struct pending){f, tmp, final};
    return f;
}

int instr_output_close(FILE *f, int keep)
{
    if (f == stdout)
        return fflush(f) == 0 && !ferror(f) ? 0 : -1;
    struct pending *p = NULL;
    for (size_t i = 0; i < sizeof pending / sizeof *pending && !p; i++)
        if (pending[i].f == f)
            p = &pending[i];
    int bad = ferror(f);
    int rc = fclose(f) == 0 && !bad ? 0 : -1;
    if (!p)
        return rc; /* written in place */
    int e = errno;
    if (rc == 0 && keep) {
        if (rename(p->tmp, p->final) < 0) {
            rc = -1;
            e = errno;
            unlink(p->tmp);
        }
    } else {
        unlink(p->tmp);
    }
    free(p->tmp);
    free(p->final);
    *p = (struct pending){0};
    errno = e;
    return rc;
}

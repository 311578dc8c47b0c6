/* private-dir.h - a directory of the user's own (a cache), used as files
 * another local user could have planted are used: as untrusted input.
 *
 * The directory is opened once, without following a link at its last
 * component, and kept only if it belongs to the effective user and no one
 * else may write in it (OpenSSH's rule for ~/.ssh); every file is then
 * opened relative to that descriptor, again without following links, and
 * kept only if it is a regular file of the user's, not writable by others,
 * with one link.  New files are made under a name no one else can have
 * created (O_CREAT | O_EXCL | O_NOFOLLOW) and renamed into place, so a
 * reader never sees half of one.
 *
 * Library code: never prints or exits; a refusal comes back as a negative
 * code with its reason in the caller's buffer. */
#ifndef INSTR_PRIVATE_DIR_H
#define INSTR_PRIVATE_DIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Opens (creating it and its missing parents, mode 0700, when create is
 * set) the directory path.  Returns a descriptor, or -1 with the reason in
 * why: missing (errno ENOENT, *why empty: nothing to say), not a
 * directory, a link, another user's, or writable by group or others. */
int instr_private_dir_open(const char *path, int create, char *why, size_t whylen);

/* Opens name in dir for reading, *st its status.  Returns a descriptor, or
 * -1: missing (*why empty), or refused with the reason in why. */
int instr_private_file_open(int dir, const char *name, struct stat *st, char *why, size_t whylen);

/* Creates a new file for writing in dir, mode 0600, under a temporary name
 * made from base (written to tmp).  Returns a descriptor or -1. */
int instr_private_file_create(int dir, const char *base, char *tmp, size_t tmplen);

/* Renames tmp to name in dir (replacing it); on failure removes tmp.
 * Returns 0 or -1. */
int instr_private_file_commit(int dir, const char *tmp, const char *name);

/* Bounds the files of dir whose names end in suffix (the user's own,
 * regular): removes every one that keep(ctx, dir, name) answers 0 for
 * (keep may be NULL), then the least recently modified until the rest
 * total at most max_bytes (ccache's eviction), and temporary files (".tmp"
 * in the name) an hour old, left by a report that was killed.  Returns the
 * number removed; *left, the bytes kept (left may be NULL). */
size_t instr_private_dir_trim(int dir, const char *suffix, uint64_t max_bytes,
                              int (*keep)(void *ctx, int dir, const char *name), void *ctx, uint64_t *left);

#endif

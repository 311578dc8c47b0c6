/* profile-cache.h - a dump's walked profile kept in the user's cache, so
 * that a second report of the same dump (another view, another sort) does
 * not walk it again (perf keeps its build-id cache the same way).
 *
 * Kept for complete dumps (their process exited, or a signal ended it: no
 * one writes them any more) of INSTR_PROFILE_CACHE_MIN bytes or more, walked without
 * exclusions or observers (the plain report views: text, csv, json), in
 * $INSTR_REPORT_CACHE (a directory, or "off"), else $XDG_CACHE_HOME/instr,
 * else ~/.cache/instr.  A cached profile is the dump's identity (device,
 * inode, size, modification and change times, and a hash of its header
 * and of its chunks' headers: a dump rewritten in place with its old size
 * and time is another dump), the instr-report executable's (so any other
 * build of the tools walks again), --raw and the Wall Inclusive mode: any
 * of them different, and the dump is walked again.
 *
 * The cache is input another local user could have planted: its directory
 * is used only if it is the user's own and no one else can write in it,
 * its files only if they are the user's regular files (private-dir.h), and
 * a file is read whole, checked against its checksum, and every count and
 * index in it checked against the dump before anything is used.  The
 * directory is bounded: INSTR_REPORT_CACHE_SIZE bytes (default
 * INSTR_PROFILE_CACHE_CAP), the least recently used profiles removed
 * first, and the profiles of dumps that are gone removed at every save.
 *
 * Nothing here fails a report: a cache that cannot be used is a walk, and
 * what was refused comes back as one line for the report to say.
 * Library code: never prints or exits. */
#ifndef INSTR_PROFILE_CACHE_H
#define INSTR_PROFILE_CACHE_H

#include "profile.h"

#define INSTR_PROFILE_CACHE_MIN (32u << 20)
#define INSTR_PROFILE_CACHE_CAP (256ull << 20)

/* p from the cache, for dump d walked with wall mode `wall`
 * (instr_profile_opts.wall): 1; 0 when there is none; -1 when one was
 * refused or found damaged (the reason in why; p untouched either way). */
int instr_profile_cache_load(struct instr_profile *p, const struct instr_dump *d, int wall, char *why,
                             size_t whylen);
/* Keeps p (built from d with wall mode `wall`) for the next report, and
 * bounds the cache.  0, or -1 with the reason in why when the cache
 * directory was refused (why empty: it could not be written, nothing to
 * say). */
int instr_profile_cache_save(const struct instr_profile *p, int wall, char *why, size_t whylen);

/* Removes every profile from the cache directory (instr-report
 * --clear-cache).  Returns the number removed, or -1 with the reason in
 * why; *dir is set to the directory (a static buffer; NULL when the cache
 * is off). */
long instr_profile_cache_clear(const char **dir, char *why, size_t whylen);

/* The parse of a cache file's body (after its head and path): body (len
 * bytes) as the profile of d; 1, or 0 when it is refused. */
int instr_profile_cache_parse(struct instr_profile *p, const struct instr_dump *d, const unsigned char *body,
                              size_t len);

/* p as the bytes instr_profile_cache_parse reads back (the MPI report's
 * ranks send their profiles so: tools/cmd/instr-report-mpi.c): 0 with
 * *body (malloc'd) and *len, or -1 (no memory). */
int instr_profile_serialize(const struct instr_profile *p, unsigned char **body, size_t *len);

/* For the fuzz target (fuzz/fuzz-profile-cache.c) only: writes body (len
 * bytes, any bytes) as the kept profile of d walked in wall mode `wall`,
 * with the right head, key and checksum, so that the next report of d
 * parses it; from then on dumps of any size are kept.  0 or -1. */
int instr_profile_cache_plant(const struct instr_dump *d, int wall, const void *body, size_t len);

#endif

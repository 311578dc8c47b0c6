/* profile-cache.h - a dump's walked profile kept in the user's cache, so
 * that a second report of the same dump (another view, another sort) does
 * not walk it again (perf keeps its build-id cache the same way).
 *
 * Kept for complete dumps (their process exited, or a signal ended it: no
 * one writes them any more) of INSTR_PROFILE_CACHE_MIN bytes or more, walked without
 * exclusions or observers (the plain report views: text, csv, json), in
 * $INSTR_REPORT_CACHE (a directory, or "off"), else $XDG_CACHE_HOME/instr,
 * else ~/.cache/instr.  A cached profile is the dump's identity (device,
 * inode, size, modification time), the instr-report executable's (so any
 * other build of the tools walks again), --raw and the Wall Inclusive
 * mode: any of them different, and the dump is walked again.  Nothing
 * here fails a report: a cache that cannot be read or written is a walk.
 * Library code: never prints or exits. */
#ifndef INSTR_PROFILE_CACHE_H
#define INSTR_PROFILE_CACHE_H

#include "profile.h"

#define INSTR_PROFILE_CACHE_MIN (32u << 20)

/* p from the cache, for dump d walked with wall mode `wall`
 * (instr_profile_opts.wall): 1, or 0 when there is none (p untouched). */
int instr_profile_cache_load(struct instr_profile *p, const struct instr_dump *d, int wall);
/* Keeps p (built from d with wall mode `wall`) for the next report. */
void instr_profile_cache_save(const struct instr_profile *p, int wall);

#endif

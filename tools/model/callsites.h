/* callsites.h - what the frames of call sites are called, and when a call
 * site and the entry of an instrumented function are one frame.
 *
 * A call to an uninstrumented function is a pseudo-frame named after the
 * callee: the mangled name of a direct call; for an indirect call the
 * symbol the runtime resolved (dladdr), else the symbol that contains the
 * target in the module's ELF symbol table (.symtab, then .dynsym), else
 * "[indirect] CALLER+0xOFF" where OFF is the call's return address from
 * the caller's start (or "[indirect] CALLER@0xOFF", module-relative, when
 * the caller's start is not known either).  Pseudo-frames are keyed by
 * name: two sites that call malloc make one "malloc" frame under their
 * caller.
 *
 * Library code: never prints or exits.
 */
#ifndef INSTR_CALLSITES_H
#define INSTR_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "dump-reader.h"

struct instr_sitemap {
    uint32_t *pseudo;  /* per d->sites[i]: its pseudo-frame index */
    char **resolved;   /* per d->sites[i]: callee name for merging ("" = unknown) */
    char **names;      /* per pseudo-frame: its (mangled) name */
    uint64_t *module;  /* per pseudo-frame: module id of the callee (0 = unknown) */
    size_t nnames;
    uint64_t *merge_memo; /* per d->sites[i]: (function id + 1) << 1 | merges, last asked */
    size_t ndense;        /* d->sites[i].id == i + 1 for every i below it (the runtime's numbering) */
};

/* Names every call site of d.  Returns 0 or INSTR_ENOMEM. */
int instr_sitemap_build(struct instr_sitemap *m, const struct instr_dump *d);
void instr_sitemap_free(struct instr_sitemap *m, size_t nsites);

/* The pseudo-frame index of a CALL event's site id, or UINT32_MAX if the
 * dump has no record for it. */
uint32_t instr_sitemap_pseudo(const struct instr_sitemap *m, const struct instr_dump *d, uint64_t site_id);

/* The same, a densely numbered site answered inline (a pseudo-frame's
 * every call asks). */
static inline uint32_t instr_sitemap_pseudo_dense(const struct instr_sitemap *m, const struct instr_dump *d,
                                                  uint64_t site_id)
{
    return site_id - 1 < m->ndense ? m->pseudo[site_id - 1] : instr_sitemap_pseudo(m, d, site_id);
}

/* Whether ENTER fn_id, as the first event after CALL site_id, is the entry
 * of the function that call called (the two are then one frame): a direct
 * site names fn; an indirect target resolved to fn's name, or resolved to
 * nothing inside fn's module. */
int instr_sitemap_merges(const struct instr_sitemap *m, const struct instr_dump *d, uint64_t site_id,
                         uint64_t fn_id);

/* The instrumented function a call site calls, for a site whose callee
 * never entered (a thread ended between the call-site hook and the entry
 * hook: exit from another thread): the function it merged with last, else
 * the one a direct site names (in the site's module when several have the
 * name).  Its id, or UINT64_MAX when the callee is not instrumented or not
 * known. */
uint64_t instr_sitemap_callee(const struct instr_sitemap *m, const struct instr_dump *d, uint64_t site_id);

/* instr_sitemap_merges, answered from the memo of a densely numbered site
 * without a call: the question of one CALL event in four on a real program. */
static inline int instr_sitemap_merges_memo(const struct instr_sitemap *m, const struct instr_dump *d,
                                            uint64_t site_id, uint64_t fn_id)
{
    if (site_id - 1 < m->ndense && (m->merge_memo[site_id - 1] & ~1ull) == (fn_id + 1) << 1)
        return (int)(m->merge_memo[site_id - 1] & 1);
    return instr_sitemap_merges(m, d, site_id, fn_id);
}

/* Whether a call naming callee enters the function named fn: the same
 * symbol, or variants of one C++ constructor or destructor (C1/C2, D0/D1/D2:
 * GCC makes one an alias of the other's body). */
int instr_callsite_same_function(const char *callee, const char *fn);

#endif

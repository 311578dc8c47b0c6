/* exclusions.h - user-chosen exclusions from Application time
 * (instr-report --not-application=PATTERN|@category).
 *
 * An interval in which a matching function is on the stack counts as if
 * the OS had acted in it: its time leaves the Application values.  Patterns
 * are shell globs (fnmatch) tried on the mangled and the demangled name;
 * categories are fixed lists of such patterns (exclusions.c).
 */
#ifndef INSTR_EXCLUSIONS_H
#define INSTR_EXCLUSIONS_H

#include <stddef.h>

struct instr_exclusions {
    char **patterns; /* globs, categories expanded */
    size_t n;
    char *text;      /* what the user gave, comma-separated, for the report header */
    unsigned os_ignored; /* --os-events: INSTR_OS_* kinds that leave an interval in Application time
                            (os-events.h); 0: every kind takes it out */
    int clones_split;    /* --clones=split: GCC's clones (foo.constprop.0, foo.cold) rows of their
                            own; 0: each folded into its source function's row (profile-tree.c) */
    char *mpi_prefixes;  /* --mpi-prefixes: the prefixes of MPI's function names, comma-separated
                            (job.h; "" none); NULL: the defaults.  Not a walk's: only the job's
                            MPI and useful time depend on it */
    int job_wall;        /* --wall: Wall Inclusive of a job's ranks (several of one host) too;
                            0: not computed for them (session.c) */
};

/* Whether x changes the walk of a dump (its profile), not only what is made
 * of it afterwards: NULL and --mpi-prefixes alone do not. */
static inline int instr_exclusions_walk(const struct instr_exclusions *x)
{
    return x && (x->n || x->os_ignored || x->clones_split);
}

/* Adds one argument: comma-separated globs and @categories.  0, or -1 for
 * an unknown category (named in err). */
int instr_exclusions_add(struct instr_exclusions *x, const char *arg, char *err, size_t errlen);
/* 1 if the (mangled) name matches a pattern. */
int instr_exclusions_match(const struct instr_exclusions *x, const char *mangled);
void instr_exclusions_free(struct instr_exclusions *x);

/* The categories, for --help and the README: name (without @) and its
 * patterns, NULL-terminated; returns NULL past the last. */
const char *instr_exclusion_category(size_t i, const char *const **patterns);

#endif

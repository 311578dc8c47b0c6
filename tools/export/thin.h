/* thin.h - the longest calls of a call timeline, for the exports that keep
 * at most a cap of them past what a viewer can load (html always, chrome
 * by default): the shortest go first.
 *
 * A callee never lasts longer than its caller, so the calls at least as
 * long as any duration D are closed under callers: whatever the cut, no
 * kept call loses its parent.  Durations are ns on the export's timeline,
 * each the difference of its rounded ends (what the exports write; rounding
 * keeps the order of nested ends, so a callee's stays within its caller's).
 *
 * A histogram of the durations, 64 buckets per power of two of ns (exact
 * below 64 ns, then 1.1% wide), gives D for a cap: the floor of a bucket,
 * so that the calls of at least D are at most the cap.  An export that can
 * hold the calls of one more bucket in memory makes the exact cut among
 * them (export-html.c); one that writes as it walks keeps every call of at
 * least D, ties included (export-chrome.c).
 *
 * Pure: nothing here prints or exits.
 */
#ifndef INSTR_THIN_H
#define INSTR_THIN_H

#include <stddef.h>
#include <stdint.h>

struct instr_dump;

#define INSTR_THIN_HBITS 6
#define INSTR_THIN_BUCKETS (64u << INSTR_THIN_HBITS)

struct instr_thin_hist {
    uint64_t n[INSTR_THIN_BUCKETS]; /* calls per duration bucket */
    uint64_t calls;                 /* all of them */
};

/* The bucket of a duration (ns): itself below 2^HBITS, then 2^HBITS
 * buckets per power of two. */
static inline unsigned instr_thin_bucket(uint64_t dur)
{
    if (dur < (1u << INSTR_THIN_HBITS))
        return (unsigned)dur;
    unsigned e = 63u - (unsigned)__builtin_clzll(dur); /* >= HBITS */
    return ((e - INSTR_THIN_HBITS + 1) << INSTR_THIN_HBITS) |
           (unsigned)((dur >> (e - INSTR_THIN_HBITS)) & ((1u << INSTR_THIN_HBITS) - 1));
}

static inline void instr_thin_add(struct instr_thin_hist *h, uint64_t dur_ns)
{
    h->n[instr_thin_bucket(dur_ns)]++;
    h->calls++;
}

/* D for a cap (ns): 0 when every call fits under it.  Else the floor of
 * the bucket the cap falls in when the calls from that floor up number at
 * most hold (the caller holds them and makes the exact cut), or the next
 * bucket's floor (the calls from it up are at most cap: hold = cap asks
 * for that). */
uint64_t instr_thin_cut(const struct instr_thin_hist *h, uint64_t cap, uint64_t hold);

/* The calls of at least D (a cut's result). */
uint64_t instr_thin_at_least(const struct instr_thin_hist *h, uint64_t d);

/* Whether the walk of dumps[0..n) may meet more than cap calls: at most
 * one per ENTER, CALL or REENTER event, each of 2 bytes or more, so the
 * events' bytes bound them without reading any; past that bound, those
 * events are counted (a few times faster than the walk). */
int instr_thin_may_exceed(const struct instr_dump *dumps, size_t n, uint64_t cap);

#endif

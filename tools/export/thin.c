/* thin.c - the longest calls of a call timeline under a cap (thin.h). */
#include "thin.h"

#include "callsites.h"
#include "dump-reader.h"

/* The smallest duration of bucket b. */
static uint64_t bucket_floor(unsigned b)
{
    if (b < (1u << INSTR_THIN_HBITS))
        return b;
    unsigned e = (b >> INSTR_THIN_HBITS) + INSTR_THIN_HBITS - 1;
    return (1ull << e) | (uint64_t)(b & ((1u << INSTR_THIN_HBITS) - 1)) << (e - INSTR_THIN_HBITS);
}

uint64_t instr_thin_cut(const struct instr_thin_hist *h, uint64_t cap, uint64_t hold)
{
    uint64_t n = 0;
    for (unsigned b = INSTR_THIN_BUCKETS; b-- > 0;) {
        if (n + h->n[b] > cap)
            return n + h->n[b] <= hold ? bucket_floor(b) : bucket_floor(b + 1);
        n += h->n[b];
    }
    return 0;
}

uint64_t instr_thin_at_least(const struct instr_thin_hist *h, uint64_t d)
{
    uint64_t n = 0;
    for (unsigned b = instr_thin_bucket(d); b < INSTR_THIN_BUCKETS; b++)
        n += h->n[b];
    return n;
}

/* The frames the walk of d opens (profile.c): one per ENTER, CALL, REENTER
 * and REENTER_SITE event, less the entries that make one frame with the
 * call site before them (resolve_pending: the event after the site, the
 * runtime's own work aside, an entry instr_sitemap_merges with it).  Adds
 * them to *opens until it passes cap; INSTR_ENOMEM, or 0. */
static int count_opens(const struct instr_dump *d, uint64_t cap, uint64_t *opens)
{
    struct instr_sitemap sites;
    if (instr_sitemap_build(&sites, d) < 0)
        return INSTR_ENOMEM;
    for (size_t t = 0; t < d->nthreads && *opens <= cap; t++) {
        const struct instr_thread_info *th = &d->threads[t];
        size_t ch = (size_t)-1;
        const uint8_t *p, *end;
        uint64_t tick, site = 0;
        int pending = 0; /* a call site waits for the next event: 1 CALL, 2 REENTER_SITE */
        struct instr_event ev = {0};
        while (*opens <= cap && instr_chunk_advance(th->chunks, th->nchunks, &ch, &p, &end, &tick))
            while (instr_decode_event(&p, end, &ev) > 0) {
                int ext = ev.kind == INSTR_EV_EXT;
                if (ext && ev.ext == INSTR_EXT_RUNTIME)
                    continue;
                /* 1 an ENTER (a CALL's callee), 2 a REENTER (a REENTER_SITE's) */
                int entry = ev.kind == INSTR_EV_ENTER ? 1 : ext && ev.ext == INSTR_EXT_REENTER ? 2 : 0;
                int merged = pending && entry == pending && instr_sitemap_merges(&sites, d, site, ev.arg);
                pending = ev.kind == INSTR_EV_CALL ? 1 : ext && ev.ext == INSTR_EXT_REENTER_SITE ? 2 : 0;
                site = ev.arg;
                *opens += (entry && !merged) || pending;
            }
    }
    instr_sitemap_free(&sites, d->nsites);
    return 0;
}

int instr_thin_may_exceed(const struct instr_dump *dumps, size_t n, uint64_t cap)
{
    uint64_t bytes = 0, opens = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < dumps[i].nthreads; t++)
            for (size_t c = 0; c < dumps[i].threads[t].nchunks; c++)
                bytes += dumps[i].threads[t].chunks[c].len;
    if (bytes / 2 <= cap)
        return 0;
    for (size_t i = 0; i < n && opens <= cap; i++)
        if (count_opens(&dumps[i], cap, &opens) < 0)
            return 1; /* not counted: it may */
    return opens > cap;
}

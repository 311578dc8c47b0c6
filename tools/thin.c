/* thin.c - the longest calls of a call timeline under a cap (thin.h). */
#include "thin.h"

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

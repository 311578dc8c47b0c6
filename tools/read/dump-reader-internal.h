/* dump-reader-internal.h - private to dump-reader.c (open, validate, the
 * chunk lists) and dump-metadata.c (the METADATA records): what the two
 * share.  Nothing else includes it; dump-reader.h is the interface. */
#ifndef INSTR_DUMP_READER_INTERNAL_H
#define INSTR_DUMP_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dump-reader.h"

/* The file's fixed-width fields, little-endian whatever the host. */
static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* Room in the arrays the records grow, and the thread index map, while one
 * dump is opened (the chunk lists name threads too). */
struct meta_caps {
    size_t modules, functions, labels, threads, sites, maps, fn_calls, site_calls;
    uint32_t *tmap; /* thread index -> position + 1 (0 = empty), open addressing */
    size_t tmask;   /* capacity - 1 */
};

/* The thread with this index in d, created if new; NULL if it cannot be added. */
struct instr_thread_info *instr_dump_thread_slot(struct instr_dump *d, struct meta_caps *caps, uint32_t index);

/* Reads the records of one METADATA chunk's payload p[0..len) into d; a
 * malformed record, or the rest of a chunk cut inside one, is skipped with
 * a warning naming chunk_no.  Returns 0 or INSTR_ENOMEM. */
int instr_dump_parse_metadata(struct instr_dump *d, struct meta_caps *caps, const uint8_t *p, size_t len,
                              uint64_t chunk_no);

#endif

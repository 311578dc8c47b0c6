/* event-codec.h - varint encoding of dump events, shared by writer and reader.
 *
 * The writer side is on the runtime's hot path: callers guarantee room for
 * INSTR_EVENT_MAX_BYTES before encoding, so no bounds checks here.  The reader
 * side checks every byte against the end of its buffer.
 */
#ifndef INSTR_EVENT_CODEC_H
#define INSTR_EVENT_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "dump-format.h"

#define INSTR_VARINT_MAX_BYTES 10u
/* Largest single event: head varint, transition byte, ext subtype, two varints. */
#define INSTR_EVENT_MAX_BYTES 40u

static inline uint8_t *instr_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t instr_event_head(uint64_t delta_ticks, unsigned os_flag, unsigned kind)
{
    return delta_ticks << 4 | (uint64_t)(os_flag != 0) << 3 | kind;
}

static inline uint64_t instr_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t instr_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Reads a varint from [*p, end).  Returns 0 and advances *p, or -1 if the
 * buffer ends inside it or it is longer than 10 bytes. */
static inline int instr_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;
    unsigned shift = 0;
    while (q < end && shift < 64) {
        uint8_t b = *q++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *out = v;
            return 0;
        }
        shift += 7;
    }
    return -1;
}

#endif

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

/* Bytes instr_put_varint writes for v. */
static inline unsigned instr_varint_size(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

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

/* The payload shape of an EXT kind (INSTR_PAYLOAD_*), -1 if unknown. */
static inline int instr_ext_payload(unsigned ext)
{
    switch (ext) {
#define INSTR_X_PAYLOAD(name, value, text, payload)                                                \
    case value:                                                                                    \
        return INSTR_PAYLOAD_##payload;
        INSTR_EXT_KINDS(INSTR_X_PAYLOAD)
#undef INSTR_X_PAYLOAD
    }
    return -1;
}

/* Writes the subtype byte and the payload of an EXT event (after its head).
 * With a constant ext this folds to the few stores of that kind. */
static inline uint8_t *instr_put_ext(uint8_t *p, unsigned ext, uint64_t arg, int64_t value)
{
    *p++ = (uint8_t)ext;
    switch (instr_ext_payload(ext)) {
    case INSTR_PAYLOAD_U8:
        *p++ = (uint8_t)arg;
        break;
    case INSTR_PAYLOAD_VARINT:
        p = instr_put_varint(p, arg);
        break;
    case INSTR_PAYLOAD_VARINT_ZIGZAG:
        p = instr_put_varint(p, arg);
        p = instr_put_varint(p, instr_zigzag(value));
        break;
    case INSTR_PAYLOAD_U64:
        for (int i = 0; i < 8; i++)
            *p++ = (uint8_t)(arg >> (8 * i));
        break;
    }
    return p;
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

/* Reads the subtype byte and the payload of an EXT event from [*p, end).
 * Returns 0 and advances *p, or -1 (cut, or an unknown subtype). */
static inline int instr_get_ext(const uint8_t **pp, const uint8_t *end, uint8_t *ext,
                                uint64_t *arg, int64_t *value)
{
    const uint8_t *p = *pp;
    uint64_t z;
    if (p >= end)
        return -1;
    *ext = *p++;
    switch (instr_ext_payload(*ext)) {
    case INSTR_PAYLOAD_NONE:
        break;
    case INSTR_PAYLOAD_U8:
        if (p >= end)
            return -1;
        *arg = *p++;
        break;
    case INSTR_PAYLOAD_VARINT:
        if (instr_get_varint(&p, end, arg) < 0)
            return -1;
        break;
    case INSTR_PAYLOAD_VARINT_ZIGZAG:
        if (instr_get_varint(&p, end, arg) < 0 || instr_get_varint(&p, end, &z) < 0)
            return -1;
        *value = instr_unzigzag(z);
        break;
    case INSTR_PAYLOAD_U64:
        if (end - p < 8)
            return -1;
        *arg = 0;
        for (int i = 7; i >= 0; i--)
            *arg = *arg << 8 | p[i];
        p += 8;
        break;
    default:
        return -1;
    }
    *pp = p;
    return 0;
}

#endif

/* sample-reader.h - decoding the SAMPLES chunks of a dump (dump-format.h).
 *
 * The chunks were validated and listed per thread by instr_dump_open; this
 * walks their records, checking every byte like the event decoder: bytes
 * that are not a valid record end the chunk (counted, the iteration goes on
 * with the next chunk).  Library code: never prints or exits.
 */
#ifndef INSTR_SAMPLE_READER_H
#define INSTR_SAMPLE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "dump-reader.h"

/* Frames kept per sample; deeper stacks keep their leaf-most frames and are
 * marked truncated. */
#define INSTR_SAMPLE_MAX_FRAMES 1024u

struct instr_sample {
    uint8_t kind;     /* INSTR_SAMPLE_* */
    uint64_t tick;    /* absolute ticks (ns in a sampled dump) */
    uint64_t weight;  /* STACK: periods it stands for; LOST: samples lost */
    uint64_t flags;   /* STACK: INSTR_STACK_* */
    size_t nframes;   /* STACK: frames, leaf first */
    const uint64_t *frames;
};

struct instr_sample_iter {
    const struct instr_thread_info *th;
    size_t chunk; /* index into th->schunks */
    const uint8_t *p, *end;
    uint64_t tick;
    int bad;          /* set when a chunk ended on invalid bytes */
    size_t nbad;      /* chunks that did */
    size_t bad_chunk; /* the latest one */
    uint64_t frames[INSTR_SAMPLE_MAX_FRAMES];
};

void instr_sample_iter_init(struct instr_sample_iter *it, const struct instr_thread_info *th);
/* 1 = a record in *s (frames valid until the next call), 0 = the end. */
int instr_sample_iter_next(struct instr_sample_iter *it, struct instr_sample *s);

/* Decodes one record at *pp (before end) into s, frames into buf (room for
 * INSTR_SAMPLE_MAX_FRAMES).  1 = a record, 0 = end of payload (end, or a
 * zero byte), -1 = invalid bytes.  s->tick gets the delta only. */
int instr_sample_decode(const uint8_t **pp, const uint8_t *end, struct instr_sample *s, uint64_t *buf);

/* "stack", "lost", or NULL. */
const char *instr_sample_kind_name(unsigned kind);

#endif

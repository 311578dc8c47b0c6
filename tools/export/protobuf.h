/* protobuf.h - the protobuf wire encoding the binary exports write (pprof's
 * profile.proto, Perfetto's TracePacket stream): varints and
 * length-delimited fields into a growable buffer.  Only what they need; no
 * schema, no decoding.  Out of memory is sticky (oom): the writer checks
 * once at the end. */
#ifndef INSTR_PROTOBUF_H
#define INSTR_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#define INSTR_PB_NEST 4 /* sub-messages open at once (instr_pb_begin) */

enum { INSTR_PB_VARINT = 0, INSTR_PB_LEN = 2 }; /* wire types */

struct instr_pb {
    uint8_t *b;
    size_t len, cap;
    size_t open[INSTR_PB_NEST]; /* where each open sub-message's content starts */
    int depth;
    int oom;
};

void instr_pb_raw(struct instr_pb *p, const void *src, size_t n);
void instr_pb_varint(struct instr_pb *p, uint64_t v);
void instr_pb_tag(struct instr_pb *p, unsigned field, unsigned wire);
/* An integer field, written even when 0. */
void instr_pb_u64(struct instr_pb *p, unsigned field, uint64_t v);
void instr_pb_bytes(struct instr_pb *p, unsigned field, const void *src, size_t n);
void instr_pb_str(struct instr_pb *p, unsigned field, const char *s); /* NULL: "" */
/* A sub-message built in its own buffer sub, which is then emptied for reuse. */
void instr_pb_sub(struct instr_pb *p, unsigned field, struct instr_pb *sub);
/* A sub-message written in place: its length goes in front of it at _end. */
void instr_pb_begin(struct instr_pb *p, unsigned field);
void instr_pb_end(struct instr_pb *p);
void instr_pb_free(struct instr_pb *p);

#endif

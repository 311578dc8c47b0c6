/* protobuf.c - the protobuf wire encoding (protobuf.h). */
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

static int reserve(struct instr_pb *p, size_t more)
{
    if (p->oom)
        return -1;
    if (p->len + more <= p->cap)
        return 0;
    size_t nc = p->cap ? p->cap : 256;
    while (nc < p->len + more)
        nc *= 2;
    uint8_t *b = realloc(p->b, nc);
    if (!b) {
        p->oom = 1;
        return -1;
    }
    p->b = b;
    p->cap = nc;
    return 0;
}

void instr_pb_raw(struct instr_pb *p, const void *src, size_t n)
{
    if (reserve(p, n) == 0 && n) {
        memcpy(p->b + p->len, src, n);
        p->len += n;
    }
}

void instr_pb_varint(struct instr_pb *p, uint64_t v)
{
    if (reserve(p, 10))
        return;
    while (v >= 0x80) {
        p->b[p->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p->b[p->len++] = (uint8_t)v;
}

void instr_pb_tag(struct instr_pb *p, unsigned field, unsigned wire)
{
    instr_pb_varint(p, (uint64_t)field << 3 | wire);
}

void instr_pb_u64(struct instr_pb *p, unsigned field, uint64_t v)
{
    instr_pb_tag(p, field, INSTR_PB_VARINT);
    instr_pb_varint(p, v);
}

void instr_pb_bytes(struct instr_pb *p, unsigned field, const void *src, size_t n)
{
    instr_pb_tag(p, field, INSTR_PB_LEN);
    instr_pb_varint(p, n);
    instr_pb_raw(p, src, n);
}

void instr_pb_str(struct instr_pb *p, unsigned field, const char *s)
{
    instr_pb_bytes(p, field, s ? s : "", s ? strlen(s) : 0);
}

void instr_pb_sub(struct instr_pb *p, unsigned field, struct instr_pb *sub)
{
    p->oom |= sub->oom;
    instr_pb_bytes(p, field, sub->b, sub->len);
    sub->len = 0;
}

void instr_pb_begin(struct instr_pb *p, unsigned field)
{
    instr_pb_tag(p, field, INSTR_PB_LEN);
    if (p->depth < INSTR_PB_NEST)
        p->open[p->depth] = p->len;
    else
        p->oom = 1; /* deeper than the writers need: a bug, reported as failure */
    p->depth++;
}

void instr_pb_end(struct instr_pb *p)
{
    if (p->depth == 0 || --p->depth >= INSTR_PB_NEST || p->oom)
        return;
    size_t at = p->open[p->depth], len = p->len - at, ll = 1;
    for (size_t v = len; v >= 0x80; v >>= 7)
        ll++;
    if (reserve(p, ll))
        return;
    memmove(p->b + at + ll, p->b + at, len);
    size_t end = p->len + ll;
    p->len = at;
    instr_pb_varint(p, len);
    p->len = end;
}

void instr_pb_free(struct instr_pb *p)
{
    free(p->b);
    *p = (struct instr_pb){0};
}

/* sample-reader.c - SAMPLES chunk records (see sample-reader.h). */
#include "sample-reader.h"

#include <string.h>

#include "event-codec.h"

const char *instr_sample_kind_name(unsigned kind)
{
    switch (kind) {
        INSTR_SAMPLE_KINDS(INSTR_X_TEXT_CASE)
    }
    return NULL;
}

int instr_sample_decode(const uint8_t **pp, const uint8_t *end, struct instr_sample *s, uint64_t *buf)
{
    const uint8_t *p = *pp;
    uint64_t len;
    if (p >= end || *p == 0)
        return 0;
    unsigned kind = *p++;
    if (instr_get_varint(&p, end, &len) < 0 || len > (uint64_t)(end - p))
        return -1;
    const uint8_t *q = p, *rend = p + len;
    memset(s, 0, sizeof *s);
    s->kind = (uint8_t)kind;
    s->frames = buf;
    if (instr_get_varint(&q, rend, &s->tick) < 0 || instr_get_varint(&q, rend, &s->weight) < 0)
        return -1;
    switch (kind) {
    case INSTR_SAMPLE_STACK: {
        uint64_t n, pc = 0;
        if (instr_get_varint(&q, rend, &s->flags) < 0 || instr_get_varint(&q, rend, &n) < 0 || s->weight == 0)
            return -1;
        /* Each frame takes at least one byte: a count beyond the record is a lie. */
        if (n > (uint64_t)(rend - q))
            return -1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v;
            if (instr_get_varint(&q, rend, &v) < 0)
                return -1;
            pc = i ? pc + (uint64_t)instr_unzigzag(v) : v;
            if (i < INSTR_SAMPLE_MAX_FRAMES)
                buf[i] = pc;
        }
        if (n > INSTR_SAMPLE_MAX_FRAMES) {
            n = INSTR_SAMPLE_MAX_FRAMES;
            s->flags |= INSTR_STACK_TRUNCATED;
        }
        s->nframes = (size_t)n;
        break;
    }
    case INSTR_SAMPLE_LOST:
        break;
    default:
        return -1;
    }
    if (q != rend)
        return -1;
    *pp = rend;
    return 1;
}

void instr_sample_iter_init(struct instr_sample_iter *it, const struct instr_thread_info *th)
{
    memset(it, 0, offsetof(struct instr_sample_iter, frames));
    it->th = th;
    it->chunk = (size_t)-1;
}

int instr_sample_iter_next(struct instr_sample_iter *it, struct instr_sample *s)
{
    for (;;) {
        if (it->p) {
            int r = instr_sample_decode(&it->p, it->end, s, it->frames);
            if (r > 0) {
                it->tick += s->tick;
                s->tick = it->tick;
                return 1;
            }
            const struct instr_chunk_ref *c = &it->th->schunks[it->chunk];
            if (r < 0 || (it->p < it->end && !c->open)) {
                it->bad = 1;
                it->nbad++;
                it->bad_chunk = it->chunk;
            }
        }
        if (!instr_chunk_advance(it->th->schunks, it->th->nschunks, &it->chunk, &it->p, &it->end, &it->tick))
            return 0;
    }
}

/* dump-events.c - the events of a dump's EVENTS chunks: the whole decoder
 * (its fast path is inline in dump-reader.h, in front of it) and the walk
 * of one thread's events across its chunks, with the step from chunk to
 * chunk that the sample iterator takes too. */
#include <string.h>

#include "dump-reader.h"

int instr_decode_event_slow(const uint8_t **pp, const uint8_t *end, struct instr_event *ev)
{
    const uint8_t *p = *pp;
    uint64_t v;
    if (p >= end || *p == 0)
        return 0;
    if (*p < 0x80) {
        v = *p++;
    } else if (instr_get_varint(&p, end, &v) < 0) {
        return -1;
    }
    ev->delta = v >> 4;
    ev->os = (uint8_t)(v >> 3 & 1);
    ev->kind = (uint8_t)(v & 7);
    ev->ext = 0;
    if (ev->os) {
        if (p >= end)
            return -1;
        ev->bits = *p++;
        ev->offcpu = 0;
        if ((ev->bits & INSTR_OS_OFFCPU_FOLLOWS) && instr_get_varint(&p, end, &ev->offcpu) < 0)
            return -1;
    } else {
        ev->bits = 0;
        ev->offcpu = 0;
    }
    switch (ev->kind) {
    case INSTR_EV_ENTER:
    case INSTR_EV_CALL:
        if (p < end && *p < 0x80)
            ev->arg = *p++;
        else if (instr_get_varint(&p, end, &ev->arg) < 0)
            return -1;
        break;
    case INSTR_EV_EXIT:
    case INSTR_EV_RETURN:
        break;
    case INSTR_EV_EXT:
        if (instr_get_ext(&p, end, &ev->ext, &ev->arg, &ev->value) < 0)
            return -1;
        break;
    default:
        return -1;
    }
    *pp = p;
    return 1;
}

/* ---- event iteration --------------------------------------------------------- */

void instr_event_iter_init(struct instr_event_iter *it, const struct instr_thread_info *th)
{
    memset(it, 0, sizeof *it);
    it->th = th;
    it->chunk = (size_t)-1;
}

int instr_event_iter_next(struct instr_event_iter *it, struct instr_event *ev)
{
    for (;;) {
        if (it->chunk != (size_t)-1 && it->p) {
            int r = instr_decode_event(&it->p, it->end, ev);
            if (r > 0) {
                it->tick += ev->delta;
                ev->tick = it->tick;
                if (ev->kind == INSTR_EV_EXT && ev->ext == INSTR_EXT_RESYNC)
                    it->tick = ev->arg;
                if (ev->kind == INSTR_EV_EXT && ev->ext == INSTR_EXT_RUNTIME)
                    it->tick += ev->arg; /* the next interval starts after the runtime's work */
                return 1;
            }
            const struct instr_chunk_ref *c = &it->th->chunks[it->chunk];
            if (r < 0 || (it->p < it->end && !c->open)) {
                if (!it->bad) {
                    it->bad = 1;
                    it->bad_chunk = it->chunk;
                }
            }
        }
        if (!instr_chunk_advance(it->th->chunks, it->th->nchunks, &it->chunk, &it->p, &it->end, &it->tick))
            return 0;
    }
}

int instr_chunk_advance(const struct instr_chunk_ref *list, size_t n, size_t *chunk, const uint8_t **p,
                        const uint8_t **end, uint64_t *tick)
{
    if (++*chunk >= n) {
        *chunk = n;
        *p = NULL;
        return 0;
    }
    const struct instr_chunk_ref *c = &list[*chunk];
    *p = c->payload;
    *end = c->payload + c->len;
    *tick = c->base_tsc;
    return 1;
}

/* dump-writer.c - streaming dump builder used by instr-dump and the tests. */
#include "dump-writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h" /* error codes */
#include "event-codec.h"

/* Memory for chunk buffers (threads x chunk_size, plus metadata). */
#define INSTR_WRITER_MAX_BUFFERS ((size_t)256 << 20)

struct wchunk {
    uint8_t *buf;      /* chunk_size bytes: header + payload */
    size_t used;       /* payload bytes */
    uint32_t seq;      /* next seq to write */
    uint64_t tick;     /* running tick after the last event */
    uint64_t tid;
    uint64_t base;     /* base_tsc of the chunk being filled */
    int started;       /* an event or chunk was written */
};

struct instr_dump_writer {
    FILE *f;
    struct instr_dump_header hdr;
    size_t chunk_size;
    uint64_t chunks; /* chunk slots written */
    struct wchunk meta;
    struct wchunk *threads; /* indexed by thread index */
    size_t nthreads;
    struct wchunk *samples; /* SAMPLES chunks, indexed by thread index */
    size_t nsamples;
    size_t nbufs;           /* thread chunk buffers allocated */
    int error;
};

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int write_chunk(struct instr_dump_writer *w, struct wchunk *c, unsigned kind, uint32_t index, uint64_t base)
{
    uint8_t *h = c->buf;
    memset(h, 0, INSTR_CHUNK_HEADER_SIZE);
    put_le(h, INSTR_CHUNK_MAGIC, 4);
    put_le(h + 4, kind, 2);
    put_le(h + 6, INSTR_CHUNK_HEADER_SIZE, 2);
    put_le(h + 8, index, 4);
    put_le(h + 12, c->tid, 4);
    put_le(h + 16, c->seq, 4);
    put_le(h + 20, c->used, 4);
    put_le(h + 24, base, 8);
    memset(h + INSTR_CHUNK_HEADER_SIZE + c->used, 0, w->chunk_size - INSTR_CHUNK_HEADER_SIZE - c->used);
    if (fseeko(w->f, (off_t)(w->hdr.header_size + w->chunks * w->chunk_size), SEEK_SET) < 0 ||
        fwrite(h, 1, w->chunk_size, w->f) != w->chunk_size)
        return w->error = INSTR_EIO;
    w->chunks++;
    c->seq++;
    c->used = 0;
    return 0;
}

int instr_writer_open(struct instr_dump_writer **wp, const char *path, const struct instr_dump_header *hdr,
                      char *err, size_t errlen)
{
    struct instr_dump_writer *w = calloc(1, sizeof *w);
    if (!w)
        return INSTR_ENOMEM;
    w->hdr = *hdr;
    memcpy(w->hdr.magic, INSTR_DUMP_MAGIC, 8);
    w->hdr.version = INSTR_DUMP_VERSION;
    w->hdr.header_size = INSTR_DUMP_HEADER_SIZE;
    if (!w->hdr.chunk_size)
        w->hdr.chunk_size = 1u << 16;
    if (w->hdr.chunk_size < 256 || w->hdr.chunk_size > INSTR_DUMP_MAX_CHUNK_SIZE || w->hdr.chunk_size % 8) {
        snprintf(err, errlen, "chunk_size %u out of range (256..%u, multiple of 8)", w->hdr.chunk_size,
                 INSTR_DUMP_MAX_CHUNK_SIZE);
        free(w);
        return INSTR_EARG;
    }
    w->chunk_size = w->hdr.chunk_size;
    if (!(w->meta.buf = malloc(w->chunk_size)) || !(w->f = fopen(path, "wb"))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(w->meta.buf);
        free(w);
        return INSTR_EIO;
    }
    *wp = w;
    return 0;
}

static int meta_record(struct instr_dump_writer *w, unsigned type, const uint8_t *rec, size_t len)
{
    size_t room = w->chunk_size - INSTR_CHUNK_HEADER_SIZE;
    if (len + 1 + INSTR_VARINT_MAX_BYTES > room)
        return INSTR_EARG;
    if (w->meta.used + len + 1 + INSTR_VARINT_MAX_BYTES > room) {
        int rc = write_chunk(w, &w->meta, INSTR_CHUNK_METADATA, 0, 0);
        if (rc)
            return rc;
    }
    uint8_t *p = w->meta.buf + INSTR_CHUNK_HEADER_SIZE + w->meta.used;
    uint8_t *q = p;
    *q++ = (uint8_t)type;
    q = instr_put_varint(q, len);
    memcpy(q, rec, len);
    q += len;
    w->meta.used += (size_t)(q - p);
    w->meta.started = 1;
    return 0;
}

/* Record builder with a fixed buffer large enough for names we accept. */
struct rec {
    uint8_t b[8192];
    size_t n;
    int bad;
};

static void rv(struct rec *r, uint64_t v)
{
    if (r->n + INSTR_VARINT_MAX_BYTES > sizeof r->b) {
        r->bad = 1;
        return;
    }
    r->n = (size_t)(instr_put_varint(r->b + r->n, v) - r->b);
}

static void r64(struct rec *r, uint64_t v)
{
    if (r->n + 8 > sizeof r->b) {
        r->bad = 1;
        return;
    }
    put_le(r->b + r->n, v, 8);
    r->n += 8;
}

static void rs(struct rec *r, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    rv(r, len);
    if (r->bad || r->n + len > sizeof r->b) {
        r->bad = 1;
        return;
    }
    memcpy(r->b + r->n, s, len);
    r->n += len;
}

int instr_writer_module(struct instr_dump_writer *w, uint64_t id, const char *path, uint64_t load_addr)
{
    struct rec r = {.n = 0};
    rv(&r, id);
    rs(&r, path);
    if (r.bad || r.n + 8 > sizeof r.b)
        return INSTR_EARG;
    put_le(r.b + r.n, load_addr, 8);
    r.n += 8;
    return meta_record(w, INSTR_META_MODULE, r.b, r.n);
}

int instr_writer_function(struct instr_dump_writer *w, uint64_t id, uint64_t module, uint64_t line,
                          const char *name, const char *file, const char *demangled)
{
    struct rec r = {.n = 0};
    rv(&r, id);
    rv(&r, module);
    rv(&r, line);
    rs(&r, name);
    rs(&r, file);
    rs(&r, demangled ? demangled : "");
    return r.bad ? INSTR_EARG : meta_record(w, INSTR_META_FUNCTION, r.b, r.n);
}

static struct wchunk *chunk_of(struct instr_dump_writer *w, struct wchunk **arr, size_t *count, uint32_t index)
{
    if (index >= *count) {
        if (index > 1u << 20)
            return NULL;
        size_t n = (size_t)index + 1;
        struct wchunk *t = realloc(*arr, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + *count, 0, (n - *count) * sizeof *t);
        *arr = t;
        *count = n;
    }
    struct wchunk *c = &(*arr)[index];
    if (!c->buf) {
        /* One buffer per thread: bounded, whatever a hostile text asks for. */
        if ((w->nbufs + 2) * w->chunk_size > INSTR_WRITER_MAX_BUFFERS || !(c->buf = malloc(w->chunk_size)))
            return NULL;
        w->nbufs++;
    }
    return c;
}

static struct wchunk *thread_chunk(struct instr_dump_writer *w, uint32_t index)
{
    return chunk_of(w, &w->threads, &w->nthreads, index);
}

int instr_writer_thread(struct instr_dump_writer *w, uint32_t index, uint64_t tid, const char *name)
{
    struct wchunk *c = thread_chunk(w, index);
    if (!c)
        return INSTR_ENOMEM;
    c->tid = tid;
    if (index < w->nsamples)
        w->samples[index].tid = tid;
    struct rec r = {.n = 0};
    rv(&r, index);
    rv(&r, tid);
    rs(&r, name);
    return r.bad ? INSTR_EARG : meta_record(w, INSTR_META_THREAD, r.b, r.n);
}

int instr_writer_label(struct instr_dump_writer *w, uint64_t id, const char *text)
{
    struct rec r = {.n = 0};
    rv(&r, id);
    rs(&r, text);
    return r.bad ? INSTR_EARG : meta_record(w, INSTR_META_LABEL, r.b, r.n);
}

int instr_writer_unit(struct instr_dump_writer *w, uint64_t module, uint64_t threshold, uint64_t left_out,
                      uint64_t instrumented, const char *file)
{
    struct rec r = {.n = 0};
    rv(&r, module);
    rv(&r, threshold);
    rv(&r, left_out);
    rv(&r, instrumented);
    rs(&r, file);
    return r.bad ? INSTR_EARG : meta_record(w, INSTR_META_UNIT, r.b, r.n);
}

int instr_writer_callsite(struct instr_dump_writer *w, const struct instr_callsite *cs)
{
    struct rec r = {.n = 0};
    rv(&r, cs->id);
    rv(&r, cs->caller);
    rv(&r, cs->line);
    rv(&r, cs->flags);
    rs(&r, cs->callee ? cs->callee : "");
    rv(&r, cs->module);
    if (r.bad || r.n + 16 > sizeof r.b)
        return INSTR_EARG;
    put_le(r.b + r.n, cs->callee_off, 8);
    put_le(r.b + r.n + 8, cs->site_off, 8);
    r.n += 16;
    return meta_record(w, INSTR_META_CALLSITE, r.b, r.n);
}

uint64_t instr_writer_last_tick(struct instr_dump_writer *w, uint32_t thread)
{
    return thread < w->nthreads ? w->threads[thread].tick : 0;
}

int instr_writer_event(struct instr_dump_writer *w, uint32_t thread, uint64_t tick, unsigned os_flag, uint8_t bits,
                       unsigned kind, unsigned ext, uint64_t arg, int64_t value, uint64_t offcpu)
{
    struct wchunk *c = thread_chunk(w, thread);
    if (!c)
        return INSTR_ENOMEM;
    if (!c->started) {
        c->tick = tick; /* the first chunk's base is the first event's tick */
        c->started = 1;
    }
    if (tick < c->tick || (tick - c->tick) >> 59)
        return INSTR_EARG;
    size_t room = w->chunk_size - INSTR_CHUNK_HEADER_SIZE;
    if (c->used + INSTR_EVENT_MAX_BYTES > room) {
        int rc = write_chunk(w, c, INSTR_CHUNK_EVENTS, thread, c->base);
        if (rc)
            return rc;
    }
    uint8_t *p = c->buf + INSTR_CHUNK_HEADER_SIZE + c->used, *q = p;
    if (c->used == 0)
        c->base = c->tick; /* this chunk's deltas count from the last event's tick */
    q = instr_put_varint(q, instr_event_head(tick - c->tick, os_flag, kind));
    if (os_flag) {
        *q++ = bits;
        if (bits & INSTR_OS_OFFCPU_FOLLOWS)
            q = instr_put_varint(q, offcpu);
    }
    switch (kind) {
    case INSTR_EV_ENTER:
    case INSTR_EV_CALL:
        q = instr_put_varint(q, arg);
        break;
    case INSTR_EV_EXIT:
    case INSTR_EV_RETURN:
        break;
    case INSTR_EV_EXT:
        if (instr_ext_payload(ext) < 0)
            return INSTR_EARG;
        q = instr_put_ext(q, ext, arg, value);
        break;
    default:
        return INSTR_EARG;
    }
    c->used += (size_t)(q - p);
    c->tick = (kind == INSTR_EV_EXT && ext == INSTR_EXT_RESYNC) ? arg : tick;
    if (kind == INSTR_EV_EXT && ext == INSTR_EXT_RUNTIME)
        c->tick += arg;
    return 0;
}

int instr_writer_map(struct instr_dump_writer *w, const struct instr_map *m)
{
    struct rec r = {.n = 0};
    rv(&r, m->module);
    put_le(r.b + r.n, m->start, 8);
    put_le(r.b + r.n + 8, m->end, 8);
    put_le(r.b + r.n + 16, m->pgoff, 8);
    put_le(r.b + r.n + 24, m->tick, 8);
    r.n += 32;
    return meta_record(w, INSTR_META_MAP, r.b, r.n);
}

int instr_writer_sampling(struct instr_dump_writer *w, uint64_t rate_hz, uint64_t period_ns, uint64_t stack_bytes,
                          const char *unwinder)
{
    struct rec r = {.n = 0};
    rv(&r, rate_hz);
    rv(&r, period_ns);
    rv(&r, stack_bytes);
    rs(&r, unwinder);
    return r.bad ? INSTR_EARG : meta_record(w, INSTR_META_SAMPLING, r.b, r.n);
}

int instr_writer_hook_cost(struct instr_dump_writer *w, unsigned kind, uint64_t before, uint64_t after,
                           uint64_t spread, uint64_t rounds)
{
    struct rec r = {.n = 0};
    rv(&r, kind);
    rv(&r, before);
    rv(&r, after);
    rv(&r, spread);
    rv(&r, rounds);
    return meta_record(w, INSTR_META_HOOK_COST, r.b, r.n);
}

int instr_writer_cpu_time(struct instr_dump_writer *w, uint32_t index, uint64_t ns)
{
    struct rec r = {.n = 0};
    rv(&r, index);
    rv(&r, ns);
    return meta_record(w, INSTR_META_CPU_TIME, r.b, r.n);
}

int instr_writer_exit_cpu(struct instr_dump_writer *w, uint32_t index, uint64_t ns, uint64_t tick)
{
    struct rec r = {.n = 0};
    rv(&r, index);
    rv(&r, ns);
    rv(&r, tick);
    return meta_record(w, INSTR_META_EXIT_CPU, r.b, r.n);
}

int instr_writer_clock_sync(struct instr_dump_writer *w, uint32_t peer, uint64_t local, uint64_t peer_ticks,
                            uint64_t rtt)
{
    struct rec r = {.n = 0};
    rv(&r, peer);
    r64(&r, local);
    r64(&r, peer_ticks);
    rv(&r, rtt);
    return meta_record(w, INSTR_META_CLOCK_SYNC, r.b, r.n);
}

int instr_writer_sample(struct instr_dump_writer *w, uint32_t thread, uint64_t tick, unsigned kind, uint64_t weight,
                        uint64_t flags, const uint64_t *frames, size_t nframes)
{
    struct wchunk *c = chunk_of(w, &w->samples, &w->nsamples, thread);
    if (!c)
        return INSTR_ENOMEM;
    if (thread < w->nthreads && w->threads[thread].tid)
        c->tid = w->threads[thread].tid;
    if (!c->started) {
        c->tick = tick;
        c->started = 1;
    }
    if (tick < c->tick || (kind != INSTR_SAMPLE_STACK && kind != INSTR_SAMPLE_LOST) ||
        (kind == INSTR_SAMPLE_STACK && !weight))
        return INSTR_EARG;
    /* The record, built apart: its length comes first. */
    size_t room = w->chunk_size - INSTR_CHUNK_HEADER_SIZE;
    size_t max = 4 * INSTR_VARINT_MAX_BYTES + nframes * INSTR_VARINT_MAX_BYTES;
    if (max + 1 + INSTR_VARINT_MAX_BYTES > room) {
        nframes = (room - 1 - 5 * INSTR_VARINT_MAX_BYTES) / INSTR_VARINT_MAX_BYTES; /* keep the leaf end */
        flags |= INSTR_STACK_TRUNCATED;
        max = 4 * INSTR_VARINT_MAX_BYTES + nframes * INSTR_VARINT_MAX_BYTES;
    }
    if (c->used + max + 1 + INSTR_VARINT_MAX_BYTES > room) {
        int rc = write_chunk(w, c, INSTR_CHUNK_SAMPLES, thread, c->base);
        if (rc)
            return rc;
    }
    if (c->used == 0)
        c->base = c->tick;
    uint8_t rec[max], *q = rec;
    q = instr_put_varint(q, tick - c->tick);
    q = instr_put_varint(q, weight);
    if (kind == INSTR_SAMPLE_STACK) {
        q = instr_put_varint(q, flags);
        q = instr_put_varint(q, nframes);
        for (size_t i = 0; i < nframes; i++)
            q = instr_put_varint(q, i ? instr_zigzag((int64_t)(frames[i] - frames[i - 1])) : frames[0]);
    }
    uint8_t *p = c->buf + INSTR_CHUNK_HEADER_SIZE + c->used, *o = p;
    *o++ = (uint8_t)kind;
    o = instr_put_varint(o, (uint64_t)(q - rec));
    memcpy(o, rec, (size_t)(q - rec));
    o += q - rec;
    c->used += (size_t)(o - p);
    c->tick = tick;
    return 0;
}

struct instr_dump_header *instr_writer_header(struct instr_dump_writer *w)
{
    return &w->hdr;
}

int instr_writer_close(struct instr_dump_writer *w, char *err, size_t errlen)
{
    int rc = w->error;
    if (!rc && w->meta.used)
        rc = write_chunk(w, &w->meta, INSTR_CHUNK_METADATA, 0, 0);
    uint32_t nthreads = 0;
    for (size_t i = 0; i < w->nthreads; i++) {
        struct wchunk *c = &w->threads[i];
        if (!c->started)
            continue;
        nthreads++;
        if (!rc && c->used)
            rc = write_chunk(w, c, INSTR_CHUNK_EVENTS, (uint32_t)i, c->base);
    }
    for (size_t i = 0; i < w->nsamples; i++) {
        struct wchunk *c = &w->samples[i];
        if (!c->started)
            continue;
        if (i >= w->nthreads || !w->threads[i].started)
            nthreads++;
        if (!rc && c->used)
            rc = write_chunk(w, c, INSTR_CHUNK_SAMPLES, (uint32_t)i, c->base);
    }
    w->hdr.chunk_count = w->chunks;
    w->hdr.chunk_bytes = w->chunks * w->chunk_size;
    w->hdr.thread_count = nthreads;
    if (!rc && (fseeko(w->f, 0, SEEK_SET) < 0 || fwrite(&w->hdr, sizeof w->hdr, 1, w->f) != 1))
        rc = INSTR_EIO;
    if (fclose(w->f) != 0 && !rc)
        rc = INSTR_EIO;
    if (rc && err)
        snprintf(err, errlen, "writing dump: %s", instr_tool_strerror(rc));
    for (size_t i = 0; i < w->nthreads; i++)
        free(w->threads[i].buf);
    free(w->threads);
    for (size_t i = 0; i < w->nsamples; i++)
        free(w->samples[i].buf);
    free(w->samples);
    free(w->meta.buf);
    free(w);
    return rc;
}

int instr_writer_process(struct instr_dump_writer *w, const char *cwd, size_t argc, const char *const *argv)
{
    struct rec r = {.n = 0};
    rs(&r, cwd);
    rv(&r, argc);
    for (size_t i = 0; i < argc; i++)
        rs(&r, argv[i]);
    return r.bad ? INSTR_EARG : meta_record(w, INSTR_META_PROCESS, r.b, r.n);
}

/* dump-read.c - see dump-read.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump-read.h"
#include "event-codec.h"

static int fail(struct td_dump *d, const char *what, long where)
{
    snprintf(d->error, sizeof d->error, "%s (at %ld)", what, where);
    return -1;
}

static char *get_str(const uint8_t **p, const uint8_t *end)
{
    uint64_t l;
    if (instr_get_varint(p, end, &l) || l > (uint64_t)(end - *p))
        return NULL;
    char *s = malloc(l + 1);
    memcpy(s, *p, l);
    s[l] = 0;
    *p += l;
    return s;
}

static int read_meta(struct td_dump *d, const uint8_t *p, const uint8_t *end)
{
    while (p < end && *p) {
        uint8_t type = *p++;
        uint64_t len, id, v = 0;
        if (instr_get_varint(&p, end, &len) || len > (uint64_t)(end - p))
            return fail(d, "bad record length", 0);
        const uint8_t *q = p, *rend = p + len;
        p = rend;
        if (type == INSTR_META_FUNCTION) {
            if (instr_get_varint(&q, rend, &id) || id >= TD_MAX_FUNCS)
                return fail(d, "bad function id", 0);
            instr_get_varint(&q, rend, &d->func_module[id]);
            instr_get_varint(&q, rend, &d->func_line[id]);
            free(d->func_name[id]);
            free(d->func_file[id]);
            d->func_name[id] = get_str(&q, rend);
            d->func_file[id] = get_str(&q, rend);
        } else if (type == INSTR_META_MODULE) {
            if (instr_get_varint(&q, rend, &id) || id >= TD_MAX_FUNCS)
                return fail(d, "bad module id", 0);
            free(d->module_path[id]);
            d->module_path[id] = get_str(&q, rend);
            if (rend - q != 8)
                return fail(d, "bad module record", 0);
        } else if (type == INSTR_META_THREAD) {
            if (instr_get_varint(&q, rend, &id) || id >= TD_MAX_THREADS)
                return fail(d, "bad thread index", 0);
            instr_get_varint(&q, rend, &v);
            d->thread_tid[id] = v;
            free(d->thread_name[id]);
            d->thread_name[id] = get_str(&q, rend);
        }
    }
    return 0;
}

static int read_events(struct td_dump *d, uint32_t thread, const uint8_t *p, const uint8_t *end,
                       size_t *cap)
{
    const uint8_t *start = p;
    while (p < end && *p) {
        struct td_event e = {.thread = thread};
        uint64_t v;
        if (instr_get_varint(&p, end, &v))
            return fail(d, "truncated event", (long)(p - start));
        e.kind = v & 7;
        e.delta = v >> 4;
        if (v & 8) {
            if (p >= end)
                return fail(d, "truncated bits", 0);
            e.bits = *p++;
            if (e.bits & INSTR_OS_OFFCPU_FOLLOWS) { /* the interval's off-CPU ticks */
                e.bits &= ~INSTR_OS_OFFCPU_FOLLOWS;
                if (instr_get_varint(&p, end, &e.offcpu))
                    return fail(d, "truncated off-CPU ticks", 0);
                d->offcpu_events++;
            }
        }
        if (e.kind == INSTR_EV_ENTER || e.kind == INSTR_EV_CALL) {
            if (instr_get_varint(&p, end, &e.arg))
                return fail(d, "truncated id", 0);
        } else if (e.kind == INSTR_EV_EXT) {
            if (p >= end)
                return fail(d, "truncated ext", 0);
            e.ext = *p++;
            if (e.ext == INSTR_EXT_UNWIND) {
                if (p >= end)
                    return fail(d, "truncated unwind", 0);
                e.reason = *p++;
            } else if (e.ext == INSTR_EXT_REENTER || e.ext == INSTR_EXT_DROPPED ||
                       e.ext == INSTR_EXT_MARK || e.ext == INSTR_EXT_REENTER_SITE ||
                       e.ext == INSTR_EXT_RUNTIME || e.ext == INSTR_EXT_UNSEEN) {
                if (instr_get_varint(&p, end, &e.arg))
                    return fail(d, "truncated ext arg", 0);
                if (e.ext == INSTR_EXT_UNSEEN) {
                    /* what the detectors stop (or start) watching: kept
                     * apart, not a stack event */
                    if (d->nunseen < TD_MAX_UNSEEN) {
                        d->unseen[d->nunseen].thread = thread;
                        d->unseen[d->nunseen++].arg = e.arg;
                    }
                    continue;
                }
                if (e.ext == INSTR_EXT_RUNTIME) {
                    /* bookkeeping, not a stack event: counted, not listed */
                    d->runtime_events++;
                    d->runtime_ticks += e.arg;
                    d->runtime_offcpu_ticks += e.offcpu;
                    d->runtime_bits |= e.bits;
                    if (thread < TD_MAX_THREADS)
                        d->cut_bits[thread] |= e.bits;
                    continue;
                }
            } else if (e.ext != INSTR_EXT_THREAD_END) {
                return fail(d, "unexpected ext", e.ext);
            }
        } else if (e.kind != INSTR_EV_EXIT && e.kind != INSTR_EV_RETURN) {
            return fail(d, "unexpected kind", e.kind);
        }
        if (thread < TD_MAX_THREADS) {
            e.bits |= d->cut_bits[thread];
            d->cut_bits[thread] = 0;
        }
        if (d->nev == *cap) {
            *cap = *cap ? *cap * 2 : 1024;
            d->ev = realloc(d->ev, *cap * sizeof *d->ev);
        }
        d->ev[d->nev++] = e;
    }
    d->payload_bytes += (size_t)(p - start);
    return 0;
}

int td_read(const char *path, struct td_dump *d)
{
    memset(d, 0, sizeof *d);
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st))
        return fail(d, "cannot open", 0);
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    int rc = -1;
    if (got < sizeof d->h) {
        fail(d, "short file", (long)got);
        goto out;
    }
    memcpy(&d->h, buf, sizeof d->h);
    if (memcmp(d->h.magic, INSTR_DUMP_MAGIC, 8) || d->h.version != INSTR_DUMP_VERSION ||
        d->h.header_size != INSTR_DUMP_HEADER_SIZE || d->h.chunk_size < 4096 ||
        d->h.chunk_size > INSTR_DUMP_MAX_CHUNK_SIZE) {
        fail(d, "bad header", 0);
        goto out;
    }
    uint64_t cs = d->h.chunk_size;
    if (d->h.header_size + d->h.chunk_bytes > got) {
        fail(d, "file shorter than chunk_bytes says", (long)d->h.chunk_bytes);
        goto out;
    }
    /* The chunks back to back, each of its own size (0: the dump's). */
    uint64_t nchunks = 0, off[4096];
    for (uint64_t o = d->h.header_size; o + INSTR_CHUNK_HEADER_SIZE <= got;) {
        struct instr_chunk_header ch;
        memcpy(&ch, buf + o, sizeof ch);
        uint64_t size = ch.chunk_size ? ch.chunk_size : cs;
        if (size > cs || size % 8 || o + size > got || nchunks == sizeof off / sizeof off[0]) {
            fail(d, "bad chunk size", (long)o);
            goto out;
        }
        off[nchunks++] = o;
        o += size;
    }
    /* Metadata first (any order is fine), then each thread's chunks by seq. */
    size_t cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t thread = 0; thread < (pass ? TD_MAX_THREADS : 1); thread++) {
            for (uint32_t seq = 0;; seq++) {
                int found = 0;
                for (uint64_t i = 0; i < nchunks; i++) {
                    const uint8_t *c = buf + off[i];
                    struct instr_chunk_header ch;
                    memcpy(&ch, c, sizeof ch);
                    uint64_t size = ch.chunk_size ? ch.chunk_size : cs;
                    if (ch.magic == 0 && ch.kind == 0)
                        continue; /* never written (a window's unused chunk), as the reader does */
                    if (ch.magic != INSTR_CHUNK_MAGIC || ch.header_size != INSTR_CHUNK_HEADER_SIZE) {
                        fail(d, "bad chunk", (long)i);
                        goto out;
                    }
                    if (ch.seq != seq || ch.kind != (pass ? INSTR_CHUNK_EVENTS : INSTR_CHUNK_METADATA))
                        continue;
                    if (pass && ch.thread_index != thread)
                        continue;
                    found = 1;
                    const uint8_t *p = c + ch.header_size;
                    const uint8_t *end = ch.used_bytes ? p + ch.used_bytes : c + size;
                    if (end > c + size) {
                        fail(d, "used_bytes too large", (long)i);
                        goto out;
                    }
                    if (pass ? read_events(d, thread, p, end, &cap) : read_meta(d, p, end))
                        goto out;
                    if (pass && thread + 1 > d->nthreads)
                        d->nthreads = thread + 1;
                }
                if (!found)
                    break;
            }
        }
    }
    rc = 0;
out:
    free(buf);
    return rc;
}

void td_free(struct td_dump *d)
{
    free(d->ev);
    for (int i = 0; i < TD_MAX_FUNCS; i++) {
        free(d->func_name[i]);
        free(d->func_file[i]);
        free(d->module_path[i]);
    }
    for (int i = 0; i < TD_MAX_THREADS; i++)
        free(d->thread_name[i]);
    memset(d, 0, sizeof *d);
}

char *td_text(const struct td_dump *d, uint32_t thread)
{
    size_t cap = 256, n = 0;
    char *s = malloc(cap);
    s[0] = 0;
    static const char *reasons[] = {"?", "exception", "stack", "mismatch"};
    for (size_t i = 0; i < d->nev; i++) {
        const struct td_event *e = &d->ev[i];
        if (e->thread != thread)
            continue;
        char one[300];
        const char *fn = e->arg < TD_MAX_FUNCS && d->func_name[e->arg] ? d->func_name[e->arg] : "?";
        if (e->kind == INSTR_EV_ENTER)
            snprintf(one, sizeof one, "enter %s", fn);
        else if (e->kind == INSTR_EV_EXIT)
            snprintf(one, sizeof one, "exit");
        else if (e->kind == INSTR_EV_CALL)
            snprintf(one, sizeof one, "call %llu", (unsigned long long)e->arg);
        else if (e->kind == INSTR_EV_RETURN)
            snprintf(one, sizeof one, "return");
        else if (e->ext == INSTR_EXT_REENTER_SITE)
            snprintf(one, sizeof one, "reenter-site %llu", (unsigned long long)e->arg);
        else if (e->ext == INSTR_EXT_UNWIND)
            snprintf(one, sizeof one, "unwind %s", reasons[e->reason < 4 ? e->reason : 0]);
        else if (e->ext == INSTR_EXT_REENTER)
            snprintf(one, sizeof one, "reenter %s", fn);
        else if (e->ext == INSTR_EXT_THREAD_END)
            snprintf(one, sizeof one, "end");
        else if (e->ext == INSTR_EXT_DROPPED)
            snprintf(one, sizeof one, "dropped %llu", (unsigned long long)e->arg);
        else
            snprintf(one, sizeof one, "ext%u", e->ext);
        size_t l = strlen(one);
        if (n + l + 2 > cap) {
            cap = (n + l + 2) * 2;
            s = realloc(s, cap);
        }
        if (n)
            s[n++] = '|';
        memcpy(s + n, one, l + 1);
        n += l;
    }
    return s;
}

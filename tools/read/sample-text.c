/* sample-text.c - sampling records <-> text (see sample-text.h). */
#include "sample-text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sample-reader.h"
#include "text-tokens.h"

static void put_flags(FILE *out, uint64_t flags)
{
    if (!flags)
        return;
    fputs(" flags=", out);
    const char *sep = "";
    if (flags & INSTR_STACK_TRUNCATED)
        fprintf(out, "%struncated", sep), sep = ",";
    if (flags & INSTR_STACK_FP)
        fprintf(out, "%sfp", sep), sep = ",";
    if (flags & INSTR_STACK_RUNTIME)
        fprintf(out, "%sruntime", sep), sep = ",";
    const uint64_t known = INSTR_STACK_TRUNCATED | INSTR_STACK_FP | INSTR_STACK_RUNTIME;
    if (flags & ~known)
        fprintf(out, "%s%#" PRIx64, sep, flags & ~known);
}

void instr_sample_text_write(FILE *out, const struct instr_dump *d, size_t *nbad)
{
    if (d->sample_unwinder) {
        fprintf(out, "sampling rate=%" PRIu64 " period=%" PRIu64 " stack=%" PRIu64 " unwinder=\"", d->sample_rate_hz,
                d->sample_period_ns, d->sample_stack_bytes);
        for (const char *s = d->sample_unwinder; *s; s++) {
            if (*s == '"' || *s == '\\')
                fputc('\\', out);
            fputc(*s, out);
        }
        fputs("\"\n", out);
    }
    for (size_t i = 0; i < d->nmaps; i++) {
        const struct instr_map *m = &d->maps[i];
        fprintf(out, "map %" PRIu64 " %#" PRIx64 " %#" PRIx64 " off=%#" PRIx64 " at=%" PRIu64 "\n", m->module,
                m->start, m->end, m->pgoff, m->tick);
    }
    for (size_t i = 0; i < d->nthreads; i++)
        if (d->threads[i].cpu_ns)
            fprintf(out, "cpu-time %u %" PRIu64 "\n", d->threads[i].index, d->threads[i].cpu_ns);
    struct instr_sample_iter *it = malloc(sizeof *it);
    if (!it)
        return;
    for (size_t i = 0; i < d->nthreads; i++) {
        const struct instr_thread_info *t = &d->threads[i];
        struct instr_sample s;
        size_t seen = 0;
        instr_sample_iter_init(it, t);
        while (instr_sample_iter_next(it, &s) > 0) {
            if (it->nbad != seen) {
                fprintf(out, "# thread %u: sample chunk seq %u: invalid bytes, rest of the chunk skipped\n", t->index,
                        t->schunks[it->bad_chunk].seq);
                seen = it->nbad;
            }
            fprintf(out, "%u %" PRIu64 " %s", t->index, s.tick, instr_sample_kind_name(s.kind));
            if (s.kind == INSTR_SAMPLE_LOST) {
                fprintf(out, " %" PRIu64 "\n", s.weight);
                continue;
            }
            if (s.weight != 1)
                fprintf(out, " w=%" PRIu64, s.weight);
            put_flags(out, s.flags);
            for (size_t k = 0; k < s.nframes; k++)
                fprintf(out, "%c%#" PRIx64, k ? ',' : ' ', s.frames[k]);
            fputc('\n', out);
        }
        if (it->nbad != seen)
            fprintf(out, "# thread %u: sample chunk seq %u: invalid bytes, rest of the chunk skipped\n", t->index,
                    t->schunks[it->bad_chunk].seq);
        *nbad += it->nbad;
    }
    free(it);
}

#define BAD(...) (snprintf(why, whylen, __VA_ARGS__), -1)

int instr_sample_text_parse(struct instr_dump_writer *w, int ntok, char *const *tok, char *why, size_t whylen)
{
    uint64_t a, b, c;
    int rc;
    if (ntok < 1)
        return 0;
    if (!strcmp(tok[0], "map")) {
        struct instr_map m = {0};
        if (ntok < 4 || instr_tok_u64(tok[1], &m.module) || instr_tok_u64(tok[2], &m.start) ||
            instr_tok_u64(tok[3], &m.end))
            return BAD("map: expected MODULE START END [off=X] [at=TICK]");
        if (instr_tok_opt_u64(ntok, tok, 4, "off", &m.pgoff) || instr_tok_opt_u64(ntok, tok, 4, "at", &m.tick))
            return BAD("map: bad off= or at=");
        rc = instr_writer_map(w, &m);
    } else if (!strcmp(tok[0], "sampling")) {
        a = b = c = 0;
        if (instr_tok_opt_u64(ntok, tok, 1, "rate", &a) || instr_tok_opt_u64(ntok, tok, 1, "period", &b) ||
            instr_tok_opt_u64(ntok, tok, 1, "stack", &c))
            return BAD("sampling: rate=, period=, stack= take numbers");
        const char *u = instr_tok_key(ntok, tok, 1, "unwinder");
        rc = instr_writer_sampling(w, a, b, c, u ? u : "");
    } else if (!strcmp(tok[0], "cpu-time")) {
        if (ntok != 3 || instr_tok_u64(tok[1], &a) || instr_tok_u64(tok[2], &b) || a > (1u << 20))
            return BAD("cpu-time: expected INDEX NS");
        rc = instr_writer_cpu_time(w, (uint32_t)a, b);
    } else if (ntok >= 3 && (!strcmp(tok[2], "stack") || !strcmp(tok[2], "lost"))) {
        uint64_t index, tick;
        if (instr_tok_u64(tok[0], &index) || instr_tok_u64(tok[1], &tick) || index > (1u << 20))
            return BAD("expected INDEX TICK %s", tok[2]);
        if (!strcmp(tok[2], "lost")) {
            if (ntok != 4 || instr_tok_u64(tok[3], &a))
                return BAD("lost: expected a count");
            rc = instr_writer_sample(w, (uint32_t)index, tick, INSTR_SAMPLE_LOST, a, 0, NULL, 0);
        } else {
            uint64_t weight = 1, flags = 0;
            const char *frames = NULL;
            for (int i = 3; i < ntok; i++) {
                if (!strncmp(tok[i], "w=", 2)) {
                    if (instr_tok_u64(tok[i] + 2, &weight) || !weight)
                        return BAD("stack: w= takes a count >= 1");
                } else if (!strncmp(tok[i], "flags=", 6)) {
                    for (const char *f = tok[i] + 6; *f;) {
                        size_t n = strcspn(f, ",");
                        if (n == 9 && !strncmp(f, "truncated", 9))
                            flags |= INSTR_STACK_TRUNCATED;
                        else if (n == 2 && !strncmp(f, "fp", 2))
                            flags |= INSTR_STACK_FP;
                        else if (n == 7 && !strncmp(f, "runtime", 7))
                            flags |= INSTR_STACK_RUNTIME;
                        else
                            return BAD("stack: unknown flag '%.*s'", (int)n, f);
                        f += n + (f[n] == ',');
                    }
                } else if (!frames) {
                    frames = tok[i];
                } else {
                    return BAD("stack: frames are one comma-separated list");
                }
            }
            if (!frames)
                return BAD("stack: no frames");
            uint64_t *pcs = malloc(INSTR_SAMPLE_MAX_FRAMES * sizeof *pcs);
            size_t n = 0;
            if (!pcs)
                return BAD("out of memory");
            for (const char *f = frames; *f && n < INSTR_SAMPLE_MAX_FRAMES;) {
                char *end;
                errno = 0;
                pcs[n++] = strtoull(f, &end, 16);
                if (errno || end == f || (*end && *end != ',')) {
                    free(pcs);
                    return BAD("stack: bad frame list '%s'", frames);
                }
                f = *end ? end + 1 : end;
            }
            rc = instr_writer_sample(w, (uint32_t)index, tick, INSTR_SAMPLE_STACK, weight, flags, pcs, n);
            free(pcs);
        }
    } else {
        return 0;
    }
    if (rc < 0)
        return BAD("%s", rc == INSTR_EARG ? "bad sample (ticks go down?)" : instr_tool_strerror(rc));
    return 1;
}

/* event-budget.c - what two cheaper encodings of short leaf calls would
 * save in a dump (issue 24 §4), measured on a real dump, not simulated
 * programs.
 *
 * A leaf unit is a call with nothing recorded inside it: ENTER then its
 * EXIT with no event between, the pair optionally wrapped by the call
 * site's CALL just before and RETURN just after; or a CALL then its
 * RETURN (a call into code without hooks).  Its length is the ticks from
 * its first event to its last; none of its later events may carry an OS
 * flag (the first one's flag is about the interval before the call).
 *
 *   paired:  each unit shorter than N ticks is one event: the first
 *            event's head and OS bytes, its ids (function, call site),
 *            and the length as a varint; the bytes of the other events
 *            of the unit go.  The timeline keeps every call.
 *   hot leaf: each such unit is not written at all; per thread, a table
 *            of (ids, calls, total ticks) for the distinct leaves, about
 *            12 bytes a row.  Exact calls and totals, no timeline for
 *            them, and their time moves to the caller's interval in the
 *            dump as written (the report would subtract it back).
 *
 * Prints, per dump and for N = 64, 256, 1024 and 4096 ticks: events,
 * bytes, calls (ENTER events plus CALL-RETURN units), bytes per call now
 * and under each scheme.  Usage: bench-event-budget DUMP... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "event-codec.h"

#define NLIMITS 4
static const uint64_t limits[NLIMITS] = {64, 256, 1024, 4096};

struct budget {
    uint64_t events, bytes, calls;
    uint64_t units[NLIMITS], saved_paired[NLIMITS], saved_hot[NLIMITS];
    uint64_t distinct[NLIMITS]; /* rows of the hot-leaf tables */
    uint64_t shapes[3], shape_bytes[3]; /* units below the largest N: call-enter-exit-return, enter-exit,
                                           call-return */
};

/* The last few events of a thread, newest last: enough for a unit. */
struct seen {
    struct instr_event ev;
    unsigned size;
};

/* Distinct leaves per thread and limit: a small open-addressing set of
 * (kind << 56 | first id << 28 | second id). */
struct set {
    uint64_t *keys;
    size_t cap, n;
};

static int set_add(struct set *s, uint64_t key)
{
    if (2 * (s->n + 1) > s->cap) {
        struct set g = {calloc(s->cap ? s->cap * 2 : 1024, sizeof *g.keys), s->cap ? s->cap * 2 : 1024, 0};
        if (!g.keys)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[i])
                set_add(&g, s->keys[i]);
        free(s->keys);
        *s = g;
    }
    key |= 1; /* never 0 */
    size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull) & (s->cap - 1);
    for (; s->keys[i]; i = (i + 1) & (s->cap - 1))
        if (s->keys[i] == key)
            return 0;
    s->keys[i] = key;
    s->n++;
    return 0;
}

/* A unit ending with the newest event (h[n - 1]): its number of events,
 * 0 if none ends here. */
static unsigned unit_at(const struct seen *h, unsigned n)
{
    const struct instr_event *e = &h[n - 1].ev;
    if (e->kind == INSTR_EV_RETURN && n >= 4 && h[n - 2].ev.kind == INSTR_EV_EXIT &&
        h[n - 3].ev.kind == INSTR_EV_ENTER && h[n - 4].ev.kind == INSTR_EV_CALL && !h[n - 2].ev.os &&
        !h[n - 3].ev.os && !e->os)
        return 4;
    if (e->kind == INSTR_EV_RETURN && n >= 2 && h[n - 2].ev.kind == INSTR_EV_CALL && !e->os)
        return 2;
    if (e->kind == INSTR_EV_EXIT && n >= 2 && h[n - 2].ev.kind == INSTR_EV_ENTER && !e->os)
        return 2;
    return 0;
}

static int thread_budget(const struct instr_thread_info *th, struct budget *b)
{
    struct instr_event_iter it;
    struct instr_event ev;
    struct seen h[4];
    unsigned n = 0;
    struct set sets[NLIMITS] = {{0}};
    instr_event_iter_init(&it, th);
    for (;;) {
        size_t chunk = it.chunk;
        const uint8_t *p = it.p;
        if (!instr_event_iter_next(&it, &ev))
            break;
        unsigned size = (unsigned)(it.chunk == chunk ? it.p - p : it.p - th->chunks[it.chunk].payload);
        b->events++;
        b->bytes += size;
        if (ev.kind == INSTR_EV_ENTER)
            b->calls++;
        if (n == 4) {
            memmove(h, h + 1, 3 * sizeof *h);
            n = 3;
        }
        h[n].ev = ev;
        h[n].size = size;
        n++;
        unsigned u = unit_at(h, n);
        if (!u)
            continue;
        if (u == 2 && ev.kind == INSTR_EV_RETURN)
            b->calls++; /* a call into code without hooks */
        const struct seen *first = &h[n - u];
        uint64_t len = ev.tick - first->ev.tick, bytes = 0;
        for (unsigned k = 0; k < u; k++)
            bytes += h[n - u + k].size;
        /* paired: the first event as it is, the ENTER's id when wrapped,
         * and the length. */
        uint64_t paired = first->size + (u == 4 ? instr_varint_size(h[n - 3].ev.arg) : 0) + instr_varint_size(len);
        uint64_t key = (uint64_t)u << 56 | (first->ev.arg & 0xfffffff) << 28 | (u == 4 ? h[n - 3].ev.arg & 0xfffffff : 0);
        if (len < limits[NLIMITS - 1]) {
            int shape = u == 4 ? 0 : ev.kind == INSTR_EV_EXIT ? 1 : 2;
            b->shapes[shape]++;
            b->shape_bytes[shape] += bytes;
        }
        for (int l = 0; l < NLIMITS; l++) {
            if (len >= limits[l])
                continue;
            b->units[l]++;
            b->saved_paired[l] += bytes > paired ? bytes - paired : 0;
            b->saved_hot[l] += bytes;
            if (set_add(&sets[l], key))
                return -1;
        }
        n = 0; /* a unit is never part of the next one */
    }
    for (int l = 0; l < NLIMITS; l++) {
        b->distinct[l] += sets[l].n;
        free(sets[l].keys);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DUMP...\n", argv[0]);
        return 1;
    }
    for (int a = 1; a < argc; a++) {
        struct instr_dump d;
        char err[512];
        if (instr_dump_open(&d, argv[a], err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        struct budget b = {0};
        for (size_t t = 0; t < d.nthreads; t++)
            if (thread_budget(&d.threads[t], &b)) {
                fprintf(stderr, "%s: out of memory\n", argv[a]);
                return 2;
            }
        printf("%s: %llu events, %llu bytes (%.2f a event), %llu calls, %.2f bytes a call; tick rate %.0f MHz\n",
               argv[a], (unsigned long long)b.events, (unsigned long long)b.bytes,
               b.events ? (double)b.bytes / (double)b.events : 0.0, (unsigned long long)b.calls,
               b.calls ? (double)b.bytes / (double)b.calls : 0.0, d.tick_hz / 1e6);
        printf("  %8s %14s %8s %16s %16s %10s\n", "N ticks", "leaf units", "share", "paired B/call",
               "hot-leaf B/call", "rows");
        for (int l = 0; l < NLIMITS; l++) {
            double calls = b.calls ? (double)b.calls : 1.0;
            uint64_t table = b.distinct[l] * 12;
            printf("  %8llu %14llu %7.1f%% %16.2f %16.2f %10llu\n", (unsigned long long)limits[l],
                   (unsigned long long)b.units[l], 100.0 * (double)b.units[l] / calls,
                   (double)(b.bytes - b.saved_paired[l]) / calls,
                   (double)(b.bytes - b.saved_hot[l] + table) / calls, (unsigned long long)b.distinct[l]);
        }
        static const char *const names[3] = {"call-enter-exit-return", "enter-exit", "call-return"};
        for (int k = 0; k < 3; k++)
            printf("  units below %llu ticks, %s: %llu, %.2f bytes each\n", (unsigned long long)limits[NLIMITS - 1],
                   names[k], (unsigned long long)b.shapes[k],
                   b.shapes[k] ? (double)b.shape_bytes[k] / (double)b.shapes[k] : 0.0);
        instr_dump_close(&d);
    }
    return 0;
}

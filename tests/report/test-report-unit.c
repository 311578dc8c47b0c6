/* Unit tests of the reader, the writer and the profile, in C. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "dump-writer.h"
#include "profile.h"
#include "self-pct.h"

static int failures;

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t a_ = (a), b_ = (b);                                                               \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %" PRIu64 ", expected %s == %" PRIu64 "\n", __FILE__,    \
                    __LINE__, #a, a_, #b, b_);                                                     \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long a_ = (a), b_ = (b);                                                                   \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %ld, expected %ld\n", __FILE__, __LINE__, #a, a_, b_);   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static char err[512];

static void test_varint(void)
{
    uint8_t buf[16];
    const uint64_t vals[] = {0, 1, 127, 128, 300, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t *e = instr_put_varint(buf, vals[i]);
        const uint8_t *p = buf;
        uint64_t v = 0;
        CHECK_EQ_INT(instr_get_varint(&p, e, &v), 0);
        CHECK_EQ_U64(v, vals[i]);
        CHECK(p == e);
        p = buf;
        if (e - buf > 1)
            CHECK_EQ_INT(instr_get_varint(&p, e - 1, &v), -1); /* cut */
    }
    /* An event whose kind is 0, 6 or 7 is invalid. */
    struct instr_event ev;
    const uint8_t bad[] = {0x16};
    const uint8_t *p = bad;
    CHECK_EQ_INT(instr_decode_event(&p, bad + 1, &ev), -1);
}

/* The decoder's fast path (instr_decode_event) and its whole decoder
 * (instr_decode_event_slow) agree on every event, valid or not, wherever
 * it ends: events of every kind with deltas and ids of 1 to 10 bytes,
 * then the same buffer cut at every length, then random bytes. */
static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void check_same_decoding(const uint8_t *buf, size_t len)
{
    const uint8_t *p = buf, *q = buf, *end = buf + len;
    for (;;) {
        struct instr_event a, b;
        memset(&a, 0x5a, sizeof a);
        memset(&b, 0x5a, sizeof b);
        int ra = instr_decode_event(&p, end, &a), rb = instr_decode_event_slow(&q, end, &b);
        CHECK_EQ_INT(ra, rb);
        CHECK(p == q);
        if (ra <= 0 || ra != rb || p != q)
            return;
        CHECK(!memcmp(&a, &b, sizeof a));
        if (memcmp(&a, &b, sizeof a))
            return;
    }
}

static void test_decode_fast(void)
{
    static uint8_t buf[1 << 12];
    for (int round = 0; round < 200; round++) {
        uint8_t *e = buf;
        while (e < buf + sizeof buf - 64) {
            unsigned kind = 1 + (unsigned)(rnd() % 5), os = rnd() % 8 == 0;
            uint64_t delta = rnd() >> (rnd() % 64);
            if (delta >> 59)
                delta >>= 5; /* the head keeps delta << 4 */
            e = instr_put_varint(e, instr_event_head(delta, os, kind));
            if (os) {
                uint8_t bits = (uint8_t)rnd();
                *e++ = bits;
                if (bits & INSTR_OS_OFFCPU_FOLLOWS)
                    e = instr_put_varint(e, rnd() >> (rnd() % 64));
            }
            if (kind == INSTR_EV_ENTER || kind == INSTR_EV_CALL)
                e = instr_put_varint(e, rnd() >> (rnd() % 64));
            else if (kind == INSTR_EV_EXT)
                e = instr_put_ext(e, 1 + (unsigned)(rnd() % 10), rnd() >> (rnd() % 64), (int64_t)rnd());
        }
        size_t len = (size_t)(e - buf);
        check_same_decoding(buf, len);
        for (size_t cut = len; cut > len - 64; cut--)
            check_same_decoding(buf, cut);
    }
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < 256; i++)
            buf[i] = (uint8_t)(rnd() | (rnd() % 4 ? 0x80 : 0)); /* long varints, few zero bytes */
        check_same_decoding(buf, 1 + rnd() % 256);
    }
}

/* Many events across small chunks, a resync, then a check that the reader
 * gives back the same absolute ticks and that the profile sums match. */
static void test_roundtrip(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/rt.instr", dir);
    struct instr_dump_header h = {0};
    h.chunk_size = 256;
    h.end_tsc = 2000000;
    h.end_mono_ns = 1000000;
    h.flags = INSTR_DUMP_COMPLETE;
    struct instr_dump_writer *w;
    CHECK_EQ_INT(instr_writer_open(&w, path, &h, err, sizeof err), 0);
    CHECK_EQ_INT(instr_writer_function(w, 1, 0, 1, "f", "f.c", NULL), 0);
    CHECK_EQ_INT(instr_writer_thread(w, 0, 42, "t"), 0);
    uint64_t tick = 1000;
    for (int i = 0; i < 500; i++) {
        CHECK_EQ_INT(instr_writer_event(w, 0, tick, 0, 0, INSTR_EV_ENTER, 0, 1, 0, 0), 0);
        tick += 10 + (uint64_t)i;
        CHECK_EQ_INT(instr_writer_event(w, 0, tick, i & 1, INSTR_OS_SCHED, INSTR_EV_EXIT, 0, 0, 0, 0), 0);
        tick += 5;
    }
    /* A resync: the next event counts from 1000000. */
    CHECK_EQ_INT(instr_writer_event(w, 0, tick, 0, 0, INSTR_EV_EXT, INSTR_EXT_RESYNC, 1000000, 0, 0), 0);
    CHECK_EQ_INT(instr_writer_event(w, 0, 1000000, 0, 0, INSTR_EV_ENTER, 0, 1, 0, 0), 0);
    CHECK_EQ_INT(instr_writer_event(w, 0, 1000100, 0, 0, INSTR_EV_EXIT, 0, 0, 0, 0), 0);
    CHECK_EQ_INT(instr_writer_close(w, err, sizeof err), 0);

    struct instr_dump d;
    CHECK_EQ_INT(instr_dump_open(&d, path, err, sizeof err), 0);
    CHECK_EQ_U64(d.nthreads, 1);
    CHECK(d.threads[0].nchunks > 10);
    CHECK_EQ_U64(d.threads[0].tid, 42);
    CHECK_EQ_INT(d.tick_hz, 2e9);
    struct instr_event_iter it;
    struct instr_event ev;
    instr_event_iter_init(&it, &d.threads[0]);
    uint64_t n = 0, last = 0;
    while (instr_event_iter_next(&it, &ev) > 0) {
        n++;
        last = ev.tick;
    }
    CHECK_EQ_U64(n, 1003);
    CHECK_EQ_U64(last, 1000100);
    CHECK_EQ_INT(it.bad, 0);

    struct instr_profile p;
    CHECK_EQ_INT(instr_profile_build(&p, &d, err, sizeof err), 0);
    CHECK_EQ_U64(p.nfuncs, 1);
    /* sum of (10 + i) for i < 500, plus 100 after the resync. */
    uint64_t ei = 500 * 10 + 499 * 500 / 2 + 100, flagged = 0;
    for (int i = 1; i < 500; i += 2)
        flagged += 10 + (uint64_t)i;
    CHECK_EQ_U64(p.funcs[0].v.ei, ei);
    CHECK_EQ_U64(p.funcs[0].v.ee, ei);
    CHECK_EQ_U64(p.funcs[0].v.ai, ei - flagged);
    CHECK_EQ_U64(p.funcs[0].v.calls, 501);
    CHECK_EQ_U64(p.funcs[0].v.flagged_n, 250);
    CHECK_EQ_U64(p.total.ei, ei);
    instr_profile_free(&p);
    instr_dump_close(&d);

    /* The same file with its last chunk left open (used_bytes = 0, as after
     * a kill): the reader scans to the first zero byte, values unchanged. */
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    uint32_t zero = 0;
    fseek(f, size - 256 + 20, SEEK_SET);
    fwrite(&zero, 4, 1, f);
    fclose(f);
    CHECK_EQ_INT(instr_dump_open(&d, path, err, sizeof err), 0);
    CHECK_EQ_INT(instr_profile_build(&p, &d, err, sizeof err), 0);
    CHECK_EQ_U64(p.funcs[0].v.ei, ei);
    CHECK_EQ_U64(p.repairs.bad_chunks, 0);
    instr_profile_free(&p);
    instr_dump_close(&d);
}

/* Self %'s function identity: GCC's clones fold into their origin. */
static void test_self_fold(void)
{
    static const char *const cases[][2] = {
        {"foo.constprop.0", "foo"},
        {"foo.isra.0", "foo"},
        {"foo.part.0", "foo"},
        {"foo.cold", "foo"},
        {"foo.lto_priv.0", "foo"},
        {"foo.part.0.isra.0", "foo"},
        {"foo.constprop.0.cold", "foo"},
        {"ns::f(int) [clone .constprop.0]", "ns::f(int)"},
        {"ns::f(int) [clone .isra.0] [clone .cold]", "ns::f(int)"},
        {"foo", "foo"},
        {"foo.bar", "foo.bar"},   /* not a clone suffix */
        {"foo.0", "foo.0"},       /* digits alone are not one either */
        {"a.b.part.1", "a.b"},
    };
    char buf[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        instr_name_origin(cases[i][0], buf, sizeof buf);
        if (strcmp(buf, cases[i][1])) {
            fprintf(stderr, "fold(%s) = %s, expected %s\n", cases[i][0], buf, cases[i][1]);
            failures++;
        }
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    test_varint();
    test_decode_fast();
    test_roundtrip(dir);
    test_self_fold();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}

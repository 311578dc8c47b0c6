/* text-trace-parse.c - the text form (text-trace.h) read back into a dump:
 * tokens, the header, events and records, written with dump-writer.c. */
#include "text-trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dump-writer.h"
#include "hook-abi.h"
#include "sample-text.h"
#include "text-tokens.h"

/* ---- names of the X-macro lists, read back ---------------------------------- */

/* 1 and kind/ext set if name is an event name. */
static int event_lookup(const char *s, unsigned *kind, unsigned *ext)
{
#define INSTR_X_EV(name, value, text)                                                              \
    if (value != INSTR_EV_EXT && !strcmp(s, text)) {                                               \
        *kind = value;                                                                             \
        *ext = 0;                                                                                  \
        return 1;                                                                                  \
    }
    INSTR_EVENT_KINDS(INSTR_X_EV)
#undef INSTR_X_EV
#define INSTR_X_EXT(name, value, text, ...)                                                        \
    if (!strcmp(s, text)) {                                                                        \
        *kind = INSTR_EV_EXT;                                                                      \
        *ext = value;                                                                              \
        return 1;                                                                                  \
    }
    INSTR_EXT_KINDS(INSTR_X_EXT)
#undef INSTR_X_EXT
    return 0;
}

static int os_bits_parse(const char *s, unsigned *bits)
{
    char *end;
    *bits = 0;
    if (!strcmp(s, "none"))
        return 0;
    if (s[0] >= '0' && s[0] <= '9') {
        unsigned long v = strtoul(s, &end, 0);
        if (*end || v > 0xff)
            return -1;
        *bits = (unsigned)v;
        return 0;
    }
    while (*s) {
        size_t n = strcspn(s, ",");
        int found = 0;
#define INSTR_X_CMP(name, value, text)                                                             \
    if (n == strlen(text) && !strncmp(s, text, n)) {                                               \
        *bits |= value;                                                                            \
        found = 1;                                                                                 \
    }
        INSTR_OS_KINDS(INSTR_X_CMP)
#undef INSTR_X_CMP
        if (!found)
            return -1;
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

/* ---- text -> dump ----------------------------------------------------------- */

#define MAX_TOKENS 32

struct line {
    char *tok[MAX_TOKENS];
    int n;
};

/* Splits buf in place into tokens; quotes are removed and escapes applied.
 * In key="value" the key stays attached: the token becomes key=value. */
static int tokenize(char *buf, struct line *ln, const char **why)
{
    char *r = buf, *w;
    ln->n = 0;
    /* Fields past the last one read as missing (NULL), never as a stale
     * pointer into an earlier line's buffer. */
    memset(ln->tok, 0, sizeof ln->tok);
    for (;;) {
        while (*r == ' ' || *r == '\t' || *r == '\r' || *r == '\n')
            r++;
        if (!*r || *r == '#')
            return 0;
        if (ln->n == MAX_TOKENS) {
            *why = "too many fields";
            return -1;
        }
        ln->tok[ln->n++] = w = r;
        while (*r && *r != ' ' && *r != '\t' && *r != '\r' && *r != '\n') {
            if (*r == '"') {
                r++;
                while (*r != '"') {
                    if (!*r || *r == '\n') {
                        *why = "unterminated quote";
                        return -1;
                    }
                    if (*r == '\\' && r[1])
                        r++;
                    *w++ = *r++;
                }
                r++;
            } else if (*r == '#') {
                break;
            } else {
                *w++ = *r++;
            }
        }
        int stop = !*r || *r == '#';
        if (*r && *r != '#')
            r++;
        *w = 0;
        if (stop)
            return 0;
    }
}


struct parser {
    const char *name;
    unsigned long lineno;
    char *err;
    size_t errlen;
};

static int perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parser *ps, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "%s:%lu: %s", ps->name, ps->lineno, msg);
    return INSTR_ESYNTAX;
}

/* Returns the value of key=... among tokens [from, n), or NULL. */
static const char *kv(struct line *ln, int from, const char *key)
{
    return instr_tok_key(ln->n, ln->tok, from, key);
}

/* Checks that every token from `from` is key=value with a known key. */
static int check_keys(struct parser *ps, struct line *ln, int from, const char *const *keys)
{
    for (int i = from; i < ln->n; i++) {
        const char *eq = strchr(ln->tok[i], '=');
        int ok = 0;
        for (const char *const *k = keys; eq && *k; k++)
            if (strlen(*k) == (size_t)(eq - ln->tok[i]) && !strncmp(*k, ln->tok[i], (size_t)(eq - ln->tok[i])))
                ok = 1;
        if (!ok)
            return perr(ps, "unexpected field '%s'", ln->tok[i]);
    }
    return 0;
}

static int header_u64(struct parser *ps, struct line *ln, const char *key, uint64_t *out)
{
    const char *v = kv(ln, 1, key);
    if (v && instr_tok_u64(v, out) < 0)
        return perr(ps, "%s: not a number: '%s'", key, v);
    return 0;
}

/* The one of values[0..n) that name() spells v, into *out: 1, else 0. */
static int named_value(const char *v, const uint32_t *values, size_t n, const char *(*name)(uint32_t),
                       uint32_t *out)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v, name(values[i]))) {
            *out = values[i];
            return 1;
        }
    return 0;
}

static int parse_header(struct parser *ps, struct line *ln, struct instr_dump_header *h)
{
    static const char *const keys[] = {"pid", "ppid", "exe", "start_tsc", "start_ns", "real_ns", "end_tsc",
                                       "end_ns", "last_tsc", "last_ns", "detector", "sees", "flags", "dropped",
                                       "unmatched", "exit_status", "chunk_size", "detail", "end_signal",
                                       "signal_tid", "detectors", "unrecorded_threads", "dropped_calls", "dropped_sites",
                                       "stopped",
                                       "filter_depth", "filter_min_ticks", "filter_triggers", "filtered_depth",
                                       "filtered_short", "filtered_off", "host", "rank", "size", "job", "launcher",
                                       "arch", "ticks", "hook_cost_path", NULL};
    int rc;
    uint64_t cs = 0, es = 0;
    uint64_t last_tsc = UINT64_MAX, last_ns = UINT64_MAX;
    memset(h, 0, sizeof *h);
    if ((rc = check_keys(ps, ln, 1, keys)) || (rc = header_u64(ps, ln, "pid", &h->pid)) ||
        (rc = header_u64(ps, ln, "ppid", &h->ppid)) || (rc = header_u64(ps, ln, "start_tsc", &h->start_tsc)) ||
        (rc = header_u64(ps, ln, "start_ns", &h->start_mono_ns)) ||
        (rc = header_u64(ps, ln, "real_ns", &h->start_real_ns)) ||
        (rc = header_u64(ps, ln, "end_tsc", &h->end_tsc)) || (rc = header_u64(ps, ln, "end_ns", &h->end_mono_ns)) ||
        (rc = header_u64(ps, ln, "last_tsc", &last_tsc)) || (rc = header_u64(ps, ln, "last_ns", &last_ns)) ||
        (rc = header_u64(ps, ln, "dropped", &h->dropped_events)) ||
        (rc = header_u64(ps, ln, "unmatched", &h->unmatched_exits)) ||
        (rc = header_u64(ps, ln, "chunk_size", &cs)))
        return rc;
    h->last_tsc = last_tsc == UINT64_MAX ? h->end_tsc : last_tsc;
    h->last_mono_ns = last_ns == UINT64_MAX ? h->end_mono_ns : last_ns;
    if (cs > INSTR_DUMP_MAX_CHUNK_SIZE)
        return perr(ps, "chunk_size too large");
    h->chunk_size = (uint32_t)cs;
    const char *v;
    if ((v = kv(ln, 1, "exit_status"))) {
        char *end;
        long x = strtol(v, &end, 0);
        if (*end)
            return perr(ps, "exit_status: not a number: '%s'", v);
        h->exit_status = (int32_t)x;
    }
    (void)es;
    uint64_t sig = 0, sig_tid = 0;
    if ((rc = header_u64(ps, ln, "end_signal", &sig)) || (rc = header_u64(ps, ln, "signal_tid", &sig_tid)))
        return rc;
    if (sig > UINT32_MAX || sig_tid > UINT32_MAX)
        return perr(ps, "end_signal or signal_tid out of range");
    h->end_signal = (uint32_t)sig;
    h->end_signal_tid = (uint32_t)sig_tid;
    uint64_t unrecorded = 0;
    if ((rc = header_u64(ps, ln, "unrecorded_threads", &unrecorded)))
        return rc;
    if (unrecorded > UINT32_MAX)
        return perr(ps, "unrecorded_threads out of range");
    h->unrecorded_threads = (uint32_t)unrecorded;
    if ((rc = header_u64(ps, ln, "dropped_calls", &h->dropped_calls)) ||
        (rc = header_u64(ps, ln, "dropped_sites", &h->dropped_sites)))
        return rc;
    uint64_t depth = 0, triggers = 0;
    if ((rc = header_u64(ps, ln, "filter_depth", &depth)) || (rc = header_u64(ps, ln, "filter_triggers", &triggers)) ||
        (rc = header_u64(ps, ln, "filter_min_ticks", &h->filter_min_ticks)) ||
        (rc = header_u64(ps, ln, "filtered_depth", &h->filtered_depth)) ||
        (rc = header_u64(ps, ln, "filtered_short", &h->filtered_short)) ||
        (rc = header_u64(ps, ln, "filtered_off", &h->filtered_off)))
        return rc;
    if (depth > UINT32_MAX || triggers > UINT32_MAX)
        return perr(ps, "filter_depth or filter_triggers out of range");
    h->filter_depth = (uint32_t)depth;
    h->filter_triggers = (uint32_t)triggers;
    if ((v = kv(ln, 1, "hook_cost_path"))) {
        if (strcmp(v, "filtering") && strcmp(v, "fast"))
            return perr(ps, "hook_cost_path: neither fast nor filtering: '%s'", v);
        h->calibration_path = strcmp(v, "fast") ? INSTR_CALIBRATION_PATH_FILTERING : INSTR_CALIBRATION_PATH_FAST;
    }
    if ((v = kv(ln, 1, "exe")))
        snprintf(h->exe_path, sizeof h->exe_path, "%s", v);
    if ((v = kv(ln, 1, "detail")))
        snprintf(h->detector_detail, sizeof h->detector_detail, "%s", v);
    if ((v = kv(ln, 1, "stopped")))
        snprintf(h->stop_reason, sizeof h->stop_reason, "%s", v);
    /* The job (MPI ranks): host= always, rank= size= job= launcher= for a rank. */
    if ((v = kv(ln, 1, "host")))
        snprintf(h->host, sizeof h->host, "%s", v);
    uint64_t rank = UINT64_MAX, jsize = 0;
    if ((rc = header_u64(ps, ln, "rank", &rank)) || (rc = header_u64(ps, ln, "size", &jsize)))
        return rc;
    if (rank != UINT64_MAX && (rank >= jsize || jsize > INT32_MAX))
        return perr(ps, "rank= needs size= above it");
    h->job_rank = rank == UINT64_MAX ? -1 : (int32_t)rank;
    h->job_size = rank == UINT64_MAX ? 0 : (uint32_t)jsize;
    if ((v = kv(ln, 1, "job")))
        snprintf(h->job_id, sizeof h->job_id, "%s", v);
    if ((v = kv(ln, 1, "launcher")))
        snprintf(h->job_launcher, sizeof h->job_launcher, "%s", v);
    static const uint32_t archs[] = {INSTR_ARCH_X86_64, INSTR_ARCH_AARCH64};
    static const uint32_t sources[] = {INSTR_TICKS_TSC, INSTR_TICKS_CNTVCT, INSTR_TICKS_MONO_NS};
    if ((v = kv(ln, 1, "arch")) && !named_value(v, archs, sizeof archs / sizeof *archs, instr_arch_name, &h->arch))
        return perr(ps, "unknown arch '%s'", v);
    if ((v = kv(ln, 1, "ticks")) &&
        !named_value(v, sources, sizeof sources / sizeof *sources, instr_tick_source_name, &h->tick_source))
        return perr(ps, "unknown ticks '%s'", v);
    if ((v = kv(ln, 1, "detector"))) {
        int found = 0;
#define INSTR_X_DET(name, value, text)                                                             \
    if (!strcmp(v, text))                                                                          \
        h->detector = value, found = 1;
        INSTR_DETECTORS(INSTR_X_DET)
#undef INSTR_X_DET
        if (!found)
            return perr(ps, "unknown detector '%s'", v);
    }
    if ((v = kv(ln, 1, "detectors"))) {
        /* rseq_cs+sud+perf: the backends that ran (detector_set) */
        while (*v) {
            size_t n = strcspn(v, "+");
            int found = 0;
#define INSTR_X_DET(name, value, text)                                                             \
    if (n == strlen(text) && !strncmp(v, text, n))                                                 \
        h->detector_set |= 1u << value, found = 1;
            INSTR_DETECTORS(INSTR_X_DET)
#undef INSTR_X_DET
            if (!found)
                return perr(ps, "unknown detector '%.*s'", (int)n, v);
            v += n;
            v += *v == '+';
        }
    }
    if ((v = kv(ln, 1, "sees"))) {
        unsigned bits;
        if (os_bits_parse(v, &bits) < 0)
            return perr(ps, "bad transition bits '%s'", v);
        h->detector_sees = bits;
    }
    if ((v = kv(ln, 1, "flags")) && strcmp(v, "none")) {
        while (*v) {
            size_t n = strcspn(v, ",");
            if (n == 8 && !strncmp(v, "complete", n))
                h->flags |= INSTR_DUMP_COMPLETE;
            else if (n == 10 && !strncmp(v, "fork_child", n))
                h->flags |= INSTR_DUMP_FORK_CHILD;
            else if (n == 13 && !strncmp(v, "tsc_invariant", n))
                h->flags |= INSTR_DUMP_TSC_INVARIANT;
            else if (n == 8 && !strncmp(v, "signaled", n))
                h->flags |= INSTR_DUMP_SIGNALED;
            else if (n == 14 && !strncmp(v, "no_transitions", n))
                h->flags |= INSTR_DUMP_NO_TRANSITIONS;
            else if (n == 7 && !strncmp(v, "sampled", n))
                h->flags |= INSTR_DUMP_SAMPLED;
            else if (n == 12 && !strncmp(v, "switched_off", n))
                h->flags |= INSTR_DUMP_SWITCHED_OFF;
            else if (n == 16 && !strncmp(v, "slow_path_joined", n))
                h->flags |= INSTR_DUMP_SLOW_PATH_JOINED;
            else
                return perr(ps, "unknown flag '%.*s'", (int)n, v);
            v += n;
            if (*v == ',')
                v++;
        }
    }
    return 0;
}

static int need_u64(struct parser *ps, const char *s, const char *what, uint64_t *v)
{
    if (instr_tok_u64(s, v) < 0)
        return perr(ps, "%s: not a number: '%s'", what, s ? s : "(missing)");
    return 0;
}

static int parse_event(struct parser *ps, struct instr_dump_writer *w, struct line *ln)
{
    uint64_t index, tick, arg = 0;
    int64_t value = 0;
    unsigned kind, ext, os = 0, bits = 0;
    int rc;
    if (ln->n < 3)
        return perr(ps, "expected INDEX TICK EVENT");
    if ((rc = need_u64(ps, ln->tok[0], "thread index", &index)) || (rc = need_u64(ps, ln->tok[1], "tick", &tick)))
        return rc;
    if (index > (1u << 20))
        return perr(ps, "thread index %llu too large", (unsigned long long)index);
    if (!event_lookup(ln->tok[2], &kind, &ext))
        return perr(ps, "unknown event '%s'", ln->tok[2]);
    int nargs = ln->n - 3;
    uint64_t offcpu = 0;
    int has_off = 0;
    if (nargs > 1 && !strncmp(ln->tok[ln->n - 1], "off=", 4) && !strncmp(ln->tok[ln->n - 2], "os=", 3)) {
        if ((rc = need_u64(ps, ln->tok[ln->n - 1] + 4, "off", &offcpu)))
            return rc;
        has_off = 1;
        nargs--;
    }
    if (nargs > 0 && !strncmp(ln->tok[ln->n - 1 - has_off], "os=", 3)) {
        os = 1;
        if (os_bits_parse(ln->tok[ln->n - 1 - has_off] + 3, &bits) < 0)
            return perr(ps, "bad transition bits '%s'", ln->tok[ln->n - 1 - has_off] + 3);
        nargs--;
    }
    if (has_off)
        bits |= INSTR_OS_OFFCPU_FOLLOWS;
    int want = 1;
    if (kind == INSTR_EV_EXIT || kind == INSTR_EV_RETURN || (kind == INSTR_EV_EXT && ext == INSTR_EXT_THREAD_END))
        want = 0;
    else if (kind == INSTR_EV_EXT && instr_ext_payload(ext) == INSTR_PAYLOAD_VARINT_ZIGZAG)
        want = 2; /* COUNTER, MPI, MPI_FIELD: arg and a signed value */
    if (nargs != want)
        return perr(ps, "%s takes %d argument%s", ln->tok[2], want, want == 1 ? "" : "s");
    if (kind == INSTR_EV_EXT && ext == INSTR_EXT_UNWIND) {
        arg = UINT64_MAX;
        for (uint64_t r = 1; r <= 3; r++)
            if (!strcmp(ln->tok[3], instr_text_unwind_names[r]))
                arg = r;
        if (arg == UINT64_MAX && (instr_tok_u64(ln->tok[3], &arg) < 0 || arg > 255))
            return perr(ps, "bad unwind reason '%s'", ln->tok[3]);
    } else if (want >= 1 && (rc = need_u64(ps, ln->tok[3], ln->tok[2], &arg))) {
        return rc;
    }
    if (want == 2) {
        char *end;
        errno = 0;
        long long x = strtoll(ln->tok[4], &end, 0);
        if (*end || errno || !*ln->tok[4])
            return perr(ps, "%s value: not a number: '%s'", ln->tok[2], ln->tok[4]);
        value = x;
    }
    rc = instr_writer_event(w, (uint32_t)index, tick, os, (uint8_t)bits, kind, ext, arg, value, offcpu);
    if (rc == INSTR_EARG)
        return perr(ps, "tick %llu is before the thread's previous tick %llu", (unsigned long long)tick,
                    (unsigned long long)instr_writer_last_tick(w, (uint32_t)index));
    if (rc < 0)
        return perr(ps, "%s", instr_tool_strerror(rc));
    return 0;
}

static int parse_record(struct parser *ps, struct instr_dump_writer *w, struct line *ln)
{
    char sbuf[200];
    const char *t = ln->tok[0];
    uint64_t id, a, b;
    int rc;
    if (!strcmp(t, "module")) {
        static const char *const keys[] = {"load", NULL};
        uint64_t load = 0;
        if (ln->n < 3)
            return perr(ps, "module: expected ID PATH");
        if ((rc = need_u64(ps, ln->tok[1], "module id", &id)) || (rc = check_keys(ps, ln, 3, keys)) ||
            (kv(ln, 3, "load") && (rc = need_u64(ps, kv(ln, 3, "load"), "load", &load))))
            return rc;
        rc = instr_writer_module(w, id, ln->tok[2], load);
    } else if (!strcmp(t, "function")) {
        static const char *const keys[] = {"module", "line", "file", "name", "demangled", NULL};
        if (ln->n < 2)
            return perr(ps, "function: expected ID");
        if ((rc = need_u64(ps, ln->tok[1], "function id", &id)) || (rc = check_keys(ps, ln, 2, keys)))
            return rc;
        a = b = 0;
        if ((kv(ln, 2, "module") && (rc = need_u64(ps, kv(ln, 2, "module"), "module", &a))) ||
            (kv(ln, 2, "line") && (rc = need_u64(ps, kv(ln, 2, "line"), "line", &b))))
            return rc;
        if (!kv(ln, 2, "name"))
            return perr(ps, "function: name= missing");
        rc = instr_writer_function(w, id, a, b, kv(ln, 2, "name"), kv(ln, 2, "file") ? kv(ln, 2, "file") : "",
                                   kv(ln, 2, "demangled"));
    } else if (!strcmp(t, "thread")) {
        static const char *const keys[] = {"tid", "name", NULL};
        a = 0;
        if (ln->n < 2)
            return perr(ps, "thread: expected INDEX");
        if ((rc = need_u64(ps, ln->tok[1], "thread index", &id)) || (rc = check_keys(ps, ln, 2, keys)) ||
            (kv(ln, 2, "tid") && (rc = need_u64(ps, kv(ln, 2, "tid"), "tid", &a))))
            return rc;
        if (id > (1u << 20))
            return perr(ps, "thread index too large");
        rc = instr_writer_thread(w, (uint32_t)id, a, kv(ln, 2, "name") ? kv(ln, 2, "name") : "");
    } else if (!strcmp(t, "exit-cpu")) {
        static const char *const keys[] = {"ns", "at", NULL};
        a = b = 0;
        if (ln->n < 2)
            return perr(ps, "exit-cpu: expected INDEX");
        if ((rc = need_u64(ps, ln->tok[1], "thread index", &id)) || (rc = check_keys(ps, ln, 2, keys)) ||
            !kv(ln, 2, "ns") || !kv(ln, 2, "at") || (rc = need_u64(ps, kv(ln, 2, "ns"), "ns", &a)) ||
            (rc = need_u64(ps, kv(ln, 2, "at"), "at", &b)))
            return rc ? rc : perr(ps, "exit-cpu: ns= and at= are needed");
        if (id > (1u << 20))
            return perr(ps, "thread index too large");
        rc = instr_writer_exit_cpu(w, (uint32_t)id, a, b);
    } else if (!strcmp(t, "clock-sync")) {
        static const char *const keys[] = {"local", "peer", "rtt", NULL};
        uint64_t v[3] = {0, 0, 0};
        if (ln->n < 2)
            return perr(ps, "clock-sync: expected PEER");
        if ((rc = need_u64(ps, ln->tok[1], "peer rank", &id)) || (rc = check_keys(ps, ln, 2, keys)))
            return rc;
        for (int k = 0; k < 3; k++)
            if (!kv(ln, 2, keys[k]) || (rc = need_u64(ps, kv(ln, 2, keys[k]), keys[k], &v[k])))
                return rc ? rc : perr(ps, "clock-sync: local=, peer= and rtt= are needed");
        if (id > INT32_MAX)
            return perr(ps, "clock-sync: peer rank too large");
        rc = instr_writer_clock_sync(w, (uint32_t)id, v[0], v[1], v[2]);
    } else if (!strcmp(t, "unit")) {
        static const char *const keys[] = {"threshold", "left-out", "instrumented", NULL};
        uint64_t th = 0, left = 0, ins = 0;
        if ((rc = check_keys(ps, ln, 1, keys)) ||
            (kv(ln, 1, "threshold") && (rc = need_u64(ps, kv(ln, 1, "threshold"), "threshold", &th))) ||
            (kv(ln, 1, "left-out") && (rc = need_u64(ps, kv(ln, 1, "left-out"), "left-out", &left))) ||
            (kv(ln, 1, "instrumented") && (rc = need_u64(ps, kv(ln, 1, "instrumented"), "instrumented", &ins))))
            return rc;
        rc = instr_writer_unit(w, 0, th, left, ins, "");
    } else if (!strcmp(t, "label")) {
        if (ln->n != 3)
            return perr(ps, "label: expected ID TEXT");
        if ((rc = need_u64(ps, ln->tok[1], "label id", &id)))
            return rc;
        rc = instr_writer_label(w, id, ln->tok[2]);
    } else if (!strcmp(t, "process")) {
        /* process cwd=DIR [arg=A]...: arguments in order, keys repeat. */
        const char *argv[256];
        size_t argc = 0;
        static const char *const keys[] = {"cwd", "arg", NULL};
        if ((rc = check_keys(ps, ln, 1, keys)))
            return rc;
        for (int i = 1; i < ln->n; i++)
            if (!strncmp(ln->tok[i], "arg=", 4)) {
                if (argc == sizeof argv / sizeof argv[0])
                    return perr(ps, "process: too many arguments");
                argv[argc++] = ln->tok[i] + 4;
            }
        rc = instr_writer_process(w, kv(ln, 1, "cwd") ? kv(ln, 1, "cwd") : "", argc, argv);
    } else if (!strcmp(t, "callsite")) {
        static const char *const keys[] = {"caller", "line", "flags", "callee", "module", "offset", "site", NULL};
        struct instr_callsite cs = {0};
        const char *fl = kv(ln, 2, "flags");
        if (ln->n < 2)
            return perr(ps, "callsite: expected ID");
        if ((rc = need_u64(ps, ln->tok[1], "callsite id", &cs.id)) || (rc = check_keys(ps, ln, 2, keys)) ||
            (kv(ln, 2, "caller") && (rc = need_u64(ps, kv(ln, 2, "caller"), "caller", &cs.caller))) ||
            (kv(ln, 2, "line") && (rc = need_u64(ps, kv(ln, 2, "line"), "line", &cs.line))) ||
            (kv(ln, 2, "module") && (rc = need_u64(ps, kv(ln, 2, "module"), "module", &cs.module))) ||
            (kv(ln, 2, "offset") && (rc = need_u64(ps, kv(ln, 2, "offset"), "offset", &cs.callee_off))) ||
            (kv(ln, 2, "site") && (rc = need_u64(ps, kv(ln, 2, "site"), "site", &cs.site_off))))
            return rc;
        if (fl && !strcmp(fl, "indirect"))
            cs.flags = INSTR_SITE_INDIRECT;
        else if (fl && strcmp(fl, "direct"))
            return perr(ps, "callsite: flags= is direct or indirect");
        cs.callee = (char *)(kv(ln, 2, "callee") ? kv(ln, 2, "callee") : "");
        rc = instr_writer_callsite(w, &cs);
    } else if (!strcmp(t, "hook-cost")) {
        static const char *const keys[] = {"before", "after", "spread", "rounds", NULL};
        uint64_t v[4] = {0, 0, 0, 1};
        unsigned kind, ext;
        if (ln->n < 2 || !event_lookup(ln->tok[1], &kind, &ext) || kind == INSTR_EV_EXT)
            return perr(ps, "hook-cost: expected enter, exit, call or return");
        if ((rc = check_keys(ps, ln, 2, keys)))
            return rc;
        for (int k = 0; k < 4; k++)
            if (kv(ln, 2, keys[k]) && (rc = need_u64(ps, kv(ln, 2, keys[k]), keys[k], &v[k])))
                return rc;
        rc = instr_writer_hook_cost(w, kind, v[0], v[1], v[2], v[3]);
    } else if ((rc = instr_sample_text_parse(w, ln->n, ln->tok, sbuf, sizeof sbuf)) != 0) {
        return rc < 0 ? perr(ps, "%s", sbuf) : 0; /* sampling lines (sample-text.c) */
    } else if (t[0] >= '0' && t[0] <= '9') {
        return parse_event(ps, w, ln);
    } else {
        return perr(ps, "unknown record '%s'", t);
    }
    if (rc < 0)
        return perr(ps, "%s", rc == INSTR_EARG ? "value too long" : instr_tool_strerror(rc));
    return 0;
}

int instr_text_to_dump(FILE *in, const char *name, const char *out_path, char *err, size_t errlen)
{
    struct parser ps = {name, 0, err, errlen};
    struct instr_dump_writer *w = NULL;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0, seen_magic = 0;
    struct line ln;
    while ((n = getline(&buf, &cap, in)) >= 0) {
        ps.lineno++;
        const char *why = NULL;
        if (tokenize(buf, &ln, &why) < 0) {
            rc = perr(&ps, "%s", why);
            break;
        }
        if (ln.n == 0)
            continue;
        if (!seen_magic) {
            if (ln.n != 2 || strcmp(ln.tok[0], "instr-dump") || strcmp(ln.tok[1], "1")) {
                rc = perr(&ps, "expected 'instr-dump 1' first");
                break;
            }
            seen_magic = 1;
            continue;
        }
        if (!w) {
            struct instr_dump_header h;
            if (strcmp(ln.tok[0], "header")) {
                rc = perr(&ps, "expected the header line");
                break;
            }
            if ((rc = parse_header(&ps, &ln, &h)) < 0)
                break;
            char werr[256];
            if ((rc = instr_writer_open(&w, out_path, &h, werr, sizeof werr)) < 0) {
                rc = perr(&ps, "%s", werr);
                break;
            }
            continue;
        }
        if ((rc = parse_record(&ps, w, &ln)) < 0)
            break;
    }
    free(buf);
    if (!rc && ferror(in))
        rc = perr(&ps, "read error");
    if (!rc && !w)
        rc = perr(&ps, "no header line");
    if (w) {
        char werr[256];
        int wrc = instr_writer_close(w, werr, sizeof werr);
        if (!rc && wrc < 0)
            rc = perr(&ps, "%s", werr);
    }
    return rc;
}

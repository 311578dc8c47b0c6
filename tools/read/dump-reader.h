/* dump-reader.h - the one validating reader of instr dumps.
 *
 * The file is mapped read-only and treated as hostile input: every size and
 * offset is checked before use and nothing is allocated from an unchecked
 * field (counts are bounded by what the file can hold).  A dump that is cut
 * short (killed process, copied while running) still yields everything that
 * can be read, plus warnings; a file that is not a dump, or of another
 * version, is refused with a one-line reason.
 *
 * Library code: never prints or exits.  Functions return 0 or a negative
 * INSTR_E* code and fill the caller's error buffer.
 */
#ifndef INSTR_DUMP_READER_H
#define INSTR_DUMP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "dump-format.h"
#include "event-codec.h"

/* Error codes of the tools library (negative return values). */
#define INSTR_TOOL_ERRORS(X)                                                                       \
    X(IO, 1, "cannot read file")                                                                   \
    X(NOTDUMP, 2, "not an instr dump")                                                             \
    X(VERSION, 3, "unsupported dump version")                                                      \
    X(CORRUPT, 4, "corrupt dump")                                                                  \
    X(NOMEM, 5, "out of memory")                                                                   \
    X(SYNTAX, 6, "syntax error")                                                                   \
    X(ARG, 7, "bad argument")

enum instr_tool_error {
#define INSTR_X_ENUM(name, value, text) INSTR_E##name = -(value),
    INSTR_TOOL_ERRORS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

const char *instr_tool_strerror(int err);

/* In a switch on a value of one of the X-macro lists (dump-format.h,
 * INSTR_TOOL_ERRORS), the case returning its text: the one spelling of
 * "value -> name" for the readers. */
#define INSTR_X_TEXT_CASE(name, value, text, ...)                                                  \
    case value:                                                                                    \
        return text;

struct instr_module {
    uint64_t id;        /* module id from its record */
    char *path;         /* executable or shared library path */
    uint64_t load_addr; /* load address, bytes */
};

struct instr_function {
    uint64_t id;     /* function id used by ENTER/REENTER events */
    uint64_t module; /* module id */
    uint64_t line;   /* source line */
    char *name;      /* mangled name */
    char *file;      /* source file */
    char *demangled; /* as recorded by the plugin ("" if none: C, or an older dump) */
};

/* A CALLSITE record: what a CALL event's id names (dump-format.h). */
struct instr_callsite {
    uint64_t id;         /* call-site id used by CALL/REENTER_SITE events */
    uint64_t caller;     /* calling function's id */
    uint64_t line;       /* source line of the call */
    uint64_t flags;      /* INSTR_SITE_* (hook-abi.h) */
    char *callee;        /* mangled name of a direct callee, resolved symbol of an indirect target, or "" */
    uint64_t module;     /* callee's module id, 0 = unknown */
    uint64_t callee_off; /* callee address - its module's load address, bytes (0 = unknown) */
    uint64_t site_off;   /* return address of the call - the caller module's load address, bytes */
};

/* Count mode (INSTR_DUMP_COUNTS): FN_CALLS and SITE_CALLS records. */
struct instr_fn_calls {
    uint64_t fn;    /* function id */
    uint64_t calls; /* times it was entered, all threads */
};

struct instr_site_calls {
    uint64_t caller; /* calling function's id */
    uint64_t line;   /* source line of the call */
    uint64_t flags;  /* INSTR_COUNT_* (hook-abi.h) */
    char *callee;    /* mangled name of a direct callee; "" if indirect */
    uint64_t calls;  /* calls made there, all threads */
};

struct instr_label {
    uint64_t id; /* label id used by MARK/COUNTER events */
    char *text;
};

/* One EVENTS chunk, validated: payload bytes are inside the mapping. */
struct instr_chunk_ref {
    const uint8_t *payload; /* first payload byte */
    size_t len;             /* readable payload bytes (used_bytes, or up to the end of file) */
    uint64_t base_tsc;      /* ticks the first delta counts from */
    uint32_t seq;           /* chunk number within its thread */
    uint32_t size;          /* the chunk's bytes in the file, header included (0: the dump's chunk_size) */
    uint8_t open;           /* used_bytes was 0: the payload ends at the first zero byte */
};

struct instr_thread_info {
    uint32_t index;                /* dense per-process thread number */
    uint64_t tid;                  /* kernel thread id (thread record, else chunk header) */
    char *name;                    /* from the latest thread record, or NULL */
    struct instr_chunk_ref *chunks; /* ordered by seq */
    size_t nchunks;
    struct instr_chunk_ref *schunks; /* SAMPLES chunks, ordered by seq (sample-reader.h) */
    size_t nschunks;
    uint64_t cpu_ns;               /* CPU time while sampled (CPU_TIME records, summed), ns */
    int has_exit_cpu;              /* an EXIT_CPU record: the thread was alive at the end */
    uint64_t exit_cpu_ns;          /*   its CPU clock then, ns */
    uint64_t exit_cpu_tick;        /*   read at these ticks */
};

/* A MAP record: where a module's file was mapped executable (sampling dumps). */
struct instr_map {
    uint64_t module; /* module id */
    uint64_t start;  /* first address */
    uint64_t end;    /* first address after it */
    uint64_t pgoff;  /* file offset mapped at start, bytes */
    uint64_t tick;   /* when it was mapped (0: before the first sample) */
};

struct instr_dump {
    const char *path;
    const uint8_t *map; /* whole file, read-only */
    struct instr_dump_done *done; /* chunks done, not yet released (instr_dump_chunk_done); NULL: one by one */
    size_t size;        /* file bytes */
    struct instr_dump_header hdr; /* copy; strings NUL-terminated by the reader */
    double tick_hz;     /* ticks per second, 0 if no calibration pair is usable */
    struct instr_module *modules;
    size_t nmodules;
    struct instr_function *functions; /* sorted by id */
    size_t nfunctions;
    struct instr_label *labels; /* sorted by id */
    size_t nlabels;
    struct instr_thread_info *threads; /* sorted by index */
    size_t nthreads;
    char **warnings; /* one line each */
    size_t nwarnings;
    size_t unfinished_warning; /* 1 + the index of "did not finish" among warnings; 0: none */
    uint64_t truncated; /* nonzero if the file ends before its chunks do */
    struct instr_callsite *sites; /* sorted by id */
    size_t nsites;
    struct instr_map *maps; /* in file order (sampling dumps) */
    size_t nmaps;
    uint64_t sample_rate_hz;   /* SAMPLING record: rate asked, Hz of CPU time (0 = no record) */
    uint64_t sample_period_ns; /*   period, ns */
    uint64_t sample_stack_bytes; /* stack bytes copied per sample */
    char *sample_unwinder;     /*   unwinder description, or NULL */
    /* HOOK_COST records, by the event kind the hook writes (INSTR_EV_*):
     * mticks (1/1000 tick); rounds 0 = no record (no known cost). */
    struct instr_hook_cost {
        uint64_t before, after, spread, rounds;
    } hook_cost[8];
    /* CLOCK_SYNC records (libinstr-mpi's ping-pongs): this process's
     * ticks against its peer's (rank 0 of its job): the first record
     * (MPI_Init's) and the last (MPI_Finalize's). */
    struct instr_clock_sync {
        uint32_t peer;                     /* the peer's rank */
        uint64_t local, peer_ticks, rtt;   /* local ticks; the peer's then; round trip, local ticks */
    } clock_sync[2];
    unsigned nclock_sync;                  /* 0, 1 or 2 */
    int raw; /* set by the caller after open: report the raw values, without subtracting
                the hook costs (instr-report --raw; compensate.h) */
    /* UNIT records (plugin threshold=N), summed: */
    uint64_t threshold_units;    /* records read (0: no unit used threshold=) */
    uint64_t threshold_left_out; /* functions left out */
    uint64_t threshold_instrumented; /* functions those units instrumented */
    uint64_t threshold_min, threshold_max; /* smallest and largest threshold= seen */
    /* Reading progress (optional, set by the caller after open): called by
     * instr_dump_chunk_done with the bytes of each chunk finished. */
    void (*progress)(void *ctx, uint64_t bytes);
    void *progress_ctx;
    struct instr_fn_calls *fn_calls;     /* count mode, in file order */
    size_t nfn_calls;
    struct instr_site_calls *site_calls; /* count mode, in file order */
    size_t nsite_calls;
    char *cwd;    /* PROCESS record: working directory at start, or NULL (older dumps) */
    char **argv;  /*   the command line, argc strings (NULL-terminated), or NULL */
    size_t argc;
};

/* Opens and validates path.  On error returns a negative code with a
 * one-line reason in err; d is then empty (instr_dump_close is harmless). */
int instr_dump_open(struct instr_dump *d, const char *path, char *err, size_t errlen);

/* Opens an input file for reading: a descriptor, or -1 with errno set;
 * EINVAL when path is not a regular file (a FIFO, a device, a directory:
 * the open itself never waits for a writer).  "-" is standard input, read
 * once (into memory unless it is a regular file) and opened again at its
 * start on every call. */
int instr_input_open(const char *path);
void instr_dump_close(struct instr_dump *d);
/* Frees d's PROCESS record data (cwd, argv). */
void instr_dump_free_process(struct instr_dump *d);

/* A reader is done with chunk c for now: its pages leave memory (they are
 * read again from the file if needed), so memory stays bounded whatever the
 * dump size, and the progress callback hears of it.  They leave in batches
 * (INSTR_DUMP_RELEASE_BYTES of chunks at a time): each release is a TLB
 * shootdown, and one per 32-KiB chunk made the kernel most of a report's
 * time on a busy 2-CPU machine (docs/performance.md, "Reading a dump"). */
#define INSTR_DUMP_RELEASE_BYTES (32u << 20)
struct instr_dump_done {
    uintptr_t lo, hi; /* the span of the chunks done since the last release */
    size_t bytes;     /* their bytes */
};
void instr_dump_chunk_done(const struct instr_dump *d, const struct instr_chunk_ref *c);

/* Adds a warning line (printf-style) to d.  Returns 0 or INSTR_ENOMEM. */
int instr_dump_warn(struct instr_dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What the runtime said (the header's notes, runtime/log.c), a line at a
 * time: the next non-empty line from *pos on (0 to start), its length in
 * *len (no newline), *pos moved past it; NULL when none is left. */
const char *instr_dump_note(const struct instr_dump *d, size_t *pos, size_t *len);

const struct instr_function *instr_dump_function(const struct instr_dump *d, uint64_t id);
const struct instr_module *instr_dump_module(const struct instr_dump *d, uint64_t id);
const struct instr_label *instr_dump_label(const struct instr_dump *d, uint64_t id);
const struct instr_callsite *instr_dump_callsite(const struct instr_dump *d, uint64_t id);
const char *instr_detector_name(uint32_t detector);
/* The header's arch ("x86-64", "aarch64") and tick_source ("TSC",
 * "cntvct_el0", "CLOCK_MONOTONIC"); 0, in dumps older than the fields, is
 * x86-64's TSC. */
const char *instr_arch_name(uint32_t arch);
const char *instr_tick_source_name(uint32_t tick_source);
/* Whether d's ticks are an x86-64 TSC's (what the report assumes unless
 * it says otherwise). */
int instr_dump_ticks_tsc(const struct instr_dump *d);
/* "SIGSEGV" for 11 (Linux x86-64 numbering), "unknown signal" otherwise. */
const char *instr_signal_name(uint32_t sig);

/* ---- event decoding (dump-events.c) -------------------------------------- */

/* One decoded event.  tick is absolute (the running tick after this event's
 * delta); for RESYNC, arg is the new running tick that the next delta
 * counts from. */
struct instr_event {
    uint64_t tick;  /* absolute ticks of this event */
    uint64_t delta; /* encoded delta, ticks */
    uint64_t arg;   /* function id, call-site id, label id, unwind reason, resync ticks, lost events */
    int64_t value;  /* COUNTER value */
    uint8_t kind;   /* INSTR_EV_* */
    uint8_t ext;    /* INSTR_EXT_* when kind == EXT, else 0 */
    uint8_t os;     /* 1 if the OS acted in the interval this event ends */
    uint8_t bits;   /* INSTR_OS_* transition bits (when os) */
    uint64_t offcpu; /* off-CPU ticks of the interval, when bits has INSTR_OS_OFFCPU_FOLLOWS */
};

/* Decodes one event at *p (before end).  Returns 1 and advances *p, 0 at the
 * end of the payload (end reached, or a zero byte where an event would
 * start), or -1 if the bytes are not a valid event (cut, unknown kind).
 * tick is not filled: the caller keeps the running tick.  EXIT and RETURN
 * leave arg and value as they were.  instr_decode_event_slow is the whole
 * decoder; instr_decode_event adds a fast path in front of it. */
int instr_decode_event_slow(const uint8_t **pp, const uint8_t *end, struct instr_event *ev);

/* A varint of at most 3 bytes at p (the caller knows 3 bytes are there):
 * its length, its value in *v; 0 if it is longer. */
static inline __attribute__((always_inline)) unsigned instr_varint3(const uint8_t *p, uint64_t *v)
{
    if (p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    if (p[1] < 0x80) {
        *v = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
        return 2;
    }
    if (p[2] < 0x80) {
        *v = (p[0] & 0x7fu) | (uint64_t)(p[1] & 0x7fu) << 7 | (uint64_t)p[2] << 14;
        return 3;
    }
    return 0;
}

/* The events of almost every interval (ENTER, EXIT, CALL, RETURN without a
 * transition byte, ids and deltas of at most 3 bytes) when the payload has
 * room for the longest event: no bounds checks, no loop over varint bytes.
 * Anything else is the slow path's, which decodes it again from the start.
 * Always inlined: a caller that takes its event's address nowhere else can
 * keep it in registers. */
static inline __attribute__((always_inline)) int instr_decode_event(const uint8_t **pp, const uint8_t *end,
                                                                    struct instr_event *ev)
{
    const uint8_t *p = *pp;
    uint64_t v, arg;
    unsigned n, na = 0;
    if (__builtin_expect(end - p >= (ptrdiff_t)INSTR_EVENT_MAX_BYTES, 1) && *p && (n = instr_varint3(p, &v)) &&
        !(v & 8)) {
        unsigned kind = (unsigned)(v & 7);
        if (kind == INSTR_EV_ENTER || kind == INSTR_EV_CALL) {
            if (!(na = instr_varint3(p + n, &arg)))
                goto slow;
            ev->arg = arg;
        } else if (kind != INSTR_EV_EXIT && kind != INSTR_EV_RETURN) {
            goto slow;
        }
        ev->delta = v >> 4;
        ev->os = 0;
        ev->kind = (uint8_t)kind;
        ev->ext = 0;
        ev->bits = 0;
        ev->offcpu = 0;
        *pp = p + n + na;
        return 1;
    }
slow:;
    /* Through copies: the caller's event and pointer never have their
     * address taken, so the compiler can keep them in registers. */
    struct instr_event e = *ev;
    const uint8_t *q = *pp;
    int r = instr_decode_event_slow(&q, end, &e);
    *ev = e;
    *pp = q;
    return r;
}

/* Iterates the events of one thread across its chunks, keeping the running
 * tick (reset to base_tsc at each chunk, set by RESYNC). */
struct instr_event_iter {
    const struct instr_thread_info *th;
    size_t chunk;         /* index of the current chunk */
    const uint8_t *p, *end;
    uint64_t tick;        /* running tick */
    int bad;              /* set when decoding stopped on invalid bytes */
    size_t bad_chunk;     /* chunk index where it stopped */
};

void instr_event_iter_init(struct instr_event_iter *it, const struct instr_thread_info *th);
/* 1 = an event, 0 = the end.  Invalid bytes end the chunk (it->bad is set
 * and the iteration goes on with the next chunk). */
int instr_event_iter_next(struct instr_event_iter *it, struct instr_event *ev);

/* The chunk after *chunk ((size_t)-1: before the first) in list[0..n):
 * its payload in [*p, *end) and its base tick in *tick; 0 at the end
 * (*chunk = n, *p = NULL).  The step both iterators (events, samples)
 * take between chunks. */
int instr_chunk_advance(const struct instr_chunk_ref *list, size_t n, size_t *chunk, const uint8_t **p,
                        const uint8_t **end, uint64_t *tick);

#endif

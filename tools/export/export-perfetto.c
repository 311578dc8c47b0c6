/* export-perfetto.c - Perfetto's protobuf trace (a perfetto.protos.Trace:
 * a stream of TracePackets), for the Perfetto UI and trace processor, from
 * the call timeline (instr_profile_build_timeline).  Made for large runs:
 * written in the session's one walk of each dump, one pass, memory bounded
 * by the number of functions and threads (not of calls), and compact as
 * Perfetto's own producers are: names and source locations interned, each
 * thread on a packet sequence of its own whose defaults give its events
 * their track and clock, timestamps as deltas on that clock (a call is two
 * packets of about 18 and 10 bytes), and the packets zlib-compressed in
 * batches: 0.37 bytes a call on a 1.32 GB Lua dump (0.03 times the dump;
 * 44 bytes a call before the sequences, incremental clock and batches),
 * 1.1 on examples/primes (0.08 times).
 *
 * What is written (field numbers are Perfetto's, trace/trace_packet.proto,
 * trace/trace_packet_defaults.proto, trace/clock_snapshot.proto and
 * track_event/ *.proto):
 *
 *   per process (dump): a TrackDescriptor {uuid, process {pid, cmdline...,
 *     process_name}}, on a packet sequence of its own;
 *   per thread, as its walk begins: a new packet sequence
 *     (trusted_packet_sequence_id, numbered from 1 in the order written)
 *     whose first packet clears its state and holds
 *     TracePacketDefaults {timestamp_clock_id 64, track_event_defaults
 *     {track_uuid = the thread's}}, the interned categories, and a
 *     ClockSnapshot {clock 64 = 0, is_incremental; BOOTTIME = 0}; then the
 *     thread's TrackDescriptor {uuid, parent_uuid = the process's, thread
 *     {pid, tid, thread_name}};
 *   per call: a TrackEvent TYPE_SLICE_BEGIN at its start {category_iids
 *     ("function", or "call" for a call-site frame), name_iid,
 *     source_location_iid (file and line when known)} and a TYPE_SLICE_END
 *     at its end (with a debug annotation incomplete = true for a frame
 *     still open when its thread ended); the names and source locations in
 *     the interned_data of the packet that first uses them on the sequence;
 *   instr_event marks: TYPE_INSTANT on the thread's track, name interned;
 *   instr_counter values: TYPE_COUNTER {track_uuid, counter_value} on a
 *     counter track per (thread, label) named by the label, child of the
 *     thread's track, described when first set;
 *   a switched run's gaps, where recording was off: a track "recording off"
 *     under the process and a slice {categories "instr", name} per gap,
 *     on a sequence of their own, after the dump's walk (hook_gaps).
 *
 * Timestamps: ns since the session's start (its earliest process start),
 * the chrome export's times in ns, on the trace's default clock (BOOTTIME).
 * An event's packet gives the ns since the previous event of its sequence
 * (clock 64, incremental: trace processor adds them up).  The
 * --time-range / --min-duration / --split-size of the chrome export do not
 * apply: a slice is written as it begins, before its length is known, and
 * the Perfetto UI opens traces far past what Chrome JSON can hold.
 *
 * Compressed (the default; --no-compress writes the packets as they are):
 * the packets are gathered in a batch of about 1 MB, written as one packet
 * {compressed_packets = zlib's deflate of the batch, a serialized Trace},
 * as Perfetto's service writes traces it compresses; trace processor and
 * the UI read the batch's packets in its place.  Memory: one batch.
 *
 * Only the protobuf wire format this needs is written here: varints and
 * length-delimited fields (a message is built in a buffer, its length put
 * before it).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "arrays.h"
#include "export-options.h"
#include "formats.h"
#include "mpi-calls.h"
#include "protobuf.h"
#include "report.h"
#include "writers.h"

/* ---- its options ---- */

struct perfetto_opts {
    int no_compress; /* --no-compress: the packets as they are, no compressed_packets */
};

static const struct perfetto_opts defaults = {0};

static int parse_no_compress(void *opts, const char *v)
{
    (void)v;
    ((struct perfetto_opts *)opts)->no_compress = 1;
    return 0;
}

static const struct instr_option no_compress_opt = {
    "no-compress", NULL,
    "write the packets as they are, not in zlib-compressed\nbatches (for readers without compressed_packets)",
    parse_no_compress, 0};

const struct instr_export_options instr_perfetto_options = {
    (const struct instr_option *const[]){&no_compress_opt, NULL}, sizeof(struct perfetto_opts), &defaults, NULL};

/* ---- the export ---- */

/* Packets are compressed in batches of about this many bytes: deflate's
 * 32-KiB window sees most of what repeats long before a batch ends, and
 * the reader holds one batch at a time. */
#define BATCH_BYTES (1u << 20)

/* Field numbers. */
enum {
    TRACE_PACKET = 1,
    PKT_CLOCK_SNAPSHOT = 6, PKT_TIMESTAMP = 8, PKT_SEQUENCE_ID = 10, PKT_TRACK_EVENT = 11, PKT_INTERNED = 12,
    PKT_FLAGS = 13, PKT_COMPRESSED = 50, PKT_TIMESTAMP_CLOCK_ID = 58, PKT_DEFAULTS = 59, PKT_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
    DEF_TIMESTAMP_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11, /* TracePacketDefaults */
    CS_CLOCKS = 1, CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_INCREMENTAL = 3,       /* ClockSnapshot */
    CLOCK_BOOTTIME = 6, CLOCK_THREAD = 64, /* the trace's default clock; a sequence's own (64..127) */
    TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
    PD_PID = 1, PD_CMDLINE = 2, PD_NAME = 6,
    THD_PID = 1, THD_TID = 2, THD_NAME = 5,
    TE_CATEGORY_IIDS = 3, TE_DEBUG = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11, TE_CATEGORIES = 22,
    TE_NAME = 23, TE_COUNTER_VALUE = 30, TE_SOURCE_LOCATION_IID = 34, TE_FLOW_IDS = 47,
    TE_TERMINATING_FLOW_IDS = 48,
    TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
    ID_CATEGORIES = 1, ID_NAMES = 2, ID_SOURCE_LOCATIONS = 4, /* InternedData */
    IID = 1, IID_NAME = 2,                                   /* EventName, EventCategory */
    SL_FILE = 2, SL_FUNCTION = 3, SL_LINE = 4,               /* SourceLocation */
    DA_BOOL = 2, DA_NAME = 10,                               /* DebugAnnotation */
};
enum { CAT_FUNCTION = 1, CAT_CALL = 2 }; /* category iids */

/* A counter's track in one thread: a program's instr_counter values are
 * the thread's (a queue length per worker), one track each, under the
 * thread's, as Perfetto's own per-thread counters are. */
struct counter_track {
    uint64_t label;
    uint32_t thread;
    uint64_t uuid;
};

struct pexp {
    FILE *out;
    struct instr_pb pkt;
    const struct instr_dump *dumps;
    struct instr_axis axis;  /* the processes on one clock (axis.h): from the session's start */
    size_t dump;
    const struct instr_profile *p;
    uint32_t thread;         /* the thread walked, UINT32_MAX before the first */
    size_t depth;            /* its open slices */
    uint8_t *interned;       /* per function of the current profile: 1 name, 2 source location */
    size_t ninterned;
    uint64_t *labels;        /* labels of the current dump met so far: mark names and counter tracks */
    uint8_t *label_flags;    /* 1: name interned */
    size_t nlabels, caplabels;
    uint32_t threads_numbered;  /* threads of the current profile with a track uuid: 0..this */
    uint32_t threads_described; /* those with a descriptor written: 0..this */
    uint64_t next_uuid;      /* the next track's uuid */
    uint64_t process_uuid;   /* the current dump's process track */
    uint64_t *thread_uuids;  /* per thread described */
    uint64_t *process_uuids; /* per dump walked: its process track */
    size_t capthreads;
    struct counter_track *counters; /* of the current dump, as met */
    size_t ncounters, capcounters;
    uint32_t seq;            /* the current packet sequence: the dump's process, then each thread's */
    uint32_t next_seq;
    int first_packet;        /* the sequence's first packet: clears its state */
    int compress;            /* packets go into batch, written zlib-compressed when it is full */
    struct instr_pb batch;   /* the packets of the batch, framed as in a Trace */
    uint8_t *zbuf;           /* the batch compressed */
    size_t zcap;
    uint64_t last_ns;        /* the thread's sequence clock: the last timestamp written on it */
    int rc;
};

/* Track uuids are numbered in the order the tracks are described (small
 * numbers: one or two bytes in each event): the process, its threads and
 * counters as they are met. */
static uint64_t process_uuid(const struct pexp *c)
{
    return c->process_uuid;
}

static uint64_t thread_uuid(const struct pexp *c, uint32_t thread)
{
    return c->thread_uuids[thread];
}


/* A packet of the current sequence: begin, fill, end.  Only its first
 * packet has sequence flags: the state it clears is never lost after (the
 * file has every packet), so the others need not say they depend on it. */
static void packet_begin(struct pexp *c)
{
    c->pkt.len = 0;
    c->pkt.depth = 0;
    instr_pb_u64(&c->pkt, PKT_SEQUENCE_ID, c->seq);
    if (c->first_packet) {
        instr_pb_u64(&c->pkt, PKT_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
        c->first_packet = 0;
    }
}

/* The varint v into b: its length. */
static size_t varint(uint8_t *b, uint64_t v)
{
    size_t n = 0;
    do {
        b[n++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        v >>= 7;
    } while (v);
    return n;
}

/* The batch, if any, as one packet {compressed_packets = zlib of the
 * batch's packets, a serialized Trace}: trace processor and the UI read
 * its packets in its place. */
static void flush_batch(struct pexp *c)
{
    if (!c->batch.len || c->rc)
        return;
    if (c->batch.oom) {
        c->rc = INSTR_ENOMEM;
        return;
    }
    uLong bound = compressBound((uLong)c->batch.len);
    if (bound > c->zcap) {
        uint8_t *z = realloc(c->zbuf, bound);
        if (!z) {
            c->rc = INSTR_ENOMEM;
            return;
        }
        c->zbuf = z;
        c->zcap = bound;
    }
    uLongf zlen = (uLongf)c->zcap;
    if (compress2(c->zbuf, &zlen, c->batch.b, (uLong)c->batch.len, Z_DEFAULT_COMPRESSION) != Z_OK) {
        c->rc = INSTR_ENOMEM;
        return;
    }
    uint8_t head[2 * 10 + 3], field[12];
    size_t nf = varint(field, PKT_COMPRESSED << 3 | 2);
    nf += varint(field + nf, zlen);
    size_t n = varint(head, TRACE_PACKET << 3 | 2);
    n += varint(head + n, nf + zlen);
    if (fwrite(head, 1, n, c->out) != n || fwrite(field, 1, nf, c->out) != nf ||
        fwrite(c->zbuf, 1, zlen, c->out) != zlen)
        c->rc = INSTR_EIO;
    c->batch.len = 0;
}

static void packet_end(struct pexp *c)
{
    if (c->pkt.oom) {
        c->rc = INSTR_ENOMEM;
        return;
    }
    uint8_t head[12];
    size_t n = varint(head, TRACE_PACKET << 3 | 2);
    n += varint(head + n, c->pkt.len);
    if (c->compress) {
        instr_pb_raw(&c->batch, head, n);
        instr_pb_raw(&c->batch, c->pkt.b, c->pkt.len);
        if (c->batch.len >= BATCH_BYTES)
            flush_batch(c);
    } else if (fwrite(head, 1, n, c->out) != n || fwrite(c->pkt.b, 1, c->pkt.len, c->out) != c->pkt.len) {
        c->rc = INSTR_EIO;
    }
}

/* ns since the session's start of a tick of the current dump. */
static uint64_t ns_of(const struct pexp *c, uint64_t tick)
{
    /* 0 with no memory for the axis: c->rc says so */
    double t = c->axis.d ? instr_axis_tick_ns(&c->axis, c->dumps, c->dump, tick) : 0;
    return t > 0 ? (uint64_t)llround(t) : 0;
}

/* An event's timestamp, ns: on the thread's incremental clock, the time
 * since the sequence's previous event; an absolute time on the default
 * clock should it ever go back (the timeline never does in a thread). */
static void packet_time(struct pexp *c, uint64_t ns)
{
    if (ns >= c->last_ns) {
        instr_pb_u64(&c->pkt, PKT_TIMESTAMP, ns - c->last_ns);
        c->last_ns = ns;
    } else {
        instr_pb_u64(&c->pkt, PKT_TIMESTAMP, ns);
        instr_pb_u64(&c->pkt, PKT_TIMESTAMP_CLOCK_ID, CLOCK_BOOTTIME);
    }
}

static void describe_process(struct pexp *c)
{
    const struct instr_dump *d = &c->dumps[c->dump];
    packet_begin(c);
    instr_pb_begin(&c->pkt, PKT_TRACK_DESCRIPTOR);
    instr_pb_u64(&c->pkt, TD_UUID, process_uuid(c));
    instr_pb_begin(&c->pkt, TD_PROCESS);
    instr_pb_u64(&c->pkt, PD_PID, d->hdr.pid);
    for (size_t k = 0; d->argv && k < d->argc; k++)
        instr_pb_str(&c->pkt, PD_CMDLINE, d->argv[k]);
    char label[128];
    instr_pb_str(&c->pkt, PD_NAME, instr_process_label(d, label, sizeof label)); /* "rank 3 (node1)" */
    instr_pb_end(&c->pkt);
    instr_pb_end(&c->pkt);
    packet_end(c);
}

/* A thread's sequence begins (the walk takes one thread at a time, whole):
 * its first packet clears the state, makes the thread's track the default
 * of its events and the sequence's own clock 64 theirs, incremental (each
 * timestamp the ns since the previous one: one to three bytes), starting
 * at 0 = 0 on the default clock (BOOTTIME: ns since the session's start),
 * and interns the categories. */
static void begin_thread_sequence(struct pexp *c, uint32_t thread)
{
    c->seq = c->next_seq++;
    c->first_packet = 1;
    c->last_ns = 0;
    if (c->interned)
        memset(c->interned, 0, c->ninterned);
    if (c->label_flags)
        memset(c->label_flags, 0, c->nlabels);
    packet_begin(c);
    instr_pb_begin(&c->pkt, PKT_DEFAULTS);
    instr_pb_u64(&c->pkt, DEF_TIMESTAMP_CLOCK_ID, CLOCK_THREAD);
    instr_pb_begin(&c->pkt, DEF_TRACK_EVENT);
    instr_pb_u64(&c->pkt, TED_TRACK_UUID, thread_uuid(c, thread));
    instr_pb_end(&c->pkt);
    instr_pb_end(&c->pkt);
    instr_pb_begin(&c->pkt, PKT_INTERNED);
    static const char *const cats[] = {[CAT_FUNCTION] = "function", [CAT_CALL] = "call"};
    for (unsigned k = CAT_FUNCTION; k <= CAT_CALL; k++) {
        instr_pb_begin(&c->pkt, ID_CATEGORIES);
        instr_pb_u64(&c->pkt, IID, k);
        instr_pb_str(&c->pkt, IID_NAME, cats[k]);
        instr_pb_end(&c->pkt);
    }
    instr_pb_end(&c->pkt);
    instr_pb_begin(&c->pkt, PKT_CLOCK_SNAPSHOT);
    instr_pb_begin(&c->pkt, CS_CLOCKS);
    instr_pb_u64(&c->pkt, CLK_ID, CLOCK_THREAD);
    instr_pb_u64(&c->pkt, CLK_TIMESTAMP, 0);
    instr_pb_u64(&c->pkt, CLK_INCREMENTAL, 1);
    instr_pb_end(&c->pkt);
    instr_pb_begin(&c->pkt, CS_CLOCKS);
    instr_pb_u64(&c->pkt, CLK_ID, CLOCK_BOOTTIME);
    instr_pb_u64(&c->pkt, CLK_TIMESTAMP, 0);
    instr_pb_end(&c->pkt);
    instr_pb_end(&c->pkt);
    packet_end(c);
}

/* Track uuids for the threads walked so far (the profile's threads array
 * holds those walked, the current one last). */
static void number_threads(struct pexp *c)
{
    for (; c->threads_numbered < c->p->nthreads; c->threads_numbered++) {
        if (c->threads_numbered == c->capthreads) {
            size_t nc = c->capthreads ? c->capthreads * 2 : 16;
            uint64_t *a = realloc(c->thread_uuids, nc * sizeof *a);
            if (!a) {
                c->rc = INSTR_ENOMEM;
                return;
            }
            c->thread_uuids = a;
            c->capthreads = nc;
        }
        c->thread_uuids[c->threads_numbered] = c->next_uuid++;
    }
}

/* The descriptors of the threads numbered that have none. */
static void describe_threads(struct pexp *c)
{
    for (; c->threads_described < c->threads_numbered; c->threads_described++) {
        const struct instr_pthread *th = &c->p->threads[c->threads_described];
        packet_begin(c);
        instr_pb_begin(&c->pkt, PKT_TRACK_DESCRIPTOR);
        instr_pb_u64(&c->pkt, TD_UUID, thread_uuid(c, c->threads_described));
        instr_pb_u64(&c->pkt, TD_PARENT, process_uuid(c));
        instr_pb_begin(&c->pkt, TD_THREAD);
        instr_pb_u64(&c->pkt, THD_PID, c->dumps[c->dump].hdr.pid);
        instr_pb_u64(&c->pkt, THD_TID, th->tid);
        instr_pb_str(&c->pkt, THD_NAME, th->name && th->name[0] ? th->name : "thread");
        instr_pb_end(&c->pkt);
        instr_pb_end(&c->pkt);
        packet_end(c);
    }
}

static int see_thread(struct pexp *c, uint32_t thread)
{
    if (c->thread != thread) {
        c->thread = thread;
        c->depth = 0;
        if (thread >= c->threads_numbered)
            number_threads(c);
        if (c->rc)
            return c->rc;
        begin_thread_sequence(c, thread);
    }
    if (thread >= c->threads_described)
        describe_threads(c);
    return c->rc;
}

/* The interning flags of function func, grown as needed (NULL: no memory). */
static uint8_t *func_flags(struct pexp *c, uint32_t func)
{
    if (func >= c->ninterned) {
        size_t nn = c->ninterned ? c->ninterned : 64;
        while (nn <= func)
            nn *= 2;
        uint8_t *a = realloc(c->interned, nn);
        if (!a)
            return NULL;
        memset(a + c->ninterned, 0, nn - c->ninterned);
        c->interned = a;
        c->ninterned = nn;
    }
    return &c->interned[func];
}

/* Name iids: 2 func + 1 for functions, 2 k + 2 for the k-th label met. */
static uint64_t func_iid(uint32_t func)
{
    return 2 * (uint64_t)func + 1;
}

static uint64_t label_iid(size_t k)
{
    return 2 * (uint64_t)k + 2;
}

static void interned_name(struct instr_pb *p, uint64_t iid, const char *name)
{
    instr_pb_begin(p, ID_NAMES);
    instr_pb_u64(p, IID, iid);
    instr_pb_str(p, IID_NAME, name);
    instr_pb_end(p);
}

static int on_open(void *ctx, uint32_t thread, uint32_t func, uint64_t tick)
{
    struct pexp *c = ctx;
    if (see_thread(c, thread))
        return c->rc;
    uint8_t *fl = func_flags(c, func);
    if (!fl)
        return INSTR_ENOMEM;
    const struct instr_pfunc *f = &c->p->funcs[func];
    int has_loc = f->fn && f->fn->file && f->fn->file[0];
    packet_begin(c);
    packet_time(c, ns_of(c, tick));
    if (!*fl) {
        char *name = instr_profile_func_name(c->p, func);
        if (!name)
            return INSTR_ENOMEM;
        instr_pb_begin(&c->pkt, PKT_INTERNED);
        interned_name(&c->pkt, func_iid(func), name);
        if (has_loc) {
            instr_pb_begin(&c->pkt, ID_SOURCE_LOCATIONS);
            instr_pb_u64(&c->pkt, IID, func + 1);
            instr_pb_str(&c->pkt, SL_FILE, f->fn->file);
            instr_pb_str(&c->pkt, SL_FUNCTION, name);
            instr_pb_u64(&c->pkt, SL_LINE, f->fn->line);
            instr_pb_end(&c->pkt);
        }
        instr_pb_end(&c->pkt);
        free(name);
        *fl = 1;
    }
    instr_pb_begin(&c->pkt, PKT_TRACK_EVENT);
    instr_pb_u64(&c->pkt, TE_TYPE, TYPE_SLICE_BEGIN);
    instr_pb_u64(&c->pkt, TE_CATEGORY_IIDS, f->pseudo ? CAT_CALL : CAT_FUNCTION);
    instr_pb_u64(&c->pkt, TE_NAME_IID, func_iid(func));
    if (has_loc)
        instr_pb_u64(&c->pkt, TE_SOURCE_LOCATION_IID, func + 1);
    instr_pb_end(&c->pkt);
    packet_end(c);
    c->depth++;
    return c->rc;
}

static int on_close(void *ctx, uint32_t thread, uint32_t func, uint64_t tick, int incomplete)
{
    struct pexp *c = ctx;
    (void)func;
    if (see_thread(c, thread))
        return c->rc;
    if (!c->depth)
        return 0;
    c->depth--;
    packet_begin(c);
    packet_time(c, ns_of(c, tick));
    instr_pb_begin(&c->pkt, PKT_TRACK_EVENT);
    instr_pb_u64(&c->pkt, TE_TYPE, TYPE_SLICE_END);
    if (incomplete) {
        instr_pb_begin(&c->pkt, TE_DEBUG);
        instr_pb_str(&c->pkt, DA_NAME, "incomplete");
        instr_pb_u64(&c->pkt, DA_BOOL, 1);
        instr_pb_end(&c->pkt);
    }
    instr_pb_end(&c->pkt);
    packet_end(c);
    return c->rc;
}

/* The index of label among those met in this dump, added if new (-1: no memory). */
static long label_index(struct pexp *c, uint64_t label)
{
    for (size_t k = 0; k < c->nlabels; k++)
        if (c->labels[k] == label)
            return (long)k;
    if (c->nlabels == c->caplabels) {
        size_t nc = c->caplabels ? c->caplabels * 2 : 16;
        uint64_t *a = realloc(c->labels, nc * sizeof *a);
        if (!a)
            return -1;
        c->labels = a;
        uint8_t *f = realloc(c->label_flags, nc);
        if (!f)
            return -1;
        c->label_flags = f;
        c->caplabels = nc;
    }
    c->labels[c->nlabels] = label;
    c->label_flags[c->nlabels] = 0;
    return (long)c->nlabels++;
}

static const char *label_text(const struct pexp *c, uint64_t label)
{
    const struct instr_label *l = instr_dump_label(c->p->dump, label);
    return l ? l->text : "[label]";
}

/* A mark's or counter's thread described and its label's index in *k: 1,
 * or 0 with the code to return in *rc. */
static int label_event(struct pexp *c, uint32_t thread, uint64_t label, long *k, int *rc)
{
    if (see_thread(c, thread)) {
        *rc = c->rc;
        return 0;
    }
    if ((*k = label_index(c, label)) < 0) {
        *rc = INSTR_ENOMEM;
        return 0;
    }
    return 1;
}

static int on_mark(void *ctx, uint32_t thread, uint64_t label, uint64_t tick)
{
    struct pexp *c = ctx;
    long k;
    int rc;
    if (!label_event(c, thread, label, &k, &rc))
        return rc;
    packet_begin(c);
    packet_time(c, ns_of(c, tick));
    if (!(c->label_flags[k] & 1)) {
        instr_pb_begin(&c->pkt, PKT_INTERNED);
        interned_name(&c->pkt, label_iid((size_t)k), label_text(c, label));
        instr_pb_end(&c->pkt);
        c->label_flags[k] |= 1;
    }
    instr_pb_begin(&c->pkt, PKT_TRACK_EVENT);
    instr_pb_u64(&c->pkt, TE_TYPE, TYPE_INSTANT);
    instr_pb_u64(&c->pkt, TE_NAME_IID, label_iid((size_t)k));
    instr_pb_end(&c->pkt);
    packet_end(c);
    return c->rc;
}

/* The uuid of label's counter track in thread, described when new (0: no
 * memory). */
static uint64_t counter_track(struct pexp *c, uint32_t thread, uint64_t label)
{
    for (size_t i = 0; i < c->ncounters; i++)
        if (c->counters[i].label == label && c->counters[i].thread == thread)
            return c->counters[i].uuid;
    if (c->ncounters == c->capcounters) {
        size_t nc = c->capcounters ? c->capcounters * 2 : 8;
        struct counter_track *t = realloc(c->counters, nc * sizeof *t);
        if (!t)
            return 0;
        c->counters = t;
        c->capcounters = nc;
    }
    struct counter_track *t = &c->counters[c->ncounters++];
    *t = (struct counter_track){label, thread, c->next_uuid++};
    packet_begin(c);
    instr_pb_begin(&c->pkt, PKT_TRACK_DESCRIPTOR);
    instr_pb_u64(&c->pkt, TD_UUID, t->uuid);
    instr_pb_u64(&c->pkt, TD_PARENT, thread_uuid(c, thread));
    instr_pb_str(&c->pkt, TD_NAME, label_text(c, label));
    instr_pb_begin(&c->pkt, TD_COUNTER);
    instr_pb_end(&c->pkt);
    instr_pb_end(&c->pkt);
    packet_end(c);
    return t->uuid;
}

static int on_counter(void *ctx, uint32_t thread, uint64_t label, int64_t value, uint64_t tick)
{
    struct pexp *c = ctx;
    long k;
    int rc;
    if (!label_event(c, thread, label, &k, &rc))
        return rc;
    uint64_t track = counter_track(c, thread, label);
    if (!track)
        return INSTR_ENOMEM;
    packet_begin(c);
    packet_time(c, ns_of(c, tick));
    instr_pb_begin(&c->pkt, PKT_TRACK_EVENT);
    instr_pb_u64(&c->pkt, TE_TYPE, TYPE_COUNTER);
    instr_pb_u64(&c->pkt, TE_TRACK, track);
    instr_pb_u64(&c->pkt, TE_COUNTER_VALUE, (uint64_t)value); /* int64: two's complement, 10 bytes if < 0 */
    instr_pb_end(&c->pkt);
    packet_end(c);
    return c->rc;
}

/* A dump's walk begins: a new packet sequence, its interning state cleared. */
static int dump_begin(void *ctx, size_t dump, const struct instr_profile *p)
{
    struct pexp *c = ctx;
    c->dump = dump;
    c->p = p;
    c->thread = UINT32_MAX;
    c->depth = 0;
    c->threads_numbered = 0;
    c->threads_described = 0;
    c->nlabels = 0;
    c->ncounters = 0;
    if (c->interned)
        memset(c->interned, 0, c->ninterned);
    c->seq = c->next_seq++;
    c->first_packet = 1;
    c->process_uuid = c->next_uuid++;
    if (c->process_uuids)
        c->process_uuids[dump] = c->process_uuid;
    describe_process(c);
    return c->rc;
}

/* A switched run's gaps, where recording was off (the complement of the
 * profile's windows within the process's life): a track "recording off" under
 * the process, a slice each, on a sequence of their own with absolute
 * timestamps (the default clock).  After the dump's walk, which is what
 * knows the windows. */
static void hook_gaps(struct pexp *c, size_t dump, const struct instr_profile *p)
{
    const struct instr_dump *d = &c->dumps[dump];
    if ((!p->switched_at && !(d->hdr.flags & INSTR_DUMP_SWITCHED_OFF)) || c->rc || !c->process_uuids)
        return;
    c->dump = dump;
    uint64_t end = d->hdr.end_tsc ? d->hdr.end_tsc : d->hdr.last_tsc, track = c->next_uuid++;
    for (size_t i = 0; i < p->nwindows; i++)
        if (p->windows[i].to > end)
            end = p->windows[i].to;
    c->seq = c->next_seq++;
    c->first_packet = 1;
    packet_begin(c);
    instr_pb_begin(&c->pkt, PKT_TRACK_DESCRIPTOR);
    instr_pb_u64(&c->pkt, TD_UUID, track);
    instr_pb_str(&c->pkt, TD_NAME, "recording off");
    instr_pb_u64(&c->pkt, TD_PARENT, c->process_uuids[dump]);
    instr_pb_end(&c->pkt);
    packet_end(c);
    uint64_t from = d->hdr.start_tsc;
    for (size_t i = 0; i <= p->nwindows; i++) {
        uint64_t to = i < p->nwindows ? p->windows[i].from : end;
        for (int e = 0; to > from && e < 2; e++) {
            packet_begin(c);
            instr_pb_u64(&c->pkt, PKT_TIMESTAMP, ns_of(c, e ? to : from));
            instr_pb_begin(&c->pkt, PKT_TRACK_EVENT);
            instr_pb_u64(&c->pkt, TE_TYPE, e ? TYPE_SLICE_END : TYPE_SLICE_BEGIN);
            instr_pb_u64(&c->pkt, TE_TRACK, track);
            if (!e) {
                instr_pb_str(&c->pkt, TE_CATEGORIES, "instr");
                instr_pb_str(&c->pkt, TE_NAME, "recording off");
            }
            instr_pb_end(&c->pkt);
            packet_end(c);
        }
        if (i < p->nwindows)
            from = p->windows[i].to;
    }
}

/* A fixed64 field. */
static void pb_fixed64(struct instr_pb *p, unsigned field, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    instr_pb_tag(p, field, 1);
    instr_pb_raw(p, b, sizeof b);
}

/* A job's messages and collectives, after the walk (libinstr-mpi's
 * records, matched by the wait states: mpi-calls.h): under each rank's
 * process a track "MPI" with an instant at each send's start and each
 * receive's end, joined by a flow (an arrow in the UI); and, for an N x N
 * collective of MPI_COMM_WORLD, from the last rank in to each other rank's
 * exit.  On a sequence of their own, absolute timestamps. */
struct pflows {
    struct pexp *c;
    const struct instr_session *s;
    uint64_t *tracks; /* per rank: its MPI track's uuid (0: not described yet) */
    uint64_t flow;
};

static int put_flow(void *ctx, const struct instr_mpi_flow *f)
{
    struct pflows *pf = ctx;
    struct pexp *c = pf->c;
    pf->flow++;
    const struct instr_mpi_rec *end[2] = {f->from, f->to};
    const size_t dumps[2] = {f->from_dump, f->to_dump};
    for (int k = 0; k < 2; k++) {
        uint32_t r = end[k]->rank;
        if (!pf->tracks[r]) { /* the rank's track, described once */
            pf->tracks[r] = c->next_uuid++;
            packet_begin(c);
            instr_pb_begin(&c->pkt, PKT_TRACK_DESCRIPTOR);
            instr_pb_u64(&c->pkt, TD_UUID, pf->tracks[r]);
            instr_pb_str(&c->pkt, TD_NAME, "MPI");
            instr_pb_u64(&c->pkt, TD_PARENT, c->process_uuids[dumps[k]]);
            instr_pb_end(&c->pkt);
            packet_end(c);
        }
        double t = k ? end[k]->end : end[k]->start;
        packet_begin(c);
        instr_pb_u64(&c->pkt, PKT_TIMESTAMP, t > 0 ? (uint64_t)llround(t) : 0);
        instr_pb_begin(&c->pkt, PKT_TRACK_EVENT);
        instr_pb_u64(&c->pkt, TE_TYPE, TYPE_INSTANT);
        instr_pb_u64(&c->pkt, TE_TRACK, pf->tracks[r]);
        instr_pb_str(&c->pkt, TE_CATEGORIES, "mpi");
        instr_pb_str(&c->pkt, TE_NAME, f->name);
        pb_fixed64(&c->pkt, k ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, pf->flow);
        instr_pb_end(&c->pkt);
        packet_end(c);
    }
    return 0;
}

static int mpi_flows(struct pexp *c, const struct instr_session *s)
{
    if (!s->job || c->rc || !c->process_uuids)
        return c->rc;
    struct pflows pf = {c, s, calloc(s->job->nranks ? s->job->nranks : 1, sizeof *pf.tracks), 0};
    if (!pf.tracks)
        return INSTR_ENOMEM;
    c->seq = c->next_seq++;
    c->first_packet = 1;
    int rc = instr_mpi_flows(s, put_flow, &pf);
    free(pf.tracks);
    return rc < 0 ? rc : c->rc;
}

static void start(struct pexp *c, FILE *out, const struct instr_dump *dumps, size_t n,
                  const struct instr_report_opts *o)
{
    const struct perfetto_opts *po = o && o->export_opts ? o->export_opts : &defaults;
    *c = (struct pexp){.out = out, .dumps = dumps, .next_uuid = 1, .next_seq = 1,
                       .compress = !po->no_compress, .process_uuids = calloc(n ? n : 1, sizeof(uint64_t))};
    if (!c->process_uuids || instr_axis_build(&c->axis, dumps, n) < 0)
        c->rc = INSTR_ENOMEM;
}

static int finish(struct pexp *c, int rc)
{
    if (!rc)
        flush_batch(c);
    if (!rc)
        rc = c->rc;
    if (!rc && fflush(c->out))
        rc = INSTR_EIO;
    instr_pb_free(&c->pkt);
    instr_pb_free(&c->batch);
    INSTR_FREE_ALL(c->zbuf, c->interned, c->labels, c->label_flags, c->thread_uuids, c->process_uuids, c->counters);
    instr_axis_free(&c->axis);
    return rc;
}

int instr_export_perfetto_walk(FILE *out, struct instr_session *s, const struct instr_dump *dumps, size_t n,
                               const struct instr_exclusions *x, const struct instr_report_opts *o, int *wrc,
                               char *err, size_t errlen)
{
    if (!instr_dumps_have_rate(dumps, n)) {
        *wrc = INSTR_EARG; /* timestamps need a tick rate */
        return instr_session_build_excluding(s, dumps, n, x, err, errlen);
    }
    struct pexp c;
    start(&c, out, dumps, n, o);
    struct instr_session_observer obs = {&c, dump_begin, {&c, on_open, on_close, on_mark, on_counter, NULL}};
    int rc = instr_session_build_observed(s, dumps, n, x, &obs, err, errlen);
    for (size_t k = 0; rc == 0 && k < n; k++)
        hook_gaps(&c, k, &s->profiles[k]);
    *wrc = finish(&c, rc == 0 ? mpi_flows(&c, s) : 0);
    return rc;
}

/* The same from a session already built: its dumps walked again. */
int instr_export_perfetto(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    if (!s->have_rate)
        return INSTR_EARG;
    struct pexp c;
    start(&c, out, s->dumps, s->ndumps, o);
    struct instr_timeline tl = {&c, on_open, on_close, on_mark, on_counter, NULL};
    int rc = 0;
    for (size_t i = 0; i < s->ndumps && rc == 0; i++) {
        struct instr_profile p;
        char err[600];
        memset(&p, 0, sizeof p);
        if ((rc = dump_begin(&c, i, &p)) == 0 &&
            (rc = instr_profile_build_timeline(&p, &s->dumps[i], s->exclude, &tl, err, sizeof err)) == 0) {
            hook_gaps(&c, i, &p);
            instr_profile_free(&p);
        }
    }
    if (rc == 0)
        rc = mpi_flows(&c, s);
    return finish(&c, rc);
}

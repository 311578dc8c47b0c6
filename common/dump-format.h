/* dump-format.h - the instr dump file, defined once.
 *
 * Shared by the runtime (the only writer of real dumps) and the tools (one
 * validating reader; instr-dump can also build a dump from its text form).
 * Everything is little-endian and fixed width: no bitfields, bool or pointers.
 *
 *   offset 0            +--------------------------------------+
 *                       | struct instr_dump_header             |  INSTR_DUMP_HEADER_SIZE bytes
 *   header_size         +--------------------------------------+
 *                       | chunk 0: struct instr_chunk_header   |  64 bytes
 *                       |          payload                     |  its size - 64 bytes
 *   + its size          +--------------------------------------+
 *                       | chunk 1 ...                          |
 *                       +--------------------------------------+
 *
 * A chunk's size is its header's chunk_size, or the dump header's when
 * that is 0 (every chunk of a version-1 dump): the chunks lie back to
 * back, so the reader walks them in file order, each from its header.
 * The runtime makes a stream's first chunk one page (4 KiB): a process
 * that made a few calls leaves a header page and a page per stream, 12
 * KiB, where a first chunk of the dump's chunk_size (32 KiB) left 68 KiB
 * (issue 39).  A first chunk carries its size from the moment its space
 * is written, before it is handed out, so a never-used one is skipped
 * as long as it is; a chunk of 0 size whose magic and kind are 0 is the
 * dump's chunk_size long.
 *
 * Chunks are handed out to threads one at a time, so the file is readable
 * at any moment, even after SIGKILL: an unfinished chunk has used_bytes == 0
 * and its payload ends at the first zero byte (no record or event starts
 * with a zero byte).  A stream's chunks (a thread's events or samples, the
 * metadata) are numbered by seq, and the file need not hold them in that
 * order: the runtime writes each in the stream's staging chunk and copies
 * it out when full (runtime/dump-file.c), so the last one is first in the
 * file, and a kill between a copy and the reset leaves one chunk twice,
 * identical.  Readers take them in seq order, one of each.  An all-zero
 * chunk (magic and kind 0) was never written: skipped.
 *
 * EVENTS chunk payload: one thread's events, in order.  Each event is
 *
 *   varint  v = delta_ticks << 4 | os_flag << 3 | kind      (kind 1..7, so v != 0)
 *   [u8     transition bits]         present iff os_flag == 1 (INSTR_OS_*)
 *   [varint off-CPU ticks]           present iff bits & INSTR_OS_OFFCPU_FOLLOWS
 *   [kind-specific payload]
 *
 * delta_ticks is the TSC distance from the previous event of the same thread
 * (the first event of a chunk counts from the chunk's base_tsc).  os_flag says
 * the OS did something on this thread in the interval that this event ends.
 * varint = unsigned LEB128.  Typical sizes: exit 2 bytes, enter 3-4 bytes.
 *
 * METADATA chunk payload: records, each
 *
 *   u8 type (INSTR_META_*, != 0)   varint payload_length   payload
 *
 * Strings inside records are varint length + bytes (no terminator).
 */
#ifndef INSTR_DUMP_FORMAT_H
#define INSTR_DUMP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define INSTR_DUMP_MAGIC "INSTRDMP" /* 8 bytes, no terminator in the file */
#define INSTR_DUMP_VERSION 2u /* 2: per-chunk sizes (instr_chunk_header.chunk_size) */
#define INSTR_DUMP_VERSION_MIN 1u /* the oldest the reader takes: chunks of the header's chunk_size */
#define INSTR_DUMP_HEADER_SIZE 4096u
#define INSTR_CHUNK_MAGIC 0x4b484349u /* "ICHK" */
#define INSTR_CHUNK_HEADER_SIZE 64u
#define INSTR_DUMP_MAX_CHUNK_SIZE (1u << 26) /* reader refuses larger chunks */

/* Header flags. */
#define INSTR_DUMP_COMPLETE 0x1u      /* end_* fields written by the exit path */
#define INSTR_DUMP_FORK_CHILD 0x2u    /* written by a forked child; open frames re-entered */
#define INSTR_DUMP_TSC_INVARIANT 0x4u /* CPUID says the TSC is invariant */
#define INSTR_DUMP_SIGNALED 0x8u      /* ended by a fatal signal: end_tsc, end_mono_ns, end_signal set */
#define INSTR_DUMP_NO_TRANSITIONS 0x10u /* converted from a format without kernel-transition data (never
                                           the runtime): Application values are unavailable */
#define INSTR_DUMP_SAMPLED 0x20u      /* written by instr-sample: SAMPLES chunks and no events; every tick
                                         field is CLOCK_MONOTONIC ns (start_tsc == start_mono_ns) */
#define INSTR_DUMP_COUNTS 0x40u       /* count mode (plugin mode=count): exact calls in FN_CALLS and
                                         SITE_CALLS records, no events: no time was recorded */
#define INSTR_DUMP_SAMPLING_CUT 0x80u /* instr-sample: the process still ran when sampling stopped (its
                                         program's first process ended: a daemon); samples end there */
#define INSTR_DUMP_SWITCHED_OFF 0x100u /* the switchable code's hooks were off when the dump began
                                          (INSTR_START=off, or instr_stop before a fork); EXT SWITCH
                                          events say when they were switched */
#define INSTR_DUMP_SLOW_PATH_JOINED 0x200u /* the switch went off on code not built switchable: from then on
                                              every hook took the slow path (runtime/filter.c), measured
                                              only if calibration_path says FILTERING */

#define INSTR_DUMP_REGISTRY_FULL 0x400u /* functions or call sites got no id (no memory to grow the
                                           runtime's registries): their calls are in dropped_calls and
                                           dropped_sites, and a note says which first */

/* Header arch: the instruction set the program ran as. */
#define INSTR_ARCH_X86_64 1u
#define INSTR_ARCH_AARCH64 2u

/* Header tick_source: what start_tsc, base_tsc and the event deltas count. */
#define INSTR_TICKS_TSC 1u     /* x86-64 time-stamp counter (rdtsc) */
#define INSTR_TICKS_CNTVCT 2u  /* aarch64 generic timer, virtual count (cntvct_el0) */
#define INSTR_TICKS_MONO_NS 3u /* CLOCK_MONOTONIC ns (instr-sample; a machine without a counter) */

/* Header calibration: how the hooks' cost (HOOK_COST records) was had. */
#define INSTR_CALIBRATION_UNKNOWN 0u /* none, or a runtime older than the field */
#define INSTR_CALIBRATION_FRESH 1u   /* measured by this process (or the parent it forked from) */
#define INSTR_CALIBRATION_CACHED 2u  /* read from the user's calibration cache: measured by an earlier
                                        process this boot, on this CPU, with these detectors */
/* Header calibration_path: which path of the hooks the HOOK_COST records
 * measured, the one this run's hooks took (runtime/calibrate.c). */
#define INSTR_CALIBRATION_PATH_FAST 0u      /* the fast path (also every dump older than the field) */
#define INSTR_CALIBRATION_PATH_FILTERING 1u /* the slow path of a filtering thread (INSTR_DEPTH,
                                               INSTR_MIN_DURATION or INSTR_TRIGGER set), with those filters */

struct instr_dump_header {
    char magic[8];                /* INSTR_DUMP_MAGIC */
    uint32_t version;             /* INSTR_DUMP_VERSION */
    uint32_t header_size;         /* bytes before chunk 0 */
    uint32_t chunk_size;          /* bytes per chunk, header included */
    uint32_t flags;               /* INSTR_DUMP_* */
    uint64_t pid;                 /* process id */
    uint64_t ppid;                /* parent process id */
    uint64_t start_tsc;           /* ticks at runtime start */
    uint64_t start_mono_ns;       /* CLOCK_MONOTONIC ns at runtime start */
    uint64_t start_real_ns;       /* CLOCK_REALTIME ns since the epoch at runtime start */
    uint64_t end_tsc;             /* ticks at exit; 0 if the process never finished */
    uint64_t end_mono_ns;         /* CLOCK_MONOTONIC ns at exit; 0 likewise */
    uint64_t last_tsc;            /* latest calibration pair (updated during the run) */
    uint64_t last_mono_ns;        /*   so a killed process still has a tick rate */
    uint64_t chunk_count;         /* chunks handed out so far (version 1: the reader's cross-check; version 2:
                                     counted as they reach the file, staging areas and their copies) */
    uint64_t dropped_events;      /* events lost (no space, allocation failure; after a stop, one per
                                     hook that ran) */
    uint64_t unmatched_exits;     /* exit hooks with no matching live frame (ignored) */
    uint32_t detector;            /* INSTR_DETECTOR_* that ran */
    uint32_t detector_sees;       /* INSTR_OS_* bits the detector can observe */
    uint32_t thread_count;        /* threads that recorded events */
    int32_t exit_status;          /* status passed to exit(), if known */
    char exe_path[1024];          /* NUL-terminated executable path */
    char detector_detail[128];    /* NUL-terminated, e.g. "rseq_cs (self-test passed)" */
    uint32_t end_signal;          /* fatal signal number that ended the process (SIGNALED), else 0 */
    uint32_t end_signal_tid;      /* kernel thread id that received it */
    uint32_t detector_set;        /* bit 1 << INSTR_DETECTOR_* per backend that ran; 0 = only `detector` */
    uint32_t unrecorded_threads;  /* threads that recorded nothing (no address space for their
                                     state); their events are counted in dropped_events */
    char stop_reason[128];        /* NUL-terminated: why recording stopped before the end (a seccomp
                                     filter, the TSC taken away, a limit: RLIMIT_FSIZE, INSTR_MAX_SIZE,
                                     a full disk; "recording paused: ..." when no descriptor was
                                     free); empty while it did not */
    /* Record-time filters (runtime/filter.c): what they were and what they
     * left out.  A call not recorded is its caller's time. */
    uint32_t filter_depth;        /* INSTR_DEPTH: frames deeper than this not recorded; 0 = no limit */
    uint32_t filter_triggers;     /* INSTR_TRIGGER: trigger functions named; 0 = none */
    uint64_t filter_min_ticks;    /* INSTR_MIN_DURATION, in ticks: shorter calls folded; 0 = none */
    uint64_t filtered_depth;      /* calls not recorded: deeper than filter_depth */
    uint64_t filtered_short;      /* calls not recorded: returned within filter_min_ticks */
    uint64_t filtered_off;        /* calls not recorded: entered while a trigger had recording off */
    uint32_t calibration;         /* INSTR_CALIBRATION_*: where the HOOK_COST records came from */
    /* What the runtime said (runtime/log.c: a setting it could not honour,
     * a backend that could not run), whatever INSTR_LOG was, so the report
     * says it too: lines ending in '\n', notes_len bytes of notes used. */
    uint32_t notes_len;           /* bytes of notes written (at most sizeof notes) */
    uint32_t notes_dropped;       /* lines that did not fit */
    char notes[512];
    /* The machine: what the ticks are and which instruction set ran. */
    uint32_t arch;                /* INSTR_ARCH_*: 0 in dumps older than the field (x86-64) */
    uint32_t tick_source;         /* INSTR_TICKS_*: 0 in dumps older than the field (the TSC) */
    /* The job (MPI and other launchers): who this process was in it.
     * Empty strings and rank -1 when it was not launched as one of many. */
    int32_t job_rank;             /* rank in the job (MPI_COMM_WORLD), -1 if none */
    uint32_t job_size;            /* processes in the job, 0 if unknown */
    char host[64];                /* NUL-terminated host name (uname nodename) */
    char job_id[64];              /* NUL-terminated job id from the launcher, "" if none */
    char job_launcher[16];        /* NUL-terminated: the launcher that said so (runtime/job.c:
                                     "openmpi", "pmix", "hydra", "slurm"), "" if none */
    uint32_t calibration_path;    /* INSTR_CALIBRATION_PATH_*: the hooks' path the HOOK_COST records measured */
    uint64_t dropped_calls;       /* of dropped_events, the ENTER events: calls of instrumented functions lost */
    uint64_t dropped_sites;       /* of dropped_events, the CALL events: calls at call sites lost (a call of
                                     an instrumented function through one is also an ENTER) */
    uint64_t chunk_bytes;         /* bytes of chunks handed out so far, from header_size on (version 2):
                                     the file holds at least that much */
    uint8_t reserved[INSTR_DUMP_HEADER_SIZE - 2184];
};

/* Chunk kinds. */
#define INSTR_CHUNK_EVENTS 1u
#define INSTR_CHUNK_METADATA 2u
#define INSTR_CHUNK_SAMPLES 3u /* one thread's samples (thread_index, tid, seq as for EVENTS) */

struct instr_chunk_header {
    uint32_t magic;        /* INSTR_CHUNK_MAGIC */
    uint16_t kind;         /* INSTR_CHUNK_* */
    uint16_t header_size;  /* INSTR_CHUNK_HEADER_SIZE */
    uint32_t thread_index; /* dense per-process thread number (EVENTS) */
    uint32_t tid;          /* kernel thread id (EVENTS) */
    uint32_t seq;          /* this thread's (or the metadata's) chunk number, from 0 */
    uint32_t used_bytes;   /* payload bytes; 0 = not closed, scan to the first zero byte */
    uint64_t base_tsc;     /* ticks the first event's delta counts from */
    uint32_t chunk_size;   /* bytes of this chunk, header included, a multiple of 8 from 128 to the dump
                              header's chunk_size; 0 = the dump header's chunk_size.  Written with
                              the chunk's space, before magic and kind (version 2; 0 in version 1) */
    uint8_t reserved[28];
};

/* Event kinds (low 3 bits of the event varint). */
#define INSTR_EVENT_KINDS(X)                                                                       \
    X(ENTER, 1, "enter")   /* varint function id: push it */                                     \
    X(EXIT, 2, "exit")     /* pop the top frame */                                                \
    X(CALL, 3, "call")     /* varint call-site id: push the callee (call-site hooks) */          \
    X(RETURN, 4, "return") /* pop the call-site frame */                                         \
    X(EXT, 5, "ext")       /* u8 INSTR_EXT_* subtype, then its payload */

enum instr_event_kind {
#define INSTR_X_ENUM(name, value, text) INSTR_EV_##name = value,
    INSTR_EVENT_KINDS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

/* SAMPLES chunk payload: one thread's sample records, in time order, each
 *
 *   u8 kind (INSTR_SAMPLE_*, != 0)   varint payload_length   payload
 *
 * and every payload starts with varint delta_ticks: the distance from the
 * previous record of the chunk (the first counts from the chunk's base_tsc).
 * A STACK's frames are leaf first: the first is the sampled PC, the others
 * return addresses; the first is a plain varint, each next one the zigzag
 * varint of its difference from the frame before it.
 *
 * In an instrumented dump (INSTR_SAMPLE=HZ, runtime/sampler.c), a thread's
 * SAMPLES chunks hold STACK records of one frame (the PC) and LOST records,
 * and their ticks (base_tsc and the deltas) are CLOCK_MONOTONIC ns: the
 * tools convert them to ticks with the header's calibration pairs. */
#define INSTR_SAMPLE_KINDS(X)                                                                      \
    X(STACK, 1, "stack") /* varint delta, varint weight (periods it stands for, >= 1), varint       \
                            INSTR_STACK_* flags, varint frame count, frames */                       \
    X(LOST, 2, "lost")   /* varint delta, varint samples the kernel could not record (ring full) */

enum instr_sample_kind {
#define INSTR_X_ENUM(name, value, text) INSTR_SAMPLE_##name = value,
    INSTR_SAMPLE_KINDS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

/* STACK flags. */
#define INSTR_STACK_TRUNCATED 0x1u /* the unwinder stopped before the outermost frame (stack copy too
                                      small, a frame without unwind information) */
#define INSTR_STACK_FP 0x2u        /* the frames are the kernel's frame-pointer chain (CFI unwinding
                                      failed at the first frame) */
#define INSTR_STACK_RUNTIME 0x4u   /* hybrid: the PC is inside instr's runtime (its hooks) */

/* Extended events (rare: repairs, thread life, user marks).  The fourth
 * column is the payload after the subtype byte (INSTR_PAYLOAD_*, below):
 * event-codec.h encodes and decodes every kind from it, for the runtime,
 * the tools' writer and the reader alike. */
#define INSTR_EXT_KINDS(X)                                                                         \
    X(UNWIND, 1, "unwind", U8)           /* INSTR_UNWIND_*: pop the top frame, closed by a repair */ \
    X(THREAD_END, 2, "end", NONE)        /* the thread finished; open frames close here */       \
    X(REENTER, 3, "reenter", VARINT)     /* function id: push without counting a call (fork) */  \
    X(MARK, 4, "mark", VARINT)           /* label id: a named instant */                         \
    X(COUNTER, 5, "counter", VARINT_ZIGZAG) /* label id, then the value (zigzag varint) */       \
    X(RESYNC, 6, "resync", U64)          /* absolute ticks; the next delta counts from it */     \
    X(DROPPED, 7, "dropped", VARINT)     /* events lost just before this point */                \
    X(REENTER_SITE, 8, "reenter-site", VARINT) /* call-site id: push without counting (fork) */ \
    X(RUNTIME, 9, "runtime", VARINT)     /* ticks the runtime spent on itself here (first call of \
                                            a function, chunk switch): skipped, charged to nobody */ \
    X(STACK_SWITCH, 10, "stack-switch", VARINT) /* stack number: the thread runs on another stack \
                                            (coroutines) from here; each stack has its own frames */ \
    X(UNSEEN, 11, "unseen", VARINT)      /* INSTR_OS_* kinds the detectors stop seeing in this thread \
                                            from here (sud paused), | kinds not watched yet << 8 \
                                            (perf's event opens late: INSTR_PERF_AFTER); 0: they \
                                            see again what the header says */ \
    X(SWITCH, 12, "switch", VARINT)      /* 1: the switchable code's hooks switched on (instr_start), \
                                            0: off (instr_stop); process-wide, written by the thread \
                                            that switched */ \
    X(MPI, 13, "mpi", VARINT_ZIGZAG)     /* INSTR_MPI_* call, then the ticks it took: the MPI call \
                                            (seen by libinstr-mpi, mpi/) ended here; MPI_FIELD \
                                            events follow at once (below) */ \
    X(MPI_FIELD, 14, "mpi-field", VARINT_ZIGZAG) /* INSTR_MPI_FIELD_*, then its value: one field of \
                                            the thread's last MPI event */

/* MPI calls (the PMPI wrappers of mpi/instr-mpi.c, through the runtime's
 * instr__mpi_api, common/mpi-abi.h).  An EXT MPI event at the call's end
 * (arg: the call, value: the ticks from its start, so it started at the
 * event's tick minus value), then right after it on the same thread, before
 * its next frame event (other EXT events may come between: the runtime's
 * own), an EXT MPI_FIELD event per field the call has, in any order, each
 * at most once:
 *
 *   3 5000 mpi 3 41210            MPI_Send, started 41210 ticks before
 *   3 5000 mpi-field 1 2          peer: world rank 2
 *   3 5000 mpi-field 2 7          tag 7
 *   3 5000 mpi-field 4 808        808 bytes sent
 *
 * The third column is the call's class: what the report counts of it
 * (SEND: a message sent; RECV: one received; WAIT: a receive when its
 * request was one; TEST: the same, never blocking; COLL: a collective,
 * numbered in its communicator; START: a persistent request's send, or
 * the posting of its receive). */
#define INSTR_MPI_CALLS(X)                                                                         \
    X(INIT, 1, OTHER, "MPI_Init")                                                                 \
    X(FINALIZE, 2, OTHER, "MPI_Finalize")                                                         \
    X(SEND, 3, SEND, "MPI_Send")                                                                  \
    X(SSEND, 4, SEND, "MPI_Ssend")                                                                \
    X(ISEND, 5, SEND, "MPI_Isend")                                                                \
    X(RECV, 6, RECV, "MPI_Recv")                                                                  \
    X(IRECV, 7, OTHER, "MPI_Irecv")                                                               \
    X(SENDRECV, 8, SENDRECV, "MPI_Sendrecv")                                                      \
    X(WAIT, 9, WAIT, "MPI_Wait")                                                                  \
    X(WAITALL, 10, WAIT, "MPI_Waitall")                                                           \
    X(BARRIER, 11, COLL, "MPI_Barrier")                                                           \
    X(BCAST, 12, COLL, "MPI_Bcast")                                                               \
    X(REDUCE, 13, COLL, "MPI_Reduce")                                                             \
    X(ALLREDUCE, 14, COLL, "MPI_Allreduce")                                                       \
    X(ALLGATHER, 15, COLL, "MPI_Allgather")                                                       \
    X(ALLTOALL, 16, COLL, "MPI_Alltoall")                                                         \
    X(GATHER, 17, COLL, "MPI_Gather")                                                             \
    X(SCATTER, 18, COLL, "MPI_Scatter")                                                           \
    X(CLOCK, 19, OTHER, "clock sync") /* not a call: the wrappers' ping-pong with rank 0 at the \
                                         end of MPI_Init and the start of MPI_Finalize (fields \
                                         PEER 0, CLOCK_LOCAL, CLOCK_ROOT, CLOCK_RTT) */ \
    X(ABORT, 20, OTHER, "MPI_Abort") /* written as it is entered (it does not return): 0 ticks; \
                                        fields COMM, CODE */ \
    X(WAITANY, 21, WAIT, "MPI_Waitany")                                                           \
    X(WAITSOME, 22, WAIT, "MPI_Waitsome") /* one event per request completed, as Waitall */     \
    X(TEST, 23, TEST, "MPI_Test")    /* every call; a request's fields when it completed one */   \
    X(TESTANY, 24, TEST, "MPI_Testany")                                                           \
    X(TESTALL, 25, TEST, "MPI_Testall") /* when complete, one event per request, as Waitall */    \
    X(TESTSOME, 26, TEST, "MPI_Testsome")                                                         \
    X(GATHERV, 27, COLL, "MPI_Gatherv")                                                           \
    X(SCATTERV, 28, COLL, "MPI_Scatterv")                                                         \
    X(ALLGATHERV, 29, COLL, "MPI_Allgatherv")                                                     \
    X(ALLTOALLV, 30, COLL, "MPI_Alltoallv")                                                       \
    X(SCAN, 31, COLL, "MPI_Scan")     /* field RANK: the caller's rank in the communicator */     \
    X(EXSCAN, 32, COLL, "MPI_Exscan") /* field RANK, as Scan */                                   \
    X(REDUCE_SCATTER, 33, COLL, "MPI_Reduce_scatter")                                             \
    X(REDUCE_SCATTER_BLOCK, 34, COLL, "MPI_Reduce_scatter_block")                                 \
    /* Nonblocking collectives: numbered (SEQ) with the communicator's other collectives, with   \
       their bytes and the request their Wait completes; no wait state (OTHER) */                \
    X(IBARRIER, 35, OTHER, "MPI_Ibarrier")                                                        \
    X(IBCAST, 36, OTHER, "MPI_Ibcast")                                                            \
    X(IREDUCE, 37, OTHER, "MPI_Ireduce")                                                          \
    X(IALLREDUCE, 38, OTHER, "MPI_Iallreduce")                                                    \
    X(IALLGATHER, 39, OTHER, "MPI_Iallgather")                                                    \
    X(IALLTOALL, 40, OTHER, "MPI_Ialltoall")                                                      \
    X(IGATHER, 41, OTHER, "MPI_Igather")                                                          \
    X(ISCATTER, 42, OTHER, "MPI_Iscatter")                                                        \
    /* Persistent requests: made (peer, tag, comm), then each Start is a send begun (START with  \
       SENT: a message, as Isend) or a receive posted (START without SENT, as Irecv), with the  \
       request number of that activation, which its Wait completes */                            \
    X(SEND_INIT, 43, OTHER, "MPI_Send_init")                                                      \
    X(SSEND_INIT, 44, OTHER, "MPI_Ssend_init")                                                    \
    X(RECV_INIT, 45, OTHER, "MPI_Recv_init")                                                      \
    X(START, 46, START, "MPI_Start")                                                              \
    X(STARTALL, 47, START, "MPI_Startall") /* one event per request started, as Waitall */

enum instr_mpi_call {
#define INSTR_X_ENUM(name, value, cls, text) INSTR_MPI_##name = value,
    INSTR_MPI_CALLS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
    INSTR_MPI_CALL_MAX = 47
};

/* Call classes (the third column above). */
enum instr_mpi_class {
    INSTR_MPI_CLASS_OTHER = 0,
    INSTR_MPI_CLASS_SEND,
    INSTR_MPI_CLASS_RECV,
    INSTR_MPI_CLASS_SENDRECV,
    INSTR_MPI_CLASS_WAIT,
    INSTR_MPI_CLASS_COLL,
    INSTR_MPI_CLASS_TEST, /* a WAIT that does not block: receives completed, no wait state */
    INSTR_MPI_CLASS_START /* a persistent request started: a SEND when it has SENT, else a receive posted */
};

/* MPI_FIELD kinds: the arg of an MPI_FIELD event, and what its value is.
 * Ranks are ranks of MPI_COMM_WORLD; bytes are count x MPI_Type_size. */
#define INSTR_MPI_FIELDS(X)                                                                        \
    X(PEER, 1, "peer")         /* destination (send), source asked (receive; -1 any) */          \
    X(TAG, 2, "tag")           /* tag given (receive: -1 any) */                                 \
    X(COMM, 3, "comm")         /* communicator: 0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, then 2, 3 .. \
                                  in the order this process first used them */                    \
    X(SENT, 4, "sent")         /* bytes sent (a collective: its send count x type size) */       \
    X(RECEIVED, 5, "received") /* bytes received, from the status */                             \
    X(SOURCE, 6, "source")     /* the actual source, from the status */                          \
    X(RTAG, 7, "rtag")         /* the actual tag, from the status */                             \
    X(ROOT, 8, "root")         /* a rooted collective's root */                                  \
    X(SEQ, 9, "seq")           /* a collective's number in its communicator, from 0 */           \
    X(REQUEST, 10, "request")  /* Isend/Irecv, Ibarrier ...: the request's number in this process, from 1; \
                                  Wait: the request it completed (Waitall: one event per request) */ \
    X(SIZE, 11, "size")        /* the communicator's size */                                     \
    X(CLOCK_LOCAL, 12, "clock-local") /* CLOCK: this rank's ticks at the middle of its shortest \
                                  round trip to rank 0 */                                        \
    X(CLOCK_ROOT, 13, "clock-root") /* CLOCK: rank 0's ticks when it answered that round trip */ \
    X(CLOCK_RTT, 14, "clock-rtt") /* CLOCK: that round trip, in this rank's ticks */ \
    X(CODE, 15, "code")           /* ABORT: the error code given to MPI_Abort */                  \
    X(COMM_ID, 16, "comm-id")     /* a communicator made by a wrapped call (MPI_Comm_split, dup, \
                                     create, split_type, Cart_create, Cart_sub): the same number \
                                     on every rank of it, (world rank of its rank 0 + 1) << 32 | \
                                     the communicators that rank made so far */ \
    X(RANK, 17, "rank")           /* Scan, Exscan: the caller's rank in the communicator (whose \
                                     lower ranks it waits for) */ \
    X(BEGAN, 18, "began")         /* the second and later events of a call that completes or \
                                     starts several requests (Waitall, Waitsome, Testall, \
                                     Testsome, Startall), whose own ticks are 0: the ticks from \
                                     the call's entry to this event (a receive's wait begins there) */

enum instr_mpi_field {
#define INSTR_X_ENUM(name, value, text) INSTR_MPI_FIELD_##name = value,
    INSTR_MPI_FIELDS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
    INSTR_MPI_FIELD_MAX = 18
};

/* EXT payload shapes: arg is the first field, value the second. */
#define INSTR_PAYLOAD_NONE 0u          /* nothing */
#define INSTR_PAYLOAD_U8 1u            /* one byte: arg */
#define INSTR_PAYLOAD_VARINT 2u        /* varint arg */
#define INSTR_PAYLOAD_VARINT_ZIGZAG 3u /* varint arg, zigzag varint value */
#define INSTR_PAYLOAD_U64 4u           /* arg, 8 bytes little-endian */

enum instr_ext_kind {
#define INSTR_X_ENUM(name, value, text, payload) INSTR_EXT_##name = value,
    INSTR_EXT_KINDS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

/* Why a frame was closed without its exit hook. */
#define INSTR_UNWIND_EXCEPTION 1u /* an exception passed through it (seen at a landing pad) */
#define INSTR_UNWIND_STACK 2u     /* its stack frame is gone (longjmp, or unwinding seen late) */
#define INSTR_UNWIND_MISMATCH 3u  /* an exit hook named a frame further down the stack */

/* Transition bits: what the OS did in an interval (the byte after a flagged event). */
#define INSTR_OS_KINDS(X)                                                                          \
    X(SCHED, 0x01u, "sched")     /* context switch: preemption, blocking, sleep, migration */    \
    X(SYSCALL, 0x02u, "syscall") /* a system call */                                             \
    X(FAULT, 0x04u, "fault")     /* a page fault */                                              \
    X(SIGNAL, 0x08u, "signal")   /* a signal was delivered */                                    \
    X(IRQ, 0x10u, "irq")         /* a hardware interrupt */                                      \
    X(UNKNOWN, 0x80u, "unknown") /* the detector lost track (e.g. someone else's rseq_cs) */

/* Not a kind: with the thread-CPU-clock backend, the byte may carry this bit,
 * and then a varint follows it: the ticks of the interval the thread spent
 * off the CPU (waiting, sleeping, preempted), exact.  Intervals with
 * nothing flagged are on the CPU throughout and carry nothing. */
#define INSTR_OS_OFFCPU_FOLLOWS 0x40u

enum instr_os_bit {
#define INSTR_X_ENUM(name, value, text) INSTR_OS_##name = value,
    INSTR_OS_KINDS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

/* Detectors. */
#define INSTR_DETECTORS(X)                                                                         \
    X(NONE, 0, "none")         /* nothing observed: Application == Elapsed */                    \
    X(RSEQ_CS, 1, "rseq_cs")   /* rseq_cs lazy-clear */                                           \
    X(GETRUSAGE, 2, "getrusage") /* RUSAGE_THREAD counters at each hook (slow, exact) */          \
    X(SUD, 3, "sud")           /* Syscall User Dispatch selector: the interval made a syscall */  \
    X(PERF, 4, "perf")         /* per-thread perf ring: page-fault samples, switch records */     \
    X(RDPMC, 5, "rdpmc")       /* kernel-mode instruction counter read with rdpmc */ \
    X(CPUCLOCK, 6, "cpuclock") /* thread CPU clock read at flagged hooks: exact off-CPU time */

enum instr_detector {
#define INSTR_X_ENUM(name, value, text) INSTR_DETECTOR_##name = value,
    INSTR_DETECTORS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

/* Metadata records. */
#define INSTR_META_KINDS(X)                                                                        \
    X(MODULE, 1, "module")     /* varint module id, str path, u64 load address */                \
    X(FUNCTION, 2, "function") /* varint id, varint module id, varint line, str name (mangled), str file, \
                                  [str demangled name, "" for C; absent in older dumps] */ \
    X(THREAD, 3, "thread")     /* varint thread index, varint tid, str name (a later record wins) */ \
    X(LABEL, 4, "label")       /* varint label id, str text (marks and counters) */        \
    X(CALLSITE, 5, "callsite") /* see below: what a CALL event's id names */             \
    X(PROCESS, 6, "process")   /* str working directory at start, varint argc, argc x str: the \
                                  command line (/proc/self/cmdline; absent in older dumps) */  \
    X(UNIT, 7, "unit")         /* varint module id (0 = unknown), varint threshold (statements), \
                                  varint functions left out, varint functions instrumented, str \
                                  source file ("" = a module's sum): one unit built with the \
                                  plugin's threshold=N (hook-abi.h); the reader sums them */ \
    X(MAP, 16, "map")          /* varint module id, u64 start, u64 end (exclusive), u64 file offset \
                                  of start, u64 ticks when mapped: an executable mapping (SAMPLED, \
                                  and INSTR_SAMPLE's dumps: see below) */ \
    X(SAMPLING, 17, "sampling") /* varint rate asked (Hz of CPU time), varint period (ns), varint \
                                   stack bytes copied per sample, str unwinder (SAMPLED) */       \
    X(CPU_TIME, 18, "cpu-time") /* varint thread index, varint CPU ns the thread ran while sampled */ \
    X(HOOK_COST, 19, "hook-cost") /* see below: what one hook adds to the intervals around it */ \
    X(FN_CALLS, 20, "fn-calls") /* varint function id, varint calls: times the function was entered, \
                                   every thread (count mode, INSTR_DUMP_COUNTS) */ \
    X(SITE_CALLS, 21, "site-calls") /* varint caller function id, varint line, varint INSTR_COUNT_* \
                                   flags (hook-abi.h), str callee (mangled; "" if indirect), varint \
                                   calls made at that call site, every thread (count mode) */ \
    X(EXIT_CPU, 22, "exit-cpu") /* varint thread index, varint CPU ns, varint ticks: a live thread's \
                                   CPU time since its first event, read at the process's end */ \
    X(CLOCK_SYNC, 23, "clock-sync") /* varint peer rank, u64 local ticks, u64 peer's ticks, varint \
                                   round trip (local ticks): see below */

/* HOOK_COST record (the runtime's start-up calibration, runtime/calibrate.c;
 * one record per hook kind): varint event kind the hook writes
 * (INSTR_EV_ENTER, EXIT, CALL or RETURN), varint before, varint after,
 * varint spread, varint rounds.  before: mticks (1/1000 tick) the hook adds
 * to the interval its event ends (its work before it reads the TSC); after:
 * mticks it adds to the interval that starts there (its work after the
 * read); spread: mticks, the interquartile range of before + after over the
 * rounds; rounds: hooks of that kind measured.  Measured in this process,
 * with its detectors, when the runtime started, on the path its hooks take
 * (the header's calibration_path).  A dump without these
 * records (older runtimes, converted inputs) has no known hook cost. */

/* CLOCK_SYNC record (libinstr-mpi's ping-pong at the end of MPI_Init and
 * the start of MPI_Finalize, through runtime/mpi.c): this process's clock
 * against a peer's (rank 0 of its job).  Of the round trips measured, the
 * shortest: its middle on this process's ticks, the peer's ticks read
 * when it answered, and its length.  Written whether recording is on or
 * off, at once (a rank killed later keeps it); the reader keeps the first
 * record and the last. */

/* EXIT_CPU record (runtime/thread-state.c): at exit, and at a fatal signal
 * when the metadata lock is free, each thread still alive has its CPU clock
 * (CLOCK_THREAD_CPUTIME_ID of that thread) read at the given ticks, less
 * its reading when the thread started recording: its on-CPU ns since.  Its frames are still open; the interval from
 * its last event to the end is charged on the CPU for no more than the
 * clock says is left, the rest as off-CPU time flagged sched (the thread
 * was blocked in the kernel: a wait, a sleep).  Older dumps have no such
 * record: that interval is then counted on the CPU. */

/* MAP records in an instrumented dump (INSTR_SAMPLE=HZ, runtime/maps.c):
 * every loaded object's executable segments, page-rounded, of a MODULE
 * record (the functions' module table).  Written at the sampler's start
 * (ticks 0: before every sample), then, when objects were loaded, the new
 * ones with the ticks of the runtime's last look that did not see them (a
 * lower bound: they were mapped after it, before the samples drained with
 * them).  A mapping is not unwritten when its object is unloaded: the
 * tools take the latest map holding an address by a sample's ticks. */

/* CALLSITE record: varint site id (the CALL event's), varint caller function
 * id, varint line, varint INSTR_SITE_* flags (hook-abi.h), str callee, varint
 * callee module id (0 = unknown), u64 callee offset (bytes from that
 * module's load address), u64 return-address offset of the call (bytes from
 * the caller's module load address).  A direct site has one record, callee
 * = the mangled name the call names.  An indirect site has one record (and
 * id) per distinct target it called: callee = the dynamic symbol dladdr()
 * found for the target, or "" (the reader may then look in the module's
 * symbol table). */
enum instr_meta_kind {
#define INSTR_X_ENUM(name, value, text) INSTR_META_##name = value,
    INSTR_META_KINDS(INSTR_X_ENUM)
#undef INSTR_X_ENUM
};

#define INSTR_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#ifdef __cplusplus
#undef INSTR_STATIC_ASSERT
#define INSTR_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#endif
INSTR_STATIC_ASSERT(sizeof(struct instr_dump_header) == INSTR_DUMP_HEADER_SIZE, "dump header size");
INSTR_STATIC_ASSERT(sizeof(struct instr_chunk_header) == INSTR_CHUNK_HEADER_SIZE, "chunk header size");
INSTR_STATIC_ASSERT(offsetof(struct instr_dump_header, chunk_bytes) == 2176, "chunk_bytes after dropped_sites");
INSTR_STATIC_ASSERT(offsetof(struct instr_chunk_header, chunk_size) == 32, "chunk_size after base_tsc");

#endif

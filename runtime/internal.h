/* internal.h - PRIVATE to the instr runtime (libinstr-rt.so).
 *
 * Nothing outside runtime/ and tests/runtime/ may include this file: the
 * plugin and the tools only know common/hook-abi.h and common/dump-format.h.
 * Naming: non-static functions are instr__*, all hidden (-fvisibility=hidden);
 * the only exported symbol is instr__bind (INSTR_BIND_SYMBOL).
 */
#ifndef INSTR_RT_INTERNAL_H
#define INSTR_RT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "dump-format.h"
#include "event-codec.h"
#include "hook-abi.h"
#include "arch.h"

/* 32 KiB: what a thread that ever made a call leaves in the dump at least
 * (2,000 short threads: 64 MiB apparent size, not 128); the smallest that
 * still holds a metadata record of INSTR_RT_MAX_STRING. */
#define INSTR_RT_CHUNK_SIZE (32u * 1024u)
/* 4 KiB, a page: a stream's first chunk, alone in its staging area, so
 * that a process that made a few calls leaves a dump of a header page and
 * a page per stream (hello world: 12 KiB, where first chunks of
 * INSTR_RT_CHUNK_SIZE left 68 KiB; issue 39).  Its stream's next chunks
 * are INSTR_RT_CHUNK_SIZE: a busy thread switches once more, in the
 * first microseconds. */
#define INSTR_RT_FIRST_CHUNK_SIZE 4096u
/* Chunks lie at multiples of it after the dump header (a page: each one
 * can be mapped); the runtime reserves the dump's space in such units. */
#define INSTR_RT_UNIT 4096u
#define INSTR_RT_DUMP_FD_CAP 1024               /* kept descriptors sit just below this */
#define INSTR_RT_STACK_FIRST 4096u              /* shadow-stack frames mapped with a thread's state */
#define INSTR_RT_STACK_GROWS 8u                 /* doublings beyond it: at most 4096 << 8 = 1 Mi frames */
#define INSTR_RT_MAX_FUNCTIONS (1u << 22)       /* registry capacity (grown on demand) */
#define INSTR_RT_MAX_MODULES 4096u
#define INSTR_RT_MAX_STRING 16384u              /* longest name/path written to a record */
#define INSTR_RT_DROP_RETRY 65536u              /* dropped events between chunk retries */
#define INSTR_RT_STACK_SPAN (1u << 20)          /* a new frame's CFA further than this from the
                                                   top frame's: another stack (foreign-task.c) */

/* One shadow-stack entry: a live instrumented frame, or a call-site frame
 * (an open call from an instrumented function).  A call-site frame has
 * desc = INSTR__SITE_FRAME(site id): odd, so it never equals a descriptor
 * (those are 8-byte aligned); its cfa is its caller's. */
struct instr__frame {
    const struct instr_fn_desc *desc;
    uintptr_t cfa; /* caller's stack pointer: never increasing towards the top */
};

#define INSTR__SITE_FRAME(id) ((const struct instr_fn_desc *)(((uintptr_t)(id) << 1) | 1u))
#define INSTR__IS_SITE(desc) (((uintptr_t)(desc)) & 1u)
#define INSTR__SITE_ID(desc) ((uint32_t)((uintptr_t)(desc) >> 1))
/* struct instr_site_desc.target of an indirect site caches the last target
 * and its id packed: id << 48 | address (user addresses fit 47 bits), so
 * one 64-bit load reads both consistently.  Ids above 0xffff are not cached. */
#define INSTR__TARGET_BITS 48
#define INSTR__TARGET_MASK ((UINT64_C(1) << INSTR__TARGET_BITS) - 1)

/* A stream's staging area (dump-file.c): every chunk of one stream (a
 * thread's events or samples, the metadata) is written in a few chunks of
 * the dump of its own, mapped once and pre-faulted, handed out one at a
 * time without a system call, and copied out with one pwrite once all are
 * full.  The stream's last chunks stay in it. */
struct instr__stage {
    uint8_t *base;  /* the mapping, NULL if none */
    uint64_t slot;  /* where its first chunk lies: INSTR_RT_UNITs after the dump header */
    uint32_t n;     /* chunks in it: 1 (the first, INSTR_RT_FIRST_CHUNK_SIZE), then 1, 2, 4 ... */
    uint32_t csize; /* bytes per chunk in it */
    uint32_t next; /* the next to hand out */
    uint32_t gen;  /* the dump it belongs to (instr__rt.dump_gen): a fork
                      child's inherited stages are the parent's */
};

/* A hook that ran while its thread's guard was held (a signal handler that
 * interrupted a hook): recorded by the next hook, with its own tick.
 * Handlers chain: one whose signal came while an earlier one ran is
 * delivered at that one's return, before the interrupted hook runs again,
 * so on a loaded machine a single hold collects many handlers' events (a
 * 200 us timer whose handler makes 22 hooks: 14 chained handlers, 308
 * events, seen in CI).  The slots lie in the state's MAP_NORESERVE
 * mapping: pages nobody defers into are never touched. */
#define INSTR_RT_DEFERRED 2048u
struct instr__deferred {
    uint64_t tsc;
    const void *desc;   /* function or call-site descriptor */
    uintptr_t cfa;
    void *target, *ra;  /* call sites */
    uint8_t kind;       /* INSTR__HOOK_* (hooks.c) */
    volatile uint8_t ready; /* written last: a jump out of the handler mid-way leaves 0 */
};

/* t->busy values that are not a hook's CFA: the runtime itself holds the
 * guard (thread start and end, exit, fork), hooks do nothing. */
#define INSTR__BUSY_RUNTIME 1u
/* The state of a thread whose own state could not be mapped (address space
 * exhausted: RLIMIT_AS): its hooks count their events as dropped. */
#define INSTR__BUSY_LOST 2u
#define INSTR__BUSY_IS_HOOK(b) ((b) > 4095u)

/* Per-thread state, reached through the one initial-exec TLS pointer.  The hot
 * fields come first (one cache line).  Lives in its own anonymous mapping,
 * followed by the first INSTR_RT_STACK_FIRST frames of the shadow stack;
 * deeper recursion moves the stack to mappings twice as large
 * (instr__stack_grow), so a thread reserves about what it uses. */
struct perf_event_mmap_page;

/* Each detector backend's per-thread state, beyond the hot det_word. */
struct instr__det_thread {
    uint64_t self;              /* det_word target when the detector sees nothing */
    volatile uint64_t *pf_word; /* perf ring data_head, or &self */
    uint64_t pf_armed;          /* value pf_word held at the last check */
    uint8_t on;                 /* INSTR__DET_ON_*: backends armed on this thread */
    uint8_t offcpu_on;          /* cpuclock backend: flagged events carry off-CPU ticks */
    uint64_t clean_ticks;       /* ticks of unflagged intervals since cpu_last was read */
    uint64_t cpu_last;          /* thread CPU clock (ns) at the last flagged event */
    const volatile struct perf_event_mmap_page *pmc_page; /* rdpmc counter page, or NULL */
    uint64_t pmc_armed;         /* kernel instructions counted at the last check */
    void *pf_map;               /* the perf ring */
    /* sud's budget (detector-sud.c): traps in the current window, from when;
     * paused until; the INSTR_OS_* kinds unseen now, and as last written. */
    uint32_t sud_traps;
    uint64_t sud_window_ns, sud_until_ns;
    uint8_t unseen;             /* kinds a backend stopped watching (sud paused) */
    uint8_t notyet;             /* kinds not watched yet: perf's event opens late (detector-perf.c) */
    uint16_t unseen_written;    /* unseen | notyet << 8, as last written (EXT UNSEEN) */
    uint64_t perf_due_ns;       /* perf's event is opened at a slow path from then on (0: not pending) */
};

/* EXT UNSEEN's argument for t: the kinds unwatched from here. */
#define INSTR__UNSEEN_WORD(t) ((uint16_t)((t)->det.unseen | (unsigned)(t)->det.notyet << 8))

/* Record-time filters (filter.c): why a call was not recorded. */
enum { INSTR__FILTERED_DEPTH, INSTR__FILTERED_SHORT, INSTR__FILTERED_OFF, INSTR__FILTERED_KINDS };
#define INSTR__REWIND_SLOTS 64u

#define INSTR_RT_ICACHE 256 /* per-thread (indirect site, target) cache entries: 6 KiB */

struct instr__thread {
    uint8_t *pos;              /* next free byte of the current chunk */
    uint8_t *limit;            /* switch chunk once pos >= limit (room for one more event) */
    uint64_t last_tsc;         /* ticks of the previous event written */
    struct instr__frame *top;  /* one past the topmost live frame */
    struct instr__frame *base; /* bottom of the shadow stack */
    struct instr__frame *end;  /* capacity limit */
    volatile uint64_t *det_word; /* detector word (rseq_cs field, or det.self) */
    uint64_t det_armed;        /* value det_word holds while nothing happened */
    uintptr_t busy;            /* recursion guard (record.h): 0 free, INSTR__BUSY_RUNTIME,
                                  or the CFA of the hook holding it */
    union {
        struct {
            uint32_t pending_bits; /* transition bits seen by a hook that wrote nothing */
            uint32_t def_n;        /* deferred events waiting (atomic; may exceed the slots) */
        };
        uint64_t go_slow;          /* either: the next hook takes the slow path */
    };
    /* In pending_bits, never an OS bit: the thread filters (filter.c), so
     * every hook takes the slow path, where the filters are decided. */
#define INSTR__FILTERING 0x80000000u
    uint64_t overflow;         /* frames entered beyond capacity (untracked) */

    /* cold */
    struct instr_chunk_header *chunk; /* current events chunk (NULL when dropping) */
    struct instr__stage stage; /* where chunk lies (dump-file.c) */
    uint32_t index;            /* dense thread number in this dump */
    uint32_t tid;
    uint32_t seq;              /* next chunk sequence number */
    uint32_t dropping;         /* events go to scratch and are counted as dropped */
    uint32_t unregistered;     /* calls at sites that got no id (dropped): their returns are not unmatched */
    uint64_t dropped;          /* dropped since the last chunk (for EXT DROPPED) */
    size_t map_size;           /* size of this state's mapping */
    uint64_t cpu0_ns;          /* its CPU clock when it started recording (EXIT_CPU counts from it) */
    /* Grown shadow stacks, the current one last.  The older ones stay
     * mapped until the thread ends: a hook interrupted by a signal handler
     * that grew the stack may still read its top frame there. */
    struct {
        void *map;
        size_t size;
    } stacks[INSTR_RT_STACK_GROWS];
    uint32_t nstacks;
    struct instr__thread *next; /* live-thread list (meta lock) */
    uint8_t scratch[2 * 64];   /* where events go while dropping */
    struct instr__deferred def[INSTR_RT_DEFERRED]; /* hooks run while busy (record.h) */

    /* Record-time filters (filter.c): the calls each left out since the
     * last flush to the header, and for INSTR_MIN_DURATION where each open
     * frame's ENTER was written, so a short call can be taken back
     * (hooks.c).  Indexed by depth modulo INSTR__REWIND_SLOTS; deeper
     * frames share a slot and find it taken (they stay recorded). */
    uint64_t filtered[INSTR__FILTERED_KINDS];
    struct instr__rewind {
        uint8_t *before, *after;   /* the ENTER's first byte, and one past its last */
        uint64_t last_tsc;         /* t->last_tsc before it */
        uint64_t clean_ticks;      /* t->det.clean_ticks before it */
        uint64_t tsc;              /* its tick */
        uint64_t runtime;          /* ticks of the registration its EXT RUNTIME says (0: none) */
        const void *desc;          /* the frame it pushed */
        uintptr_t cfa;
        uint32_t seq;              /* the chunk it lies in */
        uint8_t kept;              /* it cannot be taken back (it carries the OS's
                                      transition bits, or a registration off the CPU) */
        uint8_t by_call;           /* an ENTER right after its call's CALL (t->called):
                                      the two go or stay together */
    } rewind[INSTR__REWIND_SLOTS];
    /* The call-site frame the thread's last hook pushed (a CALL), with the
     * name its call names (NULL: through a pointer), while no other hook
     * has run since; NULL otherwise.  The callee's entry then belongs to
     * that call: recorded whenever the call was (hooks.c: enter_write).
     * The last name compared with an entry's function, and the answer:
     * a loop's calls compare once. */
    const struct instr__frame *called;
    const char *called_name;
    const char *called_cmp_name;
    const struct instr_fn_desc *called_cmp_fn;
    int called_cmp_same;

    struct instr__det_thread det; /* the detector backends' state (detector.h) */
    struct instr__sampler *sampler; /* INSTR_SAMPLE (sampler.c), or NULL */
    struct instr__stacks *suspended; /* suspended shadow stacks (stack-switch.c), or NULL */
    /* The stack a foreign task was last found on (foreign-task.c): hooks
     * there are foreign without a system call, foreign_left more times. */
    uintptr_t foreign_lo;
    uint32_t foreign_left;
    /* Indirect call sites whose one-target cache in the descriptor missed
     * (a virtual call meeting several classes in turn): (site, caller id,
     * target) -> call-site id, direct-mapped, so a polymorphic call costs
     * a lookup here instead of the registration path (hooks.c). */
    struct instr__icache {
        uintptr_t site, target;
        uint32_t caller, id; /* id 0: empty */
    } icache[INSTR_RT_ICACHE];
    unsigned end_rounds; /* pthread_key destructor rounds the thread's end was put off (thread-state.c) */
};

/* The one TLS slot (we are dlopen'd: keep static TLS tiny). */
extern __thread struct instr__thread *instr__tls __attribute__((tls_model("initial-exec")));

/* Process state. */
struct instr__process {
    int fd;                            /* kept dump descriptor (high, close-on-exec), or -1 */
    int dir_fd;                        /* kept descriptor of the dump's directory, or -1 */
    int stopped;                       /* no more chunks (no space, fd lost) */
    struct instr_dump_header *header;  /* shared mapping of the header */
    char path[4096];                   /* absolute dump path */
    uint32_t dump_gen;                 /* bumped at each dump created (fork children) */
    uint64_t max_units;                /* chunk lock: INSTR_MAX_SIZE, in INSTR_RT_UNITs after the header */
    char output_template[4096];        /* INSTR_OUTPUT (or the default), absolute */
    char exe_path[1024];
    uint64_t next_unit;                /* chunk lock: the next INSTR_RT_UNIT to reserve */
    uint64_t granted_units;            /* chunk lock: the limits were checked up to this unit */
    pthread_mutex_t chunk_lock;
    pthread_mutex_t meta_lock;         /* metadata, registry, thread list; before chunk_lock */
    struct instr_chunk_header *meta;   /* current metadata chunk */
    struct instr__stage meta_stage;    /* where it lies (meta lock) */
    uint8_t *meta_pos;
    uint32_t meta_seq;
    uint32_t next_thread_index;        /* meta lock */
    struct instr__thread *threads;     /* live threads (meta lock) */
    pthread_key_t key;                 /* thread-exit destructor */
    uint64_t stack_overflows;          /* frames not tracked (shadow stack full) */
    int space_warned;
    int fork_pending;                  /* a fork child's dump waits for its first hook (lifecycle.c) */
};

extern struct instr__process instr__rt;

/* The static state hooks see when they must do nothing (busy == 1): while a
 * thread's state is being created, after it ended, or when not recording. */
extern struct instr__thread instr__idle_thread;
/* The static state of threads that could not get their own (busy ==
 * INSTR__BUSY_LOST): counted in the header (unrecorded_threads), their
 * events counted as dropped. */
extern struct instr__thread instr__lost_thread;

/* t if it is a thread's own state, NULL for none or a static one (idle,
 * lost): the static states are never written. */
static inline struct instr__thread *instr__thread_own(struct instr__thread *t)
{
    return t == &instr__idle_thread || t == &instr__lost_thread ? NULL : t;
}

/* bind.c */
__attribute__((visibility("default"))) int instr__bind(instr_hook_fn *table, unsigned slots,
                                                       unsigned abi);
int instr__process_init(void);

/* dump-file.c */
int instr__dump_create(uint32_t flags);
void instr__dump_detach(void); /* a fork child: the parent's dump let go of, none made yet */
int instr__dump_allowed(void);
/* The next chunk of the stream that owns s, header filled in (NULL when not
 * recording).  The caller has already set the previous chunk's used_bytes:
 * that chunk is copied out first. */
void *instr__chunk_map(struct instr__stage *s, uint16_t kind, uint32_t thread_index, uint32_t tid,
                       uint32_t seq, uint64_t base_tsc);
/* The chunk of s's staging area that pos (a write position, at most the
 * chunk's end) lies in, or NULL. */
static inline struct instr_chunk_header *instr__stage_chunk_of(const struct instr__stage *s, const uint8_t *pos)
{
    if (!s->base || s->gen != instr__rt.dump_gen || pos <= s->base || pos > s->base + (size_t)s->n * s->csize)
        return NULL;
    return (struct instr_chunk_header *)(s->base + (size_t)(pos - 1 - s->base) / s->csize * s->csize);
}
/* The chunk after the one pos lies in, in s's staging area, its header
 * written (that one's seq + 1, kind, thread and base_tsc): no system call.
 * NULL when pos is in the area's last chunk (instr__chunk_map then copies
 * the area out) or outside it.  Done again for the same pos, it hands out
 * the same chunk with the same header. */
void *instr__chunk_after(struct instr__stage *s, const uint8_t *pos, uint64_t base_tsc);
/* The stream ends (thread end), or s is a fork parent's: unmaps it. */
void instr__chunk_unmap(struct instr__stage *s);
void instr__header_touch(void);
void instr__header_end(struct instr_dump_header *h); /* end_* and last_* stamped now */
void instr__notes_to_header(struct instr_dump_header *h); /* log.c: lines said before h existed */
/* One event lost, counted in the header's dropped_events. */
void instr__count_dropped_kind(unsigned kind); /* a dropped event of this INSTR_EV_* kind */
int instr__expand_output(const char *tmpl, char *out, size_t size);

/* job.c: who the process is in a job of many (MPI and other launchers). */
struct instr__job {
    int32_t rank;         /* -1: not launched as one of a job's ranks */
    uint32_t size;        /* processes in the job (0 unknown) */
    char host[64];        /* uname nodename */
    char id[64];          /* the job's id, safe in a file name; "" without a rank */
    const char *launcher; /* its row's name, NULL without a rank */
};
extern struct instr__job instr__job;
void instr__job_init(void);                               /* process start, before the dump's name */
void instr__job_header(struct instr_dump_header *h);      /* the header's job_* and host fields */
const char *instr__dump_path(void);

/* metadata.c: the records (the meta lock is taken inside unless said) */
uint32_t instr__register(struct instr_fn_desc *d, unsigned kind); /* kind: the event lost if no room */
uint32_t instr__register_site(struct instr_site_desc *s, void *target, void *ret_addr);
void instr__meta_thread(uint32_t index, uint32_t tid, const char *name);
void instr__meta_thread_locked(uint32_t index, uint32_t tid, const char *name); /* lock held */
void instr__meta_reemit(void);                                   /* lock held */
void instr__meta_label(uint32_t id, const char *text);           /* lock held */
void instr__meta_unit(const struct instr_unit_desc *u);        /* the unit hook (threshold=) */
int instr__meta_init(void);
/* The address the dynamic linker binds name to, or NULL; allocates
 * nothing (dynsym.c: dlsym's failure path calls malloc). */
void *instr__dynsym(const char *name);

/* The ids the runtime names things by, from the kernel: never the
 * program's getpid or gettid, which it may define for itself (the runtime
 * never calls into the program, issue 38 §2). */
static inline pid_t instr__getpid(void)
{
    return (pid_t)syscall(SYS_getpid);
}
static inline pid_t instr__getppid(void)
{
    return (pid_t)syscall(SYS_getppid);
}
static inline uid_t instr__geteuid(void)
{
    return (uid_t)syscall(SYS_geteuid);
}

/* labels.c: label text -> id for instr_event / instr_counter */
uint32_t instr__label_cached(const char *label); /* no lock; 0 if not cached */
uint32_t instr__label_register(const char *label); /* meta lock; 0 if not recorded */
void instr__labels_reemit(void);                   /* fork child, meta lock held */

/* thread-state.c */
struct instr__thread *instr__thread_create(unsigned ev); /* ev: the INSTR_EV_* kind of the hook asking */
void instr__thread_stopped(struct instr__thread *t);
void instr__thread_end(void *arg);
void instr__chunk_next(struct instr__thread *t);
void instr__thread_name(uint32_t tid, char *buf, size_t size);
void instr__thread_drop_others(struct instr__thread *keep);
int instr__thread_restart(struct instr__thread *t);
/* Moves t's shadow stack to a mapping twice as large (busy held, t->top at
 * t->end): 0, or -1 (capacity reached, no memory: the caller counts the
 * frame as untracked). */
int instr__stack_grow(struct instr__thread *t);
void instr__thread_unmap(struct instr__thread *t);
void instr__thread_names_all(void); /* at exit: THREAD records with the final names */
void instr__meta_exit_cpu_locked(uint32_t index, uint64_t cpu_ns, uint64_t tick, int room_only);
/* CLOCK_SYNC (dump-format.h): this process's ticks local against peer's peer_ticks, to within a
 * round trip of rtt ticks. */
void instr__meta_clock_sync(uint32_t peer, uint64_t local, uint64_t peer_ticks, uint64_t rtt);
void instr__thread_cpu_all(int in_signal); /* at exit or a fatal signal: EXIT_CPU records */

/* hooks.c */
void instr__hook_enter(struct instr_fn_desc *d, void *cfa);
void instr__hook_exit(struct instr_fn_desc *d, void *cfa);
void instr__hook_landing(struct instr_fn_desc *d, void *cfa);
void instr__hook_nop(struct instr_fn_desc *d, void *cfa);
void instr__hook_call(struct instr_site_desc *s, void *cfa, void *target);
void instr__hook_return(struct instr_site_desc *s, void *cfa);
/* The same, each first making the calling thread filter (bound once the
 * switch went off: instr__filter_switch). */
void instr__hook_enter_joining(struct instr_fn_desc *d, void *cfa);
void instr__hook_exit_joining(struct instr_fn_desc *d, void *cfa);
void instr__hook_landing_joining(struct instr_fn_desc *d, void *cfa);
void instr__hook_call_joining(struct instr_site_desc *s, void *cfa, void *target);
void instr__hook_return_joining(struct instr_site_desc *s, void *cfa);
/* Thread t (the caller's own) filters from now on. */
void instr__thread_join_filtering(struct instr__thread *t);
/* Points table's hooks at the joining ones (switch.c). */
void instr__hooks_join(instr_hook_fn *table);
/* switch.c: a function compiled without switchable was registered (its
 * hooks always run: the switch reaches it through the filters). */
void instr__switch_unswitchable(void);
/* api.c: EXT SWITCH while a hook holds the guard: deferred (its tick kept) */
void instr__switch_deferred(struct instr__thread *t, int on);
/* The deferred events written now (the runtime holds the guard) */
void instr__deferred_flush_now(struct instr__thread *t);

/* api.c: instr_event / instr_counter (include/instr/instr.h) */
void instr__api_event(const char *label);
void instr__api_counter(const char *label, int32_t value);

/* switch.c: instr_start / instr_stop (include/instr/instr.h) and the word
 * switchable modules test (hook-abi.h, INSTR_SLOT_ON) */
void instr__api_start(void);
void instr__api_stop(void);
void instr__api_switched(int on);   /* api.c: EXT SWITCH on the calling thread */
int instr__switch_off(void);        /* switch.c: the switchable hooks are off now */
void instr__switch_bind(instr_hook_fn *table, int recording);

/* filter.c: the record-time filters (INSTR_DEPTH, INSTR_MIN_DURATION,
 * INSTR_TRIGGER), read once before the dump is created. */
struct instr__filter {
    uint32_t depth;      /* 0: no limit */
    uint32_t triggers;   /* trigger functions named */
    uint64_t min_ticks;  /* 0: none */
    int starts_off;      /* an :on trigger: recording begins off */
    int any;             /* some filter is set: threads filter */
    int on;              /* triggers, and the switch on unswitchable code: recording now (atomic) */
    int switched;        /* the switch went off once: threads filter for it (instr__filter_switch) */
};
extern struct instr__filter instr__filter;
void instr__filter_init(void);
void instr__filter_header(struct instr_dump_header *h);
void instr__filter_say_unmatched(void); /* at exit: each trigger no function that ran matched */ /* the filter fields, SWITCHED_OFF if a trigger has recording off */
/* At registration: INSTR_FN_RT_* of the function named so ("" demangled: none). */
uint16_t instr__filter_fn_flags(const char *mangled, const char *demangled);
void instr__filter_flush(struct instr__thread *t);
void instr__filter_switch(int on); /* the recording switch: the filters' on */
void instr__filter_join(void);     /* every thread filters from now on (the switch is off on unswitchable code) */
void instr__filter_flush_all(void);

/* foreign-task.c: 1 if the calling task, running a hook at cfa, does not
 * own t (a clone(CLONE_VM) child) */
int instr__foreign_task(struct instr__thread *t, uintptr_t cfa);

/* sandbox.c: 0 once the program is entering a seccomp sandbox (the runtime
 * then makes no system call); instr__sandbox_syscall: a system call about
 * to run (sud), 1 if it stopped recording. */
int instr__may_syscall(void);
void instr__sandbox_enter(const char *why);
int instr__sandbox_syscall(long nr, unsigned long arg0, unsigned long arg1);
/* A call site marked INSTR_SITE_SANDBOX is about to run its call: recording
 * stops (strict: the call may take the thread's TSC away). */
void instr__sandbox_call_site(int strict);
/* The calling thread records nothing more: its hooks count their events
 * as dropped; tsc_gone: rdtsc faults on it from now on (instr__tsc_gone:
 * the runtime's exit and crash paths then read no clock). */
void instr__sandbox_thread_stop(int tsc_gone);
/* The calling thread's TSC is taken away (PR_SET_TSC seen by sud, or a
 * hook's rdtsc faulted: fatal-signals.c): recording stops, with the reason
 * in the header, and the thread's with it (tsc_gone). */
void instr__sandbox_tsc_gone(void);
extern __thread int instr__tsc_gone __attribute__((tls_model("initial-exec")));

/* clock.c */
/* The tick read (instr__tsc), what the dump header says of this machine
 * (INSTR_RT_ARCH, INSTR_RT_TICKS) and the rest of what differs by CPU:
 * arch.h, from runtime/arch/<arch>/. */
uint64_t instr__mono_ns(void);
void instr__clock_pair(uint64_t *tsc, uint64_t *mono_ns, uint64_t *real_ns);

/* lifecycle.c */
/* lifecycle.c: the process is about to leave with exit_group(status) (seen
 * by the sud trap): record its end if the exit path did not */
void instr__exit_group_seen(int status);
int instr__lifecycle_init(void);
struct instr__thread *instr__fork_child_resume(void);
void instr__fork_child_signalled(void);
void instr__hook_ending(long status); /* slot INSTR_SLOT_ENDING: _exit and kin next */

/* calibrate.c: the hooks' cost in this process (HOOK_COST records), once
 * at start; _reemit writes the records again (meta lock held: fork child). */
void instr__calibrate(void);
void instr__calibrate_reemit(void);
/* calib-cache.c: calibrate.c's cost[] (16 values) kept per boot, CPU,
 * detector set and hook path (calibrate.c's run_path(): 0 the fast one) in
 * a directory only the user can write; load: 0 if found valid. */
int instr__calib_cache_load(uint64_t *values, uint32_t detector_set, uint64_t path);
void instr__calib_cache_store(const uint64_t *values, uint32_t detector_set, uint64_t path);
void instr__meta_hook_cost(const uint64_t v[5]); /* metadata.c: one HOOK_COST record */
void instr__meta_sampling(uint64_t rate_hz, uint64_t period_ns, uint64_t stack_bytes,
                          const char *unwinder); /* metadata.c: the SAMPLING record, lock held */
/* metadata.c (lock held): the module at base (its MODULE record the first
 * time; 0 if the table is full), and one MAP record. */
uint32_t instr__meta_module(const char *path, uintptr_t base);
void instr__meta_map(uint32_t module, uint64_t start, uint64_t end, uint64_t offset, uint64_t tick);

/* fatal-signals.c */
void instr__fatal_signals_init(void);

/* preinit.c: a note when the executable's .preinit_array functions ran
 * before recording began. */
void instr__preinit_say(void);

/* log.c: the runtime's few words to the user, one line each. */
void instr__say(const char *a, const char *b, const char *c, const char *d);
/* filter.c: "500", "500ns", "20us", "1.5ms", "1s" in ns, or -1. */
double instr__parse_ns(const char *s);

/* sampler.c: INSTR_SAMPLE=HZ, one perf ring per thread drained on slow paths */
struct instr__sampler;
void instr__sampler_thread(struct instr__thread *t);
void instr__sampler_drain(struct instr__thread *t);
void instr__sampler_last_drain(struct instr__thread *t); /* thread end, process exit: also the last losses */
void instr__sampler_thread_end(struct instr__thread *t);
void instr__sampler_fork_child(struct instr__thread *t);
/* maps.c: MAP records of the executable mappings, written again when the
 * set of loaded objects changed (or into a fork child's new dump).  Slow
 * paths only (the sampler's start and drain); takes the meta lock. */
void instr__maps_check(void);

/* count.c: count mode (plugin mode=count, hook-abi.h). */
void instr__count_thread(const struct instr_count_module *m, uintptr_t *delta); /* the slot's hook */
void instr__count_arm(const struct instr_count_module *m, uint8_t *armed, uintptr_t tp); /* TLS cells */
/* The slot's entry, instr__count_arm with every register kept: arch.h. */
void instr__count_flush(void);      /* at exit: FN_CALLS/SITE_CALLS records, flag COUNTS */
void instr__count_fork_child(void); /* the child counts from zero */
int instr__count_active(void);      /* a count-mode module is bound */
/* metadata.c: one FN_CALLS / SITE_CALLS record (meta lock taken). */
void instr__meta_fn_calls(uint32_t fn, uint64_t calls);
void instr__meta_site_calls(uint32_t caller, uint32_t line, uint32_t flags, const char *callee,
                            uint64_t calls);

/* Internal helpers. */
uint32_t instr__gettid(void); /* the kernel's thread id (thread-state.c), as instr__getpid */

#define INSTR_LIKELY(x) __builtin_expect(!!(x), 1)
#define INSTR_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Writes an event head at p: the first event of a hook carries the interval
 * (delta since the thread's previous event, and the transition bits, which
 * it consumes); later events of the same hook get delta 0.  The caller
 * guarantees INSTR_EVENT_MAX_BYTES of room. */
/* The runtime just did slow work of its own (registering a function or a
 * call site, mapping a new chunk) after the event it wrote at t->last_tsc.
 * The next interval starts when that work is done, and an EXT RUNTIME
 * event says how long it took, so no function is charged for it.  Needs
 * the room of one event. */
static inline uint8_t *instr__put_runtime(struct instr__thread *t, uint8_t *p);

/* The transition byte of a flagged event, and with the cpuclock backend
 * the interval's off-CPU ticks after it (detector-cpuclock.c). */
uint8_t *instr__put_bits(struct instr__thread *t, uint8_t *p, unsigned bits, uint64_t delta);
int instr__offcpu_ticks(struct instr__thread *t, uint64_t delta, uint64_t *off);

static inline uint8_t *instr__put_head(struct instr__thread *t, uint8_t *p, uint64_t now,
                                       unsigned *bits, unsigned kind)
{
    uint64_t delta = now - t->last_tsc;
    if (INSTR_UNLIKELY((int64_t)delta < 0)) {
        /* The TSC went back (unsynchronised CPUs), or a deferred event
         * (record.h) is older than the last one written: clamp, and keep
         * the thread's time from going back (chunks start at last_tsc). */
        delta = 0;
        now = t->last_tsc;
    }
    t->last_tsc = now;
    unsigned b = *bits;
    *bits = 0;
    p = instr_put_varint(p, instr_event_head(delta, b, kind));
    if (INSTR_UNLIKELY(b))
        return instr__put_bits(t, p, b, delta);
    t->det.clean_ticks += delta; /* on the CPU throughout (detector-cpuclock.c) */
    return p;
}

/* Ticks this thread spent in sud's SIGSYS handler since its last event
 * (detector-sud.c measures them in place, TSC at its entry and exit). */
extern __thread uint64_t instr__sud_spent __attribute__((tls_model("initial-exec")));

/* The interval a hook ends made a system call that trapped into sud's
 * handler: the handler's own time is the detector's, charged to nobody.
 * It is cut from the end of the interval (EXT RUNTIME, as the runtime's
 * slow paths are), the interval ending just before it with its bits, and
 * the hook's own event then follows at now.  Skipped (the time stays in
 * the interval) when the chunk has no room left for the two records. */
static inline uint8_t *instr__put_sud_gap(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits)
{
    uint64_t spent = instr__sud_spent;
    instr__sud_spent = 0;
    if (spent >= now - t->last_tsc || (int64_t)(now - t->last_tsc) <= 0 || p + 32 > t->limit)
        return p;
    p = instr__put_head(t, p, now - spent, bits, INSTR_EV_EXT);
    p = instr_put_ext(p, INSTR_EXT_RUNTIME, spent, 0);
    t->last_tsc = now;
    return p;
}

/* A backend stopped (or started) watching this thread: what the report
 * cannot know of the intervals from here (sud's budget, perf's late start),
 * at the thread's last tick. */
static inline uint8_t *instr__put_unseen(struct instr__thread *t, uint8_t *p)
{
    if (INSTR_LIKELY(INSTR__UNSEEN_WORD(t) == t->det.unseen_written) || p + 32 > t->limit)
        return p;
    unsigned none = 0;
    p = instr__put_head(t, p, t->last_tsc, &none, INSTR_EV_EXT); /* delta 0 */
    p = instr_put_ext(p, INSTR_EXT_UNSEEN, INSTR__UNSEEN_WORD(t), 0);
    t->det.unseen_written = INSTR__UNSEEN_WORD(t);
    return p;
}

/* A hook whose check found the detectors fired did their slow work after
 * its tick (reading the perf ring, sud's checks, cpuclock's clock read: a
 * system call): that stretch is the detectors', cut from the interval
 * that starts at the hook (EXT RUNTIME, charged to nobody) rather than
 * left to the caller's next interval.  On the CPU: it counts as clean
 * ticks for cpuclock's next reading. */
static inline uint8_t *instr__put_detector_gap(struct instr__thread *t, uint8_t *p)
{
    uint64_t now = instr__tsc(), spent = now - t->last_tsc;
    if ((int64_t)spent <= 0 || p + 32 > t->limit)
        return p;
    unsigned none = 0;
    p = instr__put_head(t, p, t->last_tsc, &none, INSTR_EV_EXT); /* delta 0 */
    p = instr_put_ext(p, INSTR_EXT_RUNTIME, spent, 0);
    t->last_tsc = now;
    t->det.clean_ticks += spent;
    return instr__put_unseen(t, p);
}

/* The runtime's own stretch since the thread's last event (a chunk
 * switch, a first call): its CPU time is cut from the timeline (EXT
 * RUNTIME, charged to nobody).  With the cpuclock backend, the part spent
 * off the CPU (preempted, or waiting on the dump's pages) is the OS's: it
 * stays in the program's interval, flagged, as it would be without us; on
 * a loaded machine it was most of the stretch (main's Elapsed Inclusive
 * fell 15% short of the run). */
static inline uint8_t *instr__put_runtime(struct instr__thread *t, uint8_t *p)
{
    uint64_t now = instr__tsc(), spent = now - t->last_tsc, off = 0;
    instr__sud_spent = 0; /* its own system calls' traps are in the stretch */
    if ((int64_t)spent <= 0)
        return p;
    /* Below 1/8 of the stretch, off is the clocks' disagreement (the thread
     * clock against the TSC: a microsecond), not a switch. */
    if (t->det.offcpu_on && instr__offcpu_ticks(t, spent, &off) == 0 && off > spent / 8) {
        p = instr_put_varint(p, instr_event_head(off, 1, INSTR_EV_EXT));
        *p++ = INSTR_OS_SCHED | INSTR_OS_OFFCPU_FOLLOWS;
        p = instr_put_varint(p, off);
    } else {
        unsigned bits = 0;
        p = instr__put_head(t, p, t->last_tsc, &bits, INSTR_EV_EXT); /* delta 0 */
        if (!t->det.offcpu_on)
            t->det.clean_ticks += spent;
        off = 0;
    }
    p = instr_put_ext(p, INSTR_EXT_RUNTIME, spent - off, 0);
    t->last_tsc = now;
    return p;
}

#endif

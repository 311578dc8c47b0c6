/* wall.h - Wall Inclusive: for each function, the union over all threads
 * of the time it was on some stack (so at most the run's duration), and
 * the same for "any frame at all" (the session's Wall Inclusive).
 *
 * Elapsed Inclusive sums over threads: a function running in 8 threads at
 * once for 1 s has EI 8 s.  Its Wall Inclusive is 1 s, and EI / Wall is
 * its concurrency.  Within one thread the two are equal (the intervals of
 * one thread do not overlap), so a session of one thread needs nothing
 * here.  A thread's frames make segments: the time a function had a frame
 * open (from its outermost frame's open to its close, split where the
 * runtime worked on itself: EXT RUNTIME time is nobody's).  Ticks are the
 * dump's TSC values, shared by every thread and process of a machine.
 *
 * One process of 2 to INSTR_WALL_MERGE_MAX_THREADS threads (struct
 * instr_wall_merge): the walk
 * interleaves the threads in time order (profile.c, walk_merged); each
 * thread tells its segments as changes, +1 where one starts and -1 where
 * it ends, into its own FIFO (in tick order), and the changes are applied
 * in tick order up to the lowest tick any thread may still tell: per
 * function a count of open frames in all threads and the tick it left 0.
 * Memory: those counters, a walker per live thread and the changes
 * between the threads' positions (about a chunk each), not the run's
 * activations: no cap.
 *
 * Several processes (fork children; more threads; or the timeline and
 * interval observers on, which walk one thread at a time): the segments are kept,
 * per thread and function, and united (session-wall.c unites the
 * processes').  Memory: one segment (16 bytes) per outermost activation
 * of a function, less where activations touch; past INSTR_WALL_MAX_SEGS
 * the recording stops and Wall Inclusive is reported unknown (never a
 * guess).
 *
 * Time: a union is not rebuilt each time a thread ends (that copies the
 * whole union per thread: quadratic in the threads of a thread-per-task
 * server).  A list keeps a settled head (sorted, disjoint) and a tail of
 * the segments added since, in any order; the tail is sorted and merged
 * into the head once it is as long as the head, so each segment is
 * sorted O(log n) times in all: n log n for the run.
 */
#ifndef INSTR_WALL_H
#define INSTR_WALL_H

#include <stddef.h>
#include <stdint.h>

#define INSTR_WALL_MAX_SEGS (1u << 24)
/* The merged walk keeps every thread's walker until the threads before it
 * are folded, in thread order, so until the first thread ends: a process
 * of more threads (a thread-per-connection server) keeps the segments
 * instead (4,000 short threads: 407 MB merged against 240 MB, and 7.8x
 * the CPU time of 1,000 where the segments take 4x).  The next thread to
 * walk comes from a heap (profile.c), so up to here the walk is linear. */
#define INSTR_WALL_MERGE_MAX_THREADS 256

struct instr_wall_seg {
    uint64_t start, end; /* ticks, [start, end) */
};

/* s[0, settled) sorted and disjoint; s[settled, n) added since, in any
 * order, possibly overlapping (instr_wall_settle merges them). */
struct instr_wall_list {
    struct instr_wall_seg *s;
    size_t n, cap;
    size_t settled;
};

struct instr_wall {
    struct instr_wall_list *fn; /* per profile function: its union over the threads walked so far */
    struct instr_wall_list root; /* time with a non-empty stack, all threads */
    size_t nfn;                 /* functions with room (fn, cur, depth, open_at) */
    /* The thread being walked. */
    struct instr_wall_list *cur; /* per function: this thread's segments, in time order */
    struct instr_wall_list cur_root;
    uint32_t *depth;             /* per function: its open frames */
    uint64_t *open_at;           /* per function: the start of its open segment */
    uint32_t *touched;           /* the functions this thread opened (each once), for its end */
    size_t ntouched;
    uint32_t *seen;              /* per function: thread number + 1 when it last joined touched */
    uint32_t thread;             /* threads ended so far */
    uint64_t root_open;
    size_t segs;                 /* segments held, for the cap */
    struct instr_wall_merge *merge; /* a thread of a merged walk: its changes go there, no segments kept */
    uint32_t fifo;               /* ... into this FIFO of it */
    uint32_t root_n;             /* merged: the thread's stacks with a frame open */
    int overflow;                /* the cap was reached: Wall Inclusive unknown */
    int nomem;                   /* an allocation failed: likewise */
};

/* The time-ordered merge: every thread's frames as +1 / -1 on their
 * function's count of open frames (all threads), applied in tick order;
 * a function's Wall Inclusive grows while its count is above 0.  The
 * walk interleaves the threads (profile.c) and tells how far every
 * thread has gone (instr_wall_merge_advance): only the changes between
 * that mark and the threads' positions wait, in each thread's FIFO. */
struct instr_wall_op {
    uint64_t tick;
    uint32_t fn; /* UINT32_MAX: the session's "some stack non-empty" */
    int32_t d;
};

struct instr_wall_fifo {
    struct instr_wall_op *op; /* [head, n) not applied yet, in tick order */
    size_t head, n, cap;
};

struct instr_wall_merge {
    struct instr_wall_fifo *fifo; /* per thread (instr_wall_merge_thread) */
    size_t nfifo, capfifo;
    uint32_t *active;           /* the FIFOs not empty */
    size_t nactive;
    size_t held, peak;          /* changes waiting, and most at once */
    int64_t *count;             /* per function: its open frames, all threads */
    uint64_t *since;            /* ... above 0 since this tick */
    uint64_t *len;              /* ... its Wall Inclusive so far, ticks */
    size_t nfn;
    int64_t root_count;
    uint64_t root_since, root_len;
    int nomem;
};

/* w becomes a thread of the merge, with a FIFO of its own (kept after w
 * is freed, until its changes are applied).  0, or -1 without memory. */
int instr_wall_merge_thread(struct instr_wall_merge *m, struct instr_wall *w);
/* Applies the queued changes at ticks up to upto (no thread will queue
 * one earlier). */
void instr_wall_merge_advance(struct instr_wall_merge *m, uint64_t upto);
void instr_wall_merge_free(struct instr_wall_merge *m);

/* A frame of function fn opens / closes at tick (only the outermost one
 * of fn matters). */
void instr_wall_open(struct instr_wall *w, uint32_t fn, uint64_t tick);
void instr_wall_close(struct instr_wall *w, uint32_t fn, uint64_t tick);
/* The stack became non-empty / empty at tick. */
void instr_wall_root_open(struct instr_wall *w, uint64_t tick);
void instr_wall_root_close(struct instr_wall *w, uint64_t tick);
/* Time from tick to resume is nobody's (EXT RUNTIME): fn's open segment
 * (if any, and not split already) ends at tick and goes on at resume. */
void instr_wall_split(struct instr_wall *w, uint32_t fn, uint64_t tick, uint64_t resume);
void instr_wall_root_split(struct instr_wall *w, uint64_t tick, uint64_t resume);
/* The thread ended (every frame closed): its segments join the unions. */
void instr_wall_thread_end(struct instr_wall *w);
void instr_wall_free(struct instr_wall *w);

/* a := a union b (b's segments join a's tail; settled when the tail is
 * as long as the head).  0, or -1 without memory (a unchanged). */
int instr_wall_union(struct instr_wall_list *a, const struct instr_wall_list *b);
/* Sorts and merges a's tail into its head: a sorted and disjoint.  0, or
 * -1 without memory (a unchanged, still the same union). */
int instr_wall_settle(struct instr_wall_list *a);
/* The total length of a settled list's segments. */
uint64_t instr_wall_length(const struct instr_wall_list *l);

#endif

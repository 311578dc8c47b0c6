/* profile-walker.h - private to profile.c and profile-tree.c: the state of
 * one build's walk, which the walk of the events (profile.c: the stack,
 * interval by interval) and the call tree it grows (profile-tree.c: nodes,
 * function rows, the per-function/module/thread sums) share.  Nothing
 * else includes it; profile.h is the interface. */
#ifndef INSTR_PROFILE_WALKER_H
#define INSTR_PROFILE_WALKER_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* A small open-addressing map (k1, k2) -> u32 (profile-tree.c). */
struct map_ent {
    uint64_t k1;
    uint32_t k2;
    uint32_t val; /* UINT32_MAX = empty */
};

struct map {
    struct map_ent *e;
    size_t mask; /* capacity - 1 */
    size_t n;
};

/* ---- call tree ------------------------------------------------------------ */

/* A node's flagged intervals (the OS acted in them, or the frame is
 * excluded): rare, so kept apart from the values every interval touches. */
struct flagged {
    uint64_t n, t, offcpu_t;                                   /* count, ticks, of which off the CPU */
    uint64_t kind_n[INSTR_OS_NKINDS], kind_t[INSTR_OS_NKINDS]; /* per kind (charge_kinds) */
};

/* The first 64 bytes are what an interval charged to the node and a call
 * of it touch; the node array is 64-byte aligned, so that is one cache
 * line (a Lua run's tree of 6 k nodes stays in L2). */
struct node {
    uint64_t ee, ae, ce, po; /* ticks: elapsed, application, CPU exclusive; probe overhead in them */
    uint64_t calls;
    uint64_t key;        /* frame key (function id or call site) */
    uint32_t last_child; /* the child found last: a one-entry cache */
    uint32_t fn;         /* index into profile funcs */
    uint32_t parent;     /* node index; the root (0) is its own parent */
    uint8_t excluded;    /* --not-application: this frame or an ancestor matches */
    uint32_t flagged;    /* index into w->flagged, 0 = none yet */
    uint64_t kid_key[4]; /* the first children, inline: most functions call few others */
    uint32_t kid[4];     /* 0 = free slot */
    uint32_t first_child, next_sibling; /* filled after the walk */
};
_Static_assert(offsetof(struct node, excluded) < 64, "a node's hot fields in its first cache line");
_Static_assert(sizeof(struct node) == 128, "nodes are two cache lines");

/* A node's inclusive values, derived after the walk (instr_ptree_fold). */
struct incl {
    uint64_t ei, ai, ci, po;
};

struct walker {
    struct instr_profile *p;
    struct map fnmap;   /* key -> funcs index */
    struct map originmap; /* (hash of a source function's name and file, module) -> funcs index:
                             the row its GCC clones fold into (func_index) */
    struct map childmap; /* (key, parent) -> node */
    struct node *nodes;  /* 64-byte aligned (struct node) */
    size_t nnodes, capnodes;
    struct flagged *flagged; /* per node with flagged intervals (room for capnodes + 2): [0] unused,
                                [1] the pending call site's */
    size_t nflagged;         /* slots in use */
    struct incl *incl;       /* instr_ptree_fold's inclusive values, capnodes of them */
    uint32_t *fncount, *modcount; /* DFS counters */
    size_t capfncount;
    uint32_t *extcount;  /* DFS counter: pseudo-frames called by an open frame of a function */
    const struct instr_exclusions *x; /* --not-application, or NULL */
    unsigned os_ignored;              /* --os-events: kinds that leave an interval in Application time */
    const struct instr_timeline *tl;  /* the observer of frames opening and closing, or NULL */
    const struct instr_interval_observer *iv; /* the observer of intervals (hybrid.c), or NULL */
    struct instr_compensator comp;    /* the hook costs (compensate.h) */
    struct instr_wall *wall;          /* Wall Inclusive segments (wall_* steps), or NULL */
    uint64_t pend_raw;                /* the pending call site's dump tick */
    uint64_t pend_gap[4][2];          /* EXT RUNTIME gaps while it pends (wall_pending_gap) */
    int pend_ngaps;
    uint64_t pend_iv[8][2];           /* intervals under it, told to iv once its frame is known */
    int pend_niv;

    /* The thread being walked: its stack of open frames. */
    uint32_t thread;     /* its index in p->threads */
    uint32_t *stack;     /* node indices, stack[0] = root (0), stack[depth] = top */
    uint8_t *state;      /* per stack depth: ST_* */
    uint32_t depth;      /* not size_t: stores of the uint64_t values must not alias it */
    size_t capstack;     /* of stack and state */
    uint64_t cut;        /* ticks of the runtime's own work so far (EXT RUNTIME), cut from the timeline */
    uint64_t tl_last;    /* the last timeline tick told to the observer (observed_tick) */
    unsigned unseen;     /* INSTR_OS_* kinds unseen from unseen_at on (EXT UNSEEN), 0: none */
    unsigned notyet;     /* INSTR_OS_* kinds not watched yet from unseen_at on (EXT UNSEEN's second byte) */
    uint64_t notyet_off; /* off-CPU ticks (cpuclock) of the intervals since unseen_at while notyet */
    uint64_t unseen_at;
    int thread_cut;      /* a chunk of this thread ended on invalid bytes: what follows its last event is not known */
    /* A call site on top whose frame the next event decides (ST_PENDING). */
    int pending;
    int pend_reenter;    /* pushed again after an unwind (EXT REENTER_SITE): no call counted */
    uint64_t pend_site;  /* its site id */
    uint64_t pend_tick;  /* its timeline tick (cut applied) */
    struct node pend;    /* the time it has had so far (ee, ae, flagged) */
    /* The thread's other stacks (EXT STACK_SWITCH: coroutines), suspended. */
    struct saved_stack *saved;
    size_t nsaved, capsaved;
    uint64_t running;    /* id of the running stack */
};

/* ---- profile-tree.c: the call tree and the function rows ---------------- */

int instr_ptree_init(struct walker *w);
void instr_ptree_thread(struct walker *w);
int instr_ptree_init_thread(struct walker *w);
void instr_ptree_free_thread(struct walker *w);
void instr_ptree_free(struct walker *w);
struct flagged *instr_ptree_flagged_of(struct walker *w, struct node *n);
void instr_ptree_add_flagged(struct walker *w, struct node *n, const struct flagged *from);
uint32_t instr_ptree_child_slow(struct walker *w, uint32_t parent, uint64_t key);
int instr_ptree_fold(struct walker *w, struct instr_pthread *th);

/* The child of parent for key, on the walk's hot path (inline): the last
 * child found, else the first four; a new call path goes the slow way. */
static inline uint32_t child(struct walker *w, uint32_t parent, uint64_t key)
{
    struct node *par = &w->nodes[parent];
    uint32_t c = par->last_child;
    if (c && w->nodes[c].key == key)
        return c;
    /* Branch-light scan of the inline slots (unused slots have kid 0). */
    c = (par->kid_key[0] == key) * par->kid[0] | (par->kid_key[1] == key) * par->kid[1] |
        (par->kid_key[2] == key) * par->kid[2] | (par->kid_key[3] == key) * par->kid[3];
    if (c) {
        par->last_child = c;
        return c;
    }
    return instr_ptree_child_slow(w, parent, key);
}

/* ---- profile.c: the walk -------------------------------------------------- */

int instr_pwalk_grow_stack(struct walker *w);

#endif

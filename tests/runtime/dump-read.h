/* dump-read.h - a minimal dump reader for the runtime's unit tests.
 *
 * Not the tools' reader: it checks just enough to turn a dump into exact
 * event sequences ("enter f|enter g|exit|unwind stack|...") per thread.
 */
#ifndef INSTR_TEST_DUMP_READ_H
#define INSTR_TEST_DUMP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "dump-format.h"

#define TD_MAX_FUNCS 256
#define TD_MAX_THREADS 16

struct td_event {
    uint32_t thread;
    uint8_t kind;
    uint8_t bits;
    uint8_t ext;
    uint8_t reason;
    uint64_t delta;
    uint64_t arg;
    uint64_t offcpu; /* off-CPU ticks of the interval (cpuclock backend), else 0 */
};

struct td_dump {
    struct instr_dump_header h;
    struct td_event *ev;
    size_t nev;
    size_t payload_bytes; /* event bytes in all EVENTS chunks */
    size_t runtime_events; /* EXT RUNTIME events (not in ev[]) */
    size_t offcpu_events;  /* flagged events that carry off-CPU ticks */
    uint64_t runtime_ticks; /* the ticks they skipped */
    uint64_t runtime_offcpu_ticks; /* their flagged off-CPU ticks (left in the program's interval) */
    uint8_t runtime_bits;   /* the transition bits they carried, or-ed */
    /* EXT UNSEEN events in file order (the first TD_MAX_UNSEEN): thread, argument. */
#define TD_MAX_UNSEEN 16
    struct {
        uint32_t thread;
        uint64_t arg;
    } unseen[TD_MAX_UNSEEN];
    size_t nunseen;
    /* Bits of EXT RUNTIME events not yet given to their thread's next listed
     * event: a cut (the runtime's slow path, a detector's own time) splits
     * the interval between two hooks, and the OS's part of it can end at
     * the cut; the tests judge whole intervals between hooks, so the next
     * listed event carries them too. */
    uint8_t cut_bits[TD_MAX_THREADS];
    char *func_name[TD_MAX_FUNCS];
    char *func_file[TD_MAX_FUNCS];
    uint64_t func_line[TD_MAX_FUNCS];
    uint64_t func_module[TD_MAX_FUNCS];
    char *module_path[TD_MAX_FUNCS];
    char *thread_name[TD_MAX_THREADS];
    uint64_t thread_tid[TD_MAX_THREADS];
    unsigned nthreads; /* distinct thread indices seen in EVENTS chunks */
    char error[256];
};

/* 0, or -1 with d->error set. */
int td_read(const char *path, struct td_dump *d);
void td_free(struct td_dump *d);
/* The events of one thread as text, e.g. "enter f|exit"; caller frees. */
char *td_text(const struct td_dump *d, uint32_t thread);

#endif

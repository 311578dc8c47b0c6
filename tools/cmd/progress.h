/* progress.h - a progress line on stderr for long reads (instr-report).
 *
 * Front-end code, not library: it prints.  Shown only when stderr is a
 * terminal and reading has taken more than a second; updated at most ten
 * times a second; erased when done. */
#ifndef INSTR_PROGRESS_H
#define INSTR_PROGRESS_H

#include <stdint.h>

struct instr_progress {
    uint64_t total;    /* bytes to read */
    uint64_t done;     /* bytes read */
    double start;      /* monotonic seconds at instr_progress_start */
    double last;       /* last update shown */
    int tty;           /* stderr is a terminal */
    int shown;         /* a line is on screen */
};

void instr_progress_start(struct instr_progress *p, uint64_t total);
/* The callback of struct instr_dump (ctx = the struct instr_progress). */
void instr_progress_add(void *ctx, uint64_t bytes);
void instr_progress_end(struct instr_progress *p);

#endif

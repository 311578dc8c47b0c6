/* detector-none.c - the detector that sees nothing: Application == Elapsed.
 * Also the resting state of every backend that is off on a thread. */
#include "detector.h"

/* The thread watches a word of its own that only the runtime writes. */
void instr__detector_none_thread(struct instr__thread *t)
{
    t->det.self = 1;
    t->det_armed = 1;
    t->det_word = &t->det.self;
    t->det.pf_word = &t->det.self;
    t->det.pf_armed = 1;
    t->det.on = 0;
    t->det.pf_map = NULL;
}

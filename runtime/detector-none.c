/* detector-none.c - the detector that sees nothing: Application == Elapsed. */
#include <string.h>

#include "detector.h"

void instr__detector_none_init(struct instr__detector_info *info, const char *why)
{
    info->kind = INSTR_DETECTOR_NONE;
    info->sees = 0;
    memset(info->detail, 0, sizeof info->detail);
    strncpy(info->detail, why, sizeof info->detail - 1);
}

/* The thread watches a word of its own that only the runtime writes. */
void instr__detector_none_thread(struct instr__thread *t)
{
    t->det_self = 1;
    t->det_armed = 1;
    t->det_word = &t->det_self;
}

/* compensate.c - the hook costs of a dump, ready for the walk (compensate.h). */
#include "compensate.h"

#include <string.h>

/* mticks (the records) to the walk's 1/1024 ticks, rounded; the reader
 * bounds them. */
static uint32_t walk_units(uint64_t mticks)
{
    return (uint32_t)(((mticks << INSTR_COMP_SHIFT) + 500) / 1000);
}

int instr_comp_slow_unmeasured(const struct instr_dump *d)
{
    return (d->hdr.flags & INSTR_DUMP_SLOW_PATH_JOINED) && d->hdr.calibration_path != INSTR_CALIBRATION_PATH_FILTERING;
}

void instr_compensator_init(struct instr_compensator *c, struct instr_compensation *out, const struct instr_dump *d)
{
    static const unsigned hooks[] = {INSTR_EV_ENTER, INSTR_EV_EXIT, INSTR_EV_CALL, INSTR_EV_RETURN};
    memset(c, 0, sizeof *c);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        const struct instr_hook_cost *hc = &d->hook_cost[hooks[i]];
        if (!hc->rounds)
            continue;
        c->before[hooks[i]] = walk_units(hc->before);
        c->after[hooks[i]] = walk_units(hc->after);
        out->known = 1;
        c->cap += c->before[hooks[i]] + c->after[hooks[i]];
    }
    c->subtract = out->applied = out->known && !d->raw;
}

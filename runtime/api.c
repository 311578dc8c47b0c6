/* api.c - instr_event and instr_counter (include/instr/instr.h), and the
 * record of instr_start/instr_stop (EXT SWITCH, for switch.c).
 *
 * Bound to table slots INSTR_SLOT_EVENT / INSTR_SLOT_COUNTER; the module's
 * trampolines jump here.  Each call writes one event into the calling
 * thread's stream: EXT MARK (label id) or EXT COUNTER (label id, value).
 * Label ids come from the label registry (labels.c).
 */
#include "record.h"

struct mark_arg {
    const char *label;
    unsigned ext; /* INSTR_EXT_MARK or INSTR_EXT_COUNTER */
    int32_t value;
};

static uint8_t *mark_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits,
                           const void *arg)
{
    const struct mark_arg *a = arg;
    uint32_t id = instr__label_cached(a->label);
    if (INSTR_UNLIKELY(!id)) {
        id = instr__label_register(a->label);
        instr__detector_rearm(t); /* the lock and the record are the runtime's */
        if (!id)
            return p; /* not recorded */
    }
    p = instr__put_head(t, p, now, bits, INSTR_EV_EXT);
    return instr_put_ext(p, a->ext, id, a->value);
}

/* Writes EXT kind (MARK or COUNTER) for label on the calling thread. */
static void record(const char *label, unsigned ext, int32_t value)
{
    if (!label)
        return;
    struct instr__thread *t = instr__record_thread(INSTR_EV_EXT);
    if (INSTR_UNLIKELY(t->busy)) {
        /* Inside a hook (a signal handler): not deferred, counted. */
        if ((INSTR__BUSY_IS_HOOK(t->busy) || t->busy == INSTR__BUSY_LOST) && instr__rt.header)
            __atomic_fetch_add(&instr__rt.header->dropped_events, 1, __ATOMIC_RELAXED);
        return;
    }
    struct mark_arg a = {label, ext, value};
    instr__record(t, (uintptr_t)__builtin_frame_address(0), 1, mark_write, &a);
}

/* EXT SWITCH on the calling thread (switch.c): when the switchable code's
 * hooks were switched on or off. */
static uint8_t *switch_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits, const void *arg)
{
    p = instr__put_head(t, p, now, bits, INSTR_EV_EXT);
    return instr_put_ext(p, INSTR_EXT_SWITCH, *(const unsigned *)arg, 0);
}

void instr__api_switched(int on)
{
    struct instr__thread *t = instr__record_thread(INSTR_EV_EXT);
    if (INSTR_UNLIKELY(t->busy)) {
        /* INSTR_SIGNAL's handler inside a hook: recorded by the next hook,
         * at its own tick (hooks.c). */
        if (INSTR__BUSY_IS_HOOK(t->busy) || t->busy == INSTR__BUSY_LOST)
            instr__switch_deferred(t, on);
        return;
    }
    unsigned arg = on != 0;
    instr__record(t, (uintptr_t)__builtin_frame_address(0), 1, switch_write, &arg);
}

void instr__api_event(const char *label)
{
    record(label, INSTR_EXT_MARK, 0);
}

void instr__api_counter(const char *label, int32_t value)
{
    record(label, INSTR_EXT_COUNTER, value);
}

/* mpi.c - the runtime's side of the PMPI wrappers (mpi/instr-mpi.c): the
 * table of common/mpi-abi.h, the one symbol besides instr__bind that the
 * runtime exports.  No MPI here: the wrappers hand over plain numbers.
 *
 * An MPI call is written on the calling thread as one EXT MPI event (its
 * end, with the ticks it took) and an EXT MPI_FIELD event per field at
 * the same tick (dump-format.h).  Each is its own pass through the write
 * protocol (record.h): a chunk has room for one more event past its
 * limit, not for a call's eight, and the fields' pass writes delta 0, so
 * the intervals stay as they were.
 *
 * A clock sync (INSTR_MPI_CLOCK) is also a CLOCK_SYNC metadata record, on
 * or off: the tools align the job's clocks from the records alone,
 * before walking any event. */
#include "mpi-abi.h"
#include "record.h"

struct mpi_arg {
    unsigned ext;
    uint64_t arg;
    int64_t value;
};

static uint8_t *mpi_write(struct instr__thread *t, uint8_t *p, uint64_t now, unsigned *bits, const void *arg)
{
    const struct mpi_arg *a = arg;
    if (a->ext == INSTR_EXT_MPI_FIELD)
        now = t->last_tsc; /* at the MPI event's tick */
    p = instr__put_head(t, p, now, bits, INSTR_EV_EXT);
    return instr_put_ext(p, a->ext, a->arg, a->value);
}

static uint64_t mpi_tick(void)
{
    return instr__tsc();
}

static void mpi_record(unsigned call, uint64_t start, const int64_t *fields)
{
    if (!call || call > INSTR_MPI_CALL_MAX || !instr__rt.header)
        return;
    if (call == INSTR_MPI_CLOCK) {
        int64_t peer = fields[INSTR_MPI_FIELD_PEER], local = fields[INSTR_MPI_FIELD_CLOCK_LOCAL],
                root = fields[INSTR_MPI_FIELD_CLOCK_ROOT], rtt = fields[INSTR_MPI_FIELD_CLOCK_RTT];
        if (peer >= 0 && peer <= INT32_MAX && local >= 0 && root >= 0 && rtt >= 0)
            instr__meta_clock_sync((uint32_t)peer, (uint64_t)local, (uint64_t)root, (uint64_t)rtt);
        if (instr__switch_off())
            return; /* the record above is all while recording is off */
    }
    struct instr__thread *t = instr__record_thread(INSTR_EV_EXT);
    if (INSTR_UNLIKELY(t->busy)) {
        if (INSTR__BUSY_IS_HOOK(t->busy) || t->busy == INSTR__BUSY_LOST)
            __atomic_fetch_add(&instr__rt.header->dropped_events, 1, __ATOMIC_RELAXED);
        return;
    }
    uint64_t now = instr__tsc();
    struct mpi_arg a = {INSTR_EXT_MPI, call, (int64_t)(now > start ? now - start : 0)};
    instr__record(t, (uintptr_t)__builtin_frame_address(0), 1, mpi_write, &a);
    for (unsigned f = 1; f <= INSTR_MPI_FIELD_MAX; f++) {
        if (fields[f] == INSTR_MPI_ABSENT)
            continue;
        a = (struct mpi_arg){INSTR_EXT_MPI_FIELD, f, fields[f]};
        instr__record(t, (uintptr_t)__builtin_frame_address(0), 1, mpi_write, &a);
    }
}

static void mpi_pcontrol(int level)
{
    if (level)
        instr__api_start();
    else
        instr__api_stop();
}

static int mpi_off(void)
{
    return instr__switch_off();
}

static const struct instr_mpi_api api = {INSTR_MPI_API_VERSION, mpi_tick, mpi_record, mpi_pcontrol, mpi_off};

__attribute__((visibility("default"))) const struct instr_mpi_api *instr__mpi_api(void)
{
    return &api;
}

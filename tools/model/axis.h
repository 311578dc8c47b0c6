/* axis.h - one time axis for a session's processes: where each dump's
 * ticks fall, in ns from the session's start, so that processes on several
 * hosts (the ranks of a job) are drawn and measured against one clock
 * (axis.c).
 *
 * Processes of one host share its CLOCK_MONOTONIC: each dump's start on
 * it (start_mono_ns) is exact, and the axis is that clock.  Processes of
 * several hosts share no clock: each host's real-time clock (start_real_ns)
 * is taken, moved onto rank 0's where the ping-pongs of libinstr-mpi
 * measured it (CLOCK_SYNC records: an offset at MPI_Init and one at
 * MPI_Finalize, the line through them taking the clocks' drift); a dump
 * without its own measure takes another's of its host.  Built from the
 * dumps' headers and metadata alone, before any walk. */
#ifndef INSTR_AXIS_H
#define INSTR_AXIS_H

#include <stddef.h>
#include <stdint.h>

struct instr_dump;

enum instr_axis_kind {
    INSTR_AXIS_MONOTONIC, /* one host: its monotonic clock */
    INSTR_AXIS_REAL_TIME, /* several hosts, none measured: their real-time clocks as they were */
    INSTR_AXIS_PING_PONG, /* several hosts, every host's clock measured against rank 0's */
    INSTR_AXIS_PARTLY,    /* several hosts, some measured */
};

struct instr_axis_dump {
    double start_ns;     /* the dump's start_tsc on the axis */
    double scale;        /* axis ns per ns of the dump's own ticks (1 + the drift measured) */
    int measured;        /* 1: its own ping-pongs; 2: another process's of its host; 0: none */
    unsigned nsync;      /* its own CLOCK_SYNC records used (0-2) */
    double offset_ns[2]; /* rank 0's clock ahead of its host's, at each (measured on one host
                            too, where the axis, exact, does not use them) */
    double rtt_ns[2];    /* their round trips */
};

struct instr_axis {
    enum instr_axis_kind kind;
    size_t nhosts;
    double bound_ns;     /* the worst half round trip of the measures used (NAN: none) */
    struct instr_axis_dump *d; /* per dump */
    size_t n;
};

/* The axis of dumps[0..n): 0 or INSTR_ENOMEM. */
int instr_axis_build(struct instr_axis *a, const struct instr_dump *dumps, size_t n);
void instr_axis_free(struct instr_axis *a);

/* ns of dump i's own clock from its start_tsc (its ticks at its rate) on
 * the axis. */
static inline double instr_axis_at(const struct instr_axis *a, size_t i, double rel_ns)
{
    return a->d[i].start_ns + rel_ns * a->d[i].scale;
}

/* Dump i's ticks on the axis, in microseconds (NAN without a tick rate):
 * the timelines' unit, computed in it (not ns / 1e3, which rounds
 * otherwise). */
double instr_axis_tick_us(const struct instr_axis *a, const struct instr_dump *dumps, size_t i, uint64_t tick);
/* Dump i's ticks on the axis, ns (NAN without a tick rate). */
double instr_axis_tick_ns(const struct instr_axis *a, const struct instr_dump *dumps, size_t i, uint64_t tick);
/* Dump i's end (its exit, or the last calibration of a process killed) on the axis, ns.
 * A report takes instr_session_end_ns: for a process killed, the later of
 * that and its last event. */
double instr_axis_end_ns(const struct instr_axis *a, const struct instr_dump *dumps, size_t i);
/* The axis as the report's Clocks: line says it, into buf (empty when
 * there is nothing to say: one host and no ping-pong). */
void instr_axis_text(const struct instr_axis *a, char *buf, size_t len);
/* The largest offset measured between a host's clock and rank 0's, ns (0: none). */
double instr_axis_largest_offset(const struct instr_axis *a);
/* "monotonic", "real-time", "ping-pong", "partly ping-pong" (JSON). */
const char *instr_axis_method(const struct instr_axis *a);

#endif

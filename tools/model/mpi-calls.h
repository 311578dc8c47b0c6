/* mpi-calls.h - a job's MPI calls as libinstr-mpi recorded them (EXT MPI
 * and MPI_FIELD events, dump-format.h): mpiP's sections, per call site
 * (the call and the function and line it was made from) and per rank
 * (mpi-calls.c). */
#ifndef INSTR_MPI_CALLS_H
#define INSTR_MPI_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "dump-format.h"

struct instr_session;
struct instr_dump;

/* One call kept for the wait states (mpi-calls.c keeps them, wait-states.c
 * reads them): its times on its rank's own axis
 * (ns from the job's base: the earliest rank's real-time start). */
struct instr_mpi_rec {
    uint32_t rank;  /* index in m->ranks */
    uint32_t site;  /* index in m->sites before they are sorted */
    unsigned call;
    double start, end;
    int64_t f[INSTR_MPI_FIELD_MAX + 1];
    uint32_t seen;
};

struct instr_mpi_site {
    unsigned call;          /* INSTR_MPI_* */
    const char *caller;     /* the function the call was made from ("?": no instrumented frame) */
    uint64_t line;          /* the call's line (0: unknown, the call was not a call-site frame) */
    uint64_t calls;         /* over every rank */
    double time_ns;         /* the calls' time, summed */
    double time_max_ns;     /* the longest call */
    uint64_t messages;      /* point-to-point messages sent from here */
    uint64_t bytes;         /* bytes sent from here (collectives' too) */
    uint64_t bytes_calls;   /* calls that sent bytes: min/mean/max are over them */
    uint64_t bytes_min, bytes_max;
    double late_sender_ns;  /* receives here waiting for their send to start (wait states) */
    double wait_coll_ns;    /* collectives here waiting for the last rank to enter */
};

struct instr_mpi_rank {
    int32_t rank;
    /* Its clock against rank 0's (the wrappers' ping-pongs, CLOCK calls):
     * at real-time ns at[k] of this rank's axis (its header's real-time
     * pair plus its ticks), rank 0's axis was off[k] ns ahead, to within
     * half of rtt_ns[k].  k = 0: MPI_Init's, 1: MPI_Finalize's (the last). */
    unsigned nsync;            /* 0, 1 or 2 */
    double at_ns[2], off_ns[2], rtt_ns[2];
    double at_rel_ns[2];       /* at_ns from the job's base (the earliest rank's real-time start) */
    uint64_t local_tick[2], root_tick[2]; /* as recorded: this rank's ticks, rank 0's */
    double start_ns;           /* the rank's start on its own axis (the header's real-time pair) */
    uint64_t calls;
    uint64_t sent_messages, sent_bytes;         /* point-to-point */
    uint64_t received_messages, received_bytes; /* point-to-point, from the statuses */
};

struct instr_mpi_calls {
    struct instr_mpi_site *sites; /* by time, largest first */
    size_t nsites;
    struct instr_mpi_rank *ranks; /* as the job's ranks (job.h) */
    size_t nranks;
    uint64_t calls;
    double time_ns;
    const char *clock;            /* how the ranks' times are put on rank 0's axis: "ping-pong"
                                     (every rank but 0 measured it), "partly ping-pong" (some),
                                     "real-time" (none: each host's real-time clock as it was) */
    double clock_bound_ns;        /* the worst half round trip of the ping-pongs used (NAN: none) */
    double aligned_runtime_ns;    /* the job's runtime (first rank's start to last rank's end) on
                                     rank 0's axis; the POP communication and parallel efficiency
                                     from it (job.h has them on the clocks as they were) */
    double aligned_comm_eff, aligned_par_eff;
    double late_sender_ns, wait_coll_ns; /* the wait states, summed */
    uint32_t job_size;            /* the job's size (job.h) */
    uint64_t unmatched;           /* receives whose send is not among the calls, collectives not
                                     entered by every rank of the job: no wait state computed */
    struct instr_mpi_rec *recs;   /* every call, for the wait states (private to mpi-calls.c,
                                     wait-states.c) */
    size_t nrecs, caprecs;
    uint64_t invalid;             /* MPI events left out: a field or value out of range, a field
                                     with no MPI event before it */
};

/* The MPI calls of s's job (s->job; none when it has no ranks): 0 or
 * INSTR_ENOMEM.  Every value read is checked (the dumps are input). */
int instr_mpi_calls_build(const struct instr_session *s, struct instr_mpi_calls *m);
void instr_mpi_calls_free(struct instr_mpi_calls *m);
/* The wait states from m->recs, charged to m->sites (unsorted yet):
 * wait-states.c.  0 or INSTR_ENOMEM. */
int instr_mpi_wait_states(struct instr_mpi_calls *m);
/* The offset in ns from rank index i's axis to rank 0's at rel ns (from
 * the job's base) of its axis: interpolated between its ping-pongs. */
double instr_mpi_offset_ns(const struct instr_mpi_calls *m, size_t i, double rel);

/* Real-time ns ns of rank index i (m->ranks[i]) on rank 0's axis: its
 * offsets interpolated linearly between the two ping-pongs (one: that
 * offset; none: ns as it is). */
double instr_mpi_aligned_ns(const struct instr_mpi_calls *m, size_t i, double ns);
/* Ticks tick of dump d as real-time ns on its own axis (its header's pair). */
double instr_mpi_real_ns(const struct instr_dump *d, uint64_t tick);
/* "MPI_Send" for INSTR_MPI_SEND; "?" if unknown. */
const char *instr_mpi_call_name(unsigned call);

#endif

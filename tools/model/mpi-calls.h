/* mpi-calls.h - a job's MPI calls as libinstr-mpi recorded them (EXT MPI
 * and MPI_FIELD events, dump-format.h): mpiP's sections, per call site
 * (the call and the function and line it was made from) and per rank
 * (mpi-calls.c). */
#ifndef INSTR_MPI_CALLS_H
#define INSTR_MPI_CALLS_H

#include <stddef.h>
#include <stdint.h>

struct instr_session;
struct instr_dump;

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
};

struct instr_mpi_rank {
    int32_t rank;
    /* Its clock against rank 0's (the wrappers' ping-pongs, CLOCK calls):
     * at real-time ns at[k] of this rank's axis (its header's real-time
     * pair plus its ticks), rank 0's axis was off[k] ns ahead, to within
     * half of rtt_ns[k].  k = 0: MPI_Init's, 1: MPI_Finalize's (the last). */
    unsigned nsync;            /* 0, 1 or 2 */
    double at_ns[2], off_ns[2], rtt_ns[2];
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
    uint64_t invalid;             /* MPI events left out: a field or value out of range, a field
                                     with no MPI event before it */
};

/* The MPI calls of s's job (s->job; none when it has no ranks): 0 or
 * INSTR_ENOMEM.  Every value read is checked (the dumps are input). */
int instr_mpi_calls_build(const struct instr_session *s, struct instr_mpi_calls *m);
void instr_mpi_calls_free(struct instr_mpi_calls *m);
/* Real-time ns ns of rank index i (m->ranks[i]) on rank 0's axis: its
 * offsets interpolated linearly between the two ping-pongs (one: that
 * offset; none: ns as it is). */
double instr_mpi_aligned_ns(const struct instr_mpi_calls *m, size_t i, double ns);
/* Ticks tick of dump d as real-time ns on its own axis (its header's pair). */
double instr_mpi_real_ns(const struct instr_dump *d, uint64_t tick);
/* "MPI_Send" for INSTR_MPI_SEND; "?" if unknown. */
const char *instr_mpi_call_name(unsigned call);

#endif

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
 * reads them): its times on the session's axis (axis.h), ns. */
struct instr_mpi_rec {
    uint32_t rank;  /* index in m->ranks */
    uint32_t site;  /* index in m->sites before they are sorted */
    unsigned call;
    double start, end;
    double entered; /* the call's entry: start, or for a later event of a call of several, start - BEGAN */
    int64_t f[INSTR_MPI_FIELD_MAX + 1];
    uint32_t seen;
    uint64_t tid;   /* the thread that made the call (its kernel id) */
    /* Set by the wait states: a receive's matching send; a whole N x N
     * collective's last rank in (the one the others waited for); a
     * broadcast's root (Bcast, Scatter), a reduce root's first other rank
     * in (Reduce, Gather); SIZE_MAX: none. */
    size_t partner;
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
    double late_receiver_ns; /* blocking sends here waiting for their receive to be posted */
    double wait_coll_ns;    /* collectives here waiting for the last rank (the root, the first
                               other rank) to enter */
};

struct instr_mpi_rank {
    int32_t rank;
    /* Its clock against rank 0's, as the session's axis has it (axis.h):
     * rank 0's clock ahead of its host's by off_ns[k], to within half of
     * rtt_ns[k]; k = 0: MPI_Init's ping-pong, 1: MPI_Finalize's. */
    unsigned nsync;            /* 0, 1 or 2 */
    double off_ns[2], rtt_ns[2];
    double start_ns;           /* the rank's start on the session's axis */
    uint64_t calls;
    uint64_t sent_messages, sent_bytes;         /* point-to-point */
    uint64_t received_messages, received_bytes; /* point-to-point, from the statuses */
};

/* Point-to-point messages sent from one world rank to another (the
 * communication matrix, its cells that are not empty): from the sends'
 * peers and bytes. */
struct instr_mpi_pair {
    int32_t from, to;
    uint64_t messages, bytes;
};

struct instr_mpi_calls {
    struct instr_mpi_site *sites; /* by time, largest first */
    size_t nsites;
    struct instr_mpi_rank *ranks; /* as the job's ranks (job.h) */
    size_t nranks;
    struct instr_mpi_pair *pairs; /* by from, then to */
    size_t npairs;
    uint64_t calls;
    double time_ns;
    double late_sender_ns, late_receiver_ns, wait_coll_ns; /* the wait states, summed */
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
/* A flow (the timelines' arrow): from a call's start to its partner's
 * end (a receive's matching send to it; the rank a collective waited
 * for to each rank that waited). */
#define INSTR_MPI_FLOW_MESSAGE 1
#define INSTR_MPI_FLOW_COLLECTIVE 2
struct instr_mpi_flow {
    const struct instr_mpi_rec *from, *to; /* from->start to to->end, on the session's axis */
    size_t from_dump, to_dump;             /* their processes: indexes of the session's dumps */
    int kind;                              /* INSTR_MPI_FLOW_* */
    char name[96];                         /* "message 800 B", "MPI_Allreduce #3: last in",
                                              "MPI_Bcast #4: root in", "MPI_Reduce #5: first in" */
};
/* The flows of s's job, each handed to each(ctx, flow) in the order of
 * the calls they end at, until it returns non-zero: 0, that value, or
 * INSTR_ENOMEM.  No job: none. */
int instr_mpi_flows(const struct instr_session *s, int (*each)(void *ctx, const struct instr_mpi_flow *f), void *ctx);
/* INSTR_MPI_CLASS_* of a call (dump-format.h); -1 if unknown. */
int instr_mpi_call_class(unsigned call);
/* A collective's shape: every rank waits for the last in (N_TO_N), the
 * others for the root (ONE_TO_N: Bcast, Scatter[v]), the root for the
 * first other rank (N_TO_ONE: Reduce, Gather[v]), each rank for the last
 * of the ranks below it in the communicator (PREFIX: Scan, Exscan); 0: not
 * a collective. */
enum { INSTR_MPI_N_TO_N = 1, INSTR_MPI_ONE_TO_N, INSTR_MPI_N_TO_ONE, INSTR_MPI_PREFIX };
int instr_mpi_coll_shape(unsigned call);
/* "MPI_Send" for INSTR_MPI_SEND; "?" if unknown. */
const char *instr_mpi_call_name(unsigned call);

#endif

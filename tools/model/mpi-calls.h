/* mpi-calls.h - a job's MPI calls as libinstr-mpi recorded them (EXT MPI
 * and MPI_FIELD events, dump-format.h): mpiP's sections, per call site
 * (the call and the function and line it was made from) and per rank
 * (mpi-calls.c). */
#ifndef INSTR_MPI_CALLS_H
#define INSTR_MPI_CALLS_H

#include <stddef.h>
#include <stdint.h>

struct instr_session;

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
    uint64_t invalid;             /* MPI events left out: a field or value out of range, a field
                                     with no MPI event before it */
};

/* The MPI calls of s's job (s->job; none when it has no ranks): 0 or
 * INSTR_ENOMEM.  Every value read is checked (the dumps are input). */
int instr_mpi_calls_build(const struct instr_session *s, struct instr_mpi_calls *m);
void instr_mpi_calls_free(struct instr_mpi_calls *m);
/* "MPI_Send" for INSTR_MPI_SEND; "?" if unknown. */
const char *instr_mpi_call_name(unsigned call);

#endif

/* job.h - a session's dumps as the ranks of one job (MPI and other
 * launchers: the header's job_rank, job_size, host and job_id, written by
 * runtime/job.c): each rank's useful and MPI time, the POP efficiencies,
 * the ranks missing, and per function its spread across ranks (job.c). */
#ifndef INSTR_JOB_H
#define INSTR_JOB_H

#include <stddef.h>
#include <stdint.h>

struct instr_session;
struct instr_dump;
struct instr_job;

/* The prefixes of MPI's functions by default: frames named so are MPI
 * time (instr-report --mpi-prefixes adds others, or replaces them). */
#define INSTR_MPI_PREFIXES(X)                                                                                      \
    X("MPI_")  /* the C interface */                                                                               \
    X("PMPI_") /* its profiling names (a PMPI layer's calls) */

/* The default prefixes, comma-separated: "MPI_,PMPI_". */
extern const char *const instr_mpi_prefixes_default;

/* --mpi-prefixes=[+]PREFIX[,PREFIX...] into *prefixes (malloc'd,
 * comma-separated, each once): with a leading '+' the defaults and then
 * these, else these alone; "none" alone: none (no frame is MPI time).  0;
 * -1 with err saying why (an empty prefix, one with a space or a comma);
 * INSTR_ENOMEM. */
int instr_mpi_prefixes_parse(const char *arg, char **prefixes, char *err, size_t errlen);

/* The missing ranks of j as "2, 5-7" into buf. */
void instr_job_missing_text(const struct instr_job *j, char *buf, size_t len);

/* Whether name begins with one of prefixes (comma-separated; NULL: the
 * defaults): an MPI function's. */
int instr_is_mpi_name(const char *prefixes, const char *name);

/* How timelines name dump d's process: "rank 3 (node1)" for a job's rank,
 * else its program's file name; buf holds the first. */
const char *instr_process_label(const struct instr_dump *d, char *buf, size_t len);

/* Whether dump d was written by a job's rank (rank and size in its header;
 * dumps older than the fields have size 0). */
int instr_dump_is_rank(const struct instr_dump *d);

/* How a rank's process ended. */
enum instr_rank_end {
    INSTR_RANK_EXITED,   /* exit(), or main returned: exit_status */
    INSTR_RANK_SIGNALED, /* a fatal signal the runtime caught (SIGTERM from a launcher...): signal */
    INSTR_RANK_IN_CALL,  /* no end record; its record ends in a call that does not return: call
                            (MPI_Abort, _exit, exec: model/endings.c) */
    INSTR_RANK_NO_END,   /* no end record: SIGKILL, an _exit or exec not seen, or still running */
};

struct instr_rank {
    int32_t rank;
    size_t dump;       /* index in the session */
    uint64_t pid;
    const char *host;
    uint64_t elapsed_t, useful_t, mpi_t; /* the three in the dump's ticks */
    double elapsed_ns; /* the process's Elapsed (its threads' stacks non-empty) */
    double useful_ns;  /* CPU time outside MPI frames (Elapsed outside them where CPU time is unknown) */
    double mpi_ns;     /* Elapsed Inclusive of its outermost MPI frames */
    double start_ns, end_ns; /* on the session's axis (axis.h); the end without an end record: its
                                last event (instr_session_end_ns) */
    enum instr_rank_end end;
    int32_t exit_status;     /* EXITED */
    uint32_t signal;         /* SIGNALED */
    const char *call;        /* IN_CALL */
    int64_t abort_code;      /* the error code MPI_Abort was given, when libinstr-mpi recorded the call
                                (INSTR_MPI_ABORT); INT64_MIN: none recorded */
    char *in, *from;         /* the innermost frame open when its record ends and that frame's caller
                                (malloc'd names; NULL: none open, or no caller) */
};

struct instr_job {
    const char *id, *launcher;
    const char *mpi_prefixes; /* the prefixes naming MPI frames, comma-separated ("" none): the session's
                                 --mpi-prefixes, else instr_mpi_prefixes_default */
    uint32_t size;            /* the job's size (the headers') */
    struct instr_rank *ranks; /* by rank, one per rank present */
    size_t nranks;
    struct instr_rank_range {
        int32_t from, to;     /* ranks from..to, both included */
    } *missing;               /* ranks 0..size-1 without a dump, as ranges (size comes from the
                                 dumps: untrusted, up to 2^31; the ranges are at most nranks + 1) */
    size_t nmissing_ranges;
    uint64_t nmissing;        /* ranks in them */
    size_t extra;             /* dumps of a rank already had: its children (fork, exec) */
    size_t other_jobs;        /* rank dumps of other jobs, left out */
    size_t nhosts;
    double runtime_ns;        /* first rank's start to last rank's end */
    double load_balance, communication_efficiency, parallel_efficiency; /* NAN when unknown */
};

/* How rank r ended, as words into buf: "exit 0", "SIGTERM in MPI_Barrier
 * (from main)", "MPI_Abort (from end_rank)", "no end recorded, last in
 * MPI_Barrier (from main)". */
void instr_rank_end_text(const struct instr_rank *r, char *buf, size_t len);
/* Its kind's name: "exit", "signal", "call", "none". */
const char *instr_rank_end_name(enum instr_rank_end e);

/* How the ranks of j ended, when some did not exit 0, into buf: the ranks
 * of each way, the least ordinary way first (a call that did not return,
 * no end record, a signal, exit): "rank 2: MPI_Abort (from end_rank);
 * ranks 0-1, 3: SIGTERM in MPI_Barrier (from main)"; "" when every rank
 * exited 0.  0 or INSTR_ENOMEM. */
int instr_job_ends_text(const struct instr_job *j, char *buf, size_t len);

/* The job of session s (the one with the most rank dumps): 0 and j->nranks
 * 0 when no dump is a rank; INSTR_ENOMEM.  Also fills the function rows'
 * spread across ranks (instr_row.spread) when s->functions is unsorted. */
int instr_job_build(struct instr_session *s, struct instr_job *j);
void instr_job_free(struct instr_job *j);

#endif

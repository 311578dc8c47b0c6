/* sample-session.h - what instr-sample knows of the program it samples:
 * its processes (one per image: a new one after exec), their threads,
 * mappings and module files, and the dump each image writes; and the
 * perf records that tell it (sample-records.c).  The command (cmd/
 * instr-sample.c) owns one session, fills its options, feeds it the
 * rings' records and says its messages: nothing here prints. */
#ifndef INSTR_SAMPLE_SESSION_H
#define INSTR_SAMPLE_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dump-writer.h"
#include "sample-unwind.h"

struct instr_sthread {
    uint32_t tid;
    uint32_t index;
    uint64_t cpu_ns; /* from READ records (inherited tasks that exited) */
    char name[32];
};

struct instr_sproc {
    uint32_t pid, ppid;
    char exe[1024];
    int fork_child;            /* the image began with fork, not exec */
    int exe_pending;           /* exec seen: the next file mapping names the image */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    struct instr_dump_writer *w;
    struct instr_umap *maps; /* sorted by start */
    size_t nmaps, capmaps;
    char **modules; /* module id - 1 -> path */
    size_t nmodules;
    struct instr_sthread *threads;
    size_t nthreads;
    struct instr_unwinder *unw;
    int maps_read;  /* /proc/PID/maps was read for this image */
    int ended;      /* EXIT of its main thread seen (in drain round ended) */
    int no_dump;    /* its dump could not be created (said once) */
    int closed;     /* its dump is written: late records are dropped */
    int exit_status;
    int have_status;
    uint64_t samples;
    struct instr_sproc *next;
};

struct instr_ssession {
    /* the options (the command's) */
    uint64_t rate_hz, period_ns, stack_bytes;
    int fp_chain;             /* samples carry the kernel's frame-pointer chain */
    const char *out_template; /* -o / INSTR_OUTPUT, or NULL: %e.%p.instr */
    void (*say)(void *ctx, const char *msg); /* a message for the user (one line) */
    void *say_ctx;
    /* what the records told */
    struct instr_sproc *procs;
    struct instr_ufile **files;
    size_t nfiles;
    pid_t child;          /* the program's first process */
    uint64_t read_total;  /* READ record values summed (for the main thread's share) */
    uint64_t unwind_fail, samples, lost;
    int round;            /* drain rounds so far */
};

/* ---- sample-dumps.c ---- */

uint64_t instr_ss_now(void); /* CLOCK_MONOTONIC, ns */
/* The process with that pid, created (its start now) if asked; NULL if
 * not there or out of memory. */
struct instr_sproc *instr_ss_proc(struct instr_ssession *s, uint32_t pid, int create);
/* Its executable, as /proc says while it lives. */
void instr_ss_read_exe(struct instr_sproc *p);
struct instr_sthread *instr_ss_thread(struct instr_sproc *p, uint32_t tid, int create);
/* A new image after exec: the old one's dump ends at t. */
void instr_ss_reset_image(struct instr_ssession *s, struct instr_sproc *p, uint64_t t);
/* An executable mapping of path at [start, end) (its dump says so at tick). */
void instr_ss_add_map(struct instr_ssession *s, struct instr_sproc *p, uint64_t start, uint64_t end,
                      uint64_t pgoff, const char *path, uint64_t tick);
/* The mappings /proc says p has, for images whose MMAP2 records were not seen. */
void instr_ss_read_proc_maps(struct instr_ssession *s, struct instr_sproc *p);
int instr_ss_ip_mapped(const struct instr_sproc *p, uint64_t ip);
/* The dump of an image, created at its first sample: 0, or -1 (said once). */
int instr_ss_open_dump(struct instr_ssession *s, struct instr_sproc *p);
/* Writes and closes it (complete: the image ended at end_ns). */
void instr_ss_close_dump(struct instr_ssession *s, struct instr_sproc *p, uint64_t end_ns, int complete);
/* Closes the dumps of the images that ended in an earlier drain round. */
void instr_ss_finish_ended(struct instr_ssession *s);
/* Whether the program's own dump can be created, as perf record checks
 * before the program runs: 0, or -1 with errno and the name in base. */
int instr_ss_output_writable(const struct instr_ssession *s, pid_t pid, const char *program, char *base,
                             size_t size);

/* ---- sample-records.c ---- */

/* One perf record of the rings (instr_sampler_drain's callback; ctx: the
 * session). */
void instr_ss_record(void *ctx, const uint8_t *rec, size_t size);

#endif

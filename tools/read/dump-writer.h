/* dump-writer.h - builds binary dumps outside the runtime (tests, instr-dump).
 *
 * Streams: each thread fills its own chunk buffer through the shared event
 * encoder (event-codec.h); a full chunk is written at the next free chunk
 * slot with used_bytes set.  Memory is one chunk per thread plus one for
 * metadata, whatever the dump size.  Library code: no printing, no exits.
 */
#ifndef INSTR_DUMP_WRITER_H
#define INSTR_DUMP_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "dump-format.h"

struct instr_dump_writer;

/* hdr supplies pid, times, detector, flags...; magic, version, header_size,
 * chunk_count and thread_count are filled by the writer.  hdr->chunk_size 0
 * means 64 KiB. */
int instr_writer_open(struct instr_dump_writer **w, const char *path, const struct instr_dump_header *hdr,
                      char *err, size_t errlen);
int instr_writer_module(struct instr_dump_writer *w, uint64_t id, const char *path, uint64_t load_addr);
int instr_writer_function(struct instr_dump_writer *w, uint64_t id, uint64_t module, uint64_t line,
                          const char *name, const char *file, const char *demangled);
int instr_writer_thread(struct instr_dump_writer *w, uint32_t index, uint64_t tid, const char *name);
int instr_writer_label(struct instr_dump_writer *w, uint64_t id, const char *text);
/* PROCESS record: working directory and command line. */
int instr_writer_process(struct instr_dump_writer *w, const char *cwd, size_t argc, const char *const *argv);
/* A UNIT record (plugin threshold=N): module id, threshold, functions left
 * out and instrumented, source file. */
int instr_writer_unit(struct instr_dump_writer *w, uint64_t module, uint64_t threshold, uint64_t left_out,
                      uint64_t instrumented, const char *file);
struct instr_callsite;
int instr_writer_callsite(struct instr_dump_writer *w, const struct instr_callsite *cs);

/* A HOOK_COST record: the cost of the hook writing `kind` events (mticks). */
int instr_writer_hook_cost(struct instr_dump_writer *w, unsigned kind, uint64_t before, uint64_t after,
                           uint64_t spread, uint64_t rounds);

/* Appends one event at absolute tick `tick` (>= the thread's previous tick,
 * or the value of its last RESYNC).  kind is INSTR_EV_*, ext INSTR_EXT_* for
 * EXT; arg/value as in struct instr_event.  os_flag with transition bits. */
int instr_writer_event(struct instr_dump_writer *w, uint32_t thread, uint64_t tick, unsigned os_flag, uint8_t bits,
                       unsigned kind, unsigned ext, uint64_t arg, int64_t value, uint64_t offcpu);
/* Sampling dumps (instr-sample): an executable mapping, the SAMPLING
 * record, a thread's CPU time, and one SAMPLES record (INSTR_SAMPLE_*) of
 * a thread at absolute tick (>= its previous sample's).  A stack too deep
 * for one chunk keeps its leaf end and is marked truncated. */
struct instr_map;
int instr_writer_map(struct instr_dump_writer *w, const struct instr_map *m);
int instr_writer_sampling(struct instr_dump_writer *w, uint64_t rate_hz, uint64_t period_ns, uint64_t stack_bytes,
                          const char *unwinder);
int instr_writer_cpu_time(struct instr_dump_writer *w, uint32_t index, uint64_t ns);
/* EXIT_CPU: a live thread's CPU clock (ns) read at the process's end, at tick. */
int instr_writer_exit_cpu(struct instr_dump_writer *w, uint32_t index, uint64_t ns, uint64_t tick);
/* CLOCK_SYNC: local ticks against the peer rank's peer_ticks, to within a round trip of rtt. */
int instr_writer_clock_sync(struct instr_dump_writer *w, uint32_t peer, uint64_t local, uint64_t peer_ticks,
                            uint64_t rtt);
int instr_writer_sample(struct instr_dump_writer *w, uint32_t thread, uint64_t tick, unsigned kind, uint64_t weight,
                        uint64_t flags, const uint64_t *frames, size_t nframes);

/* The current running tick of a thread (for error messages). */
uint64_t instr_writer_last_tick(struct instr_dump_writer *w, uint32_t thread);

/* The header written at close (end times known only at the end, e.g.). */
struct instr_dump_header *instr_writer_header(struct instr_dump_writer *w);

/* Flushes every chunk, rewrites the header, closes.  Always frees w. */
int instr_writer_close(struct instr_dump_writer *w, char *err, size_t errlen);

#endif

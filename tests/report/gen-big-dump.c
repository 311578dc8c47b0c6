/* gen-big-dump OUT N_EVENTS [THREADS [PID [RANK/SIZE]]] - a large synthetic
 * dump for speed measurements: 200 functions in a fixed call graph (each
 * calls one of 3 others), call depth 1..8 (a few thousand call paths), one
 * interval in 16 flagged; with RANK/SIZE, rank RANK of a job of SIZE ranks
 * (job "7", host "node"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>

#include "dump-writer.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen-big-dump OUT N_EVENTS [THREADS [PID [RANK/SIZE]]]\n");
        return 1;
    }
    unsigned long long n = strtoull(argv[2], NULL, 0);
    unsigned nthreads = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
    struct instr_dump_header h = {0};
    h.pid = argc > 4 ? strtoull(argv[4], NULL, 0) : 1; /* several dumps: several processes */
    h.end_tsc = 2600000000ull;
    h.end_mono_ns = 1000000000ull;
    h.flags = INSTR_DUMP_COMPLETE;
    h.detector = INSTR_DETECTOR_RSEQ_CS;
    h.detector_sees = INSTR_OS_SCHED | INSTR_OS_SIGNAL;
    h.chunk_size = 1u << 20;
    h.job_rank = -1;
    if (argc > 5 && sscanf(argv[5], "%d/%u", &h.job_rank, &h.job_size) == 2) {
        strcpy(h.job_id, "7");
        strcpy(h.host, "node");
    }
    strcpy(h.exe_path, "/bin/big");
    char err[256];
    struct instr_dump_writer *w;
    if (instr_writer_open(&w, argv[1], &h, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    instr_writer_module(w, 0, "/bin/big", 0);
    for (int f = 1; f <= 200; f++) {
        char name[32];
        snprintf(name, sizeof name, "_Z%dfn%dv", f < 10 ? 3 : f < 100 ? 4 : 5, f);
        instr_writer_function(w, (uint64_t)f, 0, (uint64_t)f, name, "big.cc", NULL);
    }
    for (unsigned t = 0; t < nthreads; t++)
        instr_writer_thread(w, t, 1000 + t, "worker");
    uint64_t rng = 88172645463325252ull, tick[64] = {0};
    unsigned depth[64] = {0};
    uint64_t stack[64][16];
    for (unsigned long long i = 0; i < n; i++) {
        unsigned t = (unsigned)(i % nthreads);
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        tick[t] += 1 + (rng >> 58); /* 1..64 ticks */
        unsigned os = (rng & 15) == 0;
        int enter = depth[t] == 0 || (depth[t] < 8 && (rng >> 20) % 2);
        int rc;
        if (enter) {
            uint64_t fn = depth[t] ? 1 + (stack[t][depth[t] - 1] * 3 + (rng >> 30) % 3) % 200 : 1;
            rc = instr_writer_event(w, t, tick[t], os, INSTR_OS_SCHED, INSTR_EV_ENTER, 0, fn, 0, 0);
            stack[t][depth[t]++] = fn;
        } else {
            rc = instr_writer_event(w, t, tick[t], os, INSTR_OS_SCHED, INSTR_EV_EXIT, 0, 0, 0, 0);
            depth[t]--;
        }
        if (rc < 0) {
            fprintf(stderr, "write failed\n");
            return 2;
        }
    }
    return instr_writer_close(w, err, sizeof err) < 0 ? 2 : 0;
}

/* fuzz-common.c - in-memory files and the full read pass (fuzz-common.h). */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dump-reader.h"
#include "report.h"
#include "text-trace.h"

const char *instr_fuzz_file(int slot, const uint8_t *data, size_t size)
{
    static int fd[2] = {-1, -1};
    static char path[2][64];
    if (fd[slot] < 0) {
        fd[slot] = memfd_create("instr-fuzz", MFD_CLOEXEC);
        if (fd[slot] < 0)
            return NULL;
        snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
    }
    if (ftruncate(fd[slot], 0) < 0)
        return NULL;
    for (size_t off = 0; off < size;) {
        ssize_t n = pwrite(fd[slot], data + off, size - off, (off_t)off);
        if (n <= 0)
            return NULL;
        off += (size_t)n;
    }
    return path[slot];
}

void instr_fuzz_read_dump(const char *path)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        return;
    struct instr_dump d;
    char err[600];
    if (instr_dump_open(&d, path, err, sizeof err) < 0)
        return;
    size_t nbad;
    instr_text_write(null, &d, &nbad, err, sizeof err);
    struct instr_session s;
    if (instr_session_build(&s, &d, 1, err, sizeof err) == 0) {
        static const instr_exporter exporters[] = {instr_report_text, instr_report_csv, instr_report_json};
        for (int v = INSTR_VIEW_FUNCTIONS; v <= INSTR_VIEW_PROCESSES; v++)
            for (size_t e = 0; e < sizeof exporters / sizeof exporters[0]; e++) {
                struct instr_report_opts o = {.units = e ? INSTR_UNITS_NS : INSTR_UNITS_MS,
                                              .view = (enum instr_view)v, .flagged = 1};
                exporters[e](null, &s, &o);
            }
        /* The exchange formats: timelines, trees, names in other syntaxes. */
        static const instr_exporter exports[] = {instr_export_visualiser, instr_export_chrome,
                                                 instr_export_callgrind, instr_export_folded};
        for (size_t e = 0; e < sizeof exports / sizeof exports[0]; e++) {
            struct instr_report_opts o = {.units = INSTR_UNITS_NS, .to_us = -1};
            exports[e](null, &s, &o);
        }
        instr_session_sort(&s, "name");
        instr_session_free(&s);
    }
    instr_dump_close(&d);
}

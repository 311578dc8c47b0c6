/* hybrid-cli.c - instr-report --view samples on instrumented dumps recorded
 * with INSTR_SAMPLE (prints; see hybrid.h). */
#include "hybrid-cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hybrid.h"
#include "output-file.h"
#include "sample-report.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_WARNED = 3 };

int instr_hybrid_cli(const struct instr_dump *dumps, size_t nd, int format, size_t limit, const char *outpath)
{
    FILE *out = instr_output_open(outpath);
    if (!out) {
        fprintf(stderr, "instr-report: %s: %s\n", outpath, strerror(errno));
        return EXIT_USAGE;
    }
    int status = EXIT_OK, warned = 0;
    /* A sampling dump (instr-sample on the instrumented program) gives its
     * samples to the instrumented dump of the same process. */
    size_t ninstr = 0;
    for (size_t i = 0; i < nd; i++)
        ninstr += !instr_dump_is_sampled(&dumps[i]);
    for (size_t i = 0; i < nd && status == EXIT_OK; i++) {
        if (!instr_dump_is_sampled(&dumps[i]))
            continue;
        size_t k = 0;
        while (k < nd && (instr_dump_is_sampled(&dumps[k]) || dumps[k].hdr.pid != dumps[i].hdr.pid))
            k++;
        if (k == nd) {
            fprintf(stderr, "instr-report: %s: no instrumented dump of its process (pid %llu) to place its samples on\n",
                    dumps[i].path, (unsigned long long)dumps[i].hdr.pid);
            status = EXIT_USAGE;
        }
    }
    for (size_t i = 0; i < nd && status == EXIT_OK; i++) {
        if (instr_dump_is_sampled(&dumps[i]))
            continue;
        const struct instr_dump *sd = NULL;
        for (size_t k = 0; k < nd && !sd; k++)
            if (instr_dump_is_sampled(&dumps[k]) && dumps[k].hdr.pid == dumps[i].hdr.pid)
                sd = &dumps[k];
        if (!sd && !instr_hybrid_has_samples(&dumps[i])) {
            fprintf(stderr, "instr-report: %s holds no samples (record with INSTR_SAMPLE=HZ)\n", dumps[i].path);
            status = EXIT_USAGE;
            break;
        }
        char err[600];
        struct instr_hybrid h;
        if (instr_hybrid_build_with(&h, &dumps[i], sd, err, sizeof err) < 0) {
            fprintf(stderr, "instr-report: %s\n", err);
            status = EXIT_INPUT;
            break;
        }
        if (ninstr > 1 && format == 0)
            fprintf(out, "%s%s\n", i ? "\n" : "", dumps[i].path);
        int rc = instr_hybrid_write(out, &h, format, limit);
        if (h.bad_chunks) {
            fprintf(stderr, "instr-report: warning: %s: %llu sample chunk%s ended on invalid bytes; the rest of %s skipped\n",
                    dumps[i].path, (unsigned long long)h.bad_chunks, h.bad_chunks > 1 ? "s" : "",
                    h.bad_chunks > 1 ? "them" : "it");
            warned = 1;
        }
        instr_hybrid_free(&h);
        if (rc < 0) {
            fprintf(stderr, "instr-report: %s\n", instr_tool_strerror(rc));
            status = EXIT_INPUT;
        }
    }
    if (instr_output_close(out, status == EXIT_OK) < 0 && status == EXIT_OK) {
        fprintf(stderr, "instr-report: write error: %s\n", strerror(errno));
        status = EXIT_INPUT;
    }
    return status == EXIT_OK && warned ? EXIT_WARNED : status;
}

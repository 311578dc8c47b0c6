/* export-folded.c - folded stacks, the input of flamegraph.pl, inferno and
 * speedscope: one line per call path, its frames from the outermost joined
 * by ';', a space, and the path's EXCLUSIVE weight:
 *
 *   main;foo;bar 280
 *
 * A flame graph draws each frame as wide as the sum of the weights of the
 * lines that contain it at that position, i.e. its inclusive value on that
 * path; over all paths a function's width is its Elapsed (Application)
 * Inclusive, recursion counted once.  Emitting inclusive weights instead
 * would count every callee's time once more per level.
 *
 * Weights: Elapsed Exclusive (or Application Exclusive, o->weight_app) in
 * whole ns (ticks with --units ticks, or without a tick rate), rounded per
 * path; paths with a zero weight are left out.  ';' in a name would split
 * a frame: it is written as ':'.  From the session's call tree, so every
 * thread and process are merged by function.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void frame(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, out);
}

int instr_export_folded(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    if (o->weight_app && s->no_app)
        return INSTR_EARG;
    struct instr_tree t;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    int ticks = o->units == INSTR_UNITS_TICKS || !s->have_rate;
    uint32_t *path = malloc((t.len + 1) * sizeof *path);
    if (!path) {
        instr_tree_free(&t);
        return INSTR_ENOMEM;
    }
    for (size_t i = 1; i < t.len; i++) {
        const struct instr_tnode *n = &t.n[i];
        uint64_t w = ticks ? (o->weight_app ? n->v.ae : n->v.ee)
                           : (uint64_t)llround(o->weight_app ? n->ns[3] : n->ns[1]);
        if (!w)
            continue;
        size_t d = 0;
        for (uint32_t k = (uint32_t)i; k; k = t.n[k].parent)
            path[d++] = k;
        while (d--) {
            frame(out, instr_function_row(s, t.n[path[d]].row)->name);
            fputc(d ? ';' : ' ', out);
        }
        fprintf(out, "%" PRIu64 "\n", w);
    }
    free(path);
    instr_tree_free(&t);
    return 0;
}

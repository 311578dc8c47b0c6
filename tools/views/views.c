/* views.c - the table of views (views.h).  The first rows are in the
 * order of enum instr_view (report.h); a new view goes at the end. */
#include "views.h"

#include <string.h>

#define INSTR INSTR_VIEW_ON_INSTRUMENTED
#define SAMPLED INSTR_VIEW_ON_SAMPLED

const struct instr_view_def instr_views[] = {
    /* name, --help words, dumps, flags, text, CSV, JSON member */
    {"functions", "functions (default)", INSTR | SAMPLED, INSTR_VIEW_ROWS, NULL, NULL, NULL},
    {"threads", "threads", INSTR | SAMPLED, INSTR_VIEW_ROWS, NULL, NULL, NULL},
    {"modules", "modules", INSTR | SAMPLED, INSTR_VIEW_ROWS, NULL, NULL, NULL},
    {"processes", "processes", INSTR | SAMPLED, INSTR_VIEW_ROWS, NULL, NULL, NULL},
    {"calltree", "calltree", INSTR | SAMPLED, INSTR_VIEW_DEPTH, instr_views_text, instr_views_csv,
     instr_json_calltree},
    {"callers", "callers FUNC", INSTR | SAMPLED, INSTR_VIEW_FUNC, instr_views_text, instr_views_csv,
     instr_json_relations},
    {"callees", "callees FUNC (FUNC: a function's name)", INSTR | SAMPLED, INSTR_VIEW_FUNC, instr_views_text,
     instr_views_csv, instr_json_relations},
    {"lines", "lines (sampling dumps: samples per source line)", SAMPLED, INSTR_VIEW_LIMIT, NULL, NULL, NULL},
    {"samples", "samples (INSTR_SAMPLE runs: samples on the instrumented stack)", INSTR_VIEW_ON_HYBRID,
     INSTR_VIEW_LIMIT, NULL, NULL, NULL},
    {"ranks", "ranks (a job's dumps: one row per MPI rank)", INSTR, 0, instr_views_ranks_text, instr_views_ranks_csv,
     instr_json_ranks},
    {"mpi", "mpi (a job's MPI calls through libinstr-mpi: call sites, bytes, messages per rank)", INSTR, 0,
     instr_views_mpi_text, instr_views_mpi_csv, instr_json_mpi},
};
const size_t instr_nviews = sizeof instr_views / sizeof instr_views[0];

const struct instr_view_def *instr_view_find(const char *name)
{
    for (size_t i = 0; i < instr_nviews; i++)
        if (!strcmp(instr_views[i].name, name))
            return &instr_views[i];
    return NULL;
}

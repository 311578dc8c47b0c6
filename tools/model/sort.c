/* sort.c - the order of a session's rows (--sort). */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report.h"

const char instr_sort_columns[] = "name, calls, ei, ee, ai, ae, ei%, ee%, ai%, ae%, ci, ce, ci%, ce%, wall, po, flagged, module, file, pid, tid, self";

enum sort_key { K_NAME, K_CALLS, K_EI, K_EE, K_AI, K_AE, K_CI, K_CE, K_WALL, K_PO, K_FLAGGED, K_MODULE, K_FILE, K_PID, K_TID, K_SELF };

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
    const struct instr_row *a = pa, *b = pb;
    int c = 0;
    switch (*(const enum sort_key *)ctx) {
    case K_NAME: break;
    case K_CALLS: c = -cmp_u64(a->v.calls, b->v.calls); break;
    case K_EI: c = -cmp_u64(a->v.ei, b->v.ei); break;
    case K_EE: c = -cmp_u64(a->v.ee, b->v.ee); break;
    case K_AI: c = -cmp_u64(a->v.ai, b->v.ai); break;
    case K_AE: c = -cmp_u64(a->v.ae, b->v.ae); break;
    case K_CI: c = -cmp_u64(a->v.ci, b->v.ci); break;
    case K_CE: c = -cmp_u64(a->v.ce, b->v.ce); break;
    case K_WALL: c = -cmp_u64(a->wall_t, b->wall_t); break;
    case K_PO: c = -cmp_u64(a->v.po, b->v.po); break;
    case K_FLAGGED: c = -cmp_u64(a->v.flagged_t, b->v.flagged_t); break;
    case K_MODULE: c = cmp_str(a->module, b->module); break;
    case K_FILE: c = cmp_str(a->file, b->file); if (!c) c = cmp_u64(a->line, b->line); break;
    case K_PID: c = cmp_u64(a->pid, b->pid); break;
    case K_TID: c = cmp_u64(a->tid, b->tid); break;
    case K_SELF: c = (a->self_pct < b->self_pct) - (a->self_pct > b->self_pct); break;
    }
    if (c || (c = cmp_str(a->name, b->name)) || (c = cmp_str(a->module, b->module)) ||
        (c = cmp_str(a->file, b->file)) || (c = cmp_u64(a->line, b->line)) || (c = cmp_u64(a->pid, b->pid)))
        return c;
    return cmp_u64(a->index, b->index);
}

int instr_session_sort(struct instr_session *s, const char *column)
{
    static const struct {
        const char *name;
        enum sort_key key;
    } cols[] = {{"name", K_NAME}, {"function", K_NAME}, {"calls", K_CALLS}, {"ei", K_EI}, {"ee", K_EE},
                {"ai", K_AI},     {"ae", K_AE},         {"ei%", K_EI},      {"ee%", K_EE}, {"ai%", K_AI},
                {"ae%", K_AE},    {"ei_pct", K_EI},     {"ee_pct", K_EE},   {"ai_pct", K_AI},
                {"ae_pct", K_AE}, {"flagged", K_FLAGGED}, {"module", K_MODULE}, {"file", K_FILE},
                {"pid", K_PID},   {"tid", K_TID},       {"ci", K_CI},       {"ce", K_CE},
                {"ci%", K_CI},    {"ce%", K_CE},        {"wall", K_WALL},   {"po", K_PO},
                {"probe", K_PO},  {"probe_overhead", K_PO}, {"self", K_SELF}, {"self%", K_SELF}, {"self_pct", K_SELF}};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        if (strcasecmp(column, cols[i].name))
            continue;
        enum sort_key key = cols[i].key;
        if (s->nfunctions > 1)
            qsort_r(s->functions, s->nfunctions, sizeof *s->functions, cmp_row, &key);
        if (s->nthreads > 1)
            qsort_r(s->threads, s->nthreads, sizeof *s->threads, cmp_row, &key);
        if (s->nmodules > 1)
            qsort_r(s->modules, s->nmodules, sizeof *s->modules, cmp_row, &key);
        if (s->nprocesses > 1)
            qsort_r(s->processes, s->nprocesses, sizeof *s->processes, cmp_row, &key);
        if (s->nfunctions && !s->row_of_key && !(s->row_of_key = calloc(s->nfunctions, sizeof *s->row_of_key)))
            return INSTR_ENOMEM;
        for (size_t i = 0; i < s->nfunctions; i++)
            s->row_of_key[s->functions[i].key] = (uint32_t)i;
        return 0;
    }
    return INSTR_EARG;
}

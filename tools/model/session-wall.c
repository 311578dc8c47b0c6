/* session-wall.c - Wall Inclusive of a session's functions and of the
 * session, and each thread's share of the run (wall.h, report.h).
 *
 * A session of one process of several threads: its profile walked the
 * threads in time order and holds each function's Wall Inclusive
 * (merged_wall).  Several processes: the profiles hold, per process, the
 * union over its threads of the time each function was on a stack; a
 * function row may gather several processes (forked workers): their
 * unions are united again here, in the machine's common TSC ticks.  With
 * one thread in the whole session the profiles record nothing: Wall
 * Inclusive is then Elapsed Inclusive. */
#include <math.h>
#include <stdlib.h>

#include "report.h"

int instr_session_wants_wall(const struct instr_dump *dumps, size_t n)
{
    size_t threads = 0;
    for (size_t i = 0; i < n; i++)
        threads += dumps[i].nthreads;
    return threads > 1;
}

/* ns per tick of a row, from its Elapsed values (several processes may
 * have slightly different rates); NAN without a rate. */
static double ns_per_tick(double ns, uint64_t ticks)
{
    return ticks ? ns / (double)ticks : NAN;
}

static void thread_shares(struct instr_session *s)
{
    /* How long each thread lived: from its first event to its end, whatever
     * it did (a thread alive the whole run is near 100 %, blocked or not;
     * its Elapsed Inclusive lacks the hooks' cost and the runtime's). */
    for (size_t t = 0; t < s->nthreads; t++) {
        const struct instr_row *r = &s->threads[t];
        s->threads[t].alive_pct = s->duration_ns > 0 && r->end_ns >= r->start_ns
                                      ? 100.0 * (r->end_ns - r->start_ns) / s->duration_ns
                                      : NAN;
    }
}

/* Wall segments are cut from the dump's raw ticks, while the values have
 * the hooks' cost taken out (compensate.h): Wall takes the same fraction
 * off, so that a function of one thread has Wall Inclusive == Elapsed
 * Inclusive and the concurrency is the raw one. */
static uint64_t compensated_wall(const struct instr_session *s, uint64_t wall, const struct instr_values *v)
{
    if (!s->comp.applied || !v->po || !wall)
        return wall;
    return (uint64_t)((double)wall * (double)v->ei / (double)(v->ei + v->po) + 0.5);
}

/* One process walked in time order: the lengths are there.  A row that
 * gathers several of its functions would need their union, which the
 * lengths do not give: Wall Inclusive is then unknown (never a guess). */
static int merged_wall(struct instr_session *s)
{
    const struct instr_profile *p = &s->profiles[0];
    uint32_t *owner = malloc((s->nfunctions ? s->nfunctions : 1) * sizeof *owner);
    if (!owner)
        return INSTR_ENOMEM;
    for (size_t r = 0; r < s->nfunctions; r++)
        owner[r] = UINT32_MAX;
    for (size_t f = 0; f < p->nfuncs; f++) {
        uint32_t r = s->func_rows[0][f];
        if (owner[r] != UINT32_MAX)
            s->wall_known = 0;
        owner[r] = (uint32_t)f;
    }
    for (size_t r = 0; r < s->nfunctions; r++) {
        struct instr_row *row = &s->functions[r];
        uint32_t f = owner[r];
        uint64_t len = s->wall_known && f < p->merged.nfn ? p->merged.len[f] : 0;
        row->wall_t = compensated_wall(s, len, &row->v);
        row->wall_ns = !s->wall_known ? NAN
                       : row->wall_t ? (double)row->wall_t * ns_per_tick(row->ns[0], row->v.ei) : 0;
    }
    free(owner);
    s->total_wall_t = compensated_wall(s, p->merged.root_len, &s->total);
    s->total_wall_ns = s->total_wall_t ? (double)s->total_wall_t * ns_per_tick(s->total_ns[0], s->total.ei) : 0;
    return 0;
}

int instr_session_wall(struct instr_session *s)
{
    thread_shares(s);
    s->wall_known = s->axis.nhosts <= 1 && !s->wall_why;
    if (!s->wall_known) { /* processes of several hosts, walked elsewhere: unknown (session.c) */
        for (size_t r = 0; r < s->nfunctions; r++) {
            s->functions[r].wall_t = 0;
            s->functions[r].wall_ns = NAN;
        }
        return 0;
    }
    if (!s->wall_on) {
        for (size_t r = 0; r < s->nfunctions; r++) {
            s->functions[r].wall_t = s->functions[r].v.ei;
            s->functions[r].wall_ns = s->functions[r].ns[0];
        }
        s->total_wall_t = s->total.ei;
        s->total_wall_ns = s->total_ns[0];
        return 0;
    }
    for (size_t i = 0; i < s->ndumps; i++)
        if (s->profiles[i].wall.overflow || s->profiles[i].wall.nomem || s->profiles[i].merged.nomem)
            s->wall_known = 0;
    if (s->wall_known && s->ndumps == 1 && s->profiles[0].wall_merged)
        return merged_wall(s);
    if (!s->wall_known) {
        for (size_t r = 0; r < s->nfunctions; r++) {
            s->functions[r].wall_t = 0;
            s->functions[r].wall_ns = NAN;
        }
        return 0;
    }
    /* Rows are still in key order here (before any sort): row key = index. */
    struct instr_wall_list *u = calloc(s->nfunctions + 1, sizeof *u);
    if (!u)
        return INSTR_ENOMEM;
    int rc = 0;
    struct instr_wall_list root = {0};
    for (size_t i = 0; i < s->ndumps && !rc; i++) {
        const struct instr_profile *p = &s->profiles[i];
        for (size_t f = 0; f < p->nfuncs && f < p->wall.nfn && !rc; f++)
            if (instr_wall_union(&u[s->func_rows[i][f]], &p->wall.fn[f]) < 0)
                rc = INSTR_ENOMEM;
        if (!rc && instr_wall_union(&root, &p->wall.root) < 0)
            rc = INSTR_ENOMEM;
    }
    for (size_t r = 0; r <= s->nfunctions && !rc; r++)
        if (instr_wall_settle(&u[r]) < 0)
            rc = INSTR_ENOMEM;
    if (!rc && instr_wall_settle(&root) < 0)
        rc = INSTR_ENOMEM;
    for (size_t r = 0; r < s->nfunctions; r++) {
        struct instr_row *row = &s->functions[r];
        row->wall_t = compensated_wall(s, instr_wall_length(&u[r]), &row->v);
        row->wall_ns = row->wall_t ? (double)row->wall_t * ns_per_tick(row->ns[0], row->v.ei) : 0;
        free(u[r].s);
    }
    free(u);
    s->total_wall_t = compensated_wall(s, instr_wall_length(&root), &s->total);
    s->total_wall_ns = s->total_wall_t ? (double)s->total_wall_t * ns_per_tick(s->total_ns[0], s->total.ei) : 0;
    free(root.s);
    return rc;
}

/* report-json.c - the whole session as one JSON object (tools/README-json.md),
 * with the call-tree, callers or callees view when one is chosen. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "emit.h"
#include "exclusions.h"
#include "report.h"
#include "views.h"
#include "writers.h"
#include "text-trace.h"

/* A job's missing ranks listed in JSON at most (missing_count: all). */
#define INSTR_JSON_MISSING_RANKS 4096

static const char *const value_names[4] = {"elapsed_inclusive", "elapsed_exclusive", "application_inclusive",
                                           "application_exclusive"};

/* calls, then ticks, ns and percent of each of the four values; no_app:
 * Application values unavailable (instr_session.no_app): null. */
static void values4(struct instr_json *j, int no_app, const struct instr_values *v, const double *ns,
                    const double *pct)
{
    const uint64_t t[4] = {v->ei, v->ee, v->ai, v->ae};
    char key[64];
    instr_json_key_u64(j, "calls", v->calls);
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s_ticks", value_names[i]);
        if (no_app && i >= 2)
            instr_json_key_null(j, key);
        else
            instr_json_key_u64(j, key, t[i]);
        snprintf(key, sizeof key, "%s_ns", value_names[i]);
        instr_json_key_ns(j, key, no_app && i >= 2 ? NAN : ns[i]);
        snprintf(key, sizeof key, "%s_pct", value_names[i]);
        instr_json_key_num(j, key, "%.4f", no_app && i >= 2 ? NAN : pct[i]);
    }
}

/* CPU Inclusive and Exclusive: ticks, ns, percent of Session CPU
 * Inclusive; null unless every dump ran the cpuclock backend.  v: ci, ce;
 * ns and pct: theirs. */
static void cpu2(struct instr_json *j, const struct instr_session *s, const struct instr_values *v, const double *ns,
                 const double *pct)
{
    static const char *const names[2] = {"cpu_inclusive", "cpu_exclusive"};
    const uint64_t t[2] = {v->ci, v->ce};
    char key[64];
    for (int i = 0; i < 2; i++) {
        snprintf(key, sizeof key, "%s_ticks", names[i]);
        if (s->cpu_known)
            instr_json_key_u64(j, key, t[i]);
        else
            instr_json_key_null(j, key);
        snprintf(key, sizeof key, "%s_ns", names[i]);
        instr_json_key_ns(j, key, s->cpu_known ? ns[i] : NAN);
        snprintf(key, sizeof key, "%s_pct", names[i]);
        instr_json_key_num(j, key, "%.4f", s->cpu_known ? pct[i] : NAN);
    }
}

static void cpu_values(struct instr_json *j, const struct instr_session *s, const struct instr_row *r)
{
    cpu2(j, s, &r->v, r->cpu_ns, r->pct + 4);
}

/* A row's values: the four, then the flagged intervals and the exact
 * off-CPU time within them (0 unless the cpuclock backend ran), then CPU. */
static void row_values(struct instr_json *j, const struct instr_session *s, const struct instr_row *r)
{
    values4(j, s->no_app, &r->v, r->ns, r->pct);
    instr_json_key_u64(j, "flagged_intervals", r->v.flagged_n);
    instr_json_key_u64(j, "flagged_ticks", r->v.flagged_t);
    instr_json_key_ns(j, "flagged_ns", r->flagged_ns);
    instr_json_key_u64(j, "off_cpu_ticks", r->v.offcpu_t);
    instr_json_key_ns(j, "off_cpu_ns", r->offcpu_ns);
    cpu_values(j, s, r);
    /* Per kind: every flagged interval of that kind (with this on top). */
    instr_json_open(j, "flagged_by_kind", '{', INSTR_JSON_INLINE);
    for (int k = 0; k < INSTR_OS_NKINDS; k++) {
        instr_json_open(j, instr_os_kinds[k].name, '{', INSTR_JSON_INLINE);
        instr_json_key_u64(j, "intervals", r->v.kind_n[k]);
        instr_json_key_u64(j, "ticks", r->v.kind_t[k]);
        instr_json_key_ns(j, "ns", r->kind_ns[k]);
        instr_json_close(j);
    }
    instr_json_close(j);
}

/* Probe overhead: the hook costs inside the row's Elapsed Inclusive (only
 * when the session knows them). */
static void row_probe(struct instr_json *j, const struct instr_row *r)
{
    instr_json_key_u64(j, "probe_overhead_ticks", r->v.po);
    instr_json_key_ns(j, "probe_overhead_ns", r->po_ns);
}

/* The dump's start-up calibration: each hook kind's cost, ticks (null:
 * not measured). */
static void hook_costs(struct instr_json *j, const struct instr_dump *d)
{
    static const unsigned kinds[] = {INSTR_EV_ENTER, INSTR_EV_EXIT, INSTR_EV_CALL, INSTR_EV_RETURN};
    static const char *const names[] = {"enter", "exit", "call", "return"};
    instr_json_open(j, "hook_cost", '{', INSTR_JSON_INLINE);
    for (int k = 0; k < 4; k++) {
        const struct instr_hook_cost *hc = &d->hook_cost[kinds[k]];
        if (!hc->rounds) {
            instr_json_key_null(j, names[k]);
            continue;
        }
        instr_json_open(j, names[k], '{', INSTR_JSON_INLINE);
        instr_json_key_num(j, "before_ticks", "%.3f", hc->before / 1e3);
        instr_json_key_num(j, "after_ticks", "%.3f", hc->after / 1e3);
        instr_json_key_num(j, "spread_ticks", "%.3f", hc->spread / 1e3);
        instr_json_key_u64(j, "rounds", hc->rounds);
        instr_json_close(j);
    }
    instr_json_close(j);
    instr_json_key_str(j, "hook_cost_path",
                       d->hdr.calibration_path == INSTR_CALIBRATION_PATH_FILTERING ? "filtering" : "fast");
    instr_json_key_bool(j, "slow_path_unmeasured", instr_comp_slow_unmeasured(d));
}

/* The process's command line (its PROCESS record) as an array of its
 * arguments, or null when the dump has none (older dumps, text traces). */
static void command(struct instr_json *j, const struct instr_dump *d)
{
    if (!d->argv) {
        instr_json_key_null(j, "command");
        return;
    }
    instr_json_open(j, "command", '[', INSTR_JSON_INLINE);
    for (size_t k = 0; k < d->argc; k++)
        instr_json_key_str(j, NULL, d->argv[k]);
    instr_json_close(j);
}

static void program(struct instr_json *j, const struct instr_session *s, size_t i)
{
    const struct instr_dump *d = &s->dumps[i];
    char sees[400], unseen[400], bits[64], set[128];
    instr_detector_text(d, sees, sizeof sees, unseen, sizeof unseen);
    instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
    instr_json_key_str(j, "program", d->hdr.exe_path);
    command(j, d);
    instr_json_key_u64(j, "pid", d->hdr.pid);
    instr_json_key_u64(j, "ppid", d->hdr.ppid);
    instr_json_key_num(j, "tick_hz", "%.3f", d->tick_hz > 0 ? d->tick_hz : NAN);
    if (!instr_dump_ticks_tsc(d)) { /* absent: x86-64, TSC */
        instr_json_key_str(j, "arch", instr_arch_name(d->hdr.arch));
        instr_json_key_str(j, "tick_source", instr_tick_source_name(d->hdr.tick_source));
    }
    instr_json_key_bool(j, "complete", d->hdr.flags & INSTR_DUMP_COMPLETE);
    instr_json_key_bool(j, "tsc_invariant", d->hdr.flags & INSTR_DUMP_TSC_INVARIANT);
    instr_json_key_bool(j, "fork_child", d->hdr.flags & INSTR_DUMP_FORK_CHILD);
    instr_json_key_str(j, "detector", instr_detector_name(d->hdr.detector));
    instr_json_key_str(j, "detector_set", instr_detector_set_name(d, set, sizeof set));
    instr_json_key_str(j, "detector_detail", d->hdr.detector_detail);
    if (d->hdr.stop_reason[0])
        instr_json_key_str(j, "stop_reason", d->hdr.stop_reason);
    instr_json_key_str(j, "detector_sees", instr_os_bits_str(d->hdr.detector_sees, bits, sizeof bits));
    instr_json_key_str(j, "detector_sees_text", sees);
    instr_json_key_str(j, "detector_not_seen_text", unseen);
    if (instr_dump_exited(d)) /* the status passed to exit() */
        instr_json_key_num(j, "exit_status", "%.0f", d->hdr.exit_status);
    else
        instr_json_key_null(j, "exit_status");
    instr_json_key_u64(j, "end_signal", d->hdr.end_signal);
    char ending[400];
    if (instr_session_ending(s, i, ending, sizeof ending))
        instr_json_key_str(j, "ended", ending);
    else
        instr_json_key_null(j, "ended");
    instr_json_key_u64(j, "open_frames_at_end", s->profiles[i].repairs.incomplete);
    const struct instr_profile *p = &s->profiles[i];
    if (p->switched_at || (d->hdr.flags & INSTR_DUMP_SWITCHED_OFF)) {
        /* Switchable builds: when the hooks were on (ms since the start). */
        double ms = d->tick_hz > 0 ? 1e3 / d->tick_hz : NAN;
        instr_json_key_bool(j, "started_off", d->hdr.flags & INSTR_DUMP_SWITCHED_OFF);
        instr_json_key_u64(j, "switches", p->switched_at);
        instr_json_key_num(j, "recorded_ms", "%.6f", (double)p->recorded_ticks * ms);
        instr_json_open(j, "recorded_windows", '[', INSTR_JSON_INLINE);
        for (size_t k = 0; k < p->nwindows; k++) {
            instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
            instr_json_key_num(j, "from_ms", "%.6f", (double)(p->windows[k].from - d->hdr.start_tsc) * ms);
            instr_json_key_num(j, "to_ms", "%.6f", (double)(p->windows[k].to - d->hdr.start_tsc) * ms);
            instr_json_close(j);
        }
        instr_json_close(j);
    }
    if (d->hdr.filter_depth || d->hdr.filter_min_ticks || d->hdr.filter_triggers || d->hdr.filtered_off) {
        /* Record-time filters, and the switch off on code not compiled
         * switchable: the calls each left out (their callers' time). */
        instr_json_open(j, "filters", '{', INSTR_JSON_INLINE);
        instr_json_key_u64(j, "depth", d->hdr.filter_depth);
        instr_json_key_num(j, "min_duration_ns", "%.1f",
                           d->tick_hz > 0 ? (double)d->hdr.filter_min_ticks * 1e9 / d->tick_hz : 0.0);
        instr_json_key_u64(j, "min_duration_ticks", d->hdr.filter_min_ticks);
        instr_json_key_u64(j, "triggers", d->hdr.filter_triggers);
        instr_json_key_u64(j, "filtered_depth", d->hdr.filtered_depth);
        instr_json_key_u64(j, "filtered_short", d->hdr.filtered_short);
        instr_json_key_u64(j, "filtered_off", d->hdr.filtered_off);
        instr_json_close(j);
    }
    if (s->comp.known)
        hook_costs(j, d);
    instr_json_close(j);
}

/* Where Self % came from (self-pct.h), and its sampling error. */
static void self_source(struct instr_json *j, const struct instr_self *x)
{
    instr_json_key_str(j, "self_source", x->source ? x->source : "none");
    if (!x->source) {
        instr_json_key_null(j, "self_sampling");
        return;
    }
    instr_json_open(j, "self_sampling", '{', INSTR_JSON_INLINE);
    if (x->inputs)
        instr_json_key_str(j, "inputs", x->inputs);
    else
        instr_json_key_null(j, "inputs");
    instr_json_key_u64(j, "samples", x->samples);
    instr_json_key_u64(j, "matched", x->matched);
    instr_json_key_u64(j, "in_runtime", x->runtime);
    instr_json_key_u64(j, "in_kernel", x->kernel);
    instr_json_key_u64(j, "elsewhere", x->other);
    instr_json_key_u64(j, "lost", x->lost);
    instr_json_key_u64(j, "ambiguous_names", x->ambiguous);
    instr_json_key_num(j, "top_pct", "%.4f", x->top_pct);
    instr_json_key_num(j, "top_ci95_pct", "%.4f", x->top_ci95);
    instr_json_close(j);
}

/* A job's ranks (job.h): "job" and "pop", only when some dump is a rank. */
static void job(struct instr_json *j, const struct instr_session *s)
{
    const struct instr_job *jb = s->job;
    if (!jb)
        return;
    instr_json_open(j, "job", '{', INSTR_JSON_INLINE);
    instr_json_key_str(j, "id", jb->id);
    instr_json_key_str(j, "launcher", jb->launcher);
    instr_json_key_u64(j, "size", jb->size);
    instr_json_key_u64(j, "ranks", jb->nranks);
    /* The first INSTR_JSON_MISSING_RANKS of them; missing_count says how many. */
    instr_json_open(j, "missing_ranks", '[', INSTR_JSON_INLINE);
    uint64_t listed = 0;
    for (size_t i = 0; i < jb->nmissing_ranges && listed < INSTR_JSON_MISSING_RANKS; i++)
        for (int64_t r = jb->missing[i].from; r <= jb->missing[i].to && listed < INSTR_JSON_MISSING_RANKS; r++, listed++)
            instr_json_key_u64(j, NULL, (uint64_t)r);
    instr_json_close(j);
    instr_json_key_u64(j, "missing_count", jb->nmissing);
    instr_json_key_u64(j, "hosts", jb->nhosts);
    instr_json_key_u64(j, "children_dumps", jb->extra);
    instr_json_key_u64(j, "other_jobs_dumps", jb->other_jobs);
    instr_json_close(j);
    instr_json_open(j, "pop", '{', INSTR_JSON_INLINE);
    instr_json_key_num(j, "load_balance", "%.4g", jb->load_balance);
    instr_json_key_num(j, "communication_efficiency", "%.4g", jb->communication_efficiency);
    instr_json_key_num(j, "parallel_efficiency", "%.4g", jb->parallel_efficiency);
    instr_json_key_ns(j, "job_runtime_ns", jb->runtime_ns);
    instr_json_key_str(j, "useful", s->cpu_known ? "cpu_outside_mpi" : "elapsed_outside_mpi");
    /* The prefixes that made a frame MPI time (--mpi-prefixes, else the defaults). */
    instr_json_open(j, "mpi_prefixes", '[', INSTR_JSON_INLINE);
    for (const char *q = jb->mpi_prefixes; *q;) {
        size_t m = strcspn(q, ",");
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)(m < sizeof one ? m : sizeof one - 1), q);
        instr_json_key_str(j, NULL, one);
        q += m + (q[m] == ',');
    }
    instr_json_close(j);
    instr_json_close(j);
    /* The one clock the ranks are on (axis.h). */
    instr_json_open(j, "clock", '{', INSTR_JSON_INLINE);
    instr_json_key_str(j, "method", instr_axis_method(&s->axis));
    instr_json_key_u64(j, "hosts", s->axis.nhosts);
    instr_json_key_ns(j, "bound_ns", s->axis.bound_ns);
    instr_json_key_ns(j, "largest_offset_ns", instr_axis_largest_offset(&s->axis));
    instr_json_close(j);
}

static void session(struct instr_json *j, const struct instr_session *s)
{
    instr_json_open(j, "session", '{', INSTR_JSON_LINES);
    instr_json_open(j, "programs", '[', INSTR_JSON_LINES);
    for (size_t i = 0; i < s->ndumps; i++)
        program(j, s, i);
    instr_json_close(j);
    instr_json_key_str(j, "program", s->ndumps ? s->dumps[0].hdr.exe_path : "");
    instr_json_open(j, "pids", '[', INSTR_JSON_INLINE);
    for (size_t i = 0; i < s->ndumps; i++)
        instr_json_key_u64(j, NULL, s->dumps[i].hdr.pid);
    instr_json_close(j);
    instr_json_key_ns(j, "duration_ns", s->have_rate ? s->duration_ns : NAN);
    instr_json_key_num(j, "tick_hz", "%.3f", s->ndumps && s->dumps[0].tick_hz > 0 ? s->dumps[0].tick_hz : NAN);
    if (s->ndumps && !instr_dump_ticks_tsc(&s->dumps[0])) { /* absent: x86-64, TSC */
        instr_json_key_str(j, "arch", instr_arch_name(s->dumps[0].hdr.arch));
        instr_json_key_str(j, "tick_source", instr_tick_source_name(s->dumps[0].hdr.tick_source));
        instr_json_key_num(j, "tick_ns", "%.3f", s->dumps[0].tick_hz > 0 ? 1e9 / s->dumps[0].tick_hz : NAN);
    }
    instr_json_key_str(j, "detector", s->ndumps ? instr_detector_name(s->dumps[0].hdr.detector) : "none");
    char set[128], sees[400], unseen[400];
    instr_json_key_str(j, "detector_set",
                       s->ndumps ? instr_detector_set_name(&s->dumps[0], set, sizeof set) : "none");
    if (s->exclude && s->exclude->text)
        instr_json_key_str(j, "not_application", s->exclude->text);
    else
        instr_json_key_null(j, "not_application");
    char kinds[96];
    instr_json_key_str(j, "os_events", instr_os_events_text(s->exclude ? s->exclude->os_ignored : 0, kinds,
                                                            sizeof kinds));
    if (s->ndumps)
        instr_detector_text(&s->dumps[0], sees, sizeof sees, unseen, sizeof unseen);
    else
        sees[0] = unseen[0] = 0;
    instr_json_key_str(j, "detector_sees", sees);
    instr_json_key_str(j, "detector_not_seen", unseen);
    const struct instr_repairs *r = &s->repairs;
    instr_json_open(j, "repairs", '{', INSTR_JSON_INLINE);
    instr_json_key_u64(j, "unwound_exception", r->unwound[1]);
    instr_json_key_u64(j, "unwound_stack", r->unwound[2]);
    instr_json_key_u64(j, "unwound_mismatch", r->unwound[3]);
    instr_json_key_u64(j, "unwound_other", r->unwound[0]);
    instr_json_key_u64(j, "unmatched_exits", r->unmatched_exits);
    instr_json_key_u64(j, "runtime_unmatched_exits", s->header_unmatched);
    instr_json_key_u64(j, "incomplete_frames", r->incomplete);
    instr_json_key_u64(j, "bad_chunks", r->bad_chunks);
    instr_json_key_u64(j, "cut_threads", r->cut_threads);
    instr_json_key_ns(j, "unrecorded_ns", s->unrecorded_ns);
    instr_json_close(j);
    instr_json_key_u64(j, "dropped", s->dropped);
    instr_json_key_u64(j, "dropped_calls", s->dropped_calls);
    instr_json_key_u64(j, "dropped_sites", s->dropped_sites);
    instr_json_key_ns(j, "runtime_ns", s->runtime_ns);
    instr_json_key_u64(j, "events", s->events);
    instr_json_open(j, "warnings", '[', INSTR_JSON_INLINE);
    for (size_t i = 0; i < s->nwarnings; i++)
        instr_json_key_str(j, NULL, s->warnings[i]);
    instr_json_close(j);
    instr_json_open(j, "totals", '{', INSTR_JSON_INLINE);
    instr_json_key_u64(j, "elapsed_inclusive_ticks", s->total.ei);
    if (s->no_app)
        instr_json_key_null(j, "application_inclusive_ticks");
    else
        instr_json_key_u64(j, "application_inclusive_ticks", s->total.ai);
    instr_json_key_ns(j, "elapsed_inclusive_ns", s->have_rate ? s->total_ns[0] : NAN);
    instr_json_key_ns(j, "application_inclusive_ns", s->have_rate && !s->no_app ? s->total_ns[1] : NAN);
    if (s->cpu_known)
        instr_json_key_u64(j, "cpu_inclusive_ticks", s->total.ci);
    else
        instr_json_key_null(j, "cpu_inclusive_ticks");
    instr_json_key_ns(j, "cpu_inclusive_ns", s->have_rate && s->cpu_known ? s->total_cpu_ns : NAN);
    if (s->wall_known)
        instr_json_key_u64(j, "wall_inclusive_ticks", s->total_wall_t);
    else
        instr_json_key_null(j, "wall_inclusive_ticks");
    instr_json_key_ns(j, "wall_inclusive_ns", s->have_rate && s->wall_known ? s->total_wall_ns : NAN);
    instr_json_close(j);
    instr_json_key_num(j, "concurrency", "%.4f",
                       s->wall_known && s->total_wall_t ? (double)s->total.ei / (double)s->total_wall_t : NAN);
    instr_json_key_bool(j, "off_cpu_exact", s->offcpu_exact);
    instr_json_key_bool(j, "cpu_available", s->cpu_known);
    instr_json_key_u64(j, "off_cpu_unknown_intervals", s->offcpu_unknown);
    /* system calls unseen in threads where that was too brief for a warning */
    instr_json_key_u64(j, "unseen_minor_threads", s->unseen_minor_threads);
    instr_json_key_num(j, "unseen_minor_pct", "%.4f",
                       s->unseen_minor_life_ns > 0 ? 100.0 * s->unseen_minor_ns / s->unseen_minor_life_ns : 0.0);
    /* time before perf began watching the threads (INSTR_PERF_AFTER) */
    instr_json_key_ns(j, "unwatched_ns", s->notyet_ns);
    instr_json_key_num(j, "unwatched_pct", "%.4f",
                       s->notyet_life_ns > 0 ? 100.0 * s->notyet_ns / s->notyet_life_ns : 0.0);
    instr_json_key_u64(j, "unwatched_threads", s->notyet_threads);
    instr_json_key_bool(j, "application_available", !s->no_app);
    if (s->comp.known) {
        instr_json_open(j, "probe_overhead", '{', INSTR_JSON_INLINE);
        instr_json_key_bool(j, "compensated", s->comp.applied);
        instr_json_key_u64(j, "ticks", s->comp.ticks);
        instr_json_key_ns(j, "ns", s->have_rate ? s->comp_ns : NAN);
        instr_json_key_u64(j, "intervals", s->comp.intervals);
        instr_json_key_u64(j, "clamped_intervals", s->comp.clamped);
        instr_json_key_u64(j, "unpaid_ticks", s->comp.unpaid);
        instr_json_key_ns(j, "unpaid_ns", s->have_rate ? s->comp_unpaid_ns : NAN);
        instr_json_close(j);
    }
    self_source(j, &s->self);
    job(j, s);
    instr_json_close(j);
}

/* The members of a row before its values (head) and after them (tail). */
typedef void (*row_members)(struct instr_json *j, const struct instr_session *s, const struct instr_row *r);

static void function_head(struct instr_json *j, const struct instr_session *s, const struct instr_row *f)
{
    (void)s;
    instr_json_key_str(j, "name", f->name);
    instr_json_key_str(j, "mangled", f->mangled);
    instr_json_key_str(j, "module", f->module);
    instr_json_key_str(j, "file", f->file);
    instr_json_key_u64(j, "line", f->line);
}

static void function_tail(struct instr_json *j, const struct instr_session *s, const struct instr_row *f)
{
    /* Wall Inclusive (null when unknown: wall_ns NAN is written null by
     * instr_json_key_ns, ticks follow it) and concurrency. */
    if (isnan(f->wall_ns) && f->wall_t == 0)
        instr_json_key_null(j, "wall_inclusive_ticks");
    else
        instr_json_key_u64(j, "wall_inclusive_ticks", f->wall_t);
    instr_json_key_ns(j, "wall_inclusive_ns", f->wall_ns);
    instr_json_key_num(j, "concurrency", "%.4f", f->wall_t ? (double)f->v.ei / (double)f->wall_t : NAN);
    instr_json_key_bool(j, "pseudo", f->pseudo);
    if (s->self.source)
        instr_json_key_num(j, "self_pct", "%.4f", f->self_pct);
    else
        instr_json_key_null(j, "self_pct");
    instr_json_key_u64(j, "external_elapsed_ticks", f->v.ext_ei);
    instr_json_key_ns(j, "external_elapsed_ns", f->ext_ns[0]);
    instr_json_key_u64(j, "external_application_ticks", f->v.ext_ai);
    instr_json_key_ns(j, "external_application_ns", f->ext_ns[1]);
    if (s->job) { /* Elapsed Inclusive across the job's ranks (job.h) */
        instr_json_open(j, "ranks", '{', INSTR_JSON_INLINE);
        instr_json_key_ns(j, "min_ns", f->spread.min_ns);
        instr_json_key_ns(j, "mean_ns", f->spread.mean_ns);
        instr_json_key_ns(j, "max_ns", f->spread.max_ns);
        if (f->spread.max_rank >= 0)
            instr_json_key_u64(j, "max_rank", (uint64_t)f->spread.max_rank);
        else
            instr_json_key_null(j, "max_rank");
        instr_json_key_num(j, "max_over_mean", "%.4f",
                           f->spread.mean_ns > 0 ? f->spread.max_ns / f->spread.mean_ns : NAN);
        instr_json_close(j);
    }
}

static void thread_head(struct instr_json *j, const struct instr_session *s, const struct instr_row *t)
{
    (void)s;
    instr_json_key_u64(j, "pid", t->pid);
    instr_json_key_u64(j, "index", t->index);
    instr_json_key_u64(j, "tid", t->tid);
    instr_json_key_str(j, "name", t->name);
    instr_json_key_u64(j, "start_tick", t->start_tick);
    instr_json_key_u64(j, "end_tick", t->end_tick);
    instr_json_key_ns(j, "start_ns", t->start_ns);
    instr_json_key_ns(j, "end_ns", t->end_ns);
    instr_json_key_num(j, "alive_pct", "%.4f", t->alive_pct);
}

static void module_head(struct instr_json *j, const struct instr_session *s, const struct instr_row *m)
{
    (void)s;
    instr_json_key_str(j, "module", m->module);
}

static void process_head(struct instr_json *j, const struct instr_session *s, const struct instr_row *p)
{
    (void)s;
    instr_json_key_u64(j, "pid", p->pid);
    instr_json_key_str(j, "program", p->name);
}

static void row_array(struct instr_json *j, const struct instr_session *s, const char *key,
                      const struct instr_row *r, size_t n, row_members head, row_members tail)
{
    instr_json_open(j, key, '[', INSTR_JSON_LINES);
    for (size_t i = 0; i < n; i++) {
        instr_json_open(j, NULL, '{', INSTR_JSON_LINES);
        head(j, s, &r[i]);
        row_values(j, s, &r[i]);
        if (s->comp.known)
            row_probe(j, &r[i]);
        if (tail)
            tail(j, s, &r[i]);
        instr_json_close(j);
    }
    instr_json_close(j);
}

static void rows(struct instr_json *j, const struct instr_session *s)
{
    row_array(j, s, "functions", s->functions, s->nfunctions, function_head, function_tail);
    row_array(j, s, "threads", s->threads, s->nthreads, thread_head, NULL);
    row_array(j, s, "modules", s->modules, s->nmodules, module_head, NULL);
    row_array(j, s, "processes", s->processes, s->nprocesses, process_head, NULL);
}

/* ---- the tree views ------------------------------------------------------------ */

static void function(struct instr_json *j, const struct instr_row *r)
{
    instr_json_key_str(j, "name", r ? r->name : "[thread start]");
    instr_json_key_str(j, "mangled", r && r->mangled ? r->mangled : "");
    instr_json_key_str(j, "module", r ? r->module : "");
}

/* Flat, in the text view's order: id, parent id (0 = top level), depth. */
int instr_json_calltree(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o)
{
    struct instr_tree t;
    int rc = instr_tree_build(s, &t);
    if (rc < 0)
        return rc;
    instr_json_open(j, "calltree", '[', INSTR_JSON_LINES);
    for (uint32_t c = instr_tree_first(&t); c; c = instr_tree_next(&t, c, instr_tree_shown(&t.n[c], o))) {
        const struct instr_tnode *n = &t.n[c];
        if (!instr_tree_shown(n, o))
            continue;
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_u64(j, "id", c);
        instr_json_key_u64(j, "parent", n->parent);
        instr_json_key_u64(j, "depth", n->depth);
        function(j, instr_function_row(s, n->row));
        values4(j, s->no_app, &n->v, n->ns, n->pct);
        cpu2(j, s, &n->v, n->cpu_ns, n->cpu_pct);
        instr_json_close(j);
    }
    instr_json_close(j);
    instr_tree_free(&t);
    return 0;
}

static void relations(struct instr_json *j, const struct instr_session *s, const char *key,
                      const struct instr_relation *a, size_t n)
{
    instr_json_open(j, key, '[', INSTR_JSON_LINES);
    for (size_t i = 0; i < n; i++) {
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        function(j, instr_function_row(s, a[i].row));
        values4(j, s->no_app, &a[i].v, a[i].ns, a[i].pct);
        cpu2(j, s, &a[i].v, a[i].cpu_ns, a[i].cpu_pct);
        instr_json_close(j);
    }
    instr_json_close(j);
}

/* The member of --view callers or callees. */
int instr_json_relations(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o)
{
    struct instr_relations rel;
    char err[300];
    int rc = instr_relations_build(s, o->func ? o->func : "", &rel, err, sizeof err);
    if (rc < 0)
        return rc;
    const struct instr_row *fr = instr_function_row(s, rel.row);
    int callers = o->view == INSTR_VIEW_CALLERS;
    instr_json_open(j, callers ? "callers" : "callees", '{', INSTR_JSON_LINES);
    instr_json_open(j, "function", '{', INSTR_JSON_INLINE);
    function(j, fr);
    values4(j, s->no_app, &fr->v, fr->ns, fr->pct);
    cpu_values(j, s, fr);
    instr_json_close(j);
    if (callers)
        relations(j, s, "callers", rel.callers, rel.ncallers);
    else
        relations(j, s, "callees", rel.callees, rel.ncallees);
    instr_json_close(j);
    instr_relations_free(&rel);
    return 0;
}

int instr_report_json(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    struct instr_json j;
    instr_json_init(&j, out);
    instr_json_open(&j, NULL, '{', INSTR_JSON_LINES);
    session(&j, s);
    rows(&j, s);
    /* The tree views asked (every table is above), each its own member. */
    struct instr_report_opts one = *o;
    int rc = 0;
    for (size_t i = 0; i < (o->views ? o->nviews : 1) && rc >= 0; i++) {
        one.view = o->views ? o->views[i] : o->view;
        rc = instr_views[one.view].json ? instr_views[one.view].json(&j, s, &one) : 0;
    }
    instr_json_close(&j);
    fputc('\n', out);
    return rc;
}

/* report-json.c - the whole session as one JSON object (tools/README-json.md). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "exclusions.h"
#include "report.h"
#include "text-trace.h"

static void jstr(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out); /* UTF-8 passes through */
        }
    }
    fputc('"', out);
}

/* A number of nanoseconds, or null without a tick rate. */
static void jns(FILE *out, double ns)
{
    if (isnan(ns))
        fputs("null", out);
    else
        fprintf(out, "%.0f", ns);
}

/* no_app: Application values unavailable (instr_session.no_app): null. */
static void values(FILE *out, int no_app, const struct instr_row *r, const char *ind)
{
    static const char *const names[4] = {"elapsed_inclusive", "elapsed_exclusive", "application_inclusive",
                                         "application_exclusive"};
    const uint64_t t[4] = {r->v.ei, r->v.ee, r->v.ai, r->v.ae};
    fprintf(out, "%s\"calls\": %" PRIu64 ",\n", ind, r->v.calls);
    for (int i = 0; i < 4; i++) {
        if (no_app && i >= 2) {
            fprintf(out, "%s\"%s_ticks\": null,\n%s\"%s_ns\": null,\n%s\"%s_pct\": null,\n", ind, names[i], ind,
                    names[i], ind, names[i]);
            continue;
        }
        fprintf(out, "%s\"%s_ticks\": %" PRIu64 ",\n%s\"%s_ns\": ", ind, names[i], t[i], ind, names[i]);
        jns(out, r->ns[i]);
        fprintf(out, ",\n%s\"%s_pct\": %.4f,\n", ind, names[i], r->pct[i]);
    }
    fprintf(out, "%s\"flagged_intervals\": %" PRIu64 ",\n%s\"flagged_ticks\": %" PRIu64 ",\n%s\"flagged_ns\": ", ind,
            r->v.flagged_n, ind, r->v.flagged_t, ind);
    jns(out, r->flagged_ns);
    /* exact off-CPU time within those intervals; 0 unless the cpuclock backend ran
     * (session.off_cpu_exact) */
    fprintf(out, ",\n%s\"off_cpu_ticks\": %" PRIu64 ",\n%s\"off_cpu_ns\": ", ind, r->v.offcpu_t, ind);
    jns(out, r->offcpu_ns);
}

int instr_report_json(FILE *out, const struct instr_session *s, const struct instr_report_opts *o)
{
    fputs("{\n  \"session\": {\n    \"programs\": [", out);
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct instr_dump *d = &s->dumps[i];
        char sees[400], unseen[400], bits[64];
        instr_detector_text(d, sees, sizeof sees, unseen, sizeof unseen);
        fprintf(out, "%s\n      {\"program\": ", i ? "," : "");
        jstr(out, d->hdr.exe_path);
        fprintf(out, ", \"pid\": %" PRIu64 ", \"ppid\": %" PRIu64 ", \"tick_hz\": ", d->hdr.pid, d->hdr.ppid);
        if (d->tick_hz > 0)
            fprintf(out, "%.3f", d->tick_hz);
        else
            fputs("null", out);
        fprintf(out, ", \"complete\": %s, \"tsc_invariant\": %s, \"fork_child\": %s, \"detector\": ",
                (d->hdr.flags & INSTR_DUMP_COMPLETE) ? "true" : "false",
                (d->hdr.flags & INSTR_DUMP_TSC_INVARIANT) ? "true" : "false",
                (d->hdr.flags & INSTR_DUMP_FORK_CHILD) ? "true" : "false");
        jstr(out, instr_detector_name(d->hdr.detector));
        {
            char set[128];
            fputs(", \"detector_set\": ", out);
            jstr(out, instr_detector_set_name(d, set, sizeof set));
        }
        fputs(", \"detector_detail\": ", out);
        jstr(out, d->hdr.detector_detail);
        fputs(", \"detector_sees\": ", out);
        jstr(out, instr_os_bits_str(d->hdr.detector_sees, bits, sizeof bits));
        fputs(", \"detector_sees_text\": ", out);
        jstr(out, sees);
        fputs(", \"detector_not_seen_text\": ", out);
        jstr(out, unseen);
        fprintf(out, ", \"end_signal\": %u, \"open_frames_at_end\": %" PRIu64 "}", d->hdr.end_signal,
                s->profiles[i].repairs.incomplete);
    }
    fputs("\n    ],\n    \"program\": ", out);
    jstr(out, s->ndumps ? s->dumps[0].hdr.exe_path : "");
    fputs(",\n    \"pids\": [", out);
    for (size_t i = 0; i < s->ndumps; i++)
        fprintf(out, "%s%" PRIu64, i ? ", " : "", s->dumps[i].hdr.pid);
    fputs("],\n    \"duration_ns\": ", out);
    jns(out, s->have_rate ? s->duration_ns : NAN);
    fputs(",\n    \"tick_hz\": ", out);
    if (s->ndumps && s->dumps[0].tick_hz > 0)
        fprintf(out, "%.3f", s->dumps[0].tick_hz);
    else
        fputs("null", out);
    fputs(",\n    \"detector\": ", out);
    jstr(out, s->ndumps ? instr_detector_name(s->dumps[0].hdr.detector) : "none");
    {
        char set[128];
        fputs(",\n    \"detector_set\": ", out);
        jstr(out, s->ndumps ? instr_detector_set_name(&s->dumps[0], set, sizeof set) : "none");
    }
    fputs(",\n    \"not_application\": ", out);
    if (s->exclude && s->exclude->text)
        jstr(out, s->exclude->text);
    else
        fputs("null", out);
    {
        char sees[400], unseen[400];
        if (s->ndumps)
            instr_detector_text(&s->dumps[0], sees, sizeof sees, unseen, sizeof unseen);
        else
            sees[0] = unseen[0] = 0;
        fputs(",\n    \"detector_sees\": ", out);
        jstr(out, sees);
        fputs(",\n    \"detector_not_seen\": ", out);
        jstr(out, unseen);
    }
    const struct instr_repairs *r = &s->repairs;
    fprintf(out,
            ",\n    \"repairs\": {\"unwound_exception\": %" PRIu64 ", \"unwound_stack\": %" PRIu64
            ", \"unwound_mismatch\": %" PRIu64 ", \"unwound_other\": %" PRIu64 ", \"unmatched_exits\": %" PRIu64
            ", \"runtime_unmatched_exits\": %" PRIu64 ", \"incomplete_frames\": %" PRIu64 ", \"bad_chunks\": %" PRIu64
            "},\n",
            r->unwound[1], r->unwound[2], r->unwound[3], r->unwound[0], r->unmatched_exits, s->header_unmatched,
            r->incomplete, r->bad_chunks);
    fprintf(out, "    \"dropped\": %" PRIu64 ",\n    \"runtime_ns\": %.0f,\n    \"events\": %" PRIu64
                 ",\n    \"warnings\": [",
            s->dropped, s->runtime_ns, s->events);
    for (size_t i = 0; i < s->nwarnings; i++) {
        fputs(i ? ", " : "", out);
        jstr(out, s->warnings[i]);
    }
    fprintf(out, "],\n    \"totals\": {\"elapsed_inclusive_ticks\": %" PRIu64 ", \"application_inclusive_ticks\": ",
            s->total.ei);
    if (s->no_app)
        fputs("null", out);
    else
        fprintf(out, "%" PRIu64, s->total.ai);
    fputs(", \"elapsed_inclusive_ns\": ", out);
    jns(out, s->have_rate ? s->total_ns[0] : NAN);
    fputs(", \"application_inclusive_ns\": ", out);
    jns(out, s->have_rate && !s->no_app ? s->total_ns[1] : NAN);
    fprintf(out, "},\n    \"off_cpu_exact\": %s", s->offcpu_exact ? "true" : "false");
    fputs(",\n    \"application_available\": ", out);
    fputs(s->no_app ? "false" : "true", out);
    fputs("\n  },\n  \"functions\": [", out);
    for (size_t i = 0; i < s->nfunctions; i++) {
        const struct instr_row *f = &s->functions[i];
        fputs(i ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ", out);
        jstr(out, f->name);
        fputs(",\n      \"mangled\": ", out);
        jstr(out, f->mangled);
        fputs(",\n      \"module\": ", out);
        jstr(out, f->module);
        fputs(",\n      \"file\": ", out);
        jstr(out, f->file);
        fprintf(out, ",\n      \"line\": %" PRIu64 ",\n", f->line);
        values(out, s->no_app, f, "      ");
        fprintf(out, ",\n      \"pseudo\": %s,\n      \"external_elapsed_ticks\": %" PRIu64
                ",\n      \"external_elapsed_ns\": ", f->pseudo ? "true" : "false", f->v.ext_ei);
        jns(out, f->ext_ns[0]);
        fprintf(out, ",\n      \"external_application_ticks\": %" PRIu64 ",\n      \"external_application_ns\": ",
                f->v.ext_ai);
        jns(out, f->ext_ns[1]);
        fputs("\n    }", out);
    }
    fputs(s->nfunctions ? "\n  ],\n  \"threads\": [" : "],\n  \"threads\": [", out);
    for (size_t i = 0; i < s->nthreads; i++) {
        const struct instr_row *t = &s->threads[i];
        fprintf(out, "%s\n    {\n      \"pid\": %" PRIu64 ",\n      \"index\": %u,\n      \"tid\": %" PRIu64
                ",\n      \"name\": ", i ? "," : "", t->pid, t->index, t->tid);
        jstr(out, t->name);
        fprintf(out, ",\n      \"start_tick\": %" PRIu64 ",\n      \"end_tick\": %" PRIu64 ",\n      \"start_ns\": ",
                t->start_tick, t->end_tick);
        jns(out, t->start_ns);
        fputs(",\n      \"end_ns\": ", out);
        jns(out, t->end_ns);
        fputs(",\n", out);
        values(out, s->no_app, t, "      ");
        fputs("\n    }", out);
    }
    fputs(s->nthreads ? "\n  ],\n  \"modules\": [" : "],\n  \"modules\": [", out);
    for (size_t i = 0; i < s->nmodules; i++) {
        const struct instr_row *m = &s->modules[i];
        fputs(i ? ",\n    {\n      \"module\": " : "\n    {\n      \"module\": ", out);
        jstr(out, m->module);
        fputs(",\n", out);
        values(out, s->no_app, m, "      ");
        fputs("\n    }", out);
    }
    fputs(s->nmodules ? "\n  ],\n  \"processes\": [" : "],\n  \"processes\": [", out);
    for (size_t i = 0; i < s->nprocesses; i++) {
        const struct instr_row *p = &s->processes[i];
        fprintf(out, "%s\n    {\n      \"pid\": %" PRIu64 ",\n      \"program\": ", i ? "," : "", p->pid);
        jstr(out, p->name);
        fputs(",\n", out);
        values(out, s->no_app, p, "      ");
        fputs("\n    }", out);
    }
    fputs(s->nprocesses ? "\n  ]" : "]", out);
    int rc = instr_views_json(out, s, o);
    fputs("\n}\n", out);
    return rc;
}

void instr_json_str(FILE *out, const char *s)
{
    jstr(out, s);
}

void instr_json_ns(FILE *out, double ns)
{
    jns(out, ns);
}

/* view-ranks.c - --view ranks: one row per rank of the job (job.h): rank,
 * host, pid, Elapsed, useful time (CPU time outside MPI
 * frames, or Elapsed where CPU time is unknown), MPI
 * time (the Elapsed Inclusive of its outermost MPI frames), MPI % and how
 * it ended, as text, CSV and the JSON report's "ranks" member. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "writers.h"

static double mpi_pct(const struct instr_rank *r)
{
    return r->elapsed_ns > 0 ? 100.0 * r->mpi_ns / r->elapsed_ns
           : r->elapsed_t    ? 100.0 * (double)r->mpi_t / (double)r->elapsed_t
                             : 0;
}

/* The text table's columns: Rank Host Pid Elapsed Useful MPI MPI% End. */
#define NCOLS 8

/* One line of the table: Host and End left-aligned, End (the last) not padded. */
static void row(FILE *out, const char *const *v, const size_t *w)
{
    for (int c = 0; c < NCOLS; c++)
        if (c == NCOLS - 1)
            fprintf(out, "%s\n", v[c]);
        else
            fprintf(out, c == 1 ? "%-*s  " : "%*s  ", (int)w[c], v[c]);
}

static int ranks_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o, enum instr_units u)
{
    (void)o;
    const struct instr_job *j = s->job;
    if (!j) {
        fputs("Ranks: none of these dumps was written by a job's rank (launched by mpirun, srun...)\n", out);
        return 0;
    }
    fprintf(out, "Ranks of job %s: %zu of %u", j->id, j->nranks, j->size);
    if (j->nmissing) {
        char miss[256];
        instr_job_missing_text(j, miss, sizeof miss);
        fprintf(out, "; missing: rank %s", miss);
    }
    fprintf(out, "\n(useful: %s time outside MPI frames; MPI: the Elapsed Inclusive of MPI frames, %s%s)\n",
            s->cpu_known ? "CPU" : "Elapsed", j->mpi_prefixes[0] ? "names beginning " : "none: --mpi-prefixes=",
            j->mpi_prefixes[0] ? j->mpi_prefixes : "none");
    static const char *const titles[NCOLS] = {"Rank", "Host", "Pid", "Elapsed", "Useful", "MPI", "MPI %", "End"};
    char cells[NCOLS][256];
    size_t w[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        w[c] = strlen(titles[c]);
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            row(out, titles, w);
        for (size_t i = 0; i < j->nranks; i++) {
            const struct instr_rank *r = &j->ranks[i];
            snprintf(cells[0], 256, "%d", r->rank);
            snprintf(cells[1], 256, "%s", r->host[0] ? r->host : "?");
            snprintf(cells[2], 256, "%" PRIu64, r->pid);
            instr_fmt_value(cells[3], 256, r->elapsed_t, r->elapsed_ns, u);
            instr_fmt_value(cells[4], 256, r->useful_t, r->useful_ns, u);
            instr_fmt_value(cells[5], 256, r->mpi_t, r->mpi_ns, u);
            snprintf(cells[6], 256, "%.2f", mpi_pct(r));
            instr_rank_end_text(r, cells[7], 256);
            const char *v[NCOLS];
            for (int c = 0; c < NCOLS; c++) {
                v[c] = cells[c];
                if (!pass && strlen(cells[c]) > w[c])
                    w[c] = strlen(cells[c]);
            }
            if (pass)
                row(out, v, w);
        }
    }
    return 0;
}

static int ranks_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o, enum instr_units u)
{
    (void)o;
    const char *un = instr_units_name(u);
    fprintf(out, "rank,host,pid,elapsed_%s,useful_%s,mpi_%s,mpi_pct,job,end,exit_status,end_signal,end_call,end_in,"
                 "end_from,end_%s,abort_code\n",
            un, un, un, un);
    for (size_t i = 0; s->job && i < s->job->nranks; i++) {
        const struct instr_rank *r = &s->job->ranks[i];
        char e[64], us[64], m[64];
        instr_fmt_value(e, sizeof e, r->elapsed_t, r->elapsed_ns, u);
        instr_fmt_value(us, sizeof us, r->useful_t, r->useful_ns, u);
        instr_fmt_value(m, sizeof m, r->mpi_t, r->mpi_ns, u);
        fprintf(out, "%d,", r->rank);
        instr_csv_field(out, r->host);
        fprintf(out, ",%" PRIu64 ",%s,%s,%s,%.4f,", r->pid, e, us, m, mpi_pct(r));
        instr_csv_field(out, s->job->id);
        char at[64];
        instr_fmt_value(at, sizeof at, 0, r->end_ns - r->start_ns, u);
        fprintf(out, ",%s,", instr_rank_end_name(r->end));
        if (r->end == INSTR_RANK_EXITED)
            fprintf(out, "%d", r->exit_status);
        fputc(',', out);
        if (r->end == INSTR_RANK_SIGNALED)
            instr_csv_field(out, instr_signal_name(r->signal));
        fputc(',', out);
        instr_csv_field(out, r->call ? r->call : "");
        fputc(',', out);
        instr_csv_field(out, r->in ? r->in : "");
        fputc(',', out);
        instr_csv_field(out, r->from ? r->from : "");
        fprintf(out, ",%s,", at);
        if (r->abort_code != INT64_MIN)
            fprintf(out, "%" PRId64, r->abort_code);
        fputc('\n', out);
    }
    return 0;
}

int instr_json_ranks(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o)
{
    (void)o;
    instr_json_open(j, "ranks", '[', INSTR_JSON_LINES);
    for (size_t i = 0; s->job && i < s->job->nranks; i++) {
        const struct instr_rank *r = &s->job->ranks[i];
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_u64(j, "rank", (uint64_t)r->rank);
        instr_json_key_str(j, "host", r->host);
        instr_json_key_u64(j, "pid", r->pid);
        instr_json_key_u64(j, "elapsed_ticks", r->elapsed_t);
        instr_json_key_ns(j, "elapsed_ns", r->elapsed_ns);
        instr_json_key_u64(j, "useful_ticks", r->useful_t);
        instr_json_key_ns(j, "useful_ns", r->useful_ns);
        instr_json_key_u64(j, "mpi_ticks", r->mpi_t);
        instr_json_key_ns(j, "mpi_ns", r->mpi_ns);
        instr_json_key_num(j, "mpi_pct", "%.4f", mpi_pct(r));
        /* How it ended; at_ns from its start: its exit or signal, else its last event. */
        instr_json_open(j, "end", '{', INSTR_JSON_INLINE);
        instr_json_key_str(j, "how", instr_rank_end_name(r->end));
        if (r->end == INSTR_RANK_EXITED)
            instr_json_key_num(j, "exit_status", "%.0f", (double)r->exit_status);
        if (r->end == INSTR_RANK_SIGNALED)
            instr_json_key_str(j, "signal", instr_signal_name(r->signal));
        if (r->call)
            instr_json_key_str(j, "call", r->call);
        if (r->abort_code != INT64_MIN)
            instr_json_key_num(j, "abort_code", "%.0f", (double)r->abort_code);
        if (r->in)
            instr_json_key_str(j, "in", r->in);
        if (r->from)
            instr_json_key_str(j, "from", r->from);
        instr_json_key_ns(j, "at_ns", r->end_ns - r->start_ns);
        instr_json_close(j);
        instr_json_close(j);
    }
    instr_json_close(j);
    return 0;
}

int instr_views_ranks_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                           enum instr_units u)
{
    return ranks_text(out, s, o, u);
}

int instr_views_ranks_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                          enum instr_units u)
{
    return ranks_csv(out, s, o, u);
}

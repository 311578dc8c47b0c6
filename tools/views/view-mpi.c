/* view-mpi.c - --view mpi: a job's MPI calls as libinstr-mpi recorded
 * them (mpi-calls.h), mpiP's sections: the call sites by time (call,
 * caller and line, calls, time, its share, messages, bytes sent and their
 * min/mean/max a call), the top sites by bytes, per rank the messages
 * and bytes sent and received, and per pair of ranks the messages and
 * bytes sent (the communication matrix's cells that are not empty); as
 * text, CSV (one row per site, then one per rank, then one per pair, told
 * apart by the first column) and the JSON report's "mpi" member. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-calls.h"
#include "views.h"
#include "writers.h"

#define TOP 10
#define TOP_PAIRS 20

static int by_pair_bytes(const void *a, const void *b)
{
    const struct instr_mpi_pair *x = *(const struct instr_mpi_pair *const *)a,
                                *y = *(const struct instr_mpi_pair *const *)b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x < y ? -1 : x > y;
}

static double mean_bytes(const struct instr_mpi_site *x)
{
    return x->bytes_calls ? (double)x->bytes / (double)x->bytes_calls : 0;
}

static uint64_t min_bytes(const struct instr_mpi_site *x)
{
    return x->bytes_calls ? x->bytes_min : 0;
}

static int by_bytes(const void *a, const void *b)
{
    const struct instr_mpi_site *x = *(const struct instr_mpi_site *const *)a,
                                *y = *(const struct instr_mpi_site *const *)b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x < y ? -1 : x > y;
}

static void site_name(char *buf, size_t len, const struct instr_mpi_site *x)
{
    if (x->line)
        snprintf(buf, len, "%s:%" PRIu64, x->caller, x->line);
    else
        snprintf(buf, len, "%s", x->caller);
}

/* What the report could not take, said in each format. */
static const char *none_said(const struct instr_session *s, const struct instr_mpi_calls *m)
{
    if (!s->job)
        return "none of these dumps was written by a job's rank";
    if (!m->calls)
        return "no MPI call recorded: link the program with libinstr-mpi (docs/mpi.md)";
    return NULL;
}

static int mpi_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o, enum instr_units u)
{
    (void)o;
    struct instr_mpi_calls m;
    int rc = instr_mpi_calls_build(s, &m);
    if (rc < 0)
        return rc;
    const char *none = none_said(s, &m);
    if (none) {
        fprintf(out, "MPI calls: %s\n", none);
        if (m.invalid)
            fprintf(out, "Invalid:    %" PRIu64 " recorded MPI events left out (a value out of range, a field "
                         "twice or of no call)\n", m.invalid);
        instr_mpi_calls_free(&m);
        return 0;
    }
    char t[64], name[256];
    enum instr_units tu = u == INSTR_UNITS_TICKS ? INSTR_UNITS_MS : u; /* ticks differ by rank */
    instr_fmt_value(t, sizeof t, 0, m.time_ns, tu);
    fprintf(out, "MPI calls of job %s: %" PRIu64 " calls at %zu call sites, %s %s (libinstr-mpi's records)\n",
            s->job->id, m.calls, m.nsites, t, instr_units_name(u == INSTR_UNITS_TICKS ? INSTR_UNITS_MS : u));
    char ls[64], lr[64], wc[64];
    instr_fmt_value(ls, sizeof ls, 0, m.late_sender_ns, tu);
    instr_fmt_value(lr, sizeof lr, 0, m.late_receiver_ns, tu);
    instr_fmt_value(wc, sizeof wc, 0, m.wait_coll_ns, tu);
    fprintf(out, "Wait states: late sender %s, late receiver %s, wait at collective %s %s (on the job's one clock: "
                 "good to its bound, the Clocks: line)", ls, lr, wc, instr_units_name(tu));
    if (m.unmatched)
        fprintf(out, "; %" PRIu64 " calls unmatched (no send among the calls, or a collective not every rank "
                     "recorded)", m.unmatched);
    fputc('\n', out);
    if (m.invalid)
        fprintf(out, "Invalid:    %" PRIu64 " recorded MPI events left out (a value out of range, a field twice or "
                     "of no call)\n", m.invalid);
    fprintf(out, "\nCall sites by time (%s)\n", instr_units_name(tu));
    fprintf(out, "%-14s %-32s %8s %12s %7s %12s %12s %12s %8s %12s %10s %10s %10s\n", "Call", "Site", "Calls", "Time",
            "Time %", "Late sender", "Late recv", "Wait coll", "Messages", "Bytes sent", "Min", "Mean", "Max");
    for (size_t i = 0; i < m.nsites; i++) {
        const struct instr_mpi_site *x = &m.sites[i];
        site_name(name, sizeof name, x);
        instr_fmt_value(t, sizeof t, 0, x->time_ns, tu);
        instr_fmt_value(ls, sizeof ls, 0, x->late_sender_ns, tu);
        instr_fmt_value(lr, sizeof lr, 0, x->late_receiver_ns, tu);
        instr_fmt_value(wc, sizeof wc, 0, x->wait_coll_ns, tu);
        fprintf(out, "%-14s %-32s %8" PRIu64 " %12s %7.2f %12s %12s %12s %8" PRIu64 " %12" PRIu64 " %10" PRIu64
                     " %10.1f %10" PRIu64 "\n",
                instr_mpi_call_name(x->call), name, x->calls, t, m.time_ns > 0 ? 100 * x->time_ns / m.time_ns : 0,
                ls, lr, wc, x->messages, x->bytes, min_bytes(x), mean_bytes(x), x->bytes_max);
    }
    const struct instr_mpi_site **bb = malloc(m.nsites * sizeof *bb);
    if (!bb) {
        instr_mpi_calls_free(&m);
        return INSTR_ENOMEM;
    }
    for (size_t i = 0; i < m.nsites; i++)
        bb[i] = &m.sites[i];
    qsort(bb, m.nsites, sizeof *bb, by_bytes);
    fprintf(out, "\nTop call sites by bytes sent\n%-14s %-32s %12s %8s\n", "Call", "Site", "Bytes sent", "Calls");
    for (size_t i = 0; i < m.nsites && i < TOP && bb[i]->bytes; i++) {
        site_name(name, sizeof name, bb[i]);
        fprintf(out, "%-14s %-32s %12" PRIu64 " %8" PRIu64 "\n", instr_mpi_call_name(bb[i]->call), name,
                bb[i]->bytes, bb[i]->calls);
    }
    free(bb);
    fprintf(out, "\nMessages per rank (point to point)\n%6s %8s %10s %10s %10s %12s\n", "Rank", "Calls", "Sent",
            "Bytes sent", "Received", "Bytes recv");
    for (size_t i = 0; i < m.nranks; i++) {
        const struct instr_mpi_rank *r = &m.ranks[i];
        fprintf(out, "%6d %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64 "\n", r->rank, r->calls,
                r->sent_messages, r->sent_bytes, r->received_messages, r->received_bytes);
    }
    if (m.npairs) {
        const struct instr_mpi_pair **pp = malloc(m.npairs * sizeof *pp);
        if (!pp) {
            instr_mpi_calls_free(&m);
            return INSTR_ENOMEM;
        }
        for (size_t i = 0; i < m.npairs; i++)
            pp[i] = &m.pairs[i];
        qsort(pp, m.npairs, sizeof *pp, by_pair_bytes);
        if (m.npairs > TOP_PAIRS)
            fprintf(out, "\nMessages per pair of ranks (point to point, sent: the %d with the most bytes of %zu "
                         "pairs; every pair in CSV and JSON)\n", TOP_PAIRS, m.npairs);
        else
            fprintf(out, "\nMessages per pair of ranks (point to point, sent)\n");
        fprintf(out, "%6s %6s %10s %12s\n", "From", "To", "Messages", "Bytes");
        for (size_t i = 0; i < m.npairs && i < TOP_PAIRS; i++)
            fprintf(out, "%6d %6d %10" PRIu64 " %12" PRIu64 "\n", pp[i]->from, pp[i]->to, pp[i]->messages, pp[i]->bytes);
        free(pp);
    }
    instr_mpi_calls_free(&m);
    return 0;
}

static int mpi_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o, enum instr_units u)
{
    (void)o;
    struct instr_mpi_calls m;
    int rc = instr_mpi_calls_build(s, &m);
    if (rc < 0)
        return rc;
    enum instr_units tu = u == INSTR_UNITS_TICKS ? INSTR_UNITS_NS : u;
    const char *un = instr_units_name(tu);
    fprintf(out, "record,call,caller,line,rank,calls,time_%s,messages_sent,bytes_sent,bytes_min,bytes_mean,bytes_max,"
                 "messages_received,bytes_received,late_sender_%s,wait_at_collective_%s,late_receiver_%s,to_rank\n", un, un, un,
            un);
    char t[64];
    for (size_t i = 0; i < m.nsites; i++) {
        const struct instr_mpi_site *x = &m.sites[i];
        char ls[64], wc[64], lr[64];
        instr_fmt_value(t, sizeof t, 0, x->time_ns, tu);
        instr_fmt_value(ls, sizeof ls, 0, x->late_sender_ns, tu);
        instr_fmt_value(wc, sizeof wc, 0, x->wait_coll_ns, tu);
        instr_fmt_value(lr, sizeof lr, 0, x->late_receiver_ns, tu);
        fprintf(out, "site,%s,", instr_mpi_call_name(x->call));
        instr_csv_field(out, x->caller);
        fprintf(out, ",%" PRIu64 ",,%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.1f,%" PRIu64 ",,,%s,%s,%s,\n",
                x->line, x->calls, t, x->messages, x->bytes, min_bytes(x), mean_bytes(x), x->bytes_max, ls, wc, lr);
    }
    for (size_t i = 0; i < m.nranks; i++) {
        const struct instr_mpi_rank *r = &m.ranks[i];
        fprintf(out, "rank,,,,%d,%" PRIu64 ",,%" PRIu64 ",%" PRIu64 ",,,,%" PRIu64 ",%" PRIu64 ",,,,\n", r->rank, r->calls,
                r->sent_messages, r->sent_bytes, r->received_messages, r->received_bytes);
    }
    for (size_t i = 0; i < m.npairs; i++)
        fprintf(out, "pair,,,,%d,,,%" PRIu64 ",%" PRIu64 ",,,,,,,,,%d\n", m.pairs[i].from, m.pairs[i].messages,
                m.pairs[i].bytes, m.pairs[i].to);
    instr_mpi_calls_free(&m);
    return 0;
}

int instr_json_mpi(struct instr_json *j, const struct instr_session *s, const struct instr_report_opts *o)
{
    (void)o;
    struct instr_mpi_calls m;
    int rc = instr_mpi_calls_build(s, &m);
    if (rc < 0)
        return rc;
    instr_json_open(j, "mpi", '{', INSTR_JSON_LINES);
    const char *none = none_said(s, &m);
    if (none)
        instr_json_key_str(j, "none", none);
    else
        instr_json_key_null(j, "none");
    instr_json_key_u64(j, "calls", m.calls);
    instr_json_key_ns(j, "time_ns", m.time_ns);
    instr_json_key_u64(j, "invalid", m.invalid);
    instr_json_open(j, "sites", '[', INSTR_JSON_LINES); /* by time */
    for (size_t i = 0; i < m.nsites; i++) {
        const struct instr_mpi_site *x = &m.sites[i];
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_str(j, "call", instr_mpi_call_name(x->call));
        instr_json_key_str(j, "caller", x->caller);
        instr_json_key_u64(j, "line", x->line);
        instr_json_key_u64(j, "calls", x->calls);
        instr_json_key_ns(j, "time_ns", x->time_ns);
        instr_json_key_ns(j, "time_max_ns", x->time_max_ns);
        instr_json_key_u64(j, "messages_sent", x->messages);
        instr_json_key_u64(j, "bytes_sent", x->bytes);
        instr_json_key_u64(j, "bytes_min", min_bytes(x));
        instr_json_key_num(j, "bytes_mean", "%.1f", mean_bytes(x));
        instr_json_key_u64(j, "bytes_max", x->bytes_max);
        instr_json_key_ns(j, "late_sender_ns", x->late_sender_ns);
        instr_json_key_ns(j, "late_receiver_ns", x->late_receiver_ns);
        instr_json_key_ns(j, "wait_at_collective_ns", x->wait_coll_ns);
        instr_json_close(j);
    }
    instr_json_close(j);
    instr_json_open(j, "wait_states", '{', INSTR_JSON_INLINE);
    instr_json_key_ns(j, "late_sender_ns", m.late_sender_ns);
    instr_json_key_ns(j, "late_receiver_ns", m.late_receiver_ns);
    instr_json_key_ns(j, "wait_at_collective_ns", m.wait_coll_ns);
    instr_json_key_u64(j, "unmatched", m.unmatched);
    instr_json_close(j);
    instr_json_open(j, "clock", '{', INSTR_JSON_INLINE);
    instr_json_key_str(j, "method", instr_axis_method(&s->axis));
    instr_json_key_ns(j, "bound_ns", s->axis.bound_ns);
    instr_json_close(j);
    instr_json_open(j, "ranks", '[', INSTR_JSON_LINES);
    for (size_t i = 0; i < m.nranks; i++) {
        const struct instr_mpi_rank *r = &m.ranks[i];
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_u64(j, "rank", (uint64_t)r->rank);
        instr_json_key_u64(j, "clock_syncs", r->nsync);
        if (r->nsync) {
            instr_json_key_num(j, "offset_init_ns", "%.0f", r->off_ns[0]);
            instr_json_key_num(j, "offset_finalize_ns", "%.0f", r->off_ns[r->nsync - 1]);
            instr_json_key_num(j, "rtt_ns", "%.0f", r->rtt_ns[0] > r->rtt_ns[r->nsync - 1] ? r->rtt_ns[0]
                                                                                          : r->rtt_ns[r->nsync - 1]);
        }
        instr_json_key_num(j, "start_ns", "%.0f", r->start_ns);
        instr_json_key_u64(j, "calls", r->calls);
        instr_json_key_u64(j, "messages_sent", r->sent_messages);
        instr_json_key_u64(j, "bytes_sent", r->sent_bytes);
        instr_json_key_u64(j, "messages_received", r->received_messages);
        instr_json_key_u64(j, "bytes_received", r->received_bytes);
        instr_json_close(j);
    }
    instr_json_close(j);
    instr_json_open(j, "pairs", '[', INSTR_JSON_LINES); /* by from, then to */
    for (size_t i = 0; i < m.npairs; i++) {
        instr_json_open(j, NULL, '{', INSTR_JSON_INLINE);
        instr_json_key_u64(j, "from", (uint64_t)m.pairs[i].from);
        instr_json_key_u64(j, "to", (uint64_t)m.pairs[i].to);
        instr_json_key_u64(j, "messages", m.pairs[i].messages);
        instr_json_key_u64(j, "bytes", m.pairs[i].bytes);
        instr_json_close(j);
    }
    instr_json_close(j);
    instr_json_close(j);
    instr_mpi_calls_free(&m);
    return 0;
}

int instr_views_mpi_text(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                         enum instr_units u)
{
    return mpi_text(out, s, o, u);
}

int instr_views_mpi_csv(FILE *out, const struct instr_session *s, const struct instr_report_opts *o,
                        enum instr_units u)
{
    return mpi_csv(out, s, o, u);
}

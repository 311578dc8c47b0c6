/* axis.c - one time axis for a session's processes (axis.h): each dump's
 * start and rate on it, from the headers' clock pairs and the CLOCK_SYNC
 * records of libinstr-mpi's ping-pongs.
 *
 * A ping-pong of rank r with rank 0 gives, at the middle of the shortest
 * round trip, r's ticks and rank 0's: with each dump's clock pair
 * (start_tsc at start_real_ns) both become real-time ns, and their
 * difference is how far rank 0's host's clock is ahead of r's host's then,
 * to within half the round trip.  Two of them (MPI_Init's and
 * MPI_Finalize's) make a line, the drift; one, a constant.  A host's line
 * serves every dump of that host that has none of its own (a rank's forked
 * children, ranks that died before MPI_Init's end); rank 0's host is the
 * reference, offset 0. */
#include "axis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "report.h"

/* Real-time ns from the axis's base of dump d's ticks. */
static double since_start_ns(const struct instr_dump *d, uint64_t tick)
{
    return tick >= d->hdr.start_tsc ? instr_ticks_ns(d, tick - d->hdr.start_tsc)
                                    : -instr_ticks_ns(d, d->hdr.start_tsc - tick);
}

static int same_host(const struct instr_dump *a, const struct instr_dump *b)
{
    return !strncmp(a->hdr.host, b->hdr.host, sizeof a->hdr.host);
}

static size_t count_hosts(const struct instr_dump *dumps, size_t n)
{
    size_t hosts = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < i && !same_host(&dumps[k], &dumps[i]))
            k++;
        hosts += k == i;
    }
    return hosts;
}

/* The dump of rank peer of d's job (the earliest started: a rank's forked
 * children carry its rank too), or SIZE_MAX. */
static size_t peer_dump(const struct instr_dump *dumps, size_t n, const struct instr_dump *d, uint32_t peer)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        const struct instr_dump *p = &dumps[i];
        if (p->hdr.job_size && p->hdr.job_rank == (int32_t)peer &&
            !strncmp(p->hdr.job_id, d->hdr.job_id, sizeof d->hdr.job_id) && p->tick_hz > 0 &&
            (best == SIZE_MAX || p->hdr.start_real_ns < dumps[best].hdr.start_real_ns))
            best = i;
    }
    return best;
}

/* A host's clock against the reference's: offset(t) = off + slope * (t - at)
 * for t real-time ns from base. */
struct line {
    int known;
    double at, off, slope;
};

static double offset(const struct line *l, double t)
{
    return l->off + l->slope * (t - l->at);
}

/* Dump i's own line from its CLOCK_SYNC records, or none (its peer's dump
 * absent, no tick rate). */
static struct line own_line(struct instr_axis *a, const struct instr_dump *dumps, size_t n, size_t i,
                            uint64_t base)
{
    const struct instr_dump *d = &dumps[i];
    struct instr_axis_dump *ad = &a->d[i];
    struct line l = {0};
    if (!d->nclock_sync || d->tick_hz <= 0)
        return l;
    size_t r = peer_dump(dumps, n, d, d->clock_sync[0].peer);
    if (r == SIZE_MAX || r == i)
        return l;
    const struct instr_dump *root = &dumps[r];
    double at[2];
    for (unsigned k = 0; k < d->nclock_sync; k++) {
        const struct instr_clock_sync *c = &d->clock_sync[k];
        /* The epochs' difference in integers: ns since 1970 as doubles are
         * 256 ns apart. */
        double local = (double)(int64_t)(d->hdr.start_real_ns - base) + since_start_ns(d, c->local);
        double remote = (double)(int64_t)(root->hdr.start_real_ns - base) + since_start_ns(root, c->peer_ticks);
        at[k] = local;
        ad->offset_ns[k] = remote - local;
        ad->rtt_ns[k] = instr_ticks_ns(d, c->rtt);
        if (isnan(a->bound_ns) || ad->rtt_ns[k] / 2 > a->bound_ns)
            a->bound_ns = ad->rtt_ns[k] / 2;
    }
    ad->nsync = d->nclock_sync;
    l.known = 1;
    l.at = at[0];
    l.off = ad->offset_ns[0];
    if (d->nclock_sync == 2 && at[1] > at[0])
        l.slope = (ad->offset_ns[1] - ad->offset_ns[0]) / (at[1] - at[0]);
    return l;
}

int instr_axis_build(struct instr_axis *a, const struct instr_dump *dumps, size_t n)
{
    memset(a, 0, sizeof *a);
    a->bound_ns = NAN;
    a->n = n;
    if (!(a->d = calloc(n ? n : 1, sizeof *a->d)))
        return INSTR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        a->d[i].scale = 1;
    a->nhosts = count_hosts(dumps, n);
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        base = dumps[i].hdr.start_real_ns < base ? dumps[i].hdr.start_real_ns : base;
    struct line *lines = calloc(n ? n : 1, sizeof *lines);
    if (!lines)
        return instr_axis_free(a), INSTR_ENOMEM;
    for (size_t i = 0; i < n; i++) /* measured on one host too: said, not used */
        lines[i] = own_line(a, dumps, n, i, base);
    if (a->nhosts <= 1) { /* one clock for all: exact */
        uint64_t t0 = UINT64_MAX;
        for (size_t i = 0; i < n; i++)
            t0 = dumps[i].hdr.start_mono_ns < t0 ? dumps[i].hdr.start_mono_ns : t0;
        for (size_t i = 0; i < n; i++)
            a->d[i].start_ns = (double)(dumps[i].hdr.start_mono_ns - t0);
        a->kind = INSTR_AXIS_MONOTONIC;
        free(lines);
        return 0;
    }
    /* Dumps without a line: another's of their host (below: on the
     * reference's host, offset 0). */
    size_t measured_hosts = 0;
    for (size_t i = 0; i < n; i++) {
        a->d[i].measured = lines[i].known;
        if (lines[i].known)
            continue;
        for (size_t k = 0; k < n && !a->d[i].measured; k++) {
            if (k == i || !same_host(&dumps[k], &dumps[i]))
                continue;
            if (a->d[k].nsync) { /* its own line */
                lines[i] = lines[k];
                a->d[i].measured = 2;
            }
        }
    }
    /* The reference host: the peer's of any line (rank 0's). */
    for (size_t i = 0; i < n; i++) {
        if (!a->d[i].nsync)
            continue;
        size_t r = peer_dump(dumps, n, &dumps[i], dumps[i].clock_sync[0].peer);
        for (size_t k = 0; r != SIZE_MAX && k < n; k++)
            if (!a->d[k].measured && same_host(&dumps[k], &dumps[r]))
                a->d[k].measured = 2; /* on the reference's clock: offset 0 */
    }
    /* Hosts measured, of those not the reference's. */
    size_t hosts_unmeasured = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < i && !same_host(&dumps[k], &dumps[i]))
            k++;
        if (k == i) { /* first of its host */
            int m = 0;
            for (size_t j = i; j < n; j++)
                m |= same_host(&dumps[j], &dumps[i]) && a->d[j].measured;
            measured_hosts += m;
            hosts_unmeasured += !m;
        }
    }
    a->kind = !measured_hosts ? INSTR_AXIS_REAL_TIME : hosts_unmeasured ? INSTR_AXIS_PARTLY : INSTR_AXIS_PING_PONG;
    double lo = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double t = (double)(int64_t)(dumps[i].hdr.start_real_ns - base);
        if (lines[i].known) {
            a->d[i].start_ns = t + offset(&lines[i], t);
            a->d[i].scale = 1 + lines[i].slope;
        } else
            a->d[i].start_ns = t;
        lo = a->d[i].start_ns < lo ? a->d[i].start_ns : lo;
    }
    for (size_t i = 0; i < n; i++)
        a->d[i].start_ns -= lo;
    free(lines);
    return 0;
}

void instr_axis_free(struct instr_axis *a)
{
    free(a->d);
    memset(a, 0, sizeof *a);
}

double instr_axis_tick_us(const struct instr_axis *a, const struct instr_dump *dumps, size_t i, uint64_t tick)
{
    const struct instr_dump *d = &dumps[i];
    if (d->tick_hz <= 0)
        return NAN;
    double rel = ((double)tick - (double)d->hdr.start_tsc) * 1e6 / d->tick_hz;
    return rel * a->d[i].scale + a->d[i].start_ns / 1e3;
}

double instr_axis_tick_ns(const struct instr_axis *a, const struct instr_dump *dumps, size_t i, uint64_t tick)
{
    const struct instr_dump *d = &dumps[i];
    if (d->tick_hz <= 0)
        return NAN;
    return instr_axis_at(a, i, ((double)tick - (double)d->hdr.start_tsc) * 1e9 / d->tick_hz);
}

double instr_axis_end_ns(const struct instr_axis *a, const struct instr_dump *dumps, size_t i)
{
    const struct instr_dump *d = &dumps[i];
    uint64_t end = (d->hdr.flags & INSTR_DUMP_COMPLETE) ? d->hdr.end_mono_ns : d->hdr.last_mono_ns;
    return instr_axis_at(a, i, end > d->hdr.start_mono_ns ? (double)(end - d->hdr.start_mono_ns) : 0);
}

const char *instr_axis_method(const struct instr_axis *a)
{
    static const char *const m[] = {"monotonic", "real-time", "ping-pong", "partly ping-pong"};
    return m[a->kind];
}

double instr_axis_largest_offset(const struct instr_axis *a)
{
    double worst = 0;
    for (size_t i = 0; i < a->n; i++)
        for (unsigned k = 0; k < a->d[i].nsync; k++)
            worst = fabs(a->d[i].offset_ns[k]) > worst ? fabs(a->d[i].offset_ns[k]) : worst;
    return worst;
}

void instr_axis_text(const struct instr_axis *a, char *buf, size_t len)
{
    double worst = instr_axis_largest_offset(a);
    buf[0] = 0;
    switch (a->kind) {
    case INSTR_AXIS_MONOTONIC:
        if (!isnan(a->bound_ns))
            snprintf(buf, len, "one host's monotonic clock, exact (the ping-pongs with rank 0 measured offsets up "
                               "to %.3f us, within %.3f us)", worst / 1e3, a->bound_ns / 1e3);
        break;
    case INSTR_AXIS_REAL_TIME:
        snprintf(buf, len, "%zu hosts' real-time clocks as they were: not aligned (no ping-pong with rank 0 "
                           "recorded: link libinstr-mpi)", a->nhosts);
        break;
    case INSTR_AXIS_PING_PONG:
    case INSTR_AXIS_PARTLY:
        snprintf(buf, len, "%zu hosts on rank 0's clock by ping-pong at MPI_Init and MPI_Finalize%s: within %.3f us "
                           "(half the worst round trip); largest offset %.3f us", a->nhosts,
                 a->kind == INSTR_AXIS_PARTLY ? " (some hosts not measured: their real-time clocks as they were)"
                                              : "", a->bound_ns / 1e3, worst / 1e3);
        break;
    }
}

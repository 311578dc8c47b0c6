/* wait-states.c - Scalasca's wait states from a job's MPI calls
 * (mpi-calls.h), on the session's time axis (axis.h), charged to the call
 * sites where the waiting happened:
 *
 *   late sender         a blocking receive (MPI_Recv, MPI_Sendrecv, or an
 *                       MPI_Wait/Waitall/Waitany/Waitsome completing an
 *                       MPI_Irecv) entered
 *                       before its matching send started: the time from
 *                       its entry to the send's start (at most to its end).
 *
 *         sender    ----------------[send.....]
 *         receiver  ------[recv.....:..........]
 *                         <- wait ->
 *
 *   late receiver       a blocking send (MPI_Send, MPI_Ssend) still in the
 *                       call when its matching receive was posted (the
 *                       MPI_Recv entered, or the MPI_Irecv a Wait
 *                       completed): from its entry to that post.  A send
 *                       that returned before the post (sent eagerly, the
 *                       message buffered) waited for nobody.
 *
 *         sender    ------[send.....:......]
 *         receiver  ----------------[recv..]
 *                         <- wait ->
 *
 *   wait at collective  a rank in an MPI_Barrier, Allreduce, Allgather[v] or
 *                       Alltoall[v] before the last rank
 *                       entered it: from its entry to the last entry;
 *                       in an MPI_Bcast or Scatter[v] before its root
 *                       entered it (late broadcast): to the root's entry;
 *                       the root of an MPI_Reduce or Gather[v] before the
 *                       first other rank entered it (early reduce): to
 *                       that entry; rank r of an MPI_Scan or Exscan
 *                       before the last of its communicator's ranks
 *                       0 .. r-1 entered it (early scan): to that entry.
 *                       Each at most to the call's end.
 *
 * A receive is matched to a send by the channel (sender, receiver,
 * communicator, tag) and order: the k-th receive posted on a channel
 * takes the k-th send into it (MPI's messages do not overtake on a
 * channel); a Wait's receive was posted by its MPI_Irecv (the request
 * names it).  A receive posted with MPI_ANY_SOURCE or MPI_ANY_TAG among
 * others on its channel can be matched wrongly.  The receive's channel is its actual source and tag, from the
 * status.  Collectives are matched by communicator and number (seq):
 * those of MPI_COMM_WORLD, and of the communicators libinstr-mpi saw made
 * (MPI_Comm_split, dup, ...), which every rank of them numbers alike
 * (COMM_ID); others' numbers differ between processes, and their
 * collectives are left out.  A receive without its send among the calls,
 * or a collective some rank of its communicator did not record, is
 * counted unmatched. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dump-reader.h"
#include "mpi-calls.h"

static int has(const struct instr_mpi_rec *r, unsigned f)
{
    return (r->seen >> f) & 1;
}

/* The call's communicator as every rank knows it: 0 for MPI_COMM_WORLD,
 * the job-wide number of one a wrapped call made (>= 2^32), else its
 * number in this process (2 .. 255: the same communicator may have
 * another number on another rank; 1 is MPI_COMM_SELF). */
static int64_t comm_key(const struct instr_mpi_rec *r)
{
    if (has(r, INSTR_MPI_FIELD_COMM_ID))
        return r->f[INSTR_MPI_FIELD_COMM_ID];
    return has(r, INSTR_MPI_FIELD_COMM) ? r->f[INSTR_MPI_FIELD_COMM] : 0;
}

/* A channel's position of a call: sort key of sends and receives. */
struct chan {
    int64_t from, to, comm, tag;
    size_t order; /* the call's index in recs: its rank's order */
    size_t rec;
};

static int chan_cmp(const void *a, const void *b)
{
    const struct chan *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int same_chan(const struct chan *x, const struct chan *y)
{
    return x->from == y->from && x->to == y->to && x->comm == y->comm && x->tag == y->tag;
}

/* A message sent (when the record has its bytes: a persistent request's
 * Start has them for a send only). */
static int is_send(unsigned call)
{
    return call == INSTR_MPI_SEND || call == INSTR_MPI_SSEND || call == INSTR_MPI_ISEND || call == INSTR_MPI_SENDRECV ||
           instr_mpi_call_class(call) == INSTR_MPI_CLASS_START;
}

/* A receive posted for a later Wait: an MPI_Irecv, or the Start of a
 * persistent receive (no bytes sent); its request names it. */
static int is_post(const struct instr_mpi_rec *r)
{
    return (r->call == INSTR_MPI_IRECV ||
            (instr_mpi_call_class(r->call) == INSTR_MPI_CLASS_START && !has(r, INSTR_MPI_FIELD_SENT))) &&
           has(r, INSTR_MPI_FIELD_REQUEST);
}

/* A message received: by a receive, or by a Wait or Test completing an
 * MPI_Irecv (matched all the same: the k-th receive on a channel). */
static int is_recv(const struct instr_mpi_rec *r)
{
    int cls = instr_mpi_call_class(r->call);
    return (cls == INSTR_MPI_CLASS_RECV || cls == INSTR_MPI_CLASS_SENDRECV || cls == INSTR_MPI_CLASS_WAIT ||
            cls == INSTR_MPI_CLASS_TEST) && has(r, INSTR_MPI_FIELD_SOURCE) && has(r, INSTR_MPI_FIELD_RECEIVED);
}

/* A receive that waited for its message (a Test never does). */
static int blocks(const struct instr_mpi_rec *r)
{
    return instr_mpi_call_class(r->call) != INSTR_MPI_CLASS_TEST;
}

static int is_nxn(unsigned call)
{
    return instr_mpi_coll_shape(call) == INSTR_MPI_N_TO_N;
}

/* One to many: the others wait for the root to enter. */
static int is_one_to_n(unsigned call)
{
    return instr_mpi_coll_shape(call) == INSTR_MPI_ONE_TO_N;
}

/* Many to one: the root waits for the first other rank to enter. */
static int is_n_to_one(unsigned call)
{
    return instr_mpi_coll_shape(call) == INSTR_MPI_N_TO_ONE;
}

/* (rank, request) of an MPI_Irecv's record: where a Wait that completed
 * it was posted, for the order of receives on a channel. */
struct posted {
    uint32_t rank;
    int64_t request;
    size_t rec;
};

static int posted_cmp(const void *a, const void *b)
{
    const struct posted *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->request > y->request) - (x->request < y->request);
}

/* A receive's place in its rank's order of posting: a Wait's is its
 * MPI_Irecv's (found by request), a blocking receive's its own. */
static size_t post_order(const struct instr_mpi_rec *recs, size_t i, const struct posted *p, size_t np)
{
    const struct instr_mpi_rec *r = &recs[i];
    int cls = instr_mpi_call_class(r->call);
    if ((cls == INSTR_MPI_CLASS_WAIT || cls == INSTR_MPI_CLASS_TEST) && has(r, INSTR_MPI_FIELD_REQUEST)) {
        struct posted key = {r->rank, r->f[INSTR_MPI_FIELD_REQUEST], 0};
        const struct posted *hit = bsearch(&key, p, np, sizeof *p, posted_cmp);
        if (hit)
            return hit->rec;
    }
    return i;
}

static int late_sender_matched(struct instr_mpi_calls *m, const struct posted *posted, size_t np)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrecs; i++)
        n += is_send(m->recs[i].call) || is_recv(&m->recs[i]);
    struct chan *sends = malloc((n ? n : 1) * sizeof *sends), *recvs = malloc((n ? n : 1) * sizeof *recvs);
    if (!sends || !recvs) {
        free(sends);
        free(recvs);
        return INSTR_ENOMEM;
    }
    size_t ns = 0, nr = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        const struct instr_mpi_rec *r = &m->recs[i];
        int64_t me = m->ranks[r->rank].rank, comm = comm_key(r);
        if (is_send(r->call) && has(r, INSTR_MPI_FIELD_PEER) && has(r, INSTR_MPI_FIELD_SENT) &&
            r->f[INSTR_MPI_FIELD_PEER] >= 0)
            sends[ns++] = (struct chan){me, r->f[INSTR_MPI_FIELD_PEER], comm,
                                        has(r, INSTR_MPI_FIELD_TAG) ? r->f[INSTR_MPI_FIELD_TAG] : 0, i, i};
        if (is_recv(r) && r->f[INSTR_MPI_FIELD_SOURCE] >= 0)
            recvs[nr++] = (struct chan){r->f[INSTR_MPI_FIELD_SOURCE], me, comm,
                                        has(r, INSTR_MPI_FIELD_RTAG) ? r->f[INSTR_MPI_FIELD_RTAG] : 0,
                                        post_order(m->recs, i, posted, np), i};
    }
    qsort(sends, ns, sizeof *sends, chan_cmp);
    qsort(recvs, nr, sizeof *recvs, chan_cmp);
    /* Walk both sorted lists a channel at a time: the k-th of each pair up. */
    size_t a = 0;
    for (size_t b = 0; b < nr;) {
        size_t e = b;
        while (e < nr && same_chan(&recvs[e], &recvs[b]))
            e++;
        while (a < ns && chan_cmp(&sends[a], &recvs[b]) < 0 && !same_chan(&sends[a], &recvs[b]))
            a++;
        for (size_t k = b; k < e; k++, a++) {
            if (a >= ns || !same_chan(&sends[a], &recvs[b])) {
                m->unmatched += e - k;
                break;
            }
            const struct instr_mpi_rec *snd = &m->recs[sends[a].rec];
            struct instr_mpi_rec *rcv = &m->recs[recvs[k].rec];
            rcv->partner = sends[a].rec;
            double s0 = snd->start;
            double r0 = rcv->entered; /* a Waitall's later events: its entry, not their own 0 ticks */
            double r1 = rcv->end;
            if (s0 > r0 && blocks(rcv)) {
                double w = (s0 < r1 ? s0 : r1) - r0;
                m->sites[rcv->site].late_sender_ns += w;
                m->late_sender_ns += w;
            }
            /* the receive posted: the Irecv's entry for a Wait's, the call's own else */
            double posted_at = m->recs[recvs[k].order].start;
            if ((snd->call == INSTR_MPI_SEND || snd->call == INSTR_MPI_SSEND) && posted_at > s0 &&
                posted_at < snd->end) {
                m->sites[snd->site].late_receiver_ns += posted_at - s0;
                m->late_receiver_ns += posted_at - s0;
            }
        }
        while (a < ns && same_chan(&sends[a], &recvs[b]))
            a++; /* sends never received */
        b = e;
    }
    free(sends);
    free(recvs);
    return 0;
}

static int late_sender(struct instr_mpi_calls *m)
{
    size_t np = 0;
    for (size_t i = 0; i < m->nrecs; i++)
        np += is_post(&m->recs[i]);
    struct posted *posted = malloc((np ? np : 1) * sizeof *posted);
    if (!posted)
        return INSTR_ENOMEM;
    np = 0;
    for (size_t i = 0; i < m->nrecs; i++)
        if (is_post(&m->recs[i]))
            posted[np++] = (struct posted){m->recs[i].rank, m->recs[i].f[INSTR_MPI_FIELD_REQUEST], i};
    qsort(posted, np, sizeof *posted, posted_cmp);
    int rc = late_sender_matched(m, posted, np);
    free(posted);
    return rc;
}

static int coll_cmp(const void *a, const void *b)
{
    const struct instr_mpi_rec *x = *(const struct instr_mpi_rec *const *)a, *y = *(const struct instr_mpi_rec *const *)b;
    int64_t k = comm_key(x), l = comm_key(y);
    if (k != l)
        return (k > l) - (k < l);
    int64_t p = x->f[INSTR_MPI_FIELD_SEQ], q = y->f[INSTR_MPI_FIELD_SEQ];
    return (p > q) - (p < q);
}

static int same_coll(const struct instr_mpi_rec *x, const struct instr_mpi_rec *y)
{
    return comm_key(x) == comm_key(y) && x->f[INSTR_MPI_FIELD_SEQ] == y->f[INSTR_MPI_FIELD_SEQ];
}

static void wait_coll(struct instr_mpi_calls *m, struct instr_mpi_rec *r, double until)
{
    double w = (until < r->end ? until : r->end) - r->start;
    if (w > 0) {
        m->sites[r->site].wait_coll_ns += w;
        m->wait_coll_ns += w;
    }
}

static int rank_cmp(const void *a, const void *b)
{
    const struct instr_mpi_rec *x = *(const struct instr_mpi_rec *const *)a, *y = *(const struct instr_mpi_rec *const *)b;
    int64_t p = x->f[INSTR_MPI_FIELD_RANK], q = y->f[INSTR_MPI_FIELD_RANK];
    return (p > q) - (p < q);
}

/* A scan of the whole communicator, c[0..n), each rank once: rank r waits
 * for the last of ranks 0 .. r-1 to enter (early scan); partner: that
 * rank.  Ranks missing or twice: unmatched. */
static void prefix(struct instr_mpi_calls *m, struct instr_mpi_rec **c, size_t n)
{
    qsort(c, n, sizeof *c, rank_cmp);
    for (size_t k = 0; k < n; k++)
        if (!has(c[k], INSTR_MPI_FIELD_RANK) || c[k]->f[INSTR_MPI_FIELD_RANK] != (int64_t)k) {
            m->unmatched += n;
            return;
        }
    struct instr_mpi_rec *last = NULL;
    for (size_t k = 0; k < n; k++) {
        if (last) {
            c[k]->partner = (size_t)(last - m->recs);
            wait_coll(m, c[k], last->start);
        }
        if (!last || c[k]->start > last->start)
            last = c[k];
    }
}

/* A rooted collective of the whole job, c[0..n): a late broadcast (the
 * others wait for the root to enter) or an early reduce (the root waits
 * for the first other rank); partner: the rank waited for. */
static void rooted(struct instr_mpi_calls *m, struct instr_mpi_rec **c, size_t n)
{
    int64_t root = c[0]->f[INSTR_MPI_FIELD_ROOT];
    struct instr_mpi_rec *r = NULL, *first = NULL;
    for (size_t k = 0; k < n; k++)
        if (m->ranks[c[k]->rank].rank == root)
            r = c[k];
        else if (!first || c[k]->start < first->start)
            first = c[k];
    if (!r || !first) {
        m->unmatched += n;
        return;
    }
    if (is_one_to_n(r->call)) {
        for (size_t k = 0; k < n; k++)
            if (c[k] != r) {
                c[k]->partner = (size_t)(r - m->recs);
                wait_coll(m, c[k], r->start);
            }
    } else {
        r->partner = (size_t)(first - m->recs);
        wait_coll(m, r, first->start);
    }
}

static int wait_at_collective(struct instr_mpi_calls *m, uint32_t job_size)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrecs; i++)
        n++;
    struct instr_mpi_rec **c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return INSTR_ENOMEM;
    size_t nc = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        struct instr_mpi_rec *r = &m->recs[i];
        int rooted = (is_one_to_n(r->call) || is_n_to_one(r->call)) && has(r, INSTR_MPI_FIELD_ROOT) &&
                     r->f[INSTR_MPI_FIELD_ROOT] >= 0;
        rooted |= instr_mpi_coll_shape(r->call) == INSTR_MPI_PREFIX;
        /* the world's, or one every rank numbers alike */
        int64_t k = comm_key(r);
        if ((is_nxn(r->call) || rooted) && has(r, INSTR_MPI_FIELD_SEQ) && (k == 0 || k >= INT64_C(1) << 32) &&
            (k == 0 || has(r, INSTR_MPI_FIELD_SIZE)))
            c[nc++] = r;
    }
    qsort(c, nc, sizeof *c, coll_cmp);
    for (size_t b = 0; b < nc;) {
        size_t e = b;
        double last = -INFINITY;
        size_t last_in = SIZE_MAX;
        while (e < nc && same_coll(c[e], c[b])) {
            double s0 = c[e]->start;
            if (s0 > last)
                last = s0, last_in = (size_t)(c[e] - m->recs);
            e++;
        }
        /* Every rank of the job (of the communicator) there, each once, the same call (and root). */
        int64_t members = comm_key(c[b]) == 0 ? (int64_t)job_size : c[b]->f[INSTR_MPI_FIELD_SIZE];
        int whole = (int64_t)(e - b) == members;
        for (size_t k = b; k < e && whole; k++)
            whole = c[k]->call == c[b]->call && (is_nxn(c[b]->call) ||
                                                 c[k]->f[INSTR_MPI_FIELD_ROOT] == c[b]->f[INSTR_MPI_FIELD_ROOT]);
        if (!whole) {
            m->unmatched += e - b;
        } else if (instr_mpi_coll_shape(c[b]->call) == INSTR_MPI_PREFIX) {
            prefix(m, c + b, e - b);
        } else if (!is_nxn(c[b]->call)) {
            rooted(m, c + b, e - b);
        } else {
            for (size_t k = b; k < e; k++) {
                c[k]->partner = last_in;
                double s0 = c[k]->start;
                double s1 = c[k]->end;
                double w = (last < s1 ? last : s1) - s0;
                if (w > 0) {
                    m->sites[c[k]->site].wait_coll_ns += w;
                    m->wait_coll_ns += w;
                }
            }
        }
        b = e;
    }
    free(c);
    return 0;
}

int instr_mpi_wait_states(struct instr_mpi_calls *m)
{
    int rc = late_sender(m);
    if (rc < 0)
        return rc;
    /* the job's size: the ranks present when some are missing (their collectives are then unmatched) */
    return wait_at_collective(m, (uint32_t)m->job_size);
}

/* instr-report-mpi.c - instr-report run over MPI: `mpirun -np K
 * instr-report-mpi [OPTIONS] DUMPS...` reports what instr-report does,
 * with the walks of the dumps shared among K report ranks.
 *
 * Rank 0 runs instr-report (instr-report.c, its main as
 * instr_report_main).  When it builds a session of several dumps with no
 * exclusion and no streaming export, it walks them through
 * instr_session_remote: it broadcasts their paths, --raw and who walks
 * which (the largest dealt first, one to each rank in turn, rank 0
 * included), and each rank walks its share and sends rank 0 each profile as the bytes the profile cache
 * keeps (instr_profile_serialize), which rank 0 reads back against its
 * own open dump (instr_profile_cache_parse: every count and index
 * checked).  The other ranks wait for such sessions until rank 0 is done.
 * Wall Inclusive needs each activation's span, which a profile does not
 * keep: it is unknown in such a report, and the report says why.  The
 * dumps must be readable at the same paths on every rank (a shared file
 * system, as the job's dumps are). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile-cache.h"
#include "report.h"

int instr_report_main(int argc, char **argv);

static int me, nranks;

enum { TAG_HEAD = 1, TAG_BODY = 2 };

/* The task every rank walks its share of: n dumps' paths ('\0' after
 * each), which rank walks each (owner, uint32 each) and --raw. */
struct task {
    uint64_t n, raw, bytes;
};

/* Who walks dump i: the largest dumps dealt first, one to each rank in
 * turn, rank 0 included, to even the shares. */
static uint32_t *deal(const struct instr_dump *dumps, size_t n)
{
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    uint32_t *owner = malloc((n ? n : 1) * sizeof *owner);
    if (!order || !owner) {
        free(order);
        free(owner);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: n is a job's ranks */
        for (size_t k = i; k > 0 && dumps[order[k - 1]].size < dumps[order[k]].size; k--) {
            size_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (size_t k = 0; k < n; k++)
        owner[order[k]] = (uint32_t)(k % (size_t)nranks);
    free(order);
    return owner;
}

/* Walks dump i at path and sends its profile to rank 0: a head {i, length
 * (UINT64_MAX: it failed)}, then the bytes.  From one rank the heads and
 * the bodies arrive in the order sent (MPI's messages do not overtake). */
static void walk_and_send(const char *path, int raw, uint64_t i)
{
    struct instr_dump d;
    struct instr_profile p;
    unsigned char *body = NULL;
    size_t len = 0;
    char err[600];
    uint64_t head[2] = {i, UINT64_MAX};
    memset(&p, 0, sizeof p);
    if (instr_dump_open(&d, path, err, sizeof err) == 0) {
        d.raw = raw;
        const struct instr_profile_opts po = {.x = NULL, .tl = NULL, .wall = 0};
        if (instr_profile_build_opts(&p, &d, &po, err, sizeof err) == 0) {
            if (instr_profile_serialize(&p, &body, &len) == 0 && len <= INT32_MAX)
                head[1] = len;
            instr_profile_free(&p);
        }
        instr_dump_close(&d);
    }
    MPI_Send(head, 2, MPI_UINT64_T, 0, TAG_HEAD, MPI_COMM_WORLD);
    if (head[1] != UINT64_MAX)
        MPI_Send(body, (int)len, MPI_BYTE, 0, TAG_BODY, MPI_COMM_WORLD);
    free(body);
}

/* The task broadcast (rank 0 sends, the others receive): 0 and *paths,
 * *owner (malloc'd; t->n 0: no more tasks), or -1. */
static int task_bcast(struct task *t, char **paths, uint32_t **owner)
{
    MPI_Bcast(t, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (!t->n)
        return 0;
    if (me != 0 && (!(*paths = malloc(t->bytes))) | !(*owner = malloc(t->n * sizeof **owner)))
        return -1; /* out of memory on a report rank: MPI_Abort below */
    MPI_Bcast(*paths, (int)t->bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(*owner, (int)t->n, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    return 0;
}

/* Rank 0's side of instr_session_remote: the task broadcast, its own
 * share walked here, the others' profiles received and read back. */
static int remote_walk(void *ctx, const struct instr_dump *dumps, size_t n, const struct instr_profile_opts *opts,
                       struct instr_profile *profiles, char *err, size_t errlen)
{
    (void)ctx;
    struct task t = {n, (uint64_t)dumps[0].raw, 0};
    for (size_t i = 0; i < n; i++)
        t.bytes += strlen(dumps[i].path) + 1;
    char *paths = malloc(t.bytes ? t.bytes : 1), *q = paths;
    uint32_t *owner = deal(dumps, n);
    if (!paths || !owner || t.bytes > INT32_MAX || n > INT32_MAX) {
        free(paths);
        free(owner);
        return 1; /* walked here, as without MPI */
    }
    for (size_t i = 0; i < n; i++)
        q = stpcpy(q, dumps[i].path) + 1;
    task_bcast(&t, &paths, &owner);
    int rc = 0;
    size_t others = 0;
    for (size_t i = 0; i < n; i++) {
        if (owner[i] != 0) {
            others++;
            continue;
        }
        if (rc == 0)
            rc = instr_profile_build_opts(&profiles[i], &dumps[i], opts, err, errlen);
    }
    /* Every profile sent is received, even after a failure: its sender waits on it. */
    for (size_t k = 0; k < others; k++) {
        uint64_t head[2];
        MPI_Status st;
        MPI_Recv(head, 2, MPI_UINT64_T, MPI_ANY_SOURCE, TAG_HEAD, MPI_COMM_WORLD, &st);
        size_t i = head[0] < n ? (size_t)head[0] : 0;
        unsigned char *body = head[1] != UINT64_MAX ? malloc(head[1] ? head[1] : 1) : NULL;
        if (head[1] != UINT64_MAX)
            MPI_Recv(body, body ? (int)head[1] : 0, MPI_BYTE, st.MPI_SOURCE, TAG_BODY, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (rc == 0 && (head[0] >= n || owner[i] != (uint32_t)st.MPI_SOURCE || !body ||
                        !instr_profile_cache_parse(&profiles[i], &dumps[i], body, head[1]))) {
            rc = INSTR_ECORRUPT;
            snprintf(err, errlen, "%s: report rank %d could not walk it, or sent a profile that does not fit it",
                     dumps[i].path, st.MPI_SOURCE);
        }
        free(body);
    }
    if (rc < 0) /* the profiles made so far are not the session's */
        for (size_t i = 0; i < n; i++)
            instr_profile_free(&profiles[i]);
    free(owner);
    free(paths);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int status = 0;
    if (me == 0) {
        if (nranks > 1) {
            instr_session_remote.walk = remote_walk;
            instr_session_remote.wall_why = "the dumps were walked by the MPI report's ranks, whose profiles keep no "
                                            "activation spans to unite";
        }
        status = instr_report_main(argc, argv);
        struct task done = {0, 0, 0};
        if (nranks > 1)
            task_bcast(&done, NULL, NULL);
    } else {
        for (;;) {
            struct task t;
            char *paths = NULL;
            uint32_t *owner = NULL;
            if (task_bcast(&t, &paths, &owner) < 0)
                MPI_Abort(MPI_COMM_WORLD, 2);
            if (!t.n)
                break;
            const char *q = paths;
            for (uint64_t i = 0; i < t.n; i++, q += strlen(q) + 1)
                if (owner[i] == (uint32_t)me)
                    walk_and_send(q, (int)t.raw, i);
            free(paths);
            free(owner);
        }
    }
    MPI_Finalize();
    return status;
}

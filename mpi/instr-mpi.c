/* instr-mpi.c - libinstr-mpi: the optional PMPI wrappers.
 *
 * Linked into an MPI program built with the plugin (-linstr-mpi-openmpi or
 * -linstr-mpi-mpich, before the MPI library; or LD_PRELOADed), it defines
 * the MPI calls below, each calling its PMPI_ twin and handing the runtime
 * what the call was: its ticks, peer (a rank of MPI_COMM_WORLD), tag,
 * communicator, bytes (count x MPI_Type_size) and, for receives, the source
 * and size the status says (common/mpi-abi.h, dump-format.h INSTR_MPI_*).
 * MPI_Pcontrol(0) / MPI_Pcontrol(1) switch recording off and on.
 *
 * One source, compiled once per MPI found (mpi/CMakeLists.txt): Open
 * MPI's handles are pointers, MPICH's ints, so a library built against
 * one cannot serve the other.  Handles are only compared and hashed here,
 * which either kind allows.
 *
 * Without instr's runtime in the process (the program was not built with
 * the plugin) every wrapper is its PMPI_ call and one test of a pointer.
 * The runtime is looked for at the first MPI call (MPI_Init, normally):
 * the loaded object named libinstr-rt.so, opened again with RTLD_NOLOAD,
 * so this library needs no path to it and never loads it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "hook-abi.h"
#include "mpi-abi.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- the runtime ------------------------------------------------------------ */

static const struct instr_mpi_api *rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static int find_rt(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
    if (!slash || strcmp(slash + 1, INSTR_RUNTIME_SONAME))
        return 0;
    *(const char **)data = name;
    return 1;
}

static void rt_init(void)
{
    const char *path = NULL;
    dl_iterate_phdr(find_rt, &path);
    void *h = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (!h)
        return;
    const struct instr_mpi_api *(*get)(void) = (const struct instr_mpi_api *(*)(void))dlsym(h, INSTR_MPI_API_SYMBOL);
    const struct instr_mpi_api *a = get ? get() : NULL;
    if (a && a->version == INSTR_MPI_API_VERSION)
        rt = a;
}

/* The runtime when MPI calls are to be recorded now, else NULL. */
static const struct instr_mpi_api *recording(void)
{
    pthread_once(&rt_once, rt_init);
    return rt && !rt->off() ? rt : NULL;
}

/* ---- communicators, ranks, requests ------------------------------------------ */

/* Communicators by handle, numbered in the order first used (0 and 1 are
 * MPI_COMM_WORLD and MPI_COMM_SELF); with their collectives' count,
 * whether they are the world's ranks in order, and the number every rank
 * of one made by a wrapped call gives it (INSTR_MPI_FIELD_COMM_ID). */
#define COMMS 256
static struct comm {
    MPI_Comm handle;
    int used;
    int world_order; /* 1: rank r of it is world rank r */
    int64_t coll_seq;
    int64_t gid;     /* 0: not made by a wrapped call */
} comms[COMMS];
static int64_t made; /* communicators this process numbered as their rank 0 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int comm_id(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD)
        return 0;
    if (c == MPI_COMM_SELF)
        return 1;
    for (int i = 2; i < COMMS; i++) {
        if (!comms[i].used) {
            comms[i].used = 1;
            comms[i].handle = c;
            int res = MPI_UNEQUAL;
            PMPI_Comm_compare(c, MPI_COMM_WORLD, &res);
            comms[i].world_order = res == MPI_IDENT || res == MPI_CONGRUENT;
            return i;
        }
        if (comms[i].handle == c)
            return i;
    }
    return COMMS - 1; /* more communicators than the table: the last one stands for them */
}

/* The world rank of rank r of communicator c (id): r itself for the world;
 * -1 for MPI_ANY_SOURCE, -2 for MPI_PROC_NULL. */
static int world_rank(MPI_Comm c, int id, int r)
{
    if (r == MPI_ANY_SOURCE)
        return -1;
    if (r == MPI_PROC_NULL)
        return -2;
    if (id == 0 || (id > 1 && comms[id].world_order))
        return r;
    MPI_Group g, w;
    int out = -3;
    if (PMPI_Comm_group(c, &g) == MPI_SUCCESS) {
        if (PMPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS) {
            PMPI_Group_translate_ranks(g, 1, &r, w, &out);
            PMPI_Group_free(&w);
        }
        PMPI_Group_free(&g);
    }
    return out == MPI_UNDEFINED ? -3 : out;
}

/* A communicator just made by a wrapped call, on every rank of it: its
 * rank 0 numbers it and tells the others (a broadcast on it, which the
 * program does not see), and its collectives are counted from 0.  An
 * intercommunicator, or none, is left unnumbered. */
static void comm_made(int rc, MPI_Comm c)
{
    int inter = 1, me = -1, w = -1;
    if (rc != MPI_SUCCESS || !rt || c == MPI_COMM_NULL || PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_rank(c, &me) != MPI_SUCCESS || PMPI_Comm_rank(MPI_COMM_WORLD, &w) != MPI_SUCCESS)
        return;
    int64_t gid = 0;
    if (me == 0) {
        pthread_mutex_lock(&lock);
        gid = ((int64_t)(w + 1) << 32) | ++made;
        pthread_mutex_unlock(&lock);
    }
    if (PMPI_Bcast(&gid, 1, MPI_INT64_T, 0, c) != MPI_SUCCESS)
        return;
    pthread_mutex_lock(&lock);
    int id = comm_id(c);
    if (id > 1 && id < COMMS - 1) {
        int res = MPI_UNEQUAL;
        PMPI_Comm_compare(c, MPI_COMM_WORLD, &res); /* a handle used before for another */
        comms[id].world_order = res == MPI_IDENT || res == MPI_CONGRUENT;
        comms[id].coll_seq = 0;
        comms[id].gid = gid;
    }
    pthread_mutex_unlock(&lock);
}

EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    pthread_once(&rt_once, rt_init);
    int rc = PMPI_Comm_split(comm, color, key, out);
    comm_made(rc, *out);
    return rc;
}

EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    pthread_once(&rt_once, rt_init);
    int rc = PMPI_Comm_split_type(comm, type, key, info, out);
    comm_made(rc, *out);
    return rc;
}

EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    pthread_once(&rt_once, rt_init);
    int rc = PMPI_Comm_dup(comm, out);
    comm_made(rc, *out);
    return rc;
}

EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
    pthread_once(&rt_once, rt_init);
    int rc = PMPI_Comm_create(comm, group, out);
    comm_made(rc, *out);
    return rc;
}

EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                           MPI_Comm *out)
{
    pthread_once(&rt_once, rt_init);
    int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, out);
    comm_made(rc, *out);
    return rc;
}

EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out)
{
    pthread_once(&rt_once, rt_init);
    int rc = PMPI_Cart_sub(comm, remain, out);
    comm_made(rc, *out);
    return rc;
}

static int64_t bytes(int count, MPI_Datatype t)
{
    int size = 0;
    if (count <= 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (int64_t)count * size;
}

/* Pending Isend/Irecv requests by handle: what their Wait needs to say. */
#define REQUESTS 4096
static struct request {
    MPI_Request handle;
    int64_t id; /* 0: free */
    int call;   /* INSTR_MPI_ISEND, IRECV or a nonblocking collective (IBARRIER ...) */
    int comm, peer, tag;
} requests[REQUESTS];
static int64_t next_request = 1;

static size_t request_slot(MPI_Request r)
{
    uintptr_t h = 0;
    memcpy(&h, &r, sizeof r < sizeof h ? sizeof r : sizeof h);
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> 52) % REQUESTS;
}

static int64_t request_add(MPI_Request r, int call, int comm, int peer, int tag)
{
    pthread_mutex_lock(&lock);
    size_t s = request_slot(r);
    int64_t id = 0;
    for (size_t n = 0; n < REQUESTS; n++, s = (s + 1) % REQUESTS) {
        if (!requests[s].id) {
            id = next_request++;
            requests[s] = (struct request){r, id, call, comm, peer, tag};
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return id; /* 0: the table is full, the request goes unnamed */
}

static int request_take(MPI_Request r, struct request *out)
{
    pthread_mutex_lock(&lock);
    size_t s = request_slot(r);
    int found = 0;
    for (size_t n = 0; n < REQUESTS; n++, s = (s + 1) % REQUESTS) {
        if (requests[s].id && requests[s].handle == r) {
            *out = requests[s];
            /* Deleted by moving the run's later entries up (linear probing). */
            size_t hole = s, j = s;
            for (;;) {
                j = (j + 1) % REQUESTS;
                if (!requests[j].id)
                    break;
                size_t home = request_slot(requests[j].handle);
                if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
                    requests[hole] = requests[j];
                    hole = j;
                }
            }
            requests[hole].id = 0;
            found = 1;
            break;
        }
        if (!requests[s].id)
            break;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* ---- recording ------------------------------------------------------------------ */

struct call {
    const struct instr_mpi_api *rt; /* NULL: not recorded */
    int present;                    /* the runtime is there (recording or not) */
    uint64_t start;
    int64_t f[INSTR_MPI_FIELD_MAX + 1];
};

static void begin(struct call *c)
{
    c->rt = recording();
    c->present = rt != NULL;
    c->start = c->rt ? c->rt->tick() : 0;
    for (int i = 0; i <= INSTR_MPI_FIELD_MAX; i++)
        c->f[i] = INSTR_MPI_ABSENT;
}

static void end(struct call *c, unsigned call)
{
    if (c->rt)
        c->rt->record(call, c->start, c->f);
}

/* The communicator's fields: its number here, and the job's for one made
 * by a wrapped call. */
static void comm_fields(struct call *c, int id)
{
    c->f[INSTR_MPI_FIELD_COMM] = id;
    if (id > 1 && comms[id].gid)
        c->f[INSTR_MPI_FIELD_COMM_ID] = comms[id].gid;
}

static void p2p(struct call *c, MPI_Comm comm, int peer, int tag)
{
    pthread_mutex_lock(&lock);
    int id = comm_id(comm);
    comm_fields(c, id);
    pthread_mutex_unlock(&lock);
    c->f[INSTR_MPI_FIELD_PEER] = world_rank(comm, id, peer);
    c->f[INSTR_MPI_FIELD_TAG] = tag == MPI_ANY_TAG ? -1 : tag;
}

static void status(struct call *c, MPI_Comm comm, int id, const MPI_Status *s)
{
    int n = 0;
    if (s->MPI_SOURCE == MPI_PROC_NULL)
        return;
    PMPI_Get_count(s, MPI_BYTE, &n);
    c->f[INSTR_MPI_FIELD_RECEIVED] = n == MPI_UNDEFINED ? 0 : n;
    c->f[INSTR_MPI_FIELD_SOURCE] = world_rank(comm, id, s->MPI_SOURCE);
    c->f[INSTR_MPI_FIELD_RTAG] = s->MPI_TAG;
}

/* A collective: its communicator, number in it and size.  Numbered
 * while recording is off too (MPI_Pcontrol(0)), so that every rank gives a
 * collective the same number whatever it recorded. */
static void coll(struct call *c, MPI_Comm comm)
{
    if (!c->present)
        return;
    pthread_mutex_lock(&lock);
    int id = comm_id(comm), size = 0;
    int64_t seq = comms[id].coll_seq++;
    if (c->rt)
        comm_fields(c, id);
    pthread_mutex_unlock(&lock);
    if (!c->rt)
        return;
    c->f[INSTR_MPI_FIELD_SEQ] = seq;
    if (PMPI_Comm_size(comm, &size) == MPI_SUCCESS)
        c->f[INSTR_MPI_FIELD_SIZE] = size;
}

/* ---- one clock: the ping-pong with rank 0 ------------------------------------------ */

/* Each rank but 0 measures, ROUNDS times, a round trip to rank 0 that
 * brings back rank 0's ticks, and records the shortest: its middle on
 * this rank's ticks and rank 0's ticks then (the report's offset, good to
 * half the round trip).  Rank 0 answers the ranks one after the other.  On
 * a communicator of its own, so that no message of the program's can
 * match.  Run at the end of MPI_Init and the start of MPI_Finalize: two
 * offsets, whose difference is the clocks' drift. */
#define ROUNDS 8

static void clock_sync(void)
{
    if (!rt)
        return;
    int me = 0, n = 1;
    MPI_Comm c;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2 || PMPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS)
        return;
    struct call k;
    begin(&k);
    uint64_t root = 0, best = UINT64_MAX, mid = 0;
    if (me == 0) {
        for (int r = 1; r < n; r++) {
            for (int i = 0; i < ROUNDS; i++) {
                int x;
                PMPI_Recv(&x, 1, MPI_INT, r, 0, c, MPI_STATUS_IGNORE);
                uint64_t t = rt->tick();
                PMPI_Send(&t, 1, MPI_UINT64_T, r, 0, c);
            }
        }
    } else {
        for (int i = 0; i < ROUNDS; i++) {
            uint64_t t = 0, a = rt->tick();
            PMPI_Send(&i, 1, MPI_INT, 0, 0, c);
            PMPI_Recv(&t, 1, MPI_UINT64_T, 0, 0, c, MPI_STATUS_IGNORE);
            uint64_t b = rt->tick();
            if (b - a < best) {
                best = b - a;
                mid = a + (b - a) / 2;
                root = t;
            }
        }
    }
    PMPI_Comm_free(&c);
    if (me != 0 && rt) { /* recording on or off: the runtime keeps the sync either way */
        k.rt = rt;
        k.f[INSTR_MPI_FIELD_PEER] = 0;
        k.f[INSTR_MPI_FIELD_CLOCK_LOCAL] = (int64_t)mid;
        k.f[INSTR_MPI_FIELD_CLOCK_ROOT] = (int64_t)root;
        k.f[INSTR_MPI_FIELD_CLOCK_RTT] = (int64_t)best;
        end(&k, INSTR_MPI_CLOCK);
    }
}

/* ---- the wrappers ---------------------------------------------------------------- */

EXPORT int MPI_Init(int *argc, char ***argv)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Init(argc, argv);
    end(&c, INSTR_MPI_INIT);
    if (rc == MPI_SUCCESS)
        clock_sync();
    return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    end(&c, INSTR_MPI_INIT);
    if (rc == MPI_SUCCESS)
        clock_sync();
    return rc;
}

/* Written before the call, which does not return (Open MPI's leaves with
 * _exit, MPICH's launcher kills the rank): the error code given is what
 * the report says of the rank that aborted. */
EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
    struct call c;
    begin(&c);
    if (c.rt) {
        pthread_mutex_lock(&lock);
        c.f[INSTR_MPI_FIELD_COMM] = comm_id(comm);
        pthread_mutex_unlock(&lock);
        c.f[INSTR_MPI_FIELD_CODE] = errorcode;
    }
    end(&c, INSTR_MPI_ABORT);
    return PMPI_Abort(comm, errorcode);
}

EXPORT int MPI_Finalize(void)
{
    clock_sync();
    struct call c;
    begin(&c);
    int rc = PMPI_Finalize();
    end(&c, INSTR_MPI_FINALIZE);
    return rc;
}

EXPORT int MPI_Pcontrol(const int level, ...)
{
    pthread_once(&rt_once, rt_init);
    if (rt)
        rt->pcontrol(level);
    return PMPI_Pcontrol(level);
}

static int send_common(unsigned call, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                       MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = call == INSTR_MPI_SSEND ? PMPI_Ssend(buf, count, type, dest, tag, comm)
                                     : PMPI_Send(buf, count, type, dest, tag, comm);
    if (c.rt) {
        p2p(&c, comm, dest, tag);
        c.f[INSTR_MPI_FIELD_SENT] = bytes(count, type);
    }
    end(&c, call);
    return rc;
}

EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_common(INSTR_MPI_SEND, buf, count, type, dest, tag, comm);
}

EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_common(INSTR_MPI_SSEND, buf, count, type, dest, tag, comm);
}

EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    if (c.rt) {
        p2p(&c, comm, dest, tag);
        c.f[INSTR_MPI_FIELD_SENT] = bytes(count, type);
        if (rc == MPI_SUCCESS)
            c.f[INSTR_MPI_FIELD_REQUEST] = request_add(*req, INSTR_MPI_ISEND, (int)c.f[INSTR_MPI_FIELD_COMM],
                                                       (int)c.f[INSTR_MPI_FIELD_PEER], tag);
    }
    end(&c, INSTR_MPI_ISEND);
    return rc;
}

EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *st)
{
    struct call c;
    MPI_Status own;
    begin(&c);
    if (c.rt && st == MPI_STATUS_IGNORE)
        st = &own;
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
    if (c.rt) {
        p2p(&c, comm, source, tag);
        if (rc == MPI_SUCCESS)
            status(&c, comm, (int)c.f[INSTR_MPI_FIELD_COMM], st);
    }
    end(&c, INSTR_MPI_RECV);
    return rc;
}

EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    if (c.rt) {
        p2p(&c, comm, source, tag);
        if (rc == MPI_SUCCESS)
            c.f[INSTR_MPI_FIELD_REQUEST] = request_add(*req, INSTR_MPI_IRECV, (int)c.f[INSTR_MPI_FIELD_COMM],
                                                       (int)c.f[INSTR_MPI_FIELD_PEER], (int)c.f[INSTR_MPI_FIELD_TAG]);
    }
    end(&c, INSTR_MPI_IRECV);
    return rc;
}

EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                        MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *st)
{
    struct call c;
    MPI_Status own;
    begin(&c);
    if (c.rt && st == MPI_STATUS_IGNORE)
        st = &own;
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st);
    if (c.rt) {
        p2p(&c, comm, dest, stag);
        c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype);
        if (rc == MPI_SUCCESS)
            status(&c, comm, (int)c.f[INSTR_MPI_FIELD_COMM], st);
    }
    end(&c, INSTR_MPI_SENDRECV);
    return rc;
}

/* A completed request's event: the request's own fields, and for a
 * receive its status. */
static void completed(struct call *c, MPI_Request r, const MPI_Status *st)
{
    struct request q;
    if (!request_take(r, &q))
        return;
    c->f[INSTR_MPI_FIELD_REQUEST] = q.id;
    pthread_mutex_lock(&lock);
    comm_fields(c, q.comm);
    pthread_mutex_unlock(&lock);
    if (q.call != INSTR_MPI_ISEND && q.call != INSTR_MPI_IRECV)
        return; /* a nonblocking collective's: no peer */
    c->f[INSTR_MPI_FIELD_PEER] = q.peer;
    c->f[INSTR_MPI_FIELD_TAG] = q.tag;
    if (q.call == INSTR_MPI_IRECV && st) {
        MPI_Comm comm = q.comm == 0 ? MPI_COMM_WORLD : q.comm == 1 ? MPI_COMM_SELF : comms[q.comm].handle;
        status(c, comm, q.comm, st);
    }
}

/* Wait, Test: the request, if it completed one. */
static int one(unsigned call, MPI_Request *req, int *flag, MPI_Status *st)
{
    struct call c;
    MPI_Status own;
    begin(&c);
    MPI_Request r = req ? *req : MPI_REQUEST_NULL;
    if (c.rt && st == MPI_STATUS_IGNORE)
        st = &own;
    int rc = call == INSTR_MPI_WAIT ? PMPI_Wait(req, st) : PMPI_Test(req, flag, st);
    if (c.rt && rc == MPI_SUCCESS && (!flag || *flag) && r != MPI_REQUEST_NULL)
        completed(&c, r, st);
    end(&c, call);
    return rc;
}

EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    return one(INSTR_MPI_WAIT, req, NULL, st);
}

/* The handles of n requests as they were before a call that completes
 * some (it sets them to MPI_REQUEST_NULL), and statuses for it to fill
 * when the program ignores them (statuses 0: the call has one status of
 * its own, none is kept). */
struct saved {
    MPI_Request *r, small_r[64];
    MPI_Status *s, small_s[64];
};

static int save(struct saved *v, int n, const MPI_Request reqs[], MPI_Status *sts, int statuses)
{
    v->r = n <= 64 ? v->small_r : malloc(sizeof *v->r * (size_t)n);
    v->s = !statuses                   ? v->small_s /* not used: Waitany and Testany have one status */
           : sts != MPI_STATUSES_IGNORE ? sts
           : n <= 64                    ? v->small_s
                                        : malloc(sizeof *v->s * (size_t)n);
    if (v->r && v->s) {
        memcpy(v->r, reqs, sizeof *v->r * (size_t)n);
        return 1;
    }
    if (v->r != v->small_r)
        free(v->r);
    if (v->s != sts && v->s != v->small_s)
        free(v->s);
    return 0;
}

static void unsave(struct saved *v, MPI_Status *sts)
{
    if (v->r != v->small_r)
        free(v->r);
    if (v->s != sts && v->s != v->small_s)
        free(v->s);
}

/* One event per request completed (which[k] of v->r, its status
 * sts[k]), the first with the call's ticks, the others with none (so
 * the call's time counts once); one event without a request when none
 * completed. */
static void completions(struct call *c, unsigned call, const struct saved *v, const int *which, int k,
                        const MPI_Status *sts)
{
    int first = 1;
    for (int i = 0; i < k; i++) {
        MPI_Request r = v->r[which ? which[i] : i];
        if (r == MPI_REQUEST_NULL)
            continue;
        struct call e = *c;
        if (!first) {
            e.start = c->rt->tick(); /* none of the call's ticks */
            e.f[INSTR_MPI_FIELD_BEGAN] = (int64_t)(e.start - c->start);
        }
        completed(&e, r, &sts[i]);
        end(&e, call);
        first = 0;
    }
    if (first)
        end(c, call);
}

EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    struct call c;
    struct saved v;
    begin(&c);
    if (!c.rt || n <= 0 || !save(&v, n, reqs, sts, 1))
        return PMPI_Waitall(n, reqs, sts);
    int rc = PMPI_Waitall(n, reqs, v.s);
    completions(&c, INSTR_MPI_WAITALL, &v, NULL, rc == MPI_SUCCESS ? n : 0, v.s);
    unsave(&v, sts);
    return rc;
}

/* Testall: every request's event once all completed, else one event. */
EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    struct call c;
    struct saved v;
    begin(&c);
    if (!c.rt || n <= 0 || !save(&v, n, reqs, sts, 1))
        return PMPI_Testall(n, reqs, flag, sts);
    int rc = PMPI_Testall(n, reqs, flag, v.s);
    completions(&c, INSTR_MPI_TESTALL, &v, NULL, rc == MPI_SUCCESS && *flag ? n : 0, v.s);
    unsave(&v, sts);
    return rc;
}

/* Waitsome, Testsome: the requests of indices[0..outcount). */
static int some(unsigned call, int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
    struct call c;
    struct saved v;
    begin(&c);
    int (*pmpi)(int, MPI_Request[], int *, int[], MPI_Status[]) =
        call == INSTR_MPI_WAITSOME ? PMPI_Waitsome : PMPI_Testsome;
    if (!c.rt || n <= 0 || !save(&v, n, reqs, sts, 1))
        return pmpi(n, reqs, outcount, indices, sts);
    int rc = pmpi(n, reqs, outcount, indices, v.s);
    int k = rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0 && *outcount <= n ? *outcount : 0;
    for (int i = 0; i < k; i++)
        if (indices[i] < 0 || indices[i] >= n)
            k = 0;
    completions(&c, call, &v, indices, k, v.s);
    unsave(&v, sts);
    return rc;
}

EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
    return some(INSTR_MPI_WAITSOME, n, reqs, outcount, indices, sts);
}

EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
    return some(INSTR_MPI_TESTSOME, n, reqs, outcount, indices, sts);
}

/* Waitany, Testany: the request of *index, if one completed. */
static int any(unsigned call, int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    struct call c;
    struct saved v;
    MPI_Status own;
    begin(&c);
    if (!c.rt || n <= 0 || !save(&v, n, reqs, MPI_STATUSES_IGNORE, 0))
        return call == INSTR_MPI_WAITANY ? PMPI_Waitany(n, reqs, index, st) : PMPI_Testany(n, reqs, index, flag, st);
    if (st == MPI_STATUS_IGNORE)
        st = &own;
    int rc = call == INSTR_MPI_WAITANY ? PMPI_Waitany(n, reqs, index, st) : PMPI_Testany(n, reqs, index, flag, st);
    int done = rc == MPI_SUCCESS && (!flag || *flag) && *index != MPI_UNDEFINED && *index >= 0 && *index < n;
    completions(&c, call, &v, index, done, st);
    unsave(&v, MPI_STATUSES_IGNORE);
    return rc;
}

EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    return any(INSTR_MPI_WAITANY, n, reqs, index, NULL, st);
}

EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    return any(INSTR_MPI_TESTANY, n, reqs, index, flag, st);
}

EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    return one(INSTR_MPI_TEST, req, flag, st);
}

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Barrier(comm);
    coll(&c, comm);
    end(&c, INSTR_MPI_BARRIER);
    return rc;
}

/* A collective with a root: its world rank, and the bytes this rank sends
 * (the root's data for Bcast/Scatter, every rank's own for Reduce/Gather). */
static void rooted(struct call *c, MPI_Comm comm, int root)
{
    coll(c, comm);
    if (c->rt)
        c->f[INSTR_MPI_FIELD_ROOT] = world_rank(comm, (int)c->f[INSTR_MPI_FIELD_COMM], root);
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    rooted(&c, comm, root);
    if (c.rt) {
        int me = -1;
        PMPI_Comm_rank(comm, &me);
        c.f[me == root ? INSTR_MPI_FIELD_SENT : INSTR_MPI_FIELD_RECEIVED] = bytes(count, type);
    }
    end(&c, INSTR_MPI_BCAST);
    return rc;
}

EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    rooted(&c, comm, root);
    if (c.rt) {
        c.f[INSTR_MPI_FIELD_SENT] = bytes(count, type);
    }
    end(&c, INSTR_MPI_REDUCE);
    return rc;
}

EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    coll(&c, comm);
    if (c.rt) {
        c.f[INSTR_MPI_FIELD_SENT] = bytes(count, type);
    }
    end(&c, INSTR_MPI_ALLREDUCE);
    return rc;
}

EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                         MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    coll(&c, comm);
    if (c.rt) {
        c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype);
    }
    end(&c, INSTR_MPI_ALLGATHER);
    return rc;
}

EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    coll(&c, comm);
    if (c.rt) {
        int size = 1;
        PMPI_Comm_size(comm, &size);
        c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype) * size;
    }
    end(&c, INSTR_MPI_ALLTOALL);
    return rc;
}

EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                      int root, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    rooted(&c, comm, root);
    if (c.rt) {
        c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype);
    }
    end(&c, INSTR_MPI_GATHER);
    return rc;
}

EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       int root, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    rooted(&c, comm, root);
    if (c.rt) {
        int me = -1, size = 1;
        PMPI_Comm_rank(comm, &me);
        PMPI_Comm_size(comm, &size);
        if (me == root)
            c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype) * size;
    }
    end(&c, INSTR_MPI_SCATTER);
    return rc;
}

static int64_t sum_bytes(const int counts[], int n, MPI_Datatype type)
{
    int64_t b = 0;
    for (int i = 0; i < n; i++)
        b += bytes(counts[i], type);
    return b;
}

EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                       const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    rooted(&c, comm, root);
    if (c.rt)
        c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype);
    end(&c, INSTR_MPI_GATHERV);
    return rc;
}

EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                        int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    rooted(&c, comm, root);
    if (c.rt) {
        int me = -1, size = 0;
        PMPI_Comm_rank(comm, &me);
        PMPI_Comm_size(comm, &size);
        if (me == root)
            c.f[INSTR_MPI_FIELD_SENT] = sum_bytes(scounts, size, stype);
    }
    end(&c, INSTR_MPI_SCATTERV);
    return rc;
}

EXPORT int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                          const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    coll(&c, comm);
    if (c.rt)
        c.f[INSTR_MPI_FIELD_SENT] = bytes(scount, stype);
    end(&c, INSTR_MPI_ALLGATHERV);
    return rc;
}

EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                         const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    coll(&c, comm);
    if (c.rt) {
        int size = 0;
        PMPI_Comm_size(comm, &size);
        c.f[INSTR_MPI_FIELD_SENT] = sum_bytes(scounts, size, stype);
    }
    end(&c, INSTR_MPI_ALLTOALLV);
    return rc;
}

/* Scan, Exscan: rank r of the communicator waits for ranks 0 .. r-1
 * (wait-states.c: early scan), so its rank there is a field. */
static int scan(unsigned call, const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = call == INSTR_MPI_SCAN ? PMPI_Scan(sbuf, rbuf, count, type, op, comm)
                                    : PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
    coll(&c, comm);
    if (c.rt) {
        int me = -1;
        PMPI_Comm_rank(comm, &me);
        c.f[INSTR_MPI_FIELD_RANK] = me;
        c.f[INSTR_MPI_FIELD_SENT] = bytes(count, type);
    }
    end(&c, call);
    return rc;
}

EXPORT int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return scan(INSTR_MPI_SCAN, sbuf, rbuf, count, type, op, comm);
}

EXPORT int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return scan(INSTR_MPI_EXSCAN, sbuf, rbuf, count, type, op, comm);
}

EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    coll(&c, comm);
    if (c.rt) {
        int size = 0;
        PMPI_Comm_size(comm, &size);
        c.f[INSTR_MPI_FIELD_SENT] = sum_bytes(rcounts, size, type);
    }
    end(&c, INSTR_MPI_REDUCE_SCATTER);
    return rc;
}

EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
    coll(&c, comm);
    if (c.rt) {
        int size = 1;
        PMPI_Comm_size(comm, &size);
        c.f[INSTR_MPI_FIELD_SENT] = bytes(rcount, type) * size;
    }
    end(&c, INSTR_MPI_REDUCE_SCATTER_BLOCK);
    return rc;
}

/* Nonblocking collectives: numbered with the communicator's collectives
 * (MPI has every rank start them in one order with the blocking ones),
 * their bytes as the blocking twin's, root, and the request their Wait
 * completes.  The waiting is in that Wait: no wait state is made of them. */
static int icoll(struct call *c, unsigned call, int rc, MPI_Comm comm, int root, int64_t sent, MPI_Request *req)
{
    coll(c, comm);
    if (c->rt) {
        int id = (int)c->f[INSTR_MPI_FIELD_COMM];
        if (root >= 0)
            c->f[INSTR_MPI_FIELD_ROOT] = world_rank(comm, id, root);
        if (sent >= 0)
            c->f[INSTR_MPI_FIELD_SENT] = sent;
        if (rc == MPI_SUCCESS)
            c->f[INSTR_MPI_FIELD_REQUEST] = request_add(*req, (int)call, id, -2, -1);
    }
    end(c, call);
    return rc;
}

/* The bytes a rooted call sends from this rank (Bcast, Scatter): n at the
 * root, elsewhere none (-1: no field). */
static int64_t at_root(MPI_Comm comm, int root, int64_t n)
{
    int me = -1;
    PMPI_Comm_rank(comm, &me);
    return me == root ? n : -1;
}

EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    return icoll(&c, INSTR_MPI_IBARRIER, PMPI_Ibarrier(comm, req), comm, -1, -1, req);
}

EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Ibcast(buf, count, type, root, comm, req);
    return icoll(&c, INSTR_MPI_IBCAST, rc, comm, root, c.rt ? at_root(comm, root, bytes(count, type)) : -1, req);
}

EXPORT int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req);
    return icoll(&c, INSTR_MPI_IREDUCE, rc, comm, root, c.rt ? bytes(count, type) : -1, req);
}

EXPORT int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req);
    return icoll(&c, INSTR_MPI_IALLREDUCE, rc, comm, -1, c.rt ? bytes(count, type) : -1, req);
}

EXPORT int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    return icoll(&c, INSTR_MPI_IALLGATHER, rc, comm, -1, c.rt ? bytes(scount, stype) : -1, req);
}

EXPORT int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    int size = 1;
    if (c.rt)
        PMPI_Comm_size(comm, &size);
    return icoll(&c, INSTR_MPI_IALLTOALL, rc, comm, -1, c.rt ? bytes(scount, stype) * size : -1, req);
}

EXPORT int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    return icoll(&c, INSTR_MPI_IGATHER, rc, comm, root, c.rt ? bytes(scount, stype) : -1, req);
}

EXPORT int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    struct call c;
    begin(&c);
    int rc = PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    int size = 1;
    if (c.rt)
        PMPI_Comm_size(comm, &size);
    return icoll(&c, INSTR_MPI_ISCATTER, rc, comm, root,
                 c.rt ? at_root(comm, root, bytes(scount, stype) * size) : -1, req);
}

/* ---- persistent requests ---------------------------------------------------------- */

/* What each Start of a persistent request is: a send of its bytes to its
 * peer, or a receive posted from it (peer -1: any). */
#define PERSISTENT 1024
static struct persistent {
    MPI_Request handle;
    int used, send, comm, peer, tag;
    int64_t sent;
} persistent[PERSISTENT];

static void persistent_add(MPI_Request r, int send, const struct call *c, int tag, int64_t sent)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < PERSISTENT; i++)
        if (!persistent[i].used) {
            persistent[i] = (struct persistent){r, 1, send, (int)c->f[INSTR_MPI_FIELD_COMM],
                                                (int)c->f[INSTR_MPI_FIELD_PEER], tag, sent};
            break;
        } /* a full table: that request's Starts go unrecorded */
    pthread_mutex_unlock(&lock);
}

static int persistent_find(MPI_Request r, struct persistent *out, int drop)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < PERSISTENT && !found; i++)
        if (persistent[i].used && persistent[i].handle == r) {
            *out = persistent[i];
            persistent[i].used = !drop;
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

/* Send_init, Ssend_init, Recv_init: kept whenever the runtime is there
 * (recording may be on at a Start though off here); recorded as calls
 * with their peer, tag and communicator. */
static int pinit(unsigned call, int rc, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                 MPI_Request *req, struct call *c)
{
    if (c->present && rc == MPI_SUCCESS) {
        p2p(c, comm, peer, tag);
        int send = call != INSTR_MPI_RECV_INIT;
        persistent_add(*req, send, c, tag, send ? bytes(count, type) : -1);
    }
    end(c, call);
    return rc;
}

EXPORT int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *req)
{
    struct call c;
    begin(&c);
    return pinit(INSTR_MPI_SEND_INIT, PMPI_Send_init(buf, count, type, dest, tag, comm, req), count, type, dest, tag,
                 comm, req, &c);
}

EXPORT int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request *req)
{
    struct call c;
    begin(&c);
    return pinit(INSTR_MPI_SSEND_INIT, PMPI_Ssend_init(buf, count, type, dest, tag, comm, req), count, type, dest,
                 tag, comm, req, &c);
}

EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Request *req)
{
    struct call c;
    begin(&c);
    return pinit(INSTR_MPI_RECV_INIT, PMPI_Recv_init(buf, count, type, source, tag, comm, req), count, type, source,
                 tag, comm, req, &c);
}

/* One request started: its fields, and a number for this activation
 * (which the Wait that completes it names), the request table told it is
 * an Isend's or an Irecv's. */
static void started(struct call *c, MPI_Request r)
{
    struct persistent p;
    if (!persistent_find(r, &p, 0))
        return;
    pthread_mutex_lock(&lock);
    comm_fields(c, p.comm);
    pthread_mutex_unlock(&lock);
    c->f[INSTR_MPI_FIELD_PEER] = p.peer;
    c->f[INSTR_MPI_FIELD_TAG] = p.tag == MPI_ANY_TAG ? -1 : p.tag;
    if (p.send)
        c->f[INSTR_MPI_FIELD_SENT] = p.sent;
    c->f[INSTR_MPI_FIELD_REQUEST] =
        request_add(r, p.send ? INSTR_MPI_ISEND : INSTR_MPI_IRECV, p.comm, p.peer, p.tag == MPI_ANY_TAG ? -1 : p.tag);
}

EXPORT int MPI_Start(MPI_Request *req)
{
    struct call c;
    begin(&c);
    MPI_Request r = req ? *req : MPI_REQUEST_NULL;
    int rc = PMPI_Start(req);
    if (c.rt && rc == MPI_SUCCESS)
        started(&c, r);
    end(&c, INSTR_MPI_START);
    return rc;
}

/* One event per request started, the call's ticks on the first. */
EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
    struct call c;
    begin(&c);
    int rc = PMPI_Startall(n, reqs);
    if (!c.rt || rc != MPI_SUCCESS || n <= 0) {
        end(&c, INSTR_MPI_STARTALL);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        struct call e = c;
        if (i) {
            e.start = c.rt->tick();
            e.f[INSTR_MPI_FIELD_BEGAN] = (int64_t)(e.start - c.start);
        }
        started(&e, reqs[i]);
        end(&e, INSTR_MPI_STARTALL);
    }
    return rc;
}

EXPORT int MPI_Request_free(MPI_Request *req)
{
    pthread_once(&rt_once, rt_init);
    struct persistent p;
    if (rt && req)
        persistent_find(*req, &p, 1);
    return PMPI_Request_free(req);
}

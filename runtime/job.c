/* job.c - who this process is in a job of many (MPI and other launchers):
 * its rank, the job's size, the host and the job's id, read from what the
 * launcher put in the environment, with no MPI linked in.
 *
 * One row per launcher (LAUNCHERS below); the first whose rank and size
 * variables are both set wins.  Slurm comes last: an mpirun inside a Slurm
 * allocation inherits the batch step's SLURM_PROCID (0 in every rank), and
 * Slurm's row needs SLURM_STEP_ID (an srun task's, not the batch script's).
 * INSTR_JOB_ID, when set, replaces the launcher's job id (MPICH's Hydra
 * gives none: the id is then made of the mpiexec's pid and start time, the
 * same for every rank of one host).
 *
 * Read once, at process start (instr__job_init, before the dump's name is
 * chosen); a fork child keeps its parent's.  No allocation: getenv, uname
 * and /proc read into fixed buffers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

struct instr__job instr__job = {.rank = -1};

/* How a launcher's job id is had. */
enum job_id_how { ID_VAR, ID_VAR_DOT_STEP, ID_HYDRA };

/* name, rank variable, size variable, job id variable, how the id is made */
#define LAUNCHERS(X)                                                                                               \
    X("openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_MCA_ess_base_jobid", ID_VAR)              \
    X("pmix", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_NAMESPACE", ID_VAR)                                      \
    X("hydra", "PMI_RANK", "PMI_SIZE", NULL, ID_HYDRA)                                                            \
    X("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID", ID_VAR_DOT_STEP)

static const struct launcher {
    const char *name, *rank, *size, *id;
    enum job_id_how how;
} launchers[] = {
#define X(name, rank, size, id, how) {name, rank, size, id, how},
    LAUNCHERS(X)
#undef X
};

/* A decimal number in [0, max], else -1. */
static long number(const char *s, long max)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > max)
            return -1;
    }
    return *s ? -1 : v;
}

/* A job id as part of a file name: what is not [A-Za-z0-9._+@-] becomes
 * '_', and it never starts with a dot. */
static void put_id(char *out, size_t size, const char *a, const char *sep, const char *b)
{
    size_t n = 0;
    for (const char *const *p = (const char *const[]){a, sep, b, NULL}; *p; p++)
        for (const char *s = *p; *s && n + 1 < size; s++) {
            char c = *s;
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                     c == '_' || c == '+' || c == '@' || c == '-';
            out[n] = ok && !(n == 0 && c == '.') ? c : '_';
            n++;
        }
    out[n] = 0;
}

/* Of /proc/PID/stat: the command name (comm, into comm) and the parent's
 * pid and the start time (field 22, clock ticks since boot).  0 or -1. */
static int proc_stat(long pid, char *comm, size_t clen, long *ppid, unsigned long long *start)
{
    char path[48], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
    if (!lp || !rp || rp < lp)
        return -1;
    size_t l = (size_t)(rp - lp - 1) < clen - 1 ? (size_t)(rp - lp - 1) : clen - 1;
    memcpy(comm, lp + 1, l);
    comm[l] = 0;
    /* after ") ": field 3 (state), 4 (ppid) ... 22 (starttime) */
    char *p = rp + 2;
    for (int field = 3; field <= 22 && *p; field++) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (field == 4)
            *ppid = (long)v;
        if (field == 22)
            *start = v;
        p = strchr(p, ' ');
        if (!p)
            break;
        p++;
    }
    return 0;
}

/* Hydra sets no job id: the mpiexec's pid and start time.  The rank's
 * nearest ancestor called hydra_pmi_proxy is the host's proxy, its parent
 * the mpiexec (on another host: what started the proxy there, hence
 * INSTR_JOB_ID for jobs on several hosts). */
static void hydra_id(char *out, size_t size)
{
    char comm[32], tag[64];
    unsigned long long start = 0;
    long pid = instr__getppid();
    for (int up = 0; up < 8 && pid > 1; up++) {
        long parent = 0;
        if (proc_stat(pid, comm, sizeof comm, &parent, &start))
            break;
        if (!strcmp(comm, "hydra_pmi_proxy")) {
            long mpiexec = parent, above = 0;
            if (proc_stat(mpiexec, comm, sizeof comm, &above, &start) == 0) {
                snprintf(tag, sizeof tag, "hydra-%ld-%llu", mpiexec, start);
                put_id(out, size, tag, "", "");
                return;
            }
            break;
        }
        pid = parent;
    }
    /* No proxy found: the parent's pid and start time. */
    long parent = 0;
    pid = instr__getppid();
    if (proc_stat(pid, comm, sizeof comm, &parent, &start) == 0)
        snprintf(tag, sizeof tag, "hydra-%ld-%llu", pid, start);
    else
        snprintf(tag, sizeof tag, "hydra-%ld", pid);
    put_id(out, size, tag, "", "");
}

void instr__job_init(void)
{
    struct utsname u;
    if (uname(&u) == 0)
        put_id(instr__job.host, sizeof instr__job.host, u.nodename, "", "");
    for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++) {
        const struct launcher *l = &launchers[i];
        long rank = number(getenv(l->rank), 0x7fffffff), size = number(getenv(l->size), 0x7fffffff);
        if (rank < 0 || size <= 0 || rank >= size)
            continue;
        /* Slurm: only srun's tasks, which have a step (a batch script has
         * SLURM_PROCID too; its special steps are numbered from 0xfffffff0) */
        if (l->how == ID_VAR_DOT_STEP && number(getenv("SLURM_STEP_ID"), 0xffffffefL) < 0)
            continue;
        instr__job.rank = (int32_t)rank;
        instr__job.size = (uint32_t)size;
        instr__job.launcher = l->name;
        const char *id = l->id ? getenv(l->id) : NULL;
        if (l->how == ID_HYDRA)
            hydra_id(instr__job.id, sizeof instr__job.id);
        else if (l->how == ID_VAR_DOT_STEP && id)
            put_id(instr__job.id, sizeof instr__job.id, id, ".", getenv("SLURM_STEP_ID"));
        else if (id)
            put_id(instr__job.id, sizeof instr__job.id, id, "", "");
        break;
    }
    const char *own = getenv("INSTR_JOB_ID");
    if (instr__job.rank >= 0 && own && *own)
        put_id(instr__job.id, sizeof instr__job.id, own, "", "");
    if (instr__job.rank >= 0 && !instr__job.id[0])
        strcpy(instr__job.id, "job");
}

/* INSTR_TEST_CLOCK_SHIFT=RANK:NS, for tests only (tests/mpi): rank RANK's
 * real-time clock pair is written NS (signed) off, as if its host's clock
 * were: a stand-in for a rank on another machine, whose alignment the
 * report must undo. */
static void test_clock_shift(struct instr_dump_header *h)
{
    const char *e = secure_getenv("INSTR_TEST_CLOCK_SHIFT");
    char *end;
    if (!e || instr__job.rank < 0)
        return;
    long r = strtol(e, &end, 10);
    if (*end != ':' || r != instr__job.rank)
        return;
    long long ns = strtoll(end + 1, &end, 10);
    if (!*end)
        h->start_real_ns += (uint64_t)ns;
}

void instr__job_header(struct instr_dump_header *h)
{
    test_clock_shift(h);
    h->job_rank = instr__job.rank;
    h->job_size = instr__job.size;
    memcpy(h->host, instr__job.host, sizeof h->host);
    h->host[sizeof h->host - 1] = 0;
    memcpy(h->job_id, instr__job.id, sizeof h->job_id);
    h->job_id[sizeof h->job_id - 1] = 0;
    if (instr__job.launcher)
        snprintf(h->job_launcher, sizeof h->job_launcher, "%s", instr__job.launcher);
}

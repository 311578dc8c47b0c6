/* survive-tasks: what a program sees of the tasks around it (issue 22
 * item 1), built plain and instrumented; check-tasks.py compares the two
 * on whole output and status.  Each case first records enough for the
 * runtime to map several windows of the dump (where a helper task, if the
 * runtime made one, would have started), then looks:
 *   wall        3 children reaped by waitpid(-1, __WALL) until ECHILD
 *   proc        its children counted in /proc, then again after an exec
 *   nproc       RLIMIT_NPROC at its user's task count (at start) + 5:
 *               children made
 *   kill0       kill(0, SIGTERM) in its own process group: who is left
 *   seccomp     a filter allowing threads but no new process, then a
 *               recording thread and a fork (refused: EPERM)
 *   subreaper   PR_SET_CHILD_SUBREAPER, 3 recording children: reaped
 *               (__WALL, as an init or a tracer reaps)
 *   jobctl      prints "ready", then SIGCHLDs and interrupted reads
 *               until stdin ends (the checker stops and continues its
 *               process group in between)
 * A case that would wait forever is ended by alarm(): its status says so. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned tick(unsigned x)
{
    return x * 2654435761u + 1;
}

/* About 6 M events: several windows of the dump, up to 4 MiB ones. */
__attribute__((noinline)) static unsigned record(void)
{
    unsigned x = 1;
    for (int i = 0; i < 3000000; i++)
        x = tick(x);
    return x;
}

/* Fields of /proc/PID/stat after the name: state, ppid, pgrp. */
static int stat_of(const char *pid, char *state, int *ppid, int *pgrp)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *close = strrchr(buf, ')');
    return close && sscanf(close + 2, "%c %d %d", state, ppid, pgrp) == 3 ? 0 : -1;
}

/* Processes (live or zombie) whose parent is this one. */
static int children(void)
{
    int n = 0, ppid, pgrp;
    char st;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && !stat_of(e->d_name, &st, &ppid, &pgrp) &&
            ppid == getpid())
            n++;
    if (d)
        closedir(d);
    return n;
}

/* Live processes of process group pgid. */
static int group_alive(int pgid)
{
    int n = 0, ppid, pgrp;
    char st;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && !stat_of(e->d_name, &st, &ppid, &pgrp) &&
            pgrp == pgid && st != 'Z' && st != 'X')
            n++;
    if (d)
        closedir(d);
    return n;
}

/* Tasks (threads included) of this real user id: what RLIMIT_NPROC counts. */
static int user_tasks(void)
{
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/task", e->d_name);
        DIR *t = opendir(path);
        struct dirent *te;
        while (t && (te = readdir(t))) {
            if (te->d_name[0] == '.')
                continue;
            char sp[600], line[256];
            snprintf(sp, sizeof sp, "%s/%s/status", path, te->d_name);
            FILE *f = fopen(sp, "r");
            unsigned uid = ~0u;
            while (f && fgets(line, sizeof line, f))
                if (sscanf(line, "Uid: %u", &uid) == 1)
                    break;
            if (f)
                fclose(f);
            n += uid == getuid();
        }
        if (t)
            closedir(t);
    }
    if (d)
        closedir(d);
    return n;
}

static int reap_all(int flags)
{
    int n = 0;
    while (waitpid(-1, NULL, flags) > 0)
        n++;
    return n;
}

static int case_wall(void)
{
    for (int i = 0; i < 3; i++)
        if (fork() == 0)
            _exit(i);
    errno = 0;
    int n = reap_all(__WALL);
    printf("reaped=%d errno=%d\n", n, errno);
    return 0;
}

static int case_proc(char **argv)
{
    printf("children=%d\n", children());
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
    return 1;
}

static int case_after_exec(void)
{
    siginfo_t si = {0};
    errno = 0;
    int r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | __WALL);
    printf("after exec: children=%d waitid=%d pid=%d errno=%d\n", children(), r, (int)si.si_pid, errno);
    return 0;
}

static int case_nproc(int base)
{
    struct rlimit rl = {(rlim_t)base + 5, (rlim_t)base + 5};
    if (setrlimit(RLIMIT_NPROC, &rl))
        return 2;
    int made = 0, ready[2];
    if (pipe(ready))
        return 2;
    for (int i = 0; i < 10; i++) {
        pid_t p = fork();
        if (p == 0) {
            /* Started (its fork handlers, instr's dump among them, done)
             * before the group's SIGTERM: a SIGTERM inside that setup can
             * leave an empty dump (a separate defect, see the stop-19 note),
             * which is not what this case is about. */
            (void)!write(ready[1], "r", 1);
            pause();
            _exit(0);
        }
        if (p < 0)
            break;
        char c;
        (void)!read(ready[0], &c, 1);
        made++;
    }
    signal(SIGTERM, SIG_IGN);
    kill(0, SIGTERM);
    reap_all(0);
    /* As root (or with CAP_SYS_RESOURCE) the limit does not apply: 10. */
    printf("forked=%d\n", made);
    return 0;
}

static volatile sig_atomic_t terms;
static void on_term(int s)
{
    (void)s;
    terms++;
}

static int case_kill0(void)
{
    if (getpgrp() != getpid() && setpgid(0, 0))
        return 2;
    pid_t c = fork();
    if (c == 0)
        for (;;)
            pause();
    signal(SIGTERM, on_term);
    kill(0, SIGTERM);
    int st;
    waitpid(c, &st, 0);
    usleep(100 * 1000); /* a task that blocks SIGTERM is still alive after it */
    printf("terms=%d child=%s alive_in_group=%d\n", (int)terms,
           WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM ? "SIGTERM" : "other", group_alive(getpgrp()));
    return 0;
}

/* A few calls only: made by clone after clone3's ENOSYS, the thread is
 * (today) taken for a foreign task, a system call per hook. */
static void *thread_record(void *arg)
{
    unsigned x = 1;
    for (int i = 0; i < 1000; i++)
        x = tick(x);
    *(unsigned *)arg = x;
    return NULL;
}

/* Threads yes, processes no: clone without CLONE_THREAD kills the
 * process, fork and vfork fail with EPERM; clone3 is refused with ENOSYS
 * (its flags live in memory a filter cannot read), so libc makes threads
 * with clone. */
static int case_seccomp(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 4),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
        return 2;
    unsigned x = record(), y = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_record, &y) || pthread_join(t, NULL))
        return 3;
    errno = 0;
    long r = syscall(SYS_fork);
    printf("x=%u y=%u fork=%ld errno=%d\n", x, y, r, errno);
    return 0;
}

static int case_subreaper(void)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1))
        return 2;
    for (int i = 0; i < 3; i++)
        if (fork() == 0) {
            record();
            exit(0);
        }
    int n = reap_all(__WALL);
    usleep(200 * 1000); /* anything reparented late */
    n += reap_all(WNOHANG | __WALL);
    printf("reaped=%d\n", n);
    return 0;
}

static volatile sig_atomic_t chld[8];
static void on_chld(int s, siginfo_t *si, void *uc)
{
    (void)s;
    (void)uc;
    if (si->si_code >= 0 && si->si_code < 8)
        chld[si->si_code]++;
}

static int case_jobctl(void)
{
    struct sigaction sa = {.sa_sigaction = on_chld, .sa_flags = SA_SIGINFO}; /* no SA_RESTART */
    sigaction(SIGCHLD, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    int eintr = 0;
    char buf[64];
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            eintr++;
            continue;
        }
        if (n <= 0)
            break;
    }
    printf("sigchld exited=%d stopped=%d continued=%d eintr=%d\n", (int)chld[CLD_EXITED], (int)chld[CLD_STOPPED],
           (int)chld[CLD_CONTINUED], eintr);
    return 0;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "after-exec"))
        return case_after_exec();
    alarm(20);
    int tasks_before = !strcmp(c, "nproc") ? user_tasks() : 0; /* before the runtime records anything */
    unsigned x = strcmp(c, "seccomp") ? record() : 0;
    int r = !strcmp(c, "wall")        ? case_wall()
            : !strcmp(c, "proc")      ? case_proc(argv)
            : !strcmp(c, "nproc")     ? case_nproc(tasks_before)
            : !strcmp(c, "kill0")     ? case_kill0()
            : !strcmp(c, "seccomp")   ? case_seccomp()
            : !strcmp(c, "subreaper") ? case_subreaper()
            : !strcmp(c, "jobctl")    ? case_jobctl()
                                      : 64;
    printf("x=%u\n", x);
    return r;
}

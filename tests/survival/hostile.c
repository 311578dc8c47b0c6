/* hostile.c - programs that do what a profiler's runtime does not expect.
 *
 *   hostile MODE [ARG]
 *
 * Built with the plugin and without it (the oracle), like survive.c;
 * hostile-check.py runs both and compares what they do.
 *
 *   dlclose-fork LIB  dlopen LIB, call into it, dlclose it, then fork
 *   seccomp-errno     install a seccomp filter (allow-list; anything else
 *   seccomp-kill      fails with EPERM / kills the process / raises SIGSYS)
 *   seccomp-trap      through prctl, then go on computing and exit
 *   seccomp-direct    the kill filter through a raw seccomp syscall
 *   seccomp-syscall   the kill filter through glibc's syscall(SYS_seccomp)
 *   seccomp-hidden    the errno filter through a raw seccomp syscall, after
 *                     prctl(PR_SET_NO_NEW_PRIVS) with an option the
 *                     compiler cannot see: no call site tells it coming
 *   seccomp-strict    strict mode (read, write, exit, sigreturn only; the
 *                     kernel also disables the TSC: rdtsc raises SIGSEGV)
 *   seccomp-crash     the errno filter, then a NULL write: death by SIGSEGV
 *                     in a sandbox that refuses sigaction and kill
 *   seccomp-term      the errno filter, then compute until a child (forked
 *                     before it) sends SIGTERM: death by SIGTERM
 *   tsc-sigsegv       prctl(PR_SET_TSC, PR_TSC_SIGSEGV), then compute: a
 *                     program that needs no TSC and forbids itself one
 *   tsc-probe         whether the machine honours PR_TSC_SIGSEGV: a child
 *                     sets it and reads the TSC; exit 0 when the read
 *                     faults, 94 when it does not (a hypervisor that does
 *                     not trap rdtsc), 95 when the kernel refuses the prctl
 *   clone-vm          clone(CLONE_VM) children (no CLONE_THREAD) computing
 *                     beside their parent in its memory
 *   clone-vm-busy     one such child making 2 M iterations of two small
 *                     functions while its parent makes as many
 *   busy-serial       the same iterations, all in the parent (the time
 *                     clone-vm-busy is compared with)
 *   sigsys            print the SIGSYS disposition (sigaction and signal),
 *                     install a handler, print it again, then a seccomp
 *                     filter that traps getppid: the handler must run
 *   return            100 calls and exit 0
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))
#define OPAQUE(x) __asm__ volatile("" : "+r"(x))

KEEP int work(int x)
{
    OPAQUE(x);
    return x * 3 + 1;
}

KEEP int work_n(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += work(i);
    return s;
}

KEEP void child_work(int n)
{
    work_n(n);
}

static int wait_ok(pid_t pid, int flags)
{
    int st;
    while (waitpid(pid, &st, flags) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- dlclose, then fork ------------------------------------------------------ */

static int mode_dlclose_fork(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen failed\n");
        return 99;
    }
    int (*lib_work)(int) = (int (*)(int))dlsym(h, "lib_work");
    if (!lib_work)
        return 98;
    printf("lib_work: %d\n", lib_work(50));
    dlclose(h);
    pid_t pid = fork();
    if (pid == 0) {
        child_work(7);
        printf("child of fork\n");
        return 0;
    }
    work_n(100);
    printf("child exited %d\n", wait_ok(pid, 0));
    return 0;
}

/* ---- seccomp ------------------------------------------------------------------- */

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static struct sock_fprog *allow_list(unsigned deny)
{
    static struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        ALLOW(SYS_read),
        ALLOW(SYS_write),
        ALLOW(SYS_exit),
        ALLOW(SYS_exit_group),
        ALLOW(SYS_rt_sigreturn),
        BPF_STMT(BPF_RET | BPF_K, 0), /* the default action, filled in */
    };
    static struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    f[sizeof f / sizeof f[0] - 1].k = deny;
    return &prog;
}

/* What a sandboxed program does once inside: compute (many events, many
 * chunks), then say so with write() and exit. */
static int sandboxed_work(int strict)
{
    char line[64];
    int s = work_n(300000);
    if (strict < 0) {
        write(1, "crashing\n", 9);
        *(volatile int *)(uintptr_t)(s & 0) = s;
    }
    if (strict == 2) { /* until SIGTERM; an unkilled run ends after 5 s (the vDSO clock: no system call) */
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            s += work_n(10000);
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while (t.tv_sec - t0.tv_sec < 5);
    }
    int n = snprintf(line, sizeof line, "sandboxed result %d\n", s);
    if (write(1, line, (size_t)n) != n)
        return 97;
    if (strict)
        syscall(SYS_exit, 0); /* strict mode has no exit_group */
    return 0;
}

static int mode_seccomp(const char *how)
{
    work_n(100);
    printf("installing the filter\n");
    fflush(stdout);
    /* no_new_privs first, as an unprivileged process must; root may leave
     * it out: the direct, hidden and syscall cases then show the runtime
     * only the seccomp call itself.  hidden passes the option as a value
     * the compiler cannot see. */
    int direct = !strcmp(how, "direct") || !strcmp(how, "hidden");
    int nnp = PR_SET_NO_NEW_PRIVS;
    OPAQUE(nnp);
    if (geteuid() != 0 || !(direct || !strcmp(how, "syscall"))) {
        if (!strcmp(how, "hidden") ? prctl(nnp, 1, 0, 0, 0) : prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
            return 96;
    }
    if (!strcmp(how, "term") && fork() == 0) {
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
        kill(getppid(), SIGTERM);
        _exit(0);
    }
    long rc;
    if (!strcmp(how, "strict")) {
        rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
    } else if (!strcmp(how, "syscall")) {
        rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, allow_list(SECCOMP_RET_KILL_PROCESS));
    } else if (direct) {
        /* A raw syscall instruction: no libc function a hook could see. */
        struct sock_fprog *prog = allow_list(!strcmp(how, "hidden") ? SECCOMP_RET_ERRNO | EPERM
                                                                    : SECCOMP_RET_KILL_PROCESS);
        register long r10 __asm__("r10") = 0;
        __asm__ volatile("syscall"
                         : "=a"(rc)
                         : "0"((long)SYS_seccomp), "D"((long)SECCOMP_SET_MODE_FILTER), "S"(0L),
                           "d"(prog), "r"(r10)
                         : "rcx", "r11", "memory");
    } else {
        unsigned deny = !strcmp(how, "errno") || !strcmp(how, "crash") || !strcmp(how, "term")
                            ? SECCOMP_RET_ERRNO | EPERM
                        : !strcmp(how, "trap") ? SECCOMP_RET_TRAP
                                               : SECCOMP_RET_KILL_PROCESS;
        rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, allow_list(deny), 0, 0);
    }
    if (rc) {
        printf("cannot install the filter\n");
        return 95;
    }
    return sandboxed_work(!strcmp(how, "strict") ? 1 : !strcmp(how, "crash") ? -1 : !strcmp(how, "term") ? 2 : 0);
}

static int mode_tsc_sigsegv(void)
{
    work_n(100);
    if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
        return 95;
    printf("result %d\n", work_n(300000));
    return 0;
}

/* The test of tsc-sigsegv depends on the read faulting: some hypervisors
 * accept the prctl (PR_GET_TSC says SIGSEGV) and let rdtsc run anyway. */
static int mode_tsc_probe(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 98;
    if (pid == 0) {
        if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
            _exit(95);
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        _exit(94);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return 98;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) {
        printf("rdtsc faults after PR_SET_TSC\n");
        return 0;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 95)
        return 95;
    printf("rdtsc still works after PR_SET_TSC (the kernel accepted it)\n");
    return 94;
}

/* ---- the SIGSYS disposition, as the program set it ---------------------------- */

static volatile sig_atomic_t sigsys_seen, sigsys_nr;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    sigsys_seen++;
    sigsys_nr = si->si_code == 1 /* SYS_SECCOMP */ ? si->si_syscall : -1;
}

static const char *disposition_name(void (*h)(int), int flags)
{
    if (flags & SA_SIGINFO)
        return (void *)h == (void *)on_sigsys ? "on_sigsys (siginfo)" : "another handler (siginfo)";
    return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignored" : "another handler";
}

static void print_sigsys(const char *when)
{
    struct sigaction old;
    if (sigaction(SIGSYS, NULL, &old)) {
        printf("%s: sigaction failed\n", when);
        return;
    }
    printf("%s: %s, mask has SIGINT %d\n", when, disposition_name(old.sa_handler, old.sa_flags),
           sigismember(&old.sa_mask, SIGINT));
}

static int mode_sigsys(void)
{
    work_n(100);
    print_sigsys("at start");
    void (*was)(int) = signal(SIGSYS, SIG_IGN);
    printf("signal() replaced: %s\n", disposition_name(was, 0));
    print_sigsys("after signal(SIG_IGN)");
    work_n(100);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    struct sigaction prev;
    if (sigaction(SIGSYS, &sa, &prev))
        return 94;
    printf("sigaction() replaced: %s\n", disposition_name(prev.sa_handler, prev.sa_flags));
    work_n(100);
    print_sigsys("after sigaction(on_sigsys)");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return 96;
    static struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
        printf("cannot install the filter\n");
        return 95;
    }
    syscall(SYS_getppid);
    printf("getppid under the filter: handler ran %d time(s) for syscall %d\n", (int)sigsys_seen,
           (int)sigsys_nr);
    printf("result %d\n", work_n(1000));
    return 0;
}

/* ---- clone(CLONE_VM) without CLONE_THREAD -------------------------------------- */

KEEP int small_a(int x)
{
    OPAQUE(x);
    return x + 1;
}

KEEP int small_b(int x)
{
    OPAQUE(x);
    return x ^ 3;
}

KEEP int busy_loop(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += small_a(i) + small_b(s);
    return s;
}

#define BUSY_ITERATIONS 2000000

static int busy_result;

static int busy_child(void *arg)
{
    (void)arg;
    busy_result = busy_loop(BUSY_ITERATIONS);
    return 0;
}

static int mode_clone_vm_busy(int serial)
{
    size_t size = 256 * 1024;
    char *stack = malloc(size);
    if (!stack)
        return 99;
    int st = 0;
    if (serial) {
        busy_child(NULL);
    } else {
        pid_t pid = clone(busy_child, stack + size, CLONE_VM | SIGCHLD, NULL);
        if (pid < 0)
            return 98;
        int mine = busy_loop(BUSY_ITERATIONS);
        st = wait_ok(pid, __WALL);
        printf("parent %d\n", mine);
    }
    if (serial)
        printf("parent %d\n", busy_loop(BUSY_ITERATIONS));
    printf("child %d status %d\n", busy_result, st);
    free(stack);
    return 0;
}

static int clone_child(void *arg)
{
    child_work((int)(long)arg);
    return 0;
}

static int mode_clone_vm(void)
{
    size_t size = 256 * 1024;
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        char *stack = malloc(size);
        if (!stack)
            return 99;
        pid_t pid = clone(clone_child, stack + size, CLONE_VM | SIGCHLD, (void *)20000L);
        if (pid < 0)
            return 98;
        work_n(20000);
        if (wait_ok(pid, __WALL) != 0)
            bad++;
        free(stack);
    }
    printf("clone children that failed: %d\n", bad);
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "return";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(m, "dlclose-fork") && argc > 2)
        return mode_dlclose_fork(argv[2]);
    if (!strncmp(m, "seccomp-", 8))
        return mode_seccomp(m + 8);
    if (!strcmp(m, "clone-vm"))
        return mode_clone_vm();
    if (!strcmp(m, "clone-vm-busy") || !strcmp(m, "busy-serial"))
        return mode_clone_vm_busy(!strcmp(m, "busy-serial"));
    if (!strcmp(m, "tsc-sigsegv"))
        return mode_tsc_sigsegv();
    if (!strcmp(m, "tsc-probe"))
        return mode_tsc_probe();
    if (!strcmp(m, "sigsys"))
        return mode_sigsys();
    if (!strcmp(m, "return")) {
        work_n(100);
        printf("returning 0\n");
        return 0;
    }
    fprintf(stderr, "hostile: unknown mode %s\n", m);
    return 2;
}

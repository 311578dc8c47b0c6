/* survive.c - one program, one way to end or misbehave per mode.
 *
 *   survive MODE
 *
 * Built twice: with the plugin (the case under test) and without it (the
 * oracle: same output, same exit status).  check.py runs both and then
 * reports the instrumented run's dumps.  Every mode calls work() a known
 * number of times before its ending, so the report must show exactly that
 * many calls.  Lines starting with '#' carry values that differ between
 * runs (counts, pids); check.py reads them and leaves them out of the
 * comparison.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define KEEP __attribute__((noinline, noclone))
#define OPAQUE(x) __asm__ volatile("" : "+r"(x))

static const char *self;

KEEP int work(int x)
{
    OPAQUE(x);
    return x * 3 + 1;
}

static int work_n(int n)
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Exec'd by fork-exec, vfork and posix_spawn: its own dump, its own calls. */
static int mode_child(void)
{
    child_work(5);
    printf("child done\n");
    return 0;
}

static void spawn_self(const char *mode)
{
    char *argv[] = {(char *)self, (char *)mode, NULL};
    execv(self, argv);
    _exit(127);
}

static int wait_ok(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- endings -------------------------------------------------------------- */

KEEP void crash(void)
{
    volatile int *p = NULL;
    OPAQUE(p);
    *p = 1;
}

static volatile sig_atomic_t got_term;
static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

/* exit() from a thread while the others still call work(). */
static atomic_int spinning;
static void *spinner(void *arg)
{
    (void)arg;
    atomic_fetch_add(&spinning, 1);
    for (;;)
        work(1);
    return NULL;
}

KEEP void exiter_work(int n)
{
    work_n(n);
}

static void *exiter(void *arg)
{
    (void)arg;
    while (atomic_load(&spinning) < 2)
        ;
    exiter_work(100);
    printf("exiting from a thread\n");
    fflush(stdout);
    exit(3);
}

/* ---- threads --------------------------------------------------------------- */

static void *ten_calls(void *arg)
{
    (void)arg;
    work_n(10);
    return NULL;
}

static atomic_int stop_flag;
static void *full_speed(void *arg)
{
    long long *count = arg;
    long long n = 0;
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        for (int i = 0; i < 64; i++) {
            /* ~0.1 us of the thread's own work per call keeps the dump
             * near 100 MB for a few seconds on a few cores. */
            for (int k = 0; k < 200; k++)
                OPAQUE(k);
            work(i);
        }
        n += 64;
    }
    *count = n;
    return NULL;
}

/* ---- recursion, signals ----------------------------------------------------- */

KEEP int recurse(int depth)
{
    if (depth == 0)
        return 0;
    int r = recurse(depth - 1);
    OPAQUE(r);
    return r + 1;
}

static void *deep(void *arg)
{
    (void)arg;
    printf("depth %d\n", recurse(100000));
    return NULL;
}

static volatile sig_atomic_t handled;
KEEP void in_handler(void)
{
    handled++;
}

static void on_usr1(int sig)
{
    (void)sig;
    in_handler();
}

static volatile sig_atomic_t ticks;
static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
    in_handler();
}

static sigjmp_buf jump_back;
KEEP void jump_from_handler(void)
{
    siglongjmp(jump_back, 1);
}

static void on_usr2(int sig)
{
    (void)sig;
    jump_from_handler();
}

KEEP void interrupted(int level)
{
    if (level > 0) {
        interrupted(level - 1);
        __asm__ volatile("" ::: "memory"); /* not a tail call: keep the frames */
        return;
    }
    raise(SIGUSR2); /* the handler jumps out of this frame and its callers */
}

/* ---- constructors, destructors, atexit -------------------------------------- */

static int lifecycle_mode;

static volatile int lifecycle_calls;

KEEP void in_constructor(void)
{
    lifecycle_calls++;
}

KEEP void in_destructor(void)
{
    lifecycle_calls++;
}

KEEP void in_atexit(void)
{
    lifecycle_calls++;
    printf("atexit ran\n");
}

__attribute__((constructor)) static void before_main(void)
{
    in_constructor();
}

__attribute__((destructor)) static void after_main(void)
{
    if (lifecycle_mode)
        in_destructor();
}

/* ---- descriptors, directories, limits ---------------------------------------- */

static int open_null(void)
{
    return open("/dev/null", O_RDONLY);
}

/* ---- main ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    self = argv[0];
    const char *m = argc > 1 ? argv[1] : "return";
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (!strcmp(m, "child"))
        return mode_child();
    if (!strcmp(m, "return")) {
        work_n(100);
        printf("returning 0\n");
        return 0;
    }
    if (!strcmp(m, "exit-thread")) {
        pthread_t a, b, c;
        pthread_create(&a, NULL, spinner, NULL);
        pthread_create(&b, NULL, spinner, NULL);
        pthread_create(&c, NULL, exiter, NULL);
        pthread_join(c, NULL);
        return 0; /* not reached */
    }
    if (!strcmp(m, "exit-busy")) {
        /* 8 threads calling work() without pause when another calls exit():
         * some are caught between the call-site hook and work's entry hook. */
        pthread_t t[9];
        for (int i = 0; i < 8; i++)
            pthread_create(&t[i], NULL, spinner, NULL);
        while (atomic_load(&spinning) < 8)
            ;
        pthread_create(&t[8], NULL, exiter, NULL);
        pthread_join(t[8], NULL);
        return 0; /* not reached */
    }
    if (!strcmp(m, "_exit")) {
        work_n(100);
        printf("calling _exit(4)\n");
        _exit(4);
    }
    if (!strcmp(m, "abort")) {
        work_n(100);
        printf("calling abort\n");
        abort();
    }
    if (!strcmp(m, "segv")) {
        work_n(100);
        printf("crashing\n");
        crash();
        return 0;
    }
    if (!strcmp(m, "sigkill")) {
        work_n(100);
        printf("killing myself\n");
        raise(SIGKILL);
        return 0;
    }
    if (!strcmp(m, "sigterm")) {
        work_n(100);
        printf("terminating myself\n");
        raise(SIGTERM);
        return 0;
    }
    if (!strcmp(m, "sigterm-handler")) {
        signal(SIGTERM, on_term);
        work_n(100);
        raise(SIGTERM);
        printf("handler ran: %d\n", (int)got_term);
        return 7;
    }
    if (!strcmp(m, "sigterm-external")) {
        /* Killed from outside while it works: check.py sends SIGTERM. */
        printf("ready\n");
        for (;;)
            work(1);
    }
    if (!strcmp(m, "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            child_work(7);
            printf("child of fork\n");
            return 0;
        }
        work_n(100);
        printf("child exited %d\n", wait_ok(pid));
        return 0;
    }
    if (!strcmp(m, "fork-children-exit")) {
        /* A server's background saves: children that end with _exit. */
        for (int i = 0; i < 3; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                child_work(7);
                _exit(0);
            }
            printf("child %d exited %d\n", i, wait_ok(pid));
        }
        work_n(100);
        return 0;
    }
    if (!strcmp(m, "fork-child-killed")) {
        pid_t pid = fork();
        if (pid == 0) {
            child_work(7);
            kill(getpid(), SIGKILL);
            _exit(0);
        }
        printf("child exited %d\n", wait_ok(pid));
        work_n(100);
        return 0;
    }
    if (!strcmp(m, "fork-exec")) {
        pid_t pid = fork();
        if (pid == 0)
            spawn_self("child");
        work_n(100);
        printf("child exited %d\n", wait_ok(pid));
        return 0;
    }
    if (!strcmp(m, "vfork")) {
        /* The child shares the parent's memory until it execs: an
         * instrumented call there must not spoil the parent's dump. */
        pid_t pid = vfork();
        if (pid == 0) {
            child_work(2);
            spawn_self("child");
        }
        work_n(100);
        printf("child exited %d\n", wait_ok(pid));
        return 0;
    }
    if (!strcmp(m, "posix-spawn")) {
        pid_t pid;
        char *args[] = {(char *)self, "child", NULL};
        if (posix_spawn(&pid, self, NULL, NULL, args, environ))
            return 99;
        work_n(100);
        printf("child exited %d\n", wait_ok(pid));
        return 0;
    }
    if (!strcmp(m, "daemon")) {
        /* fork, setsid, fork again; the daemon leaves the directory and the
         * terminal.  The pipe's end tells the first process it finished. */
        int p[2];
        if (pipe(p))
            return 99;
        pid_t pid = fork();
        if (pid == 0) {
            setsid();
            if (fork() > 0)
                _exit(0);
            close(p[0]);
            if (chdir("/"))
                _exit(98);
            int fd = open("/dev/null", O_RDWR);
            dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
            child_work(9);
            _exit(0);
        }
        close(p[1]);
        wait_ok(pid);
        char c;
        while (read(p[0], &c, 1) > 0)
            ;
        work_n(100);
        printf("daemon finished\n");
        return 0;
    }
    if (!strcmp(m, "threads-unjoined")) {
        pthread_t t;
        for (int i = 0; i < 4; i++)
            pthread_create(&t, NULL, spinner, NULL);
        while (atomic_load(&spinning) < 4)
            ;
        work_n(100);
        printf("leaving 4 threads running\n");
        return 0;
    }
    if (!strcmp(m, "threads-1000")) {
        for (int batch = 0; batch < 20; batch++) {
            pthread_t t[50];
            for (int i = 0; i < 50; i++)
                if (pthread_create(&t[i], NULL, ten_calls, NULL))
                    return 99;
            for (int i = 0; i < 50; i++)
                pthread_join(t[i], NULL);
        }
        printf("1000 threads done\n");
        return 0;
    }
    if (!strcmp(m, "threads-64")) {
        double secs = getenv("SURVIVE_SECONDS") ? atof(getenv("SURVIVE_SECONDS")) : 3.0;
        pthread_t t[64];
        long long count[64], total = 0;
        for (int i = 0; i < 64; i++)
            pthread_create(&t[i], NULL, full_speed, &count[i]);
        double t0 = now_s();
        while (now_s() - t0 < secs)
            usleep(10000);
        atomic_store(&stop_flag, 1);
        for (int i = 0; i < 64; i++) {
            pthread_join(t[i], NULL);
            total += count[i];
        }
        printf("# calls %lld\n", total);
        printf("64 threads done\n");
        return 0;
    }
    if (!strcmp(m, "recursion")) {
        /* 100,000 frames need more than the default 8 MiB stack at -O0. */
        pthread_attr_t a;
        pthread_t t;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, (size_t)512 << 20);
        if (pthread_create(&t, &a, deep, NULL))
            return 99;
        pthread_join(t, NULL);
        return 0;
    }
    if (!strcmp(m, "signal-handler")) {
        signal(SIGUSR1, on_usr1);
        for (int i = 0; i < 50; i++) {
            work(i);
            raise(SIGUSR1); /* synchronous: runs between hooks, always recorded */
        }
        printf("handled %d\n", (int)handled);
        /* Asynchronous: a 1 ms timer lands anywhere, inside hooks too. */
        signal(SIGALRM, on_alarm);
        struct itimerval it = {{0, 1000}, {0, 1000}};
        setitimer(ITIMER_REAL, &it, NULL);
        double t0 = now_s();
        while (ticks < 100 && now_s() - t0 < 10)
            work(1);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        printf("# async %d\n", (int)ticks);
        printf("# total_handled %d\n", (int)handled);
        return 0;
    }
    if (!strcmp(m, "siglongjmp")) {
        signal(SIGUSR2, on_usr2);
        volatile int jumps = 0;
        for (volatile int i = 0; i < 10; i++) {
            if (sigsetjmp(jump_back, 1) == 0)
                interrupted(3);
            else
                jumps++;
            work(i);
        }
        printf("jumped back %d times\n", (int)jumps);
        return 0;
    }
    if (!strcmp(m, "lifecycle")) {
        lifecycle_mode = 1;
        atexit(in_atexit);
        work_n(100);
        printf("main returns\n");
        return 0;
    }
    if (!strcmp(m, "close-fds")) {
        /* Close everything but stdio, then count on the lowest numbers. */
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        work_n(100);
        int a = open_null(), b = open_null();
        printf("fds %d %d\n", a, b);
        work_n(100);
        return 0;
    }
    if (!strcmp(m, "chdir")) {
        work_n(100);
        if (chdir("/"))
            return 98;
        work_n(100);
        printf("left the directory\n");
        return 0;
    }
    if (!strcmp(m, "nofile")) {
        /* check.py runs this with RLIMIT_NOFILE = 8: the program expects
         * fds 3..7 to be its own.  While it holds them all, the runtime
         * cannot open its dump: those events are dropped and counted;
         * once they are closed it records again. */
        int got = 0, fd, fds[16];
        while (got < 16 && (fd = open_null()) >= 0) {
            fds[got++] = fd;
            work_n(10000);
        }
        printf("opened %d before %s\n", got, strerror(errno));
        work_n(100000);
        for (int i = 0; i < got; i++)
            close(fds[i]);
        work_n(100000);
        return 0;
    }
    if (!strcmp(m, "lots")) {
        /* Many events: for the full-disk cases. */
        int n = getenv("SURVIVE_CALLS") ? atoi(getenv("SURVIVE_CALLS")) : 2000000;
        work_n(n);
        printf("made %d calls\n", n);
        return 0;
    }
    fprintf(stderr, "survive: unknown mode %s\n", m);
    return 2;
}

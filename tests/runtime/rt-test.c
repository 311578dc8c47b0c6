/* rt-test.c - unit tests of the runtime: drive the hooks with fake
 * descriptors and CFAs, read the dump back, compare exact event sequences.
 *
 * Usage: rt-test NAME   (one CTest entry per NAME; "bench" measures).
 * Most tests run their scenario in a forked child that binds the runtime
 * (the parent never does), so every scenario gets a fresh process and dump.
 * Exit status 77 means skipped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dump-read.h"
#include "hook-abi.h"
#include "internal.h"
#include "test-util.h"

#define CHECK_TEXT(d, thread, want)                                                                \
    do {                                                                                           \
        char *t_ = td_text(d, thread);                                                             \
        int bad_ = strcmp(t_, want);                                                               \
        if (bad_)                                                                                  \
            fprintf(stderr, "%s:%d: thread %u events\n   are: %s\n  want: %s\n", __FILE__,         \
                    __LINE__, (unsigned)(thread), t_, want);                                       \
        free(t_);                                                                                  \
        if (bad_)                                                                                  \
            return 1;                                                                              \
    } while (0)

#define DESC(var, name) static struct fake_desc var = FAKE_DESC(name, "test.c", "7", 0)
DESC(f, "f");
DESC(g, "g");
DESC(h, "h");
DESC(k, "k");
/* a and b as compiled with inline=before: b's hooks inlined into a share its CFA */
#define DESC_INLINED(var, name)                                                                    \
    static struct fake_desc var = FAKE_DESC(name, "test.c", "7", INSTR_FN_SHARES_CFA)
DESC_INLINED(a, "a");
DESC_INLINED(b, "b");
DESC_INLINED(ki, "ki");

static instr_hook_fn hooks[INSTR_SLOT_COUNT];
#define CFA(x) ((void *)(uintptr_t)(x))
#define E(d, c) hooks[INSTR_SLOT_ENTER]((struct instr_fn_desc *)&(d), CFA(c))
#define X(d, c) hooks[INSTR_SLOT_EXIT]((struct instr_fn_desc *)&(d), CFA(c))
#define L(d, c) hooks[INSTR_SLOT_LANDING]((struct instr_fn_desc *)&(d), CFA(c))

static char dir[256];

static int bind_runtime(void)
{
    return instr__bind(hooks, INSTR_SLOT_COUNT, INSTR_HOOK_ABI_VERSION);
}

static void set_output(const char *tmpl)
{
    char o[512];
    snprintf(o, sizeof o, "%s/%s", dir, tmpl);
    setenv("INSTR_OUTPUT", o, 1);
}

/* Runs fn in a child that binds the runtime; returns its exit status and
 * its pid (the dump is dir/<pid>.instr unless fn changes INSTR_OUTPUT). */
static int in_child(int (*fn)(void), pid_t *pid_out)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        set_output("%p.instr");
        exit(fn());
    }
    int st;
    waitpid(pid, &st, 0);
    if (pid_out)
        *pid_out = pid;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int read_pid_dump(pid_t pid, const char *suffix, struct td_dump *d)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%d%s", dir, (int)pid, suffix);
    if (td_read(path, d)) {
        fprintf(stderr, "%s: %s\n", path, d->error);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- scenarios */

static int child_nesting(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    E(g, 900);
    X(g, 900);
    X(f, 1000);
    return 0;
}

static int test_nesting(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_nesting, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0, "enter f|enter g|exit|exit");
    /* Registering f and g is the runtime's time: skipped, said so. */
    CHECK_INT(d.runtime_events, 2);
    CHECK(d.runtime_ticks > 0);
    CHECK_INT(d.h.pid, pid);
    CHECK_INT(d.h.ppid, getpid());
    CHECK_INT(d.h.chunk_size, INSTR_RT_CHUNK_SIZE);
    CHECK(d.h.flags & INSTR_DUMP_COMPLETE);
    CHECK(!(d.h.flags & INSTR_DUMP_FORK_CHILD));
    CHECK_INT(d.h.exit_status, 0);
    CHECK_INT(d.h.thread_count, 1);
    CHECK_INT(d.h.unmatched_exits, 0);
    CHECK(d.h.end_tsc >= d.h.start_tsc && d.h.start_tsc > 0);
    CHECK(d.h.end_mono_ns >= d.h.start_mono_ns && d.h.start_real_ns > 0);
    CHECK(d.h.detector_detail[0]);
    CHECK_STR(d.func_file[1], "test.c");
    CHECK_INT(d.func_line[1], 7);
    CHECK_INT(d.func_module[1], 1);
    char exe[1024] = {0};
    CHECK(readlink("/proc/self/exe", exe, sizeof exe - 1) > 0);
    CHECK_STR(d.module_path[1], exe);
    CHECK_STR(d.h.exe_path, exe);
    CHECK(d.thread_name[0] != NULL);
    /* deltas add up: the events happened after the start */
    uint64_t sum = 0;
    for (size_t i = 0; i < d.nev; i++)
        sum += d.ev[i].delta;
    CHECK(sum <= d.h.end_tsc - d.h.start_tsc);
    td_free(&d);
    return 0;
}

/* The calibration cache (runtime/calib-cache.c): where the hooks' cost of
 * a process came from, read from its dump's header; and which path of
 * the hooks it measured (INSTR_CALIBRATION_PATH_*, in *path). */
static int calibration_of_child_path(int *path)
{
    pid_t pid;
    struct td_dump d;
    if (in_child(child_nesting, &pid) || read_pid_dump(pid, ".instr", &d))
        return -1;
    int c = (int)d.h.calibration;
    *path = (int)d.h.calibration_path;
    td_free(&d);
    return c;
}

static int calibration_of_child(void)
{
    int path;
    return calibration_of_child_path(&path);
}

static int copy_file(const char *from, const char *to)
{
    char buf[4096];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ssize_t n = in >= 0 && out >= 0 ? read(in, buf, sizeof buf) : -1;
    int ok = n > 0 && write(out, buf, (size_t)n) == n;
    close(in);
    close(out);
    return ok ? 0 : -1;
}

static int test_calibration_cache(void)
{
    char xdg[300], sub[320], file[340], copy[340];
    struct stat st, st2;
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    snprintf(sub, sizeof sub, "%s/instr", xdg);
    snprintf(file, sizeof file, "%s/calibration", sub);
    snprintf(copy, sizeof copy, "%s/copy", xdg);
    CHECK(mkdir(xdg, 0700) == 0);
    setenv("XDG_RUNTIME_DIR", xdg, 1);
    unsetenv("INSTR_CALIBRATE");
    /* The first process measures and keeps the result, the next reads it. */
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    CHECK(lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_CACHED);
    /* INSTR_CALIBRATE=fresh measures whatever is kept. */
    setenv("INSTR_CALIBRATE", "fresh", 1);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    unsetenv("INSTR_CALIBRATE");
    int path = -1;
    CHECK_INT(calibration_of_child_path(&path), INSTR_CALIBRATION_CACHED);
    CHECK_INT(path, INSTR_CALIBRATION_PATH_FAST);
    /* A filter set: every hook takes the slow path, which is measured and
     * kept apart; the fast path's record stays.  Another filter set is
     * another path: measured again. */
    setenv("INSTR_DEPTH", "50", 1);
    CHECK_INT(calibration_of_child_path(&path), INSTR_CALIBRATION_FRESH);
    CHECK_INT(path, INSTR_CALIBRATION_PATH_FILTERING);
    CHECK_INT(calibration_of_child_path(&path), INSTR_CALIBRATION_CACHED);
    CHECK_INT(path, INSTR_CALIBRATION_PATH_FILTERING);
    unsetenv("INSTR_DEPTH");
    CHECK_INT(calibration_of_child_path(&path), INSTR_CALIBRATION_CACHED);
    CHECK_INT(path, INSTR_CALIBRATION_PATH_FAST);
    setenv("INSTR_MIN_DURATION", "1us", 1);
    CHECK_INT(calibration_of_child_path(&path), INSTR_CALIBRATION_FRESH);
    CHECK_INT(path, INSTR_CALIBRATION_PATH_FILTERING);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_CACHED);
    unsetenv("INSTR_MIN_DURATION");
    CHECK(copy_file(file, copy) == 0);
    /* Tampered: one byte of the values changed, the checksum not.  Refused,
     * measured again and the file replaced by a good one. */
    int fd = open(file, O_RDWR);
    CHECK(fd >= 0);
    unsigned char b;
    CHECK(pread(fd, &b, 1, 200) == 1);
    b ^= 0x40;
    CHECK(pwrite(fd, &b, 1, 200) == 1);
    close(fd);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_CACHED);
    /* A symbolic link to a valid record in its place: not followed. */
    CHECK(unlink(file) == 0 && symlink(copy, file) == 0);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    /* A valid record that others can write: refused. */
    CHECK(unlink(file) == 0 && copy_file(copy, file) == 0 && chmod(file, 0622) == 0);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    CHECK(lstat(file, &st) == 0 && (st.st_mode & 0777) == 0600); /* replaced */
    /* A directory open to other users: nothing in it is read or written. */
    CHECK(chmod(sub, 0777) == 0 && lstat(file, &st) == 0);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    CHECK(lstat(file, &st2) == 0 && st2.st_ino == st.st_ino && st2.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
    CHECK(chmod(sub, 0700) == 0);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_CACHED);
    if (geteuid() == 0) {
        /* A valid record, or its directory, owned by another user. */
        CHECK(chown(file, 65534, 65534) == 0);
        CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
        CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_CACHED);
        CHECK(chown(sub, 65534, 65534) == 0);
        CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
        CHECK(chown(sub, 0, 0) == 0);
    }
    /* A symbolic link as the directory, to a good one: not followed. */
    char real[340];
    snprintf(real, sizeof real, "%s/real", xdg);
    CHECK(rename(sub, real) == 0 && symlink(real, sub) == 0);
    CHECK_INT(calibration_of_child(), INSTR_CALIBRATION_FRESH);
    unsetenv("XDG_RUNTIME_DIR");
    return 0;
}

static int child_mismatch(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    E(g, 900);
    E(h, 800);
    X(g, 900); /* h's exit never came: closed (stack) */
    X(f, 1000);
    E(a, 1000);
    E(b, 1000); /* inlined into a: same CFA */
    X(a, 1000); /* b's exit missed: closed (mismatch) */
    return 0;
}

static int test_exit_mismatch(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_mismatch, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0,
               "enter f|enter g|enter h|unwind stack|exit|exit|enter a|enter b|unwind mismatch|exit");
    /* the repair and the exit happen at one tick */
    for (size_t i = 0; i < d.nev; i++)
        if (d.ev[i].kind == INSTR_EV_EXIT && d.ev[i - 1].kind == INSTR_EV_EXT)
            CHECK_INT(d.ev[i].delta, 0);
    td_free(&d);
    return 0;
}

static int child_landing(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    E(g, 900);
    E(h, 800);
    L(f, 1000); /* caught in f: g and h unwound */
    X(f, 1000);
    E(f, 1000);
    E(g, 900);
    E(h, 800);
    L(k, 850); /* k is not on the stack: only frames below its CFA go */
    X(g, 900);
    X(f, 1000);
    return 0;
}

static int test_landing(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_landing, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0,
               "enter f|enter g|enter h|unwind exception|unwind exception|exit|"
               "enter f|enter g|enter h|unwind exception|exit|exit");
    CHECK_INT(d.h.unmatched_exits, 0);
    td_free(&d);
    return 0;
}

/* Call sites of f: to a direct callee, to g (instrumented), through a
 * pointer, and g's call to h. */
#define SITE(var, caller, callee, flags)                                                           \
    static struct instr_site_desc var = {0, INSTR_HOOK_ABI_VERSION, flags, 0, 10, 0,               \
                                         (struct instr_fn_desc *)&(caller), callee, 0, 0}
SITE(s_write, f, "write", 0);
SITE(s_g, f, "g", 0);
SITE(s_ptr, f, NULL, INSTR_SITE_INDIRECT);
SITE(s_h, g, "h", 0);
typedef void (*call_hook)(struct instr_site_desc *, void *, void *);
typedef void (*return_hook)(struct instr_site_desc *, void *);
#define C(s, c, t) ((call_hook)(void (*)(void))hooks[INSTR_SLOT_CALL])(&(s), CFA(c), (void *)(t))
#define R(s, c) ((return_hook)(void (*)(void))hooks[INSTR_SLOT_RETURN])(&(s), CFA(c))

static int child_callsites(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    C(s_write, 1000, NULL); /* a library call: site 1 */
    R(s_write, 1000);
    C(s_g, 1000, NULL); /* an instrumented callee: site 2, then its entry */
    E(g, 900);
    X(g, 900);
    R(s_g, 1000);
    C(s_ptr, 1000, abort); /* indirect: one id per target (3, 4), cached */
    R(s_ptr, 1000);
    C(s_ptr, 1000, abort);
    R(s_ptr, 1000);
    C(s_ptr, 1000, strlen);
    R(s_ptr, 1000);
    /* An exception from h caught in f: g, h and both call sites go. */
    C(s_g, 1000, NULL);
    E(g, 900);
    C(s_h, 900, NULL);
    E(h, 800);
    L(f, 1000);
    /* A longjmp from g back into f leaves g and its call site; f's next
     * call closes both. */
    C(s_g, 1000, NULL);
    E(g, 900);
    C(s_write, 1000, NULL);
    R(s_write, 1000);
    X(f, 1000);
    if (s_write.id != 1 || s_g.id != 2 || s_h.id != 5)
        return 3;
    if ((s_ptr.target >> 48) != 4 || (uintptr_t)(s_ptr.target & ((UINT64_C(1) << 48) - 1)) != (uintptr_t)strlen)
        return 4;
    return 0;
}

static int test_callsites(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_callsites, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0,
               "enter f|call 1|return|call 2|enter g|exit|return|call 3|return|call 3|return|call 4|return|"
               "call 2|enter g|call 5|enter h|"
               "unwind exception|unwind exception|unwind exception|unwind exception|"
               "call 2|enter g|unwind stack|unwind stack|call 1|return|exit");
    CHECK_INT(d.h.unmatched_exits, 0);
    td_free(&d);
    return 0;
}

static int child_longjmp(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    E(g, 900);
    E(h, 800);
    /* longjmp back into f, which calls k: g and h are gone */
    E(k, 950);
    X(k, 950);
    /* f calls g again, jumps back, calls k from the same place: k reuses
     * g's CFA, which no live caller of k can have */
    E(g, 900);
    E(h, 800);
    E(k, 900);
    X(k, 900);
    /* with hooks inlined (inline=before) an equal CFA can be the live host */
    E(g, 900);
    E(ki, 900);
    X(ki, 900);
    X(g, 900);
    X(f, 1000);
    return 0;
}

static int test_longjmp(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_longjmp, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0,
               "enter f|enter g|enter h|unwind stack|unwind stack|enter k|exit|"
               "enter g|enter h|unwind stack|unwind stack|enter k|exit|"
               "enter g|enter ki|exit|exit|exit");
    td_free(&d);
    return 0;
}

static int child_unmatched(void)
{
    if (bind_runtime())
        return 2;
    X(g, 900); /* nothing on the stack */
    E(f, 1000);
    X(g, 900); /* g is not f's callee on record */
    X(f, 1000);
    X(f, 1000); /* already closed */
    return 0;
}

static int test_unmatched(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_unmatched, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0, "enter f|exit");
    CHECK_INT(d.h.unmatched_exits, 3);
    td_free(&d);
    return 0;
}

#define DEEP 100000
static int child_deep_errno(void)
{
    if (bind_runtime())
        return 2;
    errno = 4242;
    E(f, 1u << 30); /* thread creation, registration */
    if (errno != 4242)
        return 3;
    for (unsigned i = 1; i < DEEP; i++) {
        E(g, (1u << 30) - i * 64); /* recursion 100,000 deep */
        if (errno != 4242)
            return 4;
    }
    for (unsigned i = DEEP - 1; i >= 1; i--)
        X(g, (1u << 30) - i * 64);
    X(f, 1u << 30);
    if (errno != 4242)
        return 5;
    return 0;
}

static int test_deep_errno(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_deep_errno, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_INT(d.nev, 2 * DEEP);
    CHECK(d.h.chunk_count > 3); /* several chunk switches */
    for (size_t i = 0; i < d.nev; i++)
        CHECK_INT(d.ev[i].kind, i < DEEP ? INSTR_EV_ENTER : INSTR_EV_EXIT);
    CHECK_INT(d.h.unmatched_exits, 0);
    CHECK_INT(d.h.dropped_events, 0);
    td_free(&d);
    return 0;
}

static int child_output(void)
{
    set_output("x-%e-%p-%%.instr");
    if (bind_runtime())
        return 2;
    E(f, 1000);
    X(f, 1000);
    return 0;
}

static int test_output(void)
{
    pid_t pid;
    struct td_dump d;
    char path[512];
    CHECK_INT(in_child(child_output, &pid), 0);
    snprintf(path, sizeof path, "%s/x-rt-test-%d-%%.instr", dir, (int)pid);
    CHECK(td_read(path, &d) == 0);
    CHECK_TEXT(&d, 0, "enter f|exit");
    td_free(&d);
    return 0;
}

static int child_suffix(void)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%d.instr", dir, (int)getpid());
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    if (fd < 0 || write(fd, "keep", 4) != 4)
        return 3;
    close(fd);
    if (bind_runtime())
        return 2;
    E(f, 1000);
    X(f, 1000);
    return 0;
}

static int file_is(const char *path, const char *want)
{
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 0 && !strcmp(buf, want);
}

static int test_suffix(void)
{
    pid_t pid;
    struct td_dump d;
    char p[512];
    CHECK_INT(in_child(child_suffix, &pid), 0);
    snprintf(p, sizeof p, "%s/%d.instr", dir, (int)pid);
    CHECK(file_is(p, "keep"));
    CHECK(read_pid_dump(pid, ".1.instr", &d) == 0);
    CHECK_TEXT(&d, 0, "enter f|exit");
    td_free(&d);
    return 0;
}

static int child_symlink(void)
{
    char p[512], victim[512], dangling[512];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(dangling, sizeof dangling, "%s/nowhere", dir);
    snprintf(p, sizeof p, "%s/%d.instr", dir, (int)getpid());
    if (symlink(victim, p))
        return 3;
    snprintf(p, sizeof p, "%s/%d.1.instr", dir, (int)getpid());
    if (symlink(dangling, p)) /* a dangling one must not be followed either */
        return 3;
    if (bind_runtime())
        return 2;
    E(f, 1000);
    X(f, 1000);
    return 0;
}

static int test_symlink(void)
{
    pid_t pid;
    struct td_dump d;
    char p[512];
    snprintf(p, sizeof p, "%s/victim", dir);
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
    close(fd);
    CHECK_INT(in_child(child_symlink, &pid), 0);
    CHECK(file_is(p, "keep"));
    snprintf(p, sizeof p, "%s/nowhere", dir);
    CHECK(access(p, F_OK) != 0);
    CHECK(read_pid_dump(pid, ".2.instr", &d) == 0);
    CHECK_TEXT(&d, 0, "enter f|exit");
    td_free(&d);
    return 0;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    E(g, 500);
    E(h, 400);
    X(h, 400);
    X(g, 500);
    return NULL;
}

static int child_threads(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    X(f, 1000);
    return 0;
}

static int test_threads(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_threads, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_INT(d.h.thread_count, 2);
    CHECK_INT(d.nthreads, 2);
    CHECK_TEXT(&d, 0, "enter f|exit");
    CHECK_TEXT(&d, 1, "enter g|enter h|exit|exit|end");
    CHECK_STR(d.thread_name[1], "worker");
    CHECK(d.thread_tid[0] == (uint64_t)pid);
    CHECK(d.thread_tid[1] != (uint64_t)pid && d.thread_tid[1] != 0);
    td_free(&d);
    return 0;
}

static int child_fork(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    E(g, 900);
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        E(h, 800);
        X(h, 800);
        X(g, 900);
        X(f, 1000);
        exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    X(g, 900);
    X(f, 1000);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3;
}

static int test_fork(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_fork, &pid), 0);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    CHECK_TEXT(&d, 0, "enter f|enter g|exit|exit");
    CHECK(!(d.h.flags & INSTR_DUMP_FORK_CHILD));
    CHECK_INT(d.nthreads, 1);
    td_free(&d);
    /* the grandchild's dump: the only other file */
    DIR *dd = opendir(dir);
    struct dirent *de;
    char other[512] = "";
    char mine[64];
    snprintf(mine, sizeof mine, "%d.instr", (int)pid);
    while ((de = readdir(dd)))
        if (de->d_name[0] != '.' && strcmp(de->d_name, mine))
            snprintf(other, sizeof other, "%s/%s", dir, de->d_name);
    closedir(dd);
    CHECK(other[0]);
    CHECK(td_read(other, &d) == 0);
    CHECK(d.h.flags & INSTR_DUMP_FORK_CHILD);
    CHECK(d.h.flags & INSTR_DUMP_COMPLETE);
    CHECK_INT(d.h.ppid, pid);
    CHECK_TEXT(&d, 0, "reenter f|reenter g|enter h|exit|exit|exit");
    CHECK_STR(d.func_name[1], "f");
    CHECK_STR(d.func_name[2], "g");
    CHECK_STR(d.func_name[3], "h");
    CHECK(d.module_path[1] != NULL);
    CHECK_INT(d.h.thread_count, 1);
    td_free(&d);
    return 0;
}

static int child_crash(void)
{
    if (bind_runtime())
        return 2;
    E(f, 1000);
    E(g, 900);
    _exit(3); /* no exit handler: the file must still be readable */
}

/* Whether the dump's detector list has the sud backend on ("...; sud; ..."). */
static int sud_on(const struct td_dump *d)
{
    const char *s = d->h.detector_detail;
    for (const char *p = strstr(s, "sud"); p; p = strstr(p + 1, "sud"))
        if ((p == s || p[-1] == ' ') && (p[3] == ';' || p[3] == 0))
            return 1;
    return 0;
}

/* _exit skips the exit handlers: with sud, its exit_group (the first
 * system call after the last hook) is seen and the end recorded
 * (lifecycle.c); without, the dump is incomplete but readable. */
static int test_underscore_exit(void)
{
    pid_t pid;
    struct td_dump d;
    CHECK_INT(in_child(child_crash, &pid), 3);
    CHECK(read_pid_dump(pid, ".instr", &d) == 0);
    if (sud_on(&d)) {
        CHECK(d.h.flags & INSTR_DUMP_COMPLETE);
        CHECK_INT(d.h.exit_status, 3);
    } else {
        CHECK(!(d.h.flags & INSTR_DUMP_COMPLETE));
    }
    CHECK_TEXT(&d, 0, "enter f|enter g");
    td_free(&d);
    return 0;
}

/* ---------------------------------------------------------------- detector */


static long switches(void)
{
    struct rusage r;
    getrusage(RUSAGE_THREAD, &r);
    return r.ru_nvcsw + r.ru_nivcsw;
}

extern const unsigned int __rseq_size __attribute__((weak));

#define SLEEPS 50
#define SPINS 300
static int child_rseq(void)
{
    static char sw[SPINS];
    if (&__rseq_size == NULL || __rseq_size < 20)
        return SKIP;
    calibrate();
    if (bind_runtime())
        return 2;
    static char slept[SLEEPS];
    for (int i = 0; i < SLEEPS; i++) {
        struct timespec ts = {0, 1000};
        long s0 = switches();
        E(f, 1000);
        nanosleep(&ts, NULL);
        X(f, 1000);
        slept[i] = switches() != s0;
    }
    for (int i = 0; i < SPINS; i++) {
        long s0 = switches();
        E(g, 1000);
        spin_ns(10000);
        X(g, 1000);
        sw[i] = switches() != s0;
    }
    struct td_dump d;
    if (td_read(instr__dump_path(), &d)) {
        fprintf(stderr, "%s\n", d.error);
        return 1;
    }
    CHECK_INT(d.h.detector, INSTR_DETECTOR_RSEQ_CS);
    CHECK(d.h.detector_sees & INSTR_OS_SCHED);
    CHECK_INT(d.nev, 2 * (SLEEPS + SPINS));
    /* A 1 us sleep nearly always blocks (timer slack), but under load the
     * timer can fire before the thread is switched out: getrusage decides.
     * Its reads sit outside the hooks: a switch just before the entry hook
     * is in the interval before it, one just after the exit hook in the
     * interval after it (the next entry's, or the first spin's). */
    int sleeps_flagged = 0;
    for (int i = 0; i < SLEEPS; i++) {
        unsigned bits = d.ev[2 * i].bits | d.ev[2 * i + 1].bits | d.ev[2 * i + 2].bits;
        if (slept[i])
            CHECK(bits & INSTR_OS_SCHED); /* never a miss */
        sleeps_flagged += (d.ev[2 * i + 1].bits & INSTR_OS_SCHED) != 0;
    }
    CHECK(sleeps_flagged * 10 >= SLEEPS * 9);
    int clean = 0, false_pos = 0;
    for (int i = 0; i < SPINS; i++) {
        const struct td_event *en = &d.ev[2 * SLEEPS + 2 * i], *ex = en + 1;
        if (sw[i]) {
            /* Never a miss: in the spin, or just before or after its hooks. */
            CHECK(en->bits || ex->bits || (i + 1 < SPINS && ex[1].bits));
        } else {
            clean++;
            false_pos += ex->bits != 0;
        }
    }
    fprintf(stderr, "rseq: %d/%d sleeps flagged; %d switched spins; %d/%d clean spins flagged\n",
            sleeps_flagged, SLEEPS, SPINS - clean, false_pos, clean);
    CHECK(false_pos * 20 <= clean); /* <= 5%: task_work without a switch is rare */
    td_free(&d);
    return 0;
}

static int test_rseq(void)
{
    return in_child(child_rseq, NULL);
}

static int child_none(void)
{
    setenv("INSTR_DETECTOR", "none", 1);
    if (bind_runtime())
        return 2;
    struct timespec ts = {0, 1000};
    E(f, 1000);
    nanosleep(&ts, NULL);
    X(f, 1000);
    struct td_dump d;
    CHECK(td_read(instr__dump_path(), &d) == 0);
    CHECK_INT(d.h.detector, INSTR_DETECTOR_NONE);
    CHECK_INT(d.h.detector_sees, 0);
    CHECK_INT(d.nev, 2);
    CHECK_INT(d.ev[1].bits, 0);
    td_free(&d);
    return 0;
}

static int test_detector_none(void)
{
    return in_child(child_none, NULL);
}

/* Run with GLIBC_TUNABLES=glibc.pthread.rseq=0: no rseq area, so auto
 * must run without rseq_cs and say why. */
static int child_fallback(void)
{
    if (&__rseq_size != NULL && __rseq_size != 0)
        return SKIP; /* the tunable did not take */
    if (bind_runtime())
        return 2;
    E(f, 1000);
    X(f, 1000);
    struct td_dump d;
    CHECK(td_read(instr__dump_path(), &d) == 0);
    /* rseq_cs is off and says why; the other backends (sud, perf) go on. */
    CHECK(d.h.detector != INSTR_DETECTOR_RSEQ_CS);
    CHECK(!(d.h.detector_set & (1u << INSTR_DETECTOR_RSEQ_CS)));
    CHECK(strstr(d.h.detector_detail, "rseq") != NULL);
    CHECK_TEXT(&d, 0, "enter f|exit");
    td_free(&d);
    return 0;
}

static int test_detector_fallback(void)
{
    return in_child(child_fallback, NULL);
}

/* The runtime's own stretch spent off the CPU (here: a first call waiting
 * 50 ms for the metadata lock another thread holds) is the OS's time in
 * the program's interval, flagged with its exact off-CPU ticks; only the
 * runtime's CPU time is cut (EXT RUNTIME).  Before, all 50 ms were cut,
 * and on a loaded machine main's Elapsed Inclusive fell 15% short. */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
static int held;

static void *hold_meta_lock(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&instr__rt.meta_lock);
    pthread_mutex_lock(&held_mu);
    held = 1;
    pthread_cond_signal(&held_cv);
    pthread_mutex_unlock(&held_mu);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    pthread_mutex_unlock(&instr__rt.meta_lock);
    return NULL;
}

static int child_runtime_offcpu(void)
{
    setenv("INSTR_DETECTOR", "perf+cpuclock", 1);
    calibrate();
    if (bind_runtime())
        return 2;
    E(f, 1000);
    pthread_t th;
    pthread_create(&th, NULL, hold_meta_lock, NULL);
    pthread_mutex_lock(&held_mu);
    while (!held)
        pthread_cond_wait(&held_cv, &held_mu);
    pthread_mutex_unlock(&held_mu);
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    E(g, 900); /* g's first call: registration waits for the lock */
    clock_gettime(CLOCK_MONOTONIC, &w1);
    X(g, 900);
    X(f, 1000);
    pthread_join(th, NULL);
    struct td_dump d;
    CHECK(td_read(instr__dump_path(), &d) == 0);
    if (!(d.h.detector_set & (1u << INSTR_DETECTOR_CPUCLOCK))) {
        fprintf(stderr, "SKIP: no cpuclock backend (%s)\n", d.h.detector_detail);
        td_free(&d);
        return SKIP;
    }
    double ms = 1e6 * test_tsc_per_ns;
    fprintf(stderr, "runtime %.2f ms cut, %.2f ms off the CPU left in the program's interval\n",
            (double)d.runtime_ticks / ms, (double)d.runtime_offcpu_ticks / ms);
    /* The wait, as off-CPU time: all of it but the registration's own CPU
     * time (how long the wait was depends on when this thread got to run
     * after the holder took the lock: measured around the call). */
    double waited = ((double)(w1.tv_sec - w0.tv_sec) * 1e9 + (double)(w1.tv_nsec - w0.tv_nsec)) * 1e-6;
    fprintf(stderr, "the first call of g took %.2f ms\n", waited);
    CHECK(waited >= 20);
    CHECK(d.runtime_offcpu_ticks >= (uint64_t)(0.8 * waited * ms));
    CHECK(d.runtime_bits & INSTR_OS_SCHED);
    CHECK(d.runtime_ticks < (uint64_t)(20 * ms)); /* only the runtime's CPU time is cut */
    CHECK_TEXT(&d, 0, "enter f|enter g|exit|exit");
    td_free(&d);
    return 0;
}

static int test_runtime_offcpu(void)
{
    return in_child(child_runtime_offcpu, NULL);
}

/* ---------------------------------------------------------------- bench */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* ns per enter+exit pair (median of runs) with the detector in
 * INSTR_DETECTOR, plus bytes per event from the dump.  In-process: no fork. */
static int bench(void)
{
    enum { RUNS = 9, PAIRS = 1000000 };
    double ns[RUNS];
    calibrate();
    set_output("bench-%p.instr");
    if (bind_runtime())
        return 2;
    E(f, 1u << 30);
    for (int r = 0; r < RUNS; r++) {
        uint64_t t0 = __builtin_ia32_rdtsc();
        for (int i = 0; i < PAIRS; i++) {
            E(g, 1u << 29);
            X(g, 1u << 29);
        }
        ns[r] = (double)(__builtin_ia32_rdtsc() - t0) / test_tsc_per_ns / PAIRS;
    }
    X(f, 1u << 30);
    qsort(ns, RUNS, sizeof ns[0], cmp_double);
    struct td_dump d;
    CHECK(td_read(instr__dump_path(), &d) == 0);
    printf("detector %-8s enter+exit: median %.2f ns (min %.2f, max %.2f); %.2f bytes/event; "
           "%llu chunks\n",
           d.h.detector == INSTR_DETECTOR_RSEQ_CS ? "rseq_cs" : "none", ns[RUNS / 2], ns[0],
           ns[RUNS - 1], (double)d.payload_bytes / (double)d.nev,
           (unsigned long long)d.h.chunk_count);
    unlink(instr__dump_path());
    td_free(&d);
    return 0;
}

/* ---------------------------------------------------------------- main */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static const struct {
    const char *name;
    int (*fn)(void);
} tests[] = {
    {"nesting", test_nesting},
    {"calibration-cache", test_calibration_cache},
    {"exit-mismatch", test_exit_mismatch},
    {"landing", test_landing},
    {"callsites", test_callsites},
    {"longjmp", test_longjmp},
    {"unmatched", test_unmatched},
    {"deep-errno", test_deep_errno},
    {"output-name", test_output},
    {"output-suffix", test_suffix},
    {"output-symlink", test_symlink},
    {"threads", test_threads},
    {"fork", test_fork},
    {"underscore-exit", test_underscore_exit},
    {"detector-rseq", test_rseq},
    {"detector-none", test_detector_none},
    {"detector-fallback", test_detector_fallback},
    {"runtime-offcpu", test_runtime_offcpu},
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: rt-test NAME|all|bench\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/instr-rt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char base[sizeof dir];
    memcpy(base, dir, sizeof dir);
    int rc = -1, ran = 0, passed = 0, failed = 0;
    if (!strcmp(argv[1], "bench"))
        rc = bench();
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (strcmp(argv[1], "all") && strcmp(argv[1], tests[i].name))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", base, tests[i].name); /* one directory per test */
        mkdir(dir, 0755);
        int r = tests[i].fn();
        fprintf(stderr, "%-18s %s\n", tests[i].name, r == 0 ? "ok" : r == SKIP ? "skipped" : "FAILED");
        ran++;
        passed += r == 0;
        failed += r != 0 && r != SKIP;
    }
    if (ran)
        rc = failed ? 1 : passed ? 0 : SKIP;
    if (rc == -1) {
        fprintf(stderr, "rt-test: unknown test %s\n", argv[1]);
        rc = 2;
    }
    if (rc == 0 || rc == SKIP)
        nftw(base, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "dumps kept in %s\n", base);
    return rc;
}

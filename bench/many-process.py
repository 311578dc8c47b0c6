#!/usr/bin/env python3
"""Many short processes: what start-up, fork and exit cost (issue 39).

Small C programs, each built plain and instrumented (-fplugin=BUILD's
instr.so), run in interleaved rounds (every case and build once per round,
plain then instrumented, so load on the machine falls on both alike):
  - exec hello: a plain driver posix_spawns a hello world N times and
    waits for each; the time per run includes the exec, the dynamic
    loader, the runtime's start-up and exit and the dump;
  - fork per request: a program that forks N children one after the
    other, each handles its request (one instrumented call) and _exits at
    once, the parent waits; the time per fork includes the child's dump;
  - spawn loop: the driver itself built like the hello it runs (plain
    runs plain, instrumented runs instrumented).
With --only suite, a real workload instead: the test suite of jansson (a
C library for JSON), Debian 12's source fetched as bench/run-real.py
fetches its sources (apt-get source through a private deb-src list made
from apt's own entries: scripts/apt_sources.py).  The library and its
test programs (json_process, run once or twice per test case of the
valid, invalid, invalid-unicode and encoding-flags suites, and the api
suite's test_* programs) are compiled straight with gcc -O2 (no
autotools; jansson_private_config.h written here with what configure
finds on glibc; the test programs linked with the library's objects, as
the package's libtool -static links them), once per build, and
test/run-suites, the package's `make check`, runs in interleaved rounds
(its sh, cmp and the like are the system's, uninstrumented).  A failing
suite stops the benchmark.  Printed per build: the suite's wall time and
the CPU time of its whole process tree (wait4's rusage), median (min-max)
and x plain; the processes it ran and the instrumented ones among them
(counted once per build under strace -f, outside the timed rounds); the
dumps per run, their mean size, and the wall and CPU time over plain per
dump; then the last round's dump sizes by program.  --runs and --keep do
not apply to it; the source is kept in BUILD/real/src as run-real.py's.

Each small program times its own loop (CLOCK_MONOTONIC, and the CPU time its
children used: RUSAGE_CHILDREN), so Python's start-up is not in the
figures.  Printed: the median over the rounds of the wall time per run
(min-max) and of the CPU time per run (steadier than the wall time on a
loaded machine), the instrumented/plain ratios of the medians, and the
mean dump size per process.  Dumps go to a directory emptied before each run
(--keep: a new directory per run, all removed at the end), with
INSTR_LOG=none.

--user UID runs everything as that uid (setpriv, as root).  XDG_RUNTIME_DIR
is a directory of the benchmark's own (so the calibration cache is not
one that other jobs on the machine, running another build, keep
rewriting), owned by the user it runs as.

Usage: bench/many-process.py --build BUILD [--runs 200] [--rounds 5]
       [--user UID] [--only exec|fork|spawn|suite] [--keep] [--before OTHER_BUILD/plugin/instr.so]
       [--before-env VAR=VALUE ...]
"""
import argparse, glob, os, re, shutil, statistics, subprocess, sys, tempfile, time

import benchutil

SOURCES = {
    "hello.c": r'''/* hello.c - the short process: two instrumented calls and one line. */
#include <stdio.h>
static __attribute__((noinline)) void greet(const char *who) { printf("hello, %s\n", who); }
int main(void) { greet("world"); return 0; }
''',
    "spawn-loop.c": r'''/* spawn-loop.c - posix_spawns argv[2] argv[1] times, one after the
 * other, and prints the nanoseconds the whole loop took, wall and the
 * children's CPU (user + system). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
extern char **environ;
static __attribute__((noinline)) int run_one(char *exe)
{
    pid_t pid;
    char *argv[] = {exe, NULL};
    if (posix_spawn(&pid, exe, NULL, NULL, argv, environ))
        return -1;
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        return -1;
    return 0;
}
int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[1]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        if (run_one(argv[2]))
            return 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    fprintf(stderr, "%lld %lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec),
            (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
    return 0;
}
''',
    "fork-loop.c": r'''/* fork-loop.c - a server that forks a child per request: argv[1]
 * children one after the other, each handles its request and _exits at
 * once; prints the nanoseconds the whole loop took, wall and the
 * children's CPU (user + system). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile long answer;
static __attribute__((noinline)) void handle(long request) { answer = request * 2; }
int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    long n = atol(argv[1]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            handle(i);
            _exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    fprintf(stderr, "%lld %lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec),
            (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
    return 0;
}
''',
}


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def build_all(src, out, plugins):
    """Every program once per build (name -> extra flags): out/NAME/prog."""
    exes = {}
    for name, flags in plugins.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for f in SOURCES:
            prog = os.path.join(d, f[:-2])
            sh(["gcc", "-O2", "-g", *flags, "-o", prog, os.path.join(src, f)])
        exes[name] = d
    return exes


def once(cmd, env, d, keep=False):
    """One timed loop in directory d (emptied first, or with keep a new
    directory: the dumps stay until the end): (wall ns, children's CPU ns,
    dump bytes, dumps)."""
    if keep:
        n = 0
        while os.path.exists(f"{d}.{n}"):
            n += 1
        d = f"{d}.{n}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o1777)
    r = sh(cmd, env=dict(env, INSTR_OUTPUT=os.path.join(d, "%e.%p.instr")), cwd=d)
    wall, cpu = map(int, r.stderr.strip().splitlines()[-1].split())
    dumps = [os.path.join(d, f) for f in os.listdir(d) if ".instr" in f]
    size = sum(os.path.getsize(f) for f in dumps)
    return wall, cpu, size, len(dumps)


# What jansson's configure finds on glibc (its jansson_config.h.in filled
# in, and the defines its sources test for jansson_private_config.h).
JANSSON_CONFIG = {"json_inline": "inline", "json_have_long_long": "1", "json_have_localeconv": "1",
                  "json_have_atomic_builtins": "1", "json_have_sync_builtins": "1"}
JANSSON_PRIVATE = """/* jansson_private_config.h - what jansson's configure finds on glibc. */
""" + "".join(f"#define {d} 1\n" for d in (
    "HAVE_ENDIAN_H", "HAVE_FCNTL_H", "HAVE_LOCALE_H", "HAVE_SCHED_H", "HAVE_UNISTD_H", "HAVE_SYS_PARAM_H",
    "HAVE_SYS_STAT_H", "HAVE_SYS_TIME_H", "HAVE_SYS_TYPES_H", "HAVE_STDINT_H", "HAVE_CLOSE", "HAVE_GETPID",
    "HAVE_GETTIMEOFDAY", "HAVE_LOCALECONV", "HAVE_OPEN", "HAVE_READ", "HAVE_SCHED_YIELD", "HAVE_SETLOCALE",
    "HAVE_STRTOLL", "HAVE_SYNC_BUILTINS", "HAVE_ATOMIC_BUILTINS", "HAVE_INT32_T", "HAVE_UINT32_T",
    "HAVE_UINT16_T", "HAVE_UINT8_T", "HAVE_SSIZE_T", "USE_URANDOM")) + "#define INITIAL_HASHTABLE_ORDER 3\n"


def jansson_builds(cache, out, builds):
    """Debian's jansson source (under cache/src, fetched once) built once
    per build (name -> extra flags) under out/NAME, laid out as its
    autotools build tree: src/.libs/libjansson.so (for the api suite's
    check-exports), test/bin/json_process, test/suites/api/test_*.
    Returns (source tree, {name: out/NAME})."""
    rr = benchutil.run_real()
    top = os.path.dirname(os.path.dirname(
        rr.fetch_debian_source(cache, "jansson", os.path.join("jansson-*", "test", "run-suites"))))
    gen = os.path.join(out, "include")
    os.makedirs(gen, exist_ok=True)
    with open(os.path.join(top, "src", "jansson_config.h.in")) as f:
        text = re.sub(r"@(\w+)@", lambda m: JANSSON_CONFIG.get(m.group(1), m.group(0)), f.read())
    with open(os.path.join(gen, "jansson_config.h"), "w") as f:
        f.write(text)
    with open(os.path.join(gen, "jansson_private_config.h"), "w") as f:
        f.write(JANSSON_PRIVATE)
    # libtool's -export-symbols-regex '^json_|^jansson_' as a version script.
    with open(os.path.join(gen, "libjansson.map"), "w") as f:
        f.write("{ global: json_*; jansson_*; local: *; };\n")
    cflags = ["-O2", "-g", "-DHAVE_CONFIG_H", "-I" + gen, "-I" + os.path.join(top, "src")]
    trees = {}
    for name, flags in builds.items():
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        objs = []
        for c in sorted(glob.glob(os.path.join(top, "src", "*.c"))):
            o = os.path.join(d, "src", os.path.basename(c)[:-2] + ".o")
            os.makedirs(os.path.dirname(o), exist_ok=True)
            sh(["gcc", *cflags, "-fPIC", *flags, "-c", "-o", o, c])
            objs.append(o)
        os.makedirs(os.path.join(d, "src", ".libs"))
        sh(["gcc", "-shared", "-fPIC", *flags, "-o", os.path.join(d, "src", ".libs", "libjansson.so"),
            "-Wl,-soname,libjansson.so.4", "-Wl,--version-script," + os.path.join(gen, "libjansson.map"), *objs])
        progs = [(os.path.join(top, "test", "bin", "json_process.c"), os.path.join(d, "test", "bin"))]
        progs += [(c, os.path.join(d, "test", "suites", "api"))
                  for c in sorted(glob.glob(os.path.join(top, "test", "suites", "api", "test_*.c")))]
        for c, where in progs:
            os.makedirs(where, exist_ok=True)
            sh(["gcc", *cflags, *flags, "-o", os.path.join(where, os.path.basename(c)[:-2]), c, *objs])
        # run-suites writes its logs in the directory it runs in.
        os.chmod(os.path.join(d, "test"), 0o1777)
        trees[name] = d
    return top, trees


def suite_once(cmd, env, cwd, d):
    """One run of the suite, dumps to d (emptied first): (wall s, CPU s of
    its process tree, dump bytes, dumps, test cases passed, the dumps'
    sizes by program: json_process, test_*).  A failing suite ends the
    benchmark with its output."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o1777)
    log = d + ".log"
    with open(log, "w") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=dict(env, INSTR_OUTPUT=os.path.join(d, "%e.%p.instr")), cwd=cwd,
                             stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    with open(log) as f:
        text = f.read()
    if os.waitstatus_to_exitcode(status) or not re.search(r"^\d+ test suites passed$", text, re.M):
        raise SystemExit(f"jansson's test suite failed ({' '.join(cmd)} in {cwd}):\n{text[-3000:]}")
    dumps = [os.path.join(d, f) for f in os.listdir(d) if ".instr" in f]
    passed = sum(line.count(".") for line in text.splitlines() if re.fullmatch(r"[.S]+", line))
    by = {}
    for f in dumps:
        name = os.path.basename(f).split(".")[0]
        by.setdefault("test_*" if name.startswith("test_") else name, []).append(os.path.getsize(f))
    return wall, ru.ru_utime + ru.ru_stime, sum(os.path.getsize(f) for f in dumps), len(dumps), passed, by


def suite_processes(cmd, env, cwd, programs, d):
    """Processes one run of the suite made, under strace -f (execve only,
    through its seccomp filter): (all, those that exec'd one of programs,
    the test programs built)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o1777)
    trace = os.path.join(d, "strace.txt")
    i = cmd.index("sh")
    sh([*cmd[:i], "strace", "--seccomp-bpf", "-f", "-q", "-e", "trace=execve", "-e", "signal=none", "-o", trace,
        *cmd[i:]], env=dict(env, INSTR_OUTPUT=os.path.join(d, "%e.%p.instr")), cwd=cwd)
    with open(trace) as f:
        text = f.read()
    # strace pads a pid shorter than the last one it saw.
    ended = len(re.findall(r"^\d+\s+\+\+\+ (exited|killed)", text, re.M))
    execs = re.findall(r'^\d+\s+execve\("([^"]*)".* = 0$', text, re.M)
    return ended, sum(os.path.basename(x) in programs for x in execs)


def suite(a, work, env, as_user, builds):
    """The --only suite case: jansson's test suite per build, interleaved."""
    cache = os.path.join(os.path.abspath(a.build), "real")
    top, trees = jansson_builds(cache, os.path.join(work, "jansson"), builds)
    for root, dirs, _ in os.walk(os.path.join(work, "jansson")):
        for x in dirs:
            os.chmod(os.path.join(root, x), os.stat(os.path.join(root, x)).st_mode | 0o755)
    run_env = dict(env, top_srcdir=top)
    cmd = [*as_user, "sh", os.path.join(top, "test", "run-suites")]
    programs = {"json_process", *(os.path.basename(c)[:-2] for c in
                                  glob.glob(os.path.join(top, "test", "suites", "api", "test_*.c")))}
    counts = {}
    for b in builds:
        counts[b] = suite_processes(cmd, dict(run_env, top_builddir=trees[b]), os.path.join(trees[b], "test"),
                                    programs, os.path.join(work, "run"))
    walls = {b: [] for b in builds}
    cpus = {b: [] for b in builds}
    sizes = {b: [] for b in builds}
    ndumps = {b: [] for b in builds}
    passed = set()
    last = {}
    for _ in range(a.rounds):
        for b in builds:
            wall, cpu, size, n, ok, last[b] = suite_once(cmd, dict(run_env, top_builddir=trees[b]),
                                                         os.path.join(trees[b], "test"), os.path.join(work, "run"))
            walls[b].append(wall)
            cpus[b].append(cpu)
            ndumps[b].append(n)
            passed.add(ok)
            if n:
                sizes[b].append(size / n)
    who = f"uid {a.user}" if a.user is not None else "root"
    print(f"== jansson {os.path.basename(top).split('-', 1)[1]}'s test suite (test/run-suites), "
          f"{a.rounds} interleaved rounds, as {who}; median (min-max); CPU: the suite's process tree, user+system; "
          f"test cases passed: {', '.join(map(str, sorted(passed)))} (every build and round)")
    print(f"{'build':7} {'wall s':>20} {'x plain':>8} {'CPU s':>20} {'x plain':>8} {'procs':>6} {'ours':>5} "
          f"{'dumps':>6} {'dump KB':>8} {'+wall ms/dump':>14} {'+CPU ms/dump':>13}")
    pw, pc = statistics.median(walls["plain"]), statistics.median(cpus["plain"])
    for b in builds:
        w, c = statistics.median(walls[b]), statistics.median(cpus[b])
        n = statistics.median(ndumps[b])
        kb = f"{statistics.mean(sizes[b]) / 1024:.1f}" if sizes[b] else ""
        per = f"{(w - pw) / n * 1e3:14.3f} {(c - pc) / n * 1e3:13.3f}" if n else ""
        print(f"{b:7} {w:7.3f} ({min(walls[b]):.3f}-{max(walls[b]):.3f}) {w / pw:8.2f} "
              f"{c:7.3f} ({min(cpus[b]):.3f}-{max(cpus[b]):.3f}) {c / pc:8.2f} {counts[b][0]:6} {counts[b][1]:5} "
              f"{n:6g} {kb:>8} {per}")
    for b in builds:
        if last[b]:
            print(f"{b}: dumps of the last round, KiB: " + "; ".join(
                f"{k} {len(v)}, median {statistics.median(v) / 1024:.1f} ({min(v) / 1024:.1f}-{max(v) / 1024:.1f})"
                for k, v in sorted(last[b].items())))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="instr build directory (plugin/instr.so)")
    ap.add_argument("--before", help="another plugin (instr.so) measured in the same rounds")
    ap.add_argument("--before-env", action="append", default=[], metavar="VAR=VALUE",
                    help="the 'before' runs with this variable set (repeatable); without --before, the "
                         "instrumented build again, e.g. INSTR_PERF_AFTER=0 against the default")
    ap.add_argument("--runs", type=int, default=200, help="processes per loop (default 200)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--user", type=int, help="run as this uid (setpriv; as root)")
    ap.add_argument("--only", choices=("exec", "fork", "spawn", "suite"),
                    help="one case; suite: jansson's test suite (not run otherwise)")
    ap.add_argument("--keep", action="store_true",
                    help="keep every run's dumps until the end (a new directory per run): on an ext4 without "
                         "a journal, creating a file right after others were deleted skips the inodes freed in "
                         "the last seconds, one inode-table read each (recently_deleted)")
    a = ap.parse_args()
    plugin = os.path.join(os.path.abspath(a.build), "plugin", "instr.so")
    builds = {"plain": [], "instr": [f"-fplugin={plugin}"]}
    if a.before or a.before_env:
        builds["before"] = [f"-fplugin={os.path.abspath(a.before) if a.before else plugin}"]
    before_env = dict(v.split("=", 1) for v in a.before_env if "=" in v)
    if len(before_env) != len(a.before_env):
        ap.error("--before-env takes VAR=VALUE")
    if before_env and a.only == "suite":
        ap.error("--before-env is for the small programs, not --only suite")
    as_user = ["setpriv", f"--reuid={a.user}", f"--regid={a.user}", "--clear-groups"] if a.user is not None else []
    env = dict(os.environ, INSTR_LOG="none")
    if a.user is not None:
        env.pop("XDG_RUNTIME_DIR", None)
    n = str(a.runs)
    with tempfile.TemporaryDirectory(prefix="instr-many-") as work:
        os.chmod(work, 0o755)
        # The calibration cache of this benchmark's own: other jobs on the
        # machine running another build would replace a shared one's
        # record (one per user), and every process would measure again.
        xdg = os.path.join(work, "xdg")
        os.makedirs(xdg, mode=0o700)
        if a.user is not None:
            os.chown(xdg, a.user, a.user)
        env["XDG_RUNTIME_DIR"] = xdg
        if a.only == "suite":
            return suite(a, work, env, as_user, builds)
        src = os.path.join(work, "src")
        os.makedirs(src)
        for f, text in SOURCES.items():
            with open(os.path.join(src, f), "w") as fh:
                fh.write(text)
        exes = build_all(src, os.path.join(work, "bin"), builds)
        for d in exes.values():
            os.chmod(d, 0o755)
        driver = os.path.join(exes["plain"], "spawn-loop")
        cases = {
            "exec hello": lambda b: [driver, n, os.path.join(exes[b], "hello")],
            "fork per request": lambda b: [os.path.join(exes[b], "fork-loop"), n],
            "spawn loop": lambda b: [os.path.join(exes[b], "spawn-loop"), n, os.path.join(exes[b], "hello")],
        }
        if a.only:
            cases = {k: v for k, v in cases.items() if k.startswith(a.only)}
        times = {(c, b): [] for c in cases for b in builds}
        cpus = {(c, b): [] for c in cases for b in builds}
        sizes = {(c, b): [] for c in cases for b in builds}
        for _ in range(a.rounds):
            for c, cmd in cases.items():
                for b in builds:
                    wall, cpu, size, count = once(as_user + cmd(b), dict(env, **before_env) if b == "before" else env,
                                                  os.path.join(work, "run"), a.keep)
                    times[c, b].append(wall / a.runs / 1e6)
                    cpus[c, b].append(cpu / a.runs / 1e6)
                    if count:
                        sizes[c, b].append(size / count)
    who = f"uid {a.user}" if a.user is not None else "root"
    print(f"== many short processes: {a.runs} per loop, {a.rounds} interleaved rounds, as {who}; "
          f"ms per process, median (min-max); CPU: the children's user+system")
    print(f"{'case':18} {'build':7} {'wall ms/run':>22} {'x plain':>8} {'CPU ms/run':>11} {'x plain':>8} {'dump KB':>8}")
    for c in cases:
        plain = statistics.median(times[c, "plain"])
        plain_cpu = statistics.median(cpus[c, "plain"])
        for b in builds:
            v = times[c, b]
            med = statistics.median(v)
            kb = f"{statistics.mean(sizes[c, b]) / 1024:.1f}" if sizes[c, b] else ""
            cpu = statistics.median(cpus[c, b])
            print(f"{c:18} {b:7} {med:9.3f} ({min(v):.3f}-{max(v):.3f}) {med / plain:8.2f} {cpu:11.3f} "
                  f"{cpu / plain_cpu:8.2f} {kb:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

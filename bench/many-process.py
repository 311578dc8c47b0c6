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
Each program times its own loop (CLOCK_MONOTONIC, and the CPU time its
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
       [--user UID] [--only exec|fork|spawn] [--keep] [--before OTHER_BUILD/plugin/instr.so]
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile

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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="instr build directory (plugin/instr.so)")
    ap.add_argument("--before", help="another plugin (instr.so) measured in the same rounds")
    ap.add_argument("--runs", type=int, default=200, help="processes per loop (default 200)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--user", type=int, help="run as this uid (setpriv; as root)")
    ap.add_argument("--only", choices=("exec", "fork", "spawn"))
    ap.add_argument("--keep", action="store_true",
                    help="keep every run's dumps until the end (a new directory per run): on an ext4 without "
                         "a journal, creating a file right after others were deleted skips the inodes freed in "
                         "the last seconds, one inode-table read each (recently_deleted)")
    a = ap.parse_args()
    plugin = os.path.join(os.path.abspath(a.build), "plugin", "instr.so")
    builds = {"plain": [], "instr": [f"-fplugin={plugin}"]}
    if a.before:
        builds["before"] = [f"-fplugin={os.path.abspath(a.before)}"]
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
                    wall, cpu, size, count = once(as_user + cmd(b), env, os.path.join(work, "run"), a.keep)
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

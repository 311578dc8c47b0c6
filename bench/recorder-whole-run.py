#!/usr/bin/env python3
"""The recorder judged by the whole run (issue 24): wall and CPU time of
the program and every process it left behind (a helper process of the
runtime would count), plain build against instrumented, with the `Runtime:` line of
instr-report beside them as a diagnostic.

Programs: Lua 5.4 from Debian's source running bench/real/bench.lua (one
thread; the source is fetched as bench/run-real.py does), examples/primes
(two workers: both cores busy) and examples/shapes.  Each is built plain
and with the plugin of every --build given (e.g. main's build as "before"
and this one as "after"); each instrumented build runs with the runtime's
defaults and with every --env given (e.g. INSTR_DETECTOR=none), as root and
as --user (uid 65534 by default).

CPU time: this script is a child subreaper (PR_SET_CHILD_SUBREAPER), so a
helper the program leaves is reparented to it and reaped here; the CPU
time is the growth of RUSAGE_CHILDREN over the run, every descendant
counted.  Runs are interleaved (every variant once per round); medians,
with min-max.  Not gated by CI.

Usage: bench/recorder-whole-run.py --build BUILD [--build OTHER ...]
       [--env INSTR_DETECTOR=none] [--runs 5] [--only lua,primes,shapes]
       [--user 65534] [--no-root]"""
import argparse, ctypes, glob, os, re, resource, shutil, statistics, subprocess, sys, tempfile, time

from benchutil import run_real

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WALL = 0x40000000  # __WALL: clone children too


def reap_all():
    while True:
        try:
            os.waitpid(-1, WALL)
        except ChildProcessError:
            return


def whole_run(cmd, env, cwd):
    """Wall seconds and CPU seconds of cmd and all it left behind."""
    reap_all()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    p.wait()
    wall = time.perf_counter() - t0
    reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"{cmd} failed ({p.returncode}): {err}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def runtime_line(report, dump):
    """(runtime ms, duration ms) from instr-report's text header."""
    out = subprocess.run([report, "--verbose", dump], capture_output=True, text=True).stdout
    def ms(pat):
        m = re.search(pat + r"\s+([0-9.,]+)\s*(ns|us|µs|ms|s)\b", out)
        if not m:
            return 0.0
        v = float(m.group(1).replace(",", ""))
        return v * {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    return ms(r"Runtime:"), ms(r"Duration:")


def mmm(v, scale=1.0, fmt="%.0f"):
    if not v:
        return "-"
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(v) * scale, min(v) * scale, max(v) * scale)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", required=True,
                    help="an instr build directory (plugin/instr.so, bin/instr-report); repeat to compare")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE: one more run of each instr build with it")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="lua,primes,shapes")
    ap.add_argument("--user", type=int, default=65534)
    ap.add_argument("--no-root", action="store_true")
    ap.add_argument("--no-user", action="store_true")
    a = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    builds = [os.path.abspath(b) for b in a.build]
    cache = os.path.join(builds[0], "real")
    os.makedirs(cache, exist_ok=True)
    progs = []
    only = a.only.split(",")
    if "lua" in only:
        rr = run_real()
        files, cflags, libs = rr.lua_sources(rr.fetch_lua(cache))
        progs.append(("lua", "gcc", files, cflags, libs, [os.path.join(HERE, "real", "bench.lua"), "1"]))
    if "primes" in only:
        progs.append(("primes", "gcc", [os.path.join(ROOT, "examples", "primes.c")], ["-pthread"], [], []))
    if "shapes" in only:
        progs.append(("shapes", "g++", [os.path.join(ROOT, "examples", "shapes.cpp")], ["-std=c++14"], [], []))
    users = ([] if a.no_root else [None]) + ([] if a.no_user else [a.user])
    work = tempfile.mkdtemp(prefix="instr-whole-run.")
    os.chmod(work, 0o1777)
    try:
        for name, cc, files, cflags, libs, args in progs:
            exes = {"plain": os.path.join(work, name + "-plain")}
            subprocess.run([cc, "-O2", *cflags, "-o", exes["plain"], *files, *libs], check=True)
            variants = [("plain", exes["plain"], {}, None)]
            for i, b in enumerate(builds):
                exe = os.path.join(work, f"{name}-instr{i}")
                subprocess.run([cc, "-O2", *cflags, "-fplugin=" + os.path.join(b, "plugin", "instr.so"), "-o", exe,
                                *files, *libs], check=True)
                report = os.path.join(b, "bin", "instr-report")
                tag = os.path.basename(os.path.dirname(b)) if os.path.basename(b) == "build" else os.path.basename(b)
                variants.append((f"instr[{tag}]", exe, {}, report))
                for e in a.env:
                    k, v = e.split("=", 1)
                    variants.append((f"instr[{tag}] {e}", exe, {k: v}, report))
            for uid in users:
                who = "root" if uid is None else f"uid {uid}"
                res = {v[0]: {"wall": [], "cpu": [], "rt": [], "dur": []} for v in variants}
                for r in range(a.runs):
                    for label, exe, extra, report in variants:
                        env = dict(os.environ, **extra)
                        d = tempfile.mkdtemp(dir=work)
                        os.chmod(d, 0o777)
                        env["INSTR_OUTPUT"] = os.path.join(d, "run.%p.instr")
                        cmd = [exe, *args] if uid is None else \
                            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", exe, *args]
                        wall, cpu = whole_run(cmd, env, d)
                        res[label]["wall"].append(wall)
                        res[label]["cpu"].append(cpu)
                        if report:
                            dumps = sorted(glob.glob(os.path.join(d, "*.instr")))
                            if dumps:
                                rt, dur = runtime_line(report, dumps[0])
                                res[label]["rt"].append(rt)
                                res[label]["dur"].append(dur)
                        shutil.rmtree(d)
                print(f"\n{name}, {who}, {a.runs} interleaved runs: median (min-max)")
                print(f"  {'variant':36} {'wall ms':>20} {'CPU ms (all tasks)':>20} {'Runtime: ms':>18} {'% of Duration':>14}")
                for label, _, _, _ in variants:
                    x = res[label]
                    pct = [rt / du * 100 for rt, du in zip(x["rt"], x["dur"]) if du]
                    print(f"  {label:36} {mmm(x['wall'], 1e3):>20} {mmm(x['cpu'], 1e3):>20} "
                          f"{mmm(x['rt'], 1, '%.1f'):>18} {mmm(pct, 1, '%.1f'):>14}")
                sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

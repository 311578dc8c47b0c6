#!/usr/bin/env python3
"""check-count-e2e.py - an end-to-end program (tests/e2e) built in count
mode and in time mode, both run (through a runner: qemu-aarch64-static):
every instrumented function's calls in the count-mode dumps equal the
time-mode dumps' (each run's dumps merged: fork's child too), and the
count dumps say they are count mode.  The calls of uninstrumented
functions (the time report's pseudo entries) are left out: the programs
spin on clock_gettime for a time, so their number differs by run.

  check-count-e2e.py --count EXE --time EXE --report INSTR-REPORT [--runner CMD]"""
import argparse, glob, json, os, shlex, subprocess, sys, tempfile


def calls(exe, report, runner):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%p.instr"))
        proc = subprocess.run([*shlex.split(runner), os.path.abspath(exe)], cwd=work, env=env, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout + proc.stderr)
            raise SystemExit(f"{exe} exited {proc.returncode}")
        dumps = sorted(glob.glob(os.path.join(work, "*.instr")))
        if not dumps:
            raise SystemExit(f"{exe}: no dump")
        out = subprocess.run([report, "--format", "json", *dumps], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            raise SystemExit(f"instr-report exited {out.returncode}")
        rep = json.loads(out.stdout)
        return rep.get("mode"), len(dumps), {f["mangled"]: f["calls"] for f in rep["functions"] if not f.get("pseudo")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", required=True)
    ap.add_argument("--time", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--runner", default="")
    a = ap.parse_args()
    cmode, cdumps, counted = calls(a.count, a.report, a.runner)
    tmode, tdumps, timed = calls(a.time, a.report, a.runner)
    bad = []
    if cmode != "count":
        bad.append(f"the count build's report says mode {cmode!r}")
    if cdumps != tdumps:
        bad.append(f"{cdumps} count dumps, {tdumps} time dumps")
    if not timed:
        bad.append("no function in the time dumps")
    for name in sorted(set(counted) | set(timed)):
        c, t = counted.get(name), timed.get(name)
        print(f"{name}: count {c}, time {t}")
        if c != t:
            bad.append(f"{name}: {c} counted, {t} timed")
    for b in bad:
        print("FAIL:", b)
    print(f"{len(timed)} functions, {sum(timed.values())} calls; {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""instr-sample's overhead on a real program, beside perf record, in one
interleaved run (issue 9 target: <= 2 % of wall time over the bare run at
1 kHz).  Not gated by CI: the numbers go in the notes.

The program is Lua 5.4 built normally (-O2, Debian's source fetched by
bench/run-real.py's fetch_lua into CACHE/src once) running
bench/real/bench.lua.  Variants, one run of each per round, rounds
interleaved so the host's load hits all alike:

  bare                                   lua bench.lua SCALE
  instr-sample --rate 1000               (CPU-clock per thread, 8 KiB stack copy, DWARF unwinding)
  perf record -F 1000 -e cpu-clock --call-graph dwarf
  perf record -F 1000 -e cpu-clock -g    (frame pointers: the cheap peer)
  instr-sample --stack-size 4096, 1024   (what copying 8 KiB a sample costs)
  perf record -F 1000 -e cpu-clock       (no stacks: the kernel's sampling floor)

Reported: median wall and CPU seconds of the whole command (the program's
and the profiler's, so instr-sample's own unwinding counts), the ratio to
bare; the program's own CPU seconds (bench/child-rusage.c around it, under the
profiler: what sampling costs inside the program, the kernel's stack copies
included); and the median of each round's ratio to that round's bare run
(pairs taken seconds apart: less of the host's load drift than a ratio of
medians).

  bench/sample-overhead.py --sample build/bin/instr-sample --report build/bin/instr-report \\
      [--runs 7] [--scale 1] [--cache build/bench/real]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchutil import run_real, timed

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--scale", default="1")
    ap.add_argument("--cache", default=os.path.join(os.path.dirname(HERE), "build", "bench", "real"))
    ap.add_argument("--variants", help="comma-separated names (or prefixes) of the variants to run beside bare")
    a = ap.parse_args()
    a.sample, a.report, a.cache = os.path.abspath(a.sample), os.path.abspath(a.report), os.path.abspath(a.cache)
    rr = run_real()
    files, cflags, libs = rr.lua_sources(rr.fetch_lua(a.cache))
    work = tempfile.mkdtemp(prefix="instr-sample-overhead-")
    try:
        lua = os.path.join(work, "lua")
        rr.sh(["gcc", "-O2", "-g", *cflags, "-o", lua, *files, *libs])
        tfile = os.path.join(work, "time.txt")
        rusage = os.path.join(work, "child-rusage")
        rr.sh(["gcc", "-O2", "-o", rusage, os.path.join(HERE, "child-rusage.c")])
        # the program's own wall and CPU, wherever it runs (GNU time waits in wait4: no CPU of its own)
        base = [rusage, tfile, lua, os.path.join(HERE, "real", "bench.lua"), a.scale]
        variants = {"bare": base,
                    "instr-sample --rate 1000": [a.sample, "--rate", "1000", "-o", os.path.join(work, "s.%p.instr"),
                                                 *base],
                    # what the stack copy costs: the same with 1 KiB of stack
                    # (unwinding then stops early; its samples are not compared)
                    "instr-sample --stack-size 4096": [a.sample, "--rate", "1000", "--stack-size", "4096", "-o",
                                                       os.path.join(work, "t.%p.instr"), *base],
                    "instr-sample --stack-size 1024": [a.sample, "--rate", "1000", "--stack-size", "1024", "-o",
                                                       os.path.join(work, "t.%p.instr"), *base]}
        perf = shutil.which("perf")
        pdata = os.path.join(work, "p.data")
        if perf and subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-o", pdata, "true"],
                                   capture_output=True).returncode == 0:
            variants["perf record --call-graph dwarf"] = [perf, "record", "-q", "-F", "1000", "-e", "cpu-clock",
                                                          "--call-graph", "dwarf", "-o", pdata, *base]
            variants["perf record -g (fp)"] = [perf, "record", "-q", "-F", "1000", "-e", "cpu-clock", "-g",
                                               "-o", pdata, *base]
            # the floor: the same timer, the program counter alone
            variants["perf record (no stacks)"] = [perf, "record", "-q", "-F", "1000", "-e", "cpu-clock",
                                                   "-o", pdata, *base]
        else:
            print("perf record not usable here: compared with the bare run only")
        if a.variants:
            keep = [v.strip() for v in a.variants.split(",")]
            variants = {k: v for k, v in variants.items() if k == "bare" or any(k.startswith(p) for p in keep)}
        res = {k: [] for k in variants}
        prog = {k: [] for k in variants}  # (wall, CPU) of the program alone
        info = []
        for i in range(a.runs):
            for name, cmd in variants.items():
                for f in os.listdir(work):
                    if f.startswith(("s.", "t.", "p.data")):
                        os.unlink(os.path.join(work, f))
                res[name].append(timed(cmd, work))
                with open(tfile) as f:
                    e, u, sy = (float(x) for x in f.read().split()[-3:])
                prog[name].append((e, u + sy))
                if name == "instr-sample --rate 1000":
                    dumps = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("s.")]
                    j = json.loads(subprocess.run([a.report, "--format", "json", *dumps], capture_output=True,
                                                  text=True).stdout)
                    s = j["session"]
                    info.append((s["rate_achieved_hz"], s["samples"], s["lost"], s["truncated"]))
            print("round %d/%d done" % (i + 1, a.runs), file=sys.stderr)
        bw = statistics.median(w for w, _ in res["bare"])
        bc = statistics.median(c for _, c in res["bare"])
        print("lua 5.4 bench.lua %s, %d interleaved rounds, medians (%d CPUs)" % (a.scale, a.runs, os.cpu_count()))
        pc0 = statistics.median(c for _, c in prog["bare"])
        print("%-34s %8s %7s %8s %7s %9s %7s %9s   %s" % ("", "wall s", "x bare", "CPU s", "x bare", "prog CPU",
                                                        "x bare", "paired", "all walls (min-max)"))
        for name, v in res.items():
            w = statistics.median(x for x, _ in v)
            c = statistics.median(x for _, x in v)
            pc = statistics.median(x for _, x in prog[name])
            paired = statistics.median(x[0] / b[0] for x, b in zip(v, res["bare"]))
            print("%-34s %8.3f %7.3f %8.3f %7.3f %9.3f %7.3f %9.3f   %.2f-%.2f" % (
                name, w, w / bw, c, c / bc, pc, pc / pc0, paired, min(x for x, _ in v), max(x for x, _ in v)))
        print("(paired: median over rounds of wall / that round's bare wall)")
        if info:
            print("instr-sample: achieved Hz %s; samples %s; lost %s; truncated %s" % tuple(
                [round(x[k]) for x in info] for k in range(4)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

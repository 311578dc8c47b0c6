#!/usr/bin/env python3
"""Per-hook cost of each detector set against `none`, side by side: the
runs of every set are interleaved and each number is the median of those
runs (each run itself the median of 9 batches).  Two workloads: an
enter+exit pair around nothing (the common case), and a pair around one
getppid (what an interval with a syscall costs; SUD's trap).
Usage: bench-detectors.py DET-TEST [--runs N]"""
import argparse, os, statistics, subprocess

ap = argparse.ArgumentParser()
ap.add_argument("det_test")
ap.add_argument("--runs", type=int, default=7)
a = ap.parse_args()
sets = ["none", "rseq_cs", "sud", "perf", "rseq_cs+sud", "auto"]
for label, extra in (("enter+exit, empty interval", {}), ("enter+getppid+exit", {"DET_BENCH_SYSCALL": "1"})):
    res = {s: [] for s in sets}
    for _ in range(a.runs):
        for s in sets:
            env = dict(os.environ, INSTR_DETECTOR=s, **extra)
            out = subprocess.run([a.det_test, "bench"], env=env, capture_output=True, text=True, check=True)
            res[s].append(float(out.stdout.split()[-1]))
    base = statistics.median(res["none"])
    print(f"{label} (ns per pair, median of {a.runs} interleaved runs):")
    for s in sets:
        m = statistics.median(res[s])
        print(f"  {s:<12} {m:8.2f}   {m - base:+8.2f} vs none   ({m / 2:.2f} ns/hook)")

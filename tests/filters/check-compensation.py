#!/usr/bin/env python3
"""check-compensation.py - probe-overhead compensation under the record-time
filters (issue 37 §3): with a filter set every hook takes the slow path,
and the cost subtracted must be that path's.

Runs compensation.c (a loop calling a 1-ns leaf) RUNS times without a
filter and under INSTR_TRIGGER (on the function enclosing the loop, so
recording is on), INSTR_DEPTH (deep enough to record the leaf) and
INSTR_MIN_DURATION (short enough to keep it), interleaved, each run
calibrating afresh.  Checks:
  - every leaf call is recorded, and the dump says which path its hook
    costs measured (JSON hook_cost_path: "fast" unfiltered, "filtering"
    under a filter);
  - over the runs' medians, the leaf's compensated Application Exclusive a
    call under each filter exceeds the unfiltered one's by less than half
    of what one whole call's hooks cost unfiltered (the unfiltered dump's
    call, enter, exit and return).  Subtracting the fast path's cost left
    the slow path's excess in the leaf: 2-3 times that bound (a 15-ns leaf
    at 90-145 ns); the slow path's cost leaves it within noise.
Application time leaves out the intervals the OS acted in (a loaded
machine's preemptions); ticks throughout, so no clock conversion.

A run that switches recording off and on before the loop makes the
hooks of this build (not switchable) take the slow path from then on,
with the fast path's cost measured at start: the report says so (JSON
slow_path_unmeasured, a line under Compensation), and only then.

  check-compensation.py --exe EXE --report INSTR-REPORT --work DIR [--runs N]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures  # noqa: E402

CALLS = 500000
FILTERS = {
    "none": {},
    "INSTR_TRIGGER": {"INSTR_TRIGGER": "work:on"},
    "INSTR_DEPTH": {"INSTR_DEPTH": "8"},
    "INSTR_MIN_DURATION": {"INSTR_MIN_DURATION": "1"},
}
KINDS = ("call", "enter", "exit", "return")


def one_run(args, name, env_extra, r, switch=False):
    dump = os.path.join(args.work, f"{name}.{r}.instr")
    env = dict(os.environ, INSTR_OUTPUT=dump, INSTR_CALIBRATE="fresh", **env_extra)
    argv = [args.exe, str(CALLS)] + (["switch"] if switch else [])
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{name} run {r}: exit status 0")
    rep = subprocess.run([args.report, "--format", "json", dump], capture_output=True, text=True, timeout=120)
    check(rep.returncode == 0, f"{name} run {r}: report exit status 0 {rep.stderr.strip()}")
    d = json.loads(rep.stdout)
    prog = d["session"]["programs"][0]
    leaf = [f for f in d["functions"] if f["name"] == "leaf"]
    check(len(leaf) == 1 and leaf[0]["calls"] == CALLS, f"{name} run {r}: all {CALLS} leaf calls recorded")
    want = "fast" if not env_extra else "filtering"
    check(prog.get("hook_cost_path") == want, f"{name} run {r}: hook costs measured on the {want} path "
          f"(hook_cost_path {prog.get('hook_cost_path')})")
    check(prog.get("slow_path_unmeasured") is switch,
          f"{name} run {r}: slow_path_unmeasured {prog.get('slow_path_unmeasured')}")
    text = subprocess.run([args.report, dump], capture_output=True, text=True, timeout=120).stdout
    said = "the hooks took their slow path once the switch went off" in text
    check(said == switch, f"{name} run {r}: the slow path {'said' if switch else 'not said'} under Compensation")
    hc = prog.get("hook_cost") or {}
    whole = sum(hc[k]["before_ticks"] + hc[k]["after_ticks"] for k in KINDS if hc.get(k))
    per_call = leaf[0]["application_exclusive_ticks"] / CALLS if leaf else float("nan")
    os.unlink(dump)
    return per_call, whole


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    got = {name: [] for name in FILTERS}
    for r in range(args.runs):
        for name, extra in FILTERS.items():
            got[name].append(one_run(args, name, extra, r))
    # The switch: said, once is enough (no timing).
    one_run(args, "switch", {}, 0, switch=True)
    med = {name: statistics.median(v[0] for v in runs) for name, runs in got.items()}
    cost = {name: statistics.median(v[1] for v in runs) for name, runs in got.items()}
    for name, runs in got.items():
        print(f"{name}: leaf Application Exclusive a call {med[name]:.1f} ticks (median; runs "
              + " ".join(f"{v[0]:.1f}" for v in runs) + f"), a whole call's hooks {cost[name]:.1f} ticks")
    bound = cost["none"] / 2
    for name in FILTERS:
        if name == "none":
            continue
        check(med[name] - med["none"] < bound,
              f"{name}: the leaf's compensated Exclusive a call ({med[name]:.1f} ticks) within half a "
              f"whole call's unfiltered hook cost ({bound:.1f}) of the unfiltered run's ({med['none']:.1f})")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

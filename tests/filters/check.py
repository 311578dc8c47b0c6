#!/usr/bin/env python3
"""check.py - the filters' invariant (issue 38): runs invariant.cpp under
each record-time filter, trigger and switch, and holds every dump's report
(JSON) to what switchable.md promises:

  - calls recorded + calls counted as filtered = calls the program made
    (the program counts its own; the fork child's dump against the child's
    calls after the fork, main and forker aside: their frames are the
    parent's, re-entered);
  - no pseudo rows: none of the program's functions also appears as a
    call-site pseudo-frame (a call whose callee's frame went, its CALL
    staying);
  - no frame left open: no frame is open at the end of the parent (the
    child leaves by _exit from forker: at most its two), and no function but
    main, tail and the threads' bodies is charged a third of the CPU time
    of the program's 300 ms tail at 3 ms or more a call (a frame that stayed open
    is charged the rest of the run; thousands of short calls add up to
    that much on a loaded machine, one call does not);
  - no events dropped.

With the switch on the build not compiled switchable (INSTR_START=off,
INSTR_SIGNAL=USR2 and 300 signals), recording off is decided in the hooks,
and the sum holds exactly; with INSTR_START=off and triggers on the
switchable build, the triggers switch (their hooks run).
With the switch (a switchable build, INSTR_SIGNAL=USR2 and 300 signals),
calls while off are neither recorded nor counted, so the calls recorded
are at most the calls made; and a frame still running hooked when the
switch goes off records the calls it makes as call-site frames, whose
callees run unhooked: pseudo rows of the callees' names, as
switchable.md says.  The rest holds, and no switch is lost (a signal
that came inside a hook lost its switch, said as "events dropped after
recording stopped").

  check.py --exe EXE --switchable-exe EXE2 --report INSTR-REPORT --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

OPEN_OK = {"main", "tail", "worker", "storm"}


def report(tool, dump):
    r = subprocess.run([tool, "--format", "json", dump], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        raise SystemExit(f"FAIL: instr-report {dump} exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout), r.stderr


def made(text):
    out = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "made":
            out[w[1]] = int(w[2])
    return out


def check_dump(name, j, stderr, made_calls, tail_ns, child, exact, no_pseudo):
    """The failures of one dump's report, as lines."""
    fails = []
    prog = j["session"]["programs"][0]
    ours = set(made_calls)
    skip = {"main", "forker"} if child else set()
    rec = {}
    # A frame left open is charged the tail: its CPU time (exact, cpuclock),
    # else its Application time, is what the tail's own row has.  Not its
    # Elapsed time, which a loaded machine stretches for any function.
    def charged(f):
        c = f.get("cpu_inclusive_ns")
        return c if c is not None else f.get("application_inclusive_ns") or 0
    tails = [charged(f) for f in j["functions"] if f["name"].split("(")[0] == "tail" and not f.get("pseudo")]
    ref = tails[0] if tails and tails[0] > 0 else tail_ns
    for f in j["functions"]:
        f["name"] = f["name"].split("(")[0]  # C++: leaf(int)
        if f["name"] not in ours:
            continue
        if f.get("pseudo") and no_pseudo:
            fails.append(f"{name}: {f['name']} is also a pseudo row ({f['calls']} calls)")
            continue
        if f.get("pseudo"):
            continue
        rec[f["name"]] = rec.get(f["name"], 0) + f["calls"]
        incl = charged(f)
        if (f["name"] not in OPEN_OK and not (child and f["name"] in skip)
                and incl > ref / 3 and incl / max(f["calls"], 1) > ref / 100):
            fails.append(f"{name}: {f['name']} charged {incl / 1e6:.1f} ms of CPU "
                         f"(the tail has {ref / 1e6:.0f} ms): a frame left open")
    flt = prog.get("filters") or {}
    filtered = sum(flt.get(k, 0) for k in ("filtered_depth", "filtered_short", "filtered_off"))
    got = sum(n for fn, n in rec.items() if fn not in skip)
    want = sum(n for fn, n in made_calls.items() if fn not in skip)
    for fn, n in rec.items():
        if fn not in skip and n > made_calls[fn]:
            fails.append(f"{name}: {fn}: {n} calls recorded, {made_calls[fn]} made")
    if exact and got + filtered != want:
        fails.append(f"{name}: recorded {got} + filtered {filtered} = {got + filtered}, "
                     f"the program made {want}")
    if not exact and got > want:
        fails.append(f"{name}: recorded {got}, the program made {want}")
    open_end = prog.get("open_frames_at_end", 0)
    if open_end > (2 if child else 0):
        fails.append(f"{name}: {open_end} frames open at the end")
    if "dropped" in stderr:
        fails.append(f"{name}: {stderr.strip()}")
    return fails, got, filtered, want


def run(args, label, exe, env, extra=()):
    work = os.path.join(args.work, label)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    counts = os.path.join(work, "child.counts")
    e = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%p.instr"), **env)
    e.pop("INSTR_LOG", None)
    r = subprocess.run([exe, counts, *extra], env=e, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return [f"{label}: the program failed ({r.returncode}): {r.stderr}"]
    parent = made(r.stdout)
    tail_ns = int(next(l.split()[1] for l in r.stdout.splitlines() if l.startswith("tail_ns")))
    with open(counts) as f:
        child = made(f.read())
    dumps = sorted(p for p in os.listdir(work) if p.endswith(".instr"))
    if len(dumps) != 2:
        return [f"{label}: {len(dumps)} dumps, expected the parent's and the child's"]
    fails = []
    exact = exe == args.exe  # the switchable build: calls while off neither recorded nor counted
    # A signal's switch between a call's CALL and its callee's entry, on
    # that thread, leaves the call a pseudo-frame (switchable.md).
    no_pseudo = "INSTR_SIGNAL" not in env and exact
    for d in dumps:
        j, err = report(args.report, os.path.join(work, d))
        is_child = bool(j["session"]["programs"][0].get("fork_child"))
        f, got, filtered, want = check_dump(f"{label} ({'child' if is_child else 'parent'})", j, err,
                                            child if is_child else parent, tail_ns, is_child, exact, no_pseudo)
        print(f"{label} {'child' if is_child else 'parent'}: recorded {got} + filtered {filtered}, "
              f"made {want}")
        fails += f
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--switchable-exe", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", help="run the cases whose label starts so")
    args = ap.parse_args()
    cases = [
        ("none", args.exe, {}),
        ("depth", args.exe, {"INSTR_DEPTH": "3"}),
        ("short-300ns", args.exe, {"INSTR_MIN_DURATION": "300ns"}),
        ("short-1us", args.exe, {"INSTR_MIN_DURATION": "1us"}),
        ("short-20us", args.exe, {"INSTR_MIN_DURATION": "20us"}),
        ("trigger-threads", args.exe, {"INSTR_TRIGGER": "toggle_on:on,toggle_off:off"}),
        ("trigger-longjmp", args.exe, {"INSTR_TRIGGER": "jumper:on,stopper:off"}),
        ("trigger-short", args.exe, {"INSTR_TRIGGER": "toggle_on:on,toggle_off:off",
                                     "INSTR_MIN_DURATION": "500ns"}),
        ("switch-signal", args.switchable_exe, {"INSTR_START": "off", "INSTR_SIGNAL": "USR2"}, ("storm",)),
        # The same switch on the build not compiled switchable: recording
        # off in the hooks' slow path, every call off counted (exact).
        ("switch-signal-unswitchable", args.exe, {"INSTR_START": "off", "INSTR_SIGNAL": "USR2"}, ("storm",)),
        ("switch-trigger-start-off", args.switchable_exe, {"INSTR_START": "off",
                                                           "INSTR_TRIGGER": "toggle_on:on,toggle_off:off"}),
    ]
    fails = []
    for label, exe, env, *extra in cases:
        if args.only and not label.startswith(args.only):
            continue
        fails += run(args, label, exe, env, *extra)
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("ok: calls recorded + filtered = calls made, no pseudo rows, no open frames")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

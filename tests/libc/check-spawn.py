#!/usr/bin/env python3
"""check-spawn.py PROG REPORT WORK - children forked inside an uninstrumented
library (lib-spawn.c): a fork child's dump is made at its first hook, so
the three that exec at once (Tcl's exec, a spawn helper) leave none, where
each left a dump without an end ("did not finish", exit 3); the one that
calls back into the program has its dump, complete, with that call; the
parent's report is clean, exit 0 (issue 38 §2).  Run with the default
detectors and with INSTR_DETECTOR=none (no sud: nothing sees the exec).
Then a process that the library replaces by exec (exec-self): reported
with the dump of the program it became, its ending is known (exit 0);
alone, it did not finish (exit 3)."""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

prog, report, work = sys.argv[1:4]
for detector in ("auto", "none"):
    d = os.path.join(work, detector)
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "*")):
        os.remove(f)
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(d, "%p.instr"), INSTR_DETECTOR=detector)
    r = subprocess.run([prog, "/bin/true"], cwd=d, env=env, capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.strip() == "ok", f"{detector}: the program ran ({r.returncode}: {r.stdout!r})")
    dumps = sorted(glob.glob(os.path.join(d, "*.instr")))
    check(len(dumps) == 2, f"{detector}: two dumps, the program's and the child that called back ({dumps})")
    t = subprocess.run([report, *dumps], capture_output=True, text=True)
    check(t.returncode == 0 and "did not finish" not in t.stdout + t.stderr,
          f"{detector}: the report is clean, exit 0 (got {t.returncode}):\n{t.stdout[:900]}{t.stderr[-400:]}")
    j = subprocess.run([report, "--format", "json", *dumps], capture_output=True, text=True)
    fns = {f["name"]: f for f in json.loads(j.stdout or "{}").get("functions", [])} if j.returncode == 0 else {}
    calls = {k: v.get("calls") for k, v in fns.items()}
    check(calls.get("in_child") == 1 and calls.get("spawn_exec") == 3 and calls.get("spawn_call") == 1,
          f"{detector}: calls in_child 1, spawn_exec 3, spawn_call 1 ({calls})")
    kids = [x for x in dumps if "forked child" in subprocess.run([report, x], capture_output=True, text=True).stdout]
    check(len(kids) == 1, f"{detector}: one of them is the forked child's ({kids})")

d = os.path.join(work, "exec-self")
os.makedirs(d, exist_ok=True)
for f in glob.glob(os.path.join(d, "*")):
    os.remove(f)
env = dict(os.environ, INSTR_OUTPUT=os.path.join(d, "%p.instr"))
r = subprocess.run([prog, "exec-self"], cwd=d, env=env, capture_output=True, text=True)
dumps = sorted(glob.glob(os.path.join(d, "*.instr")))
check(r.returncode == 0 and len(dumps) == 2, f"exec-self: ran ({r.returncode}), two dumps of one pid ({dumps})")
if len(dumps) == 2:
    t = subprocess.run([report, *dumps], capture_output=True, text=True)
    check(t.returncode == 0 and "replaced by exec: pid" in t.stdout and "did not finish" not in t.stdout + t.stderr,
          f"exec-self: together, the first says it was replaced by exec, exit 0 ({t.returncode}):\n{t.stdout[:700]}")
    alone = [subprocess.run([report, x], capture_output=True, text=True) for x in dumps]
    check(sorted(a.returncode for a in alone) == [0, 3] and any("did not finish" in a.stdout for a in alone),
          f"exec-self: alone, the replaced one did not finish (exit 3), the other is complete "
          f"({[a.returncode for a in alone]})")
sys.exit(exit_status())

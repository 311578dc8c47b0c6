#!/usr/bin/env python3
"""check-registry-full.py PROGRAM REPORT SHIM WORK - a run whose runtime
cannot grow its registries (SHIM preloaded: mremap fails, as out of
memory) past their first 1,024 functions and call sites (issue 38 §4):
the calls of what got no id are counted by kind, calls of instrumented
functions as dropped_calls (recorded + dropped = the calls the program
made, exactly) and calls at call sites as dropped_sites; their exits are
not taken for unmatched ones; the dump says why (a note naming the first
function left out, and the warning's cause: not a stop, disk or limit);
the report exits 3.  The same program without the shim records all."""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

prog, report, shim, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def run(preload):
    for f in glob.glob(os.path.join(work, "*.instr")):
        os.remove(f)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSTR_") and k != "LD_PRELOAD"}
    if preload:
        env["LD_PRELOAD"] = shim
    p = subprocess.run([prog], env=env, cwd=work, capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == "0\n", f"preload={preload}: the program runs as plain ({p.returncode}, {p.stdout!r})")
    dump = glob.glob(os.path.join(work, "*.instr"))
    check(len(dump) == 1, f"preload={preload}: one dump ({dump})")
    r = subprocess.run([report, "--format", "json", dump[0]], capture_output=True, text=True)
    t = subprocess.run([report, dump[0]], capture_output=True, text=True)
    return json.loads(r.stdout), r.returncode, t.stdout


def calls(j, pseudo):
    return sum(f["calls"] for f in j["functions"] if bool(f.get("pseudo")) == pseudo)


full, rc, _ = run(False)
own, sites = calls(full, False), calls(full, True)
check(rc == 0 and own == 1201 * 2 - 1 and sites == 2401 and full["session"]["dropped"] == 0,
      f"without the shim: every call recorded (exit {rc}, {own} calls, {sites} at call sites)")

cut, rc, text = run(True)
s = cut["session"]
print(f"# registries full: {calls(cut, False)} calls recorded + {s['dropped_calls']} dropped; "
      f"{calls(cut, True)} at uninstrumented call sites + {s['dropped_sites']} site calls dropped")
check(s["dropped_calls"] > 0 and calls(cut, False) + s["dropped_calls"] == own,
      f"calls of instrumented functions: recorded + dropped = made ({calls(cut, False)} + {s['dropped_calls']}, {own})")
check(s["dropped_sites"] > 0 and calls(cut, True) + s["dropped_sites"] >= sites,
      f"calls at call sites: dropped ones counted ({calls(cut, True)} + {s['dropped_sites']}, at least {sites})")
check(s["dropped"] == s["dropped_calls"] + s["dropped_sites"],
      f"every dropped event has its kind ({s['dropped']} = {s['dropped_calls']} + {s['dropped_sites']})")
check("unmatched" not in text, "the exits of calls left out are no unmatched exits:\n" + text[:800])
warnings = s["warnings"]
check(any("the runtime said: no room to register function f" in w for w in warnings),
      f"a note names the first function left out ({warnings})")
cause = [w for w in warnings if "events dropped" in w]
check(len(cause) == 1 and "registries" in cause[0] and "stopped" not in cause[0] and "disk" not in cause[0],
      f"the drop's cause is the registries, not a stop, disk or limit ({cause})")
check(rc == 3, f"values undercount: exit 3 ({rc})")
sys.exit(exit_status())

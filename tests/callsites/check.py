#!/usr/bin/env python3
"""Call-site checks: run a program of this folder, report its dump(s) with
instr-report --format json and check call counts and parents exactly (the
parent of a frame is read from the callers view).  Shares its helpers with
tests/e2e/check.py."""
import argparse, glob, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import check as e2e  # noqa: E402  (check, fn, functions, report, run_program, check_invariants)

check, fn, functions = e2e.check, e2e.fn, e2e.functions


def callers(tool, dumps, name):
    """{caller name: calls} of the function named name."""
    rep = e2e.report(tool, dumps, "--view", "callers", name)
    return {c["name"]: c["calls"] for c in rep["callers"]["callers"]}


def parent_is(tool, dumps, name, parent, calls):
    got = callers(tool, dumps, name)
    check(got == {parent: calls}, f"{name}: called {calls} times, all from {parent} ({got})")


def no_repairs(rep, *allowed):
    extra = e2e.other_repairs(rep, *allowed)
    check(not extra, f"no repairs ({extra})")


def case_calls(a, rep, out, dumps, mode="all"):
    compares = int(re.search(r"compares=(\d+)", out).group(1))
    if mode != "none":
        parent_is(a.report, dumps, "write", "do_writes", 10)
        if a.opt != "O2" or functions(rep, "malloc"):
            parent_is(a.report, dumps, "malloc", "do_allocs", 100)
            parent_is(a.report, dumps, "free", "do_allocs", 100)
        else:
            check(False, "malloc recorded")
        parent_is(a.report, dumps, "qsort", "sort_it", 1)
        parent_is(a.report, dumps, "cmp", "qsort", compares)   # main -> sort_it -> qsort -> cmp
        parent_is(a.report, dumps, "pthread_mutex_lock", "locker", 2000)
        parent_is(a.report, dumps, "pthread_mutex_unlock", "locker", 2000)
        q = fn(rep, "qsort")
        check(bool(q) and q["pseudo"] and os.path.basename(q["module"]).startswith("libc."),
              f"qsort is a pseudo-frame in libc ({q and q['module']})")
        s = fn(rep, "sort_it")
        check(s and s["external_elapsed_ticks"] == q["elapsed_inclusive_ticks"],
              "sort_it's external time is qsort's inclusive time")
    else:
        check(not [f for f in rep["functions"] if f["pseudo"]], "callsites=none: no pseudo-frames")
        parent_is(a.report, dumps, "cmp", "sort_it", compares)
    # The indirect call to an instrumented function is one frame, not two.
    parent_is(a.report, dumps, "twice", "apply", 50)
    check(not [f for f in rep["functions"] if f["name"].startswith("[indirect]")], "no [indirect] frame")
    check(fn(rep, "locker")["calls"] == 2, "locker ran in two threads")
    no_repairs(rep)


def case_shapes(a, rep, out, dumps):
    check(fn(rep, "Circle::area")["calls"] == 20 and fn(rep, "Square::area")["calls"] == 10,
          "virtual calls: 20 Circle::area, 10 Square::area")
    parent_is(a.report, dumps, "Circle::area", "total(Shape* const*, int)", 20)
    parent_is(a.report, dumps, "lib_throw(int)", "inner(int)", 4)
    parent_is(a.report, dumps, "inner", "middle(int)", 4)
    parent_is(a.report, dumps, "middle", "outer(int)", 4)
    # Each throw leaves three frames, closed at outer's catch as exception
    # exits: lib_throw's pseudo-frame, inner and middle (each one frame with
    # the call site that called it).  Nothing else is repaired.
    unwound = e2e.repairs(rep, "unwound_exception")
    check(unwound == 12, f"12 exception exits (3 frames x 4 throws): {unwound}")
    no_repairs(rep, "unwound_exception")
    inner, outer = fn(rep, "inner"), fn(rep, "outer")
    check(inner["elapsed_inclusive_ticks"] <= outer["elapsed_inclusive_ticks"], "inner closed inside outer")


def case_modules(a, rep, out, dumps):
    mods = {f["name"]: os.path.basename(f["module"]) for f in rep["functions"] if not f["pseudo"]}
    want = {"main": os.path.basename(a.exe), "shared_entry": None, "shared_leaf": None,
            "plugin_entry": None, "plugin_leaf": None}
    for name in want:
        check(name in mods, f"{name} recorded")
    check(re.match(r"libcallsites-shared-O[02]\.so$", mods.get("shared_entry", "")) is not None,
          f"shared_entry in the linked library ({mods.get('shared_entry')})")
    check(mods.get("shared_leaf") == mods.get("shared_entry"), "shared_leaf in the same module")
    check(re.match(r"(lib)?callsites-plugin-O[02]\.so$", mods.get("plugin_entry", "")) is not None,
          f"plugin_entry in the dlopen'ed library, named after dlclose ({mods.get('plugin_entry')})")
    check(mods.get("plugin_leaf") == mods.get("plugin_entry"), "plugin_leaf (static) in the same module")
    check(fn(rep, "shared_leaf")["calls"] == 10 and fn(rep, "plugin_leaf")["calls"] == 7, "calls counted")
    parent_is(a.report, dumps, "plugin_entry", "main", 1)
    parent_is(a.report, dumps, "dlopen", "main", 1)
    names = {os.path.basename(m["module"]) for m in rep["modules"]}
    check(any(n.startswith("libcallsites-shared") for n in names) and
          any("callsites-plugin" in n for n in names), f"both libraries in the modules view ({names})")
    no_repairs(rep)


def case_procs(a, rep, out, dumps):
    check(len(dumps) == 3, f"one dump per process: parent, forked child, spawned child ({len(dumps)})")
    procs = rep["processes"]
    check(len(procs) == 3 and len({p["pid"] for p in procs}) == 3, "three processes in the merged report")
    total = rep["session"]["totals"]["elapsed_inclusive_ticks"]
    check(sum(p["elapsed_inclusive_ticks"] for p in procs) == total, "per-process totals add up to the session's")
    for d in dumps:
        one = e2e.report(a.report, [d])
        p = one["processes"][0]
        mine = [q for q in procs if q["pid"] == p["pid"]]
        check(mine and mine[0]["elapsed_inclusive_ticks"] == p["elapsed_inclusive_ticks"] and
              mine[0]["calls"] == p["calls"], f"pid {p['pid']}: the same totals alone and merged")
    check(fn(rep, "step")["calls"] == 150, "step: 100 (parent) + 20 (fork) + 30 (spawn) calls")
    check(fn(rep, "work")["calls"] == 3, "work: once per process")
    parent_is(a.report, dumps, "fork", "main", 1)
    parent_is(a.report, dumps, "posix_spawn", "main", 1)
    no_repairs(rep)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--opt", default="O2")
    ap.add_argument("--arg", action="append", default=[])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%e.%p.instr"))
        proc = subprocess.run([a.exe, *a.arg], cwd=work, env=env, capture_output=True, text=True, timeout=120)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        check(proc.returncode == 0, f"program exit status 0 ({proc.returncode})")
        dumps = sorted(glob.glob(os.path.join(work, "*.instr")))
        check(len(dumps) >= 1, "a dump was written")
        if not dumps:
            return 1
        rep = e2e.report(a.report, dumps)
        e2e.check_invariants(rep)
        if a.case == "calls":
            case_calls(a, rep, proc.stdout, dumps)
        elif a.case == "calls-external":
            case_calls(a, rep, proc.stdout, dumps, "external")
        elif a.case == "calls-none":
            case_calls(a, rep, proc.stdout, dumps, "none")
        else:
            {"shapes": case_shapes, "modules": case_modules, "procs": case_procs}[a.case](a, rep, proc.stdout, dumps)
    print(f"{len(e2e.failures)} failed")
    return 1 if e2e.failures else 0


if __name__ == "__main__":
    sys.exit(main())

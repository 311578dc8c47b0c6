#!/usr/bin/env python3
"""check-cache.py GEN BIN WORK - the profile cache (model/profile-cache.c):
a second report of the same dump reads the profile the first one kept
instead of walking the dump again, and says exactly what the walk says, in
every view and format; a dump changed since, --raw, or another build of
the tools is walked again; INSTR_REPORT_CACHE=off keeps nothing, and a
dump below the size worth keeping is never kept.  Without the cache the
second report takes as long as the first (the timing check fails)."""
import os, shutil, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
report = os.path.join(bindir, "instr-report")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
cache = os.path.join(work, "cache")
dump = os.path.join(work, "big.instr")
subprocess.run([gen, dump, "20000000", "3"], check=True)
env = dict(os.environ, INSTR_REPORT_CACHE=cache)
VIEWS = [["--format", "json"], ["--view", "calltree", "--depth", "5"], ["--view", "threads,modules"],
         ["--format", "csv", "--sort", "ae"], ["--view", "callers", "fn4()"], ["-F", "all", "--verbose"]]


def run(args, **kw):
    t0 = time.monotonic()
    p = subprocess.run([report, *args, dump], capture_output=True, text=True, env=kw.get("env", env))
    return p, time.monotonic() - t0


def kept():
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


check(os.path.getsize(dump) >= 32 << 20, f"the dump is worth keeping ({os.path.getsize(dump) >> 20} MB)")
first, t_walk = run(VIEWS[0])
check(first.returncode == 0, f"first report exits 0 ({first.returncode}: {first.stderr[-200:]})")
check(len(kept()) == 1, f"one profile kept ({kept()})")
again, t_cached = run(VIEWS[0])
check(again.stdout == first.stdout, "the kept profile's report is the walk's, byte for byte (json)")
check(t_cached < 0.5 * t_walk, f"the second report reads it: {t_cached:.2f} s against {t_walk:.2f} s for the walk")
for args in VIEWS[1:]:
    walked, _ = run(args, env=dict(os.environ, INSTR_REPORT_CACHE="off"))
    cached, _ = run(args)
    check(walked.returncode == 0 and cached.stdout == walked.stdout and cached.stderr == walked.stderr,
          f"{' '.join(args)}: the same from the kept profile as from a walk")
raw_walked, _ = run(["--raw", "--format", "json"], env=dict(os.environ, INSTR_REPORT_CACHE="off"))
raw, _ = run(["--raw", "--format", "json"])
check(raw.stdout == raw_walked.stdout and len(kept()) == 2,
      f"--raw is kept apart ({len(kept())} profiles) and says what its walk says")
# The dump changes (a later run, rewritten in place): walked again.
subprocess.run([gen, dump, "20000000", "2"], check=True)
changed, _ = run(["--format", "json"])
fresh, _ = run(["--format", "json"], env=dict(os.environ, INSTR_REPORT_CACHE="off"))
check(changed.stdout == fresh.stdout and changed.stdout != first.stdout,
      "a dump changed since is walked again, not read from the old profile")
shutil.rmtree(cache)
run(["--format", "json"], env=dict(os.environ, INSTR_REPORT_CACHE="off"))
check(kept() == [], "INSTR_REPORT_CACHE=off keeps nothing")
small = os.path.join(work, "small.instr")
subprocess.run([gen, small, "100000", "1"], check=True)
subprocess.run([report, small], capture_output=True, env=env)
check(kept() == [], "a small dump is not kept (its walk is quick)")
os.remove(dump)
sys.exit(exit_status())

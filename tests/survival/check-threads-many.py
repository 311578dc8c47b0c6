#!/usr/bin/env python3
"""A thread-per-task program's report costs time linear in its threads
(issue 22 §4: each ending thread's segments were merged into the whole
Wall Inclusive union by copying it, quadratic: 1,000 threads x 2,000 calls
took 115 s).  threads-many runs with SMALL and 4 x SMALL threads; the
report of the big run may take at most 8 x the small one's CPU time
(linear: 4 x, quadratic: 16 x; 6 x was exceeded once beside the rest of
the suite on 2 cores), best of three reports each, and its numbers must be the
program's own: every thread and every call, Wall Inclusive known.  Before
that, as root, as uid 65534 and as root in a user namespace, a run of
SMALL / 4 threads, plain and instrumented: the same output and status,
the report's numbers the program's own (the timing stays with the
invoking user: the identities do not change the report's cost).
Usage: check-threads-many.py EXE PLAIN REPORT [SMALL]"""
import glob, json, os, resource, subprocess, sys, tempfile

EXE, PLAIN, REPORT = sys.argv[1], sys.argv[2], sys.argv[3]
SMALL = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures as fails, for_every_identity  # noqa: E402


def record(work, n, prefix=()):
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "t%d.%%p.instr" % n))
    r = subprocess.run([*prefix, EXE, str(n)], env=env, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0 and r.stdout.strip() == "threads %d calls %d" % (n, 2000 * n),
          "threads-many %d runs (%d: %s)" % (n, r.returncode, r.stdout.strip()))
    p = subprocess.run([*prefix, PLAIN, str(n)], capture_output=True, text=True, timeout=600)
    check((r.returncode, r.stdout, r.stderr) == (p.returncode, p.stdout, p.stderr),
          "threads-many %d: status and output as plain (%d %r %r; plain %d %r %r)"
          % (n, r.returncode, r.stdout, r.stderr, p.returncode, p.stdout, p.stderr))
    dumps = glob.glob(os.path.join(work, "t%d.*.instr" % n))
    check(len(dumps) == 1, "one dump (%s)" % dumps)
    return dumps[0] if len(dumps) == 1 else None


def timed_report(dump, n, times=3):
    """The report's CPU time (user + system: the machine may be shared,
    which wall time would measure), best of `times`; its numbers checked."""
    if dump is None:
        return 0
    best, out = None, None
    for _ in range(times):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([REPORT, "--format", "json", dump], capture_output=True, text=True, timeout=900)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        dt = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        check(r.returncode == 0, "the report of %d threads exits 0 (%d: %s)" % (n, r.returncode, r.stderr.strip()))
        best = dt if best is None else min(best, dt)
        out = r.stdout
    j = json.loads(out)
    tick = [{k: f[k] for k in ("calls", "wall_inclusive_ticks")} for f in j["functions"] if f["name"] == "tick"]
    check(len(tick) == 1 and tick[0]["calls"] == 2000 * n, "tick called %d times (%s)" % (2000 * n, tick))
    check(len(j["threads"]) == n + 1, "%d threads (%d)" % (n + 1, len(j["threads"])))
    check(tick and tick[0].get("wall_inclusive_ticks") is not None, "Wall Inclusive known (%s)" % tick)
    print("%d threads: report %.2f s of CPU (best of %d)" % (n, best, times))
    return best


with tempfile.TemporaryDirectory() as work:
    for_every_identity(work, (EXE, PLAIN),
                       lambda d, prefix: timed_report(record(d, SMALL // 4, prefix), SMALL // 4, times=1))
    small, big = record(work, SMALL), record(work, 4 * SMALL)
    ts = timed_report(small, SMALL)
    tb = timed_report(big, 4 * SMALL)
    check(tb <= 8 * max(ts, 0.05), "4 x the threads: %.2f s, at most 8 x %.2f s" % (tb, ts))
sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""check-job-wall.py GEN BIN WORK - Wall Inclusive of an MPI job's ranks
(several processes of one host) is not computed unless --wall asks for it:
uniting every rank's activations cost more than the rest of the walk and
held memory in proportion to the dumps.  Two ranks' synthetic dumps: by
default Wall is null in JSON and `Wall: unknown (...)` says why and how to
get it, every other figure as with --wall, which computes it; two larger
ranks: the report's peak RSS stays below the dumps' size (with the
segments of every rank's activations it was 7 times it), and
the second report of the job reads the profiles the first
kept (a job of one host was never kept before) and says the same."""
import json, os, shutil, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
report = os.path.join(bindir, "instr-report")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def ranks(name, events):
    out = []
    for r in range(2):
        d = os.path.join(work, "%s%d.instr" % (name, r))
        subprocess.run([gen, d, str(events), "1", str(100 + r), "%d/2" % r], check=True)
        out.append(d)
    return out


def run(args, dumps, env=None):
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", report, *args, *dumps], capture_output=True, text=True,
                       env=env or dict(os.environ, INSTR_REPORT_CACHE="off"))
    rss = int(p.stderr.strip().splitlines()[-1]) * 1024 if p.stderr.strip() else 0
    return p, rss, time.monotonic() - t0


def strip_wall(j):
    """The JSON report without its Wall figures (and the concurrency made of them)."""
    if isinstance(j, dict):
        return {k: strip_wall(v) for k, v in j.items() if "wall" not in k and k != "concurrency"}
    if isinstance(j, list):
        return [strip_wall(v) for v in j]
    return j


small = ranks("small", 2_000_000)
plain, _, _ = run(["--format", "json"], small)
wall, _, _ = run(["--format", "json", "--wall"], small)
check(plain.returncode == 0 and wall.returncode == 0, f"reports exit 0 ({plain.returncode}, {wall.returncode})")
jp, jw = json.loads(plain.stdout), json.loads(wall.stdout)
check(jp["session"]["totals"]["wall_inclusive_ns"] is None and
      all(f["wall_inclusive_ns"] is None for f in jp["functions"]), "a job's Wall is null by default")
wt = jw["session"]["totals"]["wall_inclusive_ns"]
check(isinstance(wt, (int, float)) and wt > 0 and jw["session"]["concurrency"] is not None and
      all(f["wall_inclusive_ns"] is not None for f in jw["functions"]), f"--wall computes it ({wt})")
check(strip_wall(jp) == strip_wall(jw), "every other figure the same with and without --wall")
text, _, _ = run(["-v"], small)
check("Wall:       unknown (the ranks of a job: uniting every rank's activations costs more than the rest of the "
      "walk; --wall computes it)" in text.stdout, "the text report says why Wall is unknown, and what gives it")
text, _, _ = run(["-v", "--wall"], small)
check("Wall:       " in text.stdout and "with a frame open in some thread" in text.stdout, "--wall: the Wall: line")

big = ranks("big", 20_000_000)
cache = os.path.join(work, "cache")
env = dict(os.environ, INSTR_REPORT_CACHE=cache)
size = sum(os.path.getsize(d) for d in big)
first, rss, t_walk = run(["--format", "json"], big, env)
check(rss < size, f"peak RSS {rss / 1048576:.1f} MB for {size / 1048576:.1f} MB of dumps (want less: the "
      "Wall segments made it 7 times their size)")
kept = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
again, _, t_kept = run(["--format", "json"], big, env)
check(first.returncode == 0 and len(kept) == 2, f"a profile kept per rank ({kept})")
check(again.stdout == first.stdout, "the second report says what the first said")
check(t_kept < t_walk / 3, f"the second report reads the kept profiles: {t_kept:.2f} s against {t_walk:.2f} s")
sys.exit(exit_status())

#!/usr/bin/env python3
"""check-wall-merged.py GEN BIN WORK - Wall Inclusive of one process's
threads has no cap: 4 busy threads, 60 M events (about 28 M outermost
activations, past the 16 M segments that once made Wall "unknown"), are
walked in time order (wall.h), and the report's peak RSS stays below half
the dump's size.  The values are checked against what must hold exactly:
fn1 is the bottom of every stack, so its Wall is the time some thread had
a stack (as wide as the session's), no function's Wall exceeds its Elapsed
Inclusive or fn1's, and the concurrency is EI / Wall.  (The exact values on
a hand-made dump: the golden test report-golden-wall, traces/wall.txt.)"""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import big_dump_report, check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
with big_dump_report(gen, bindir, work, "wall-merged.instr", 60_000_000, 4) as (p, size, rss):
    r = json.loads(p.stdout) if p.returncode == 0 else {"session": {}, "functions": []}
    fns = {f["mangled"]: f for f in r["functions"]}
    root = fns.get("_Z3fn1v", {})
    wall = root.get("wall_inclusive_ticks")
    check(isinstance(wall, int) and wall > 0, f"fn1's Wall Inclusive known ({wall})")
    if isinstance(wall, int):
        check(wall <= 2_600_000_000, f"fn1's Wall {wall} within the run (2.6 G ticks)")
        check(r["session"].get("concurrency") is not None and abs(
            r["session"]["concurrency"] - root["elapsed_inclusive_ticks"] / wall) < 1e-3,
            f"the session's concurrency {r['session'].get('concurrency')} is fn1's EI / Wall")
        bad = [n for n, f in fns.items()
               if not isinstance(f["wall_inclusive_ticks"], int)
               or f["wall_inclusive_ticks"] > min(f["elapsed_inclusive_ticks"], wall)]
        check(not bad, f"every function's Wall within its EI and fn1's ({bad[:5]})")
        many = [n for n, f in fns.items() if f["concurrency"] is not None and f["concurrency"] > 1.5]
        check(len(many) >= 3, f"the threads overlap: {len(many)} functions with concurrency > 1.5")
    check(rss < size / 2, f"peak RSS {rss / 1048576:.1f} MB for a {size / 1048576:.1f} MB dump (want < half)")
sys.exit(exit_status())

#!/usr/bin/env python3
"""check-memory.py GEN BIN WORK - a report's memory does not grow with the
dump: the dump's pages leave memory as the walk is done with them
(instr_dump_chunk_done, in batches), so a 150 MB dump of one thread (no
Wall Inclusive segments) is reported in well under half its size of peak
RSS.  Without the release the mapping's pages stay resident: RSS about the
dump's size."""
import json, os, resource, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
dump = os.path.join(work, "big.instr")
events = 60_000_000
subprocess.run([gen, dump, str(events), "1"], check=True)
size = os.path.getsize(dump)
try:
    p = subprocess.run([os.path.join(bindir, "instr-report"), "--format", "json", dump], capture_output=True, text=True)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    check(p.returncode == 0, f"report exit {p.returncode} {p.stderr[-300:]}")
    walked = json.loads(p.stdout)["session"]["events"] if p.returncode == 0 else 0
    check(walked == events, f"every event walked ({walked} of {events})")
    check(size > 100 << 20 and rss < size / 2,
          f"peak RSS {rss / 1048576:.1f} MB for a {size / 1048576:.1f} MB dump (want < half)")
finally:
    os.remove(dump)
sys.exit(exit_status())

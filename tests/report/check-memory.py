#!/usr/bin/env python3
"""check-memory.py GEN BIN WORK - a report's memory does not grow with the
dump: the dump's pages leave memory as the walk is done with them
(instr_dump_chunk_done, in batches), so a 150 MB dump of one thread (no
Wall Inclusive segments) is reported in well under half its size of peak
RSS.  Without the release the mapping's pages stay resident: RSS about the
dump's size."""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import big_dump_report, check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
events = 60_000_000
with big_dump_report(gen, bindir, work, "big.instr", events, 1) as (p, size, rss):
    walked = json.loads(p.stdout)["session"]["events"] if p.returncode == 0 else 0
    check(walked == events, f"every event walked ({walked} of {events})")
    check(size > 100 << 20 and rss < size / 2,
          f"peak RSS {rss / 1048576:.1f} MB for a {size / 1048576:.1f} MB dump (want < half)")
sys.exit(exit_status())

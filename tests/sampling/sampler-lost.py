#!/usr/bin/env python3
"""sampler-lost.py INSTR_REPORT SAMPLER_LOST: INSTR_SAMPLE's losses in a
thread's last stretch are counted (issue 38 §4).

sampler-lost.c runs spin_a then spin_b, a second of CPU time each, in two
threads whose rings are drained only at their end; spin_b's ring (64 KiB,
2,730 samples) overflows at 10 kHz.  The kernel says how many samples it
lost only before its next sample, which never came: the dump said 0 lost,
and spin_b had a third of spin_a's samples.  Now spin_b's samples and the
losses add up to about spin_a's.  Exit 0 pass, 1 fail, 77 skip."""
import json
import os
import subprocess
import sys
import tempfile

REPORT, PROG = sys.argv[1:3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check_quiet as check, failures  # noqa: E402

with tempfile.TemporaryDirectory() as work:
    dump = os.path.join(work, "lost.instr")
    env = dict(os.environ, INSTR_SAMPLE="10000", INSTR_OUTPUT=dump, INSTR_LOG="stderr")
    r = subprocess.run([PROG, "1"], env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "sampler-lost exits 0 (%d: %s)" % (r.returncode, r.stderr))
    if "not allowed" in r.stderr:
        print("perf events not allowed here: skipped")
        sys.exit(77)
    rep = subprocess.run([REPORT, "--view", "samples", "--format", "json", dump], capture_output=True, text=True)
    check(rep.returncode == 0, "--view samples exits 0 (%d: %s)" % (rep.returncode, rep.stderr))
    j = json.loads(rep.stdout)
    smp = {f["name"]: f["exclusive_samples"] for f in j["functions"]}
    a, b, lost = smp.get("spin_a", 0), smp.get("spin_b", 0), j["session"]["lost"]
    print("# spin_a %d samples; spin_b %d samples + %d lost" % (a, b, lost))
    if a < 2 * 2730:
        print("the kernel sampled spin_a at %d Hz: too slow to fill spin_b's ring; skipped" % a)
        sys.exit(77)
    check(b < 0.6 * a, "spin_b's ring overflowed (%d samples of spin_a's %d)" % (b, a))
    check(lost > 0, "the losses are counted (%d)" % lost)
    check(0.7 * a <= b + lost <= 1.3 * a,
          "spin_b's samples and the losses add up to about spin_a's (%d + %d for %d)" % (b, lost, a))
print("hybrid-last-lost: %s" % ("FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)

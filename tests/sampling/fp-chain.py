#!/usr/bin/env python3
"""--fp-chain: the kernel's frame-pointer chain is asked for only with the
option (the dump's unwinder says which), and code without unwind tables
that keeps frame pointers unwinds whole either way (libunwind follows the
frame pointers in the stack copy), so leaving the chain off loses nothing
there.  Usage: fp-chain.py INSTR-SAMPLE INSTR-REPORT PROGRAM.  Exit 0
pass, 1 fail."""
import json, os, subprocess, sys, tempfile

SAMPLE, REPORT, PROG = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures as fails  # noqa: E402


# The program really has no CFI of its own: its functions have no FDE
# (.eh_frame, nor .debug_frame, which libunwind can read too).
out = subprocess.run(["readelf", "--debug-dump=frames", PROG], capture_output=True, text=True).stdout
syms = {l.split()[-1]: int(l.split()[0], 16) for l in subprocess.run(["nm", PROG], capture_output=True,
        text=True).stdout.splitlines() if len(l.split()) == 3 and l.split()[-1] in ("inner", "middle", "outer")}
ranges = []
for l in out.splitlines():
    if " FDE " in l and "pc=" in l:
        lo, hi = l.split("pc=")[1].split("..")
        ranges.append((int(lo, 16), int(hi, 16)))
check(len(syms) == 3 and not any(lo <= a < hi for a in syms.values() for lo, hi in ranges),
      "inner, middle and outer have no FDE (%s)" % syms)

with tempfile.TemporaryDirectory() as work:
    for opts, fp in (([], False), (["--fp-chain"], True)):
        for f in os.listdir(work):
            os.unlink(os.path.join(work, f))
        r = subprocess.run([SAMPLE, *opts, "-o", os.path.join(work, "s.%p.instr"), PROG, "0.3"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "instr-sample %s exits 0 (%d: %s)" % (" ".join(opts), r.returncode, r.stderr))
        dumps = [os.path.join(work, f) for f in os.listdir(work)]
        if len(dumps) != 1:
            check(False, "one dump: %s" % dumps)
            continue
        j = json.loads(subprocess.run([REPORT, "--format", "json", dumps[0]], capture_output=True,
                                      text=True).stdout)
        s = j["session"]
        f = {x["name"]: x for x in j["functions"]}
        who = "with --fp-chain" if fp else "by default"
        check(s["samples"] >= 100, "%s: samples (%s)" % (who, s))
        check(("frame-pointer chain" in s["unwinder"]) == fp, "%s: the unwinder says so: %s" % (who, s["unwinder"]))
        for name in ("inner", "middle", "outer", "main"):
            pct = f.get(name, {}).get("inclusive_pct", 0)
            check(pct >= 90, "%s: %s on %.1f%% of the stacks" % (who, name, pct))
        check(s["truncated"] <= s["samples"] * 0.05, "%s: few truncated stacks (%s)" % (who, s))
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)

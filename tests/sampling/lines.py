#!/usr/bin/env python3
"""--view lines tests: lines.py SCENARIO INSTR_SAMPLE INSTR_REPORT INSTR_DUMP HOTLINE HOTLINE_SRC.

exact: a hand-written sampling dump of the hotline binary; the lines are
those addr2line gives for the sampled addresses (exact counts).
real: instr-sample on hotline; the samples of hot() sit on the HOT line.
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import subprocess
import sys
import tempfile

scenario, SAMPLE, REPORT, DUMP, HOT, SRC = sys.argv[1:7]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check_quiet as check, failures  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def hot_line():
    with open(SRC) as f:
        return next(i + 1 for i, l in enumerate(f) if "/* HOT */" in l)


def nm_symbols(binary):
    syms = {}
    for line in run(["nm", binary]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            syms[parts[2]] = int(parts[0], 16)
    return syms


def exec_segment(binary):
    for line in run(["readelf", "-lW", binary]).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            return int(f[2], 16), int(f[1], 16)
    raise SystemExit("no executable segment in " + binary)


def addr2line(addr):
    out = run(["addr2line", "-e", HOT, "%#x" % addr]).stdout.strip()
    f, _, l = out.rpartition(":")
    return os.path.basename(f), int(l.split()[0])


def scenario_exact(work):
    syms = nm_symbols(HOT)
    hot, main = syms["hot"], syms["main"]
    vaddr, off = exec_segment(HOT)
    start, pgoff = vaddr & ~0xFFF, off & ~0xFFF
    # a PC on the HOT line: the first address of hot() that addr2line puts there
    pc = next(a for a in range(hot, hot + 64) if addr2line(a)[1] == hot_line())
    ret = main + 1  # inside main: a return address (its line: of ret - 1)
    want_main_line = addr2line(ret - 1)
    lines = [
        "instr-dump 1",
        "header pid=10 ppid=1 exe=%s start_tsc=0 start_ns=0 end_tsc=2000000000 end_ns=2000000000 flags=complete,sampled" % HOT,
        "module 1 %s" % HOT,
        "thread 0 tid=10 name=main",
        "sampling rate=1000 period=1000000 stack=8192 unwinder=test",
        "map 1 %#x %#x off=%#x at=0" % (start, start + 0x100000, pgoff),
        "cpu-time 0 4000000",
        "0 100 stack %#x,%#x" % (pc, ret),
        "0 200 stack w=2 %#x,%#x" % (pc, ret),
        "0 300 stack %#x" % ret,
    ]
    txt = os.path.join(work, "lines.txt")
    with open(txt, "w") as f:
        f.write("\n".join(lines) + "\n")
    dump = os.path.join(work, "lines.instr")
    r = run([DUMP, "--from-text", txt, "-o", dump])
    check(r.returncode == 0, "instr-dump --from-text (%s)" % r.stderr)
    r = run([REPORT, "--view", "lines", "--format", "json", dump])
    check(r.returncode == 0, "report exits 0 (%d: %s)" % (r.returncode, r.stderr))
    j = json.loads(r.stdout)
    check(j["samples"] == 4, "4 samples (%s)" % j["samples"])
    got = sorted((l["function"], l["file"], l["line"], l["inclusive_samples"], l["exclusive_samples"]) for l in j["lines"])
    want = sorted([("hot", "hotline.c", hot_line(), 3, 3),
                   ("main", want_main_line[0], want_main_line[1], 4, 1)])
    check(got == want, "lines %s, want %s" % (got, want))
    # --limit 1: only the top function (by exclusive samples: hot)
    r = run([REPORT, "--view", "lines", "--limit", "1", "--format", "csv", dump])
    rows = r.stdout.splitlines()
    check(r.returncode == 0 and rows[0].startswith("function,module,file,line,") and len(rows) == 2
          and rows[1].startswith("hot,") and ",hotline.c,%d,3,3," % hot_line() in rows[1],
          "csv --limit 1: %s (%s)" % (rows, r.stderr))
    r = run([REPORT, "--view", "lines", dump])
    check(r.returncode == 0 and "hotline.c:%d" % hot_line() in r.stdout, "text names the line:\n" + r.stdout)


def scenario_real(work):
    r = run([SAMPLE, "-o", os.path.join(work, "hot.%p.instr"), HOT, "0.4"])
    if r.returncode != 0 and "perf" in r.stderr:
        print("skip: " + r.stderr.strip())
        raise SystemExit(77)
    check(r.returncode == 0, "instr-sample exits 0 (%s)" % r.stderr)
    dumps = [os.path.join(work, f) for f in os.listdir(work) if f.endswith(".instr")]
    r = run([REPORT, "--view", "lines", "--limit", "1", "--format", "json", *dumps])
    check(r.returncode == 0, "report exits 0 (%d: %s)" % (r.returncode, r.stderr))
    rows = json.loads(r.stdout)["lines"]
    hot = [l for l in rows if l["function"].startswith("hot")]
    total = sum(l["exclusive_samples"] for l in hot)
    on = sum(l["exclusive_samples"] for l in hot if l["file"] == "hotline.c" and l["line"] == hot_line())
    check(total >= 100, "hot() has samples (%d)" % total)
    check(on >= 0.9 * total, "%d of hot()'s %d samples on line %d: %s" % (on, total, hot_line(), hot))


with tempfile.TemporaryDirectory() as work:
    {"exact": scenario_exact, "real": scenario_real}[scenario](work)
if failures:
    sys.exit(1)
print("ok")

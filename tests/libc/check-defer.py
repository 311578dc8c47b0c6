#!/usr/bin/env python3
"""check-defer.py PLAIN INSTR REPORT WORK [--threshold N] [--runner CMD...] - a program whose free (or malloc
and free) needs its own constructor before it works (defer-free.c): built
instrumented it runs, prints the plain build's line, and writes a dump in
which main, work and the wrapper(s) have the program's own calls, the
constructor's work before main is absent, and the header says that
recording began at main (issue 38 §2); built with threshold=N, its
units' records, which their constructors sent before the runtime was
loaded, are there too (-v's Left out: line); as root, as uid 65534 and as root
in a user namespace."""
import glob, os, shlex, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, complete_dump_json, exit_status, for_every_identity  # noqa: E402

plain, instr, report, work = sys.argv[1:5]
# --runner: what runs the programs (qemu-aarch64-static -L ..., tests/aarch64).
runner = shlex.split(" ".join(sys.argv[sys.argv.index("--runner") + 1:])) if "--runner" in sys.argv else []
threshold = sys.argv[sys.argv.index("--threshold") + 1] if "--threshold" in sys.argv else None
os.makedirs(work, exist_ok=True)
SAID = "recording began at main: the program defines its own malloc/free"

want = subprocess.run([*runner, plain], capture_output=True, text=True, check=True).stdout
counts = dict(w.split("=") for w in want.split())


def case(d, prefix):
    for f in glob.glob(os.path.join(d, "*.instr")):
        os.remove(f)
    p = subprocess.run([*prefix, *runner, instr], capture_output=True, text=True, cwd=d)
    check(p.returncode == 0, f"the instrumented program exits 0 ({p.returncode}: {p.stderr[-300:]})")
    check(p.stdout == want, f"it prints the plain build's line ({p.stdout!r} against {want!r})")
    dumps = glob.glob(os.path.join(d, "*.instr"))
    check(len(dumps) == 1, f"one dump ({[os.path.basename(x) for x in dumps]})")
    if len(dumps) != 1:
        return
    j = complete_dump_json(report, dumps[0])
    if j is None:
        return
    calls = {}
    for f in j["functions"]:
        if not f.get("pseudo") and "libc.so" not in os.path.basename(f.get("module") or ""):
            calls[f["name"]] = calls.get(f["name"], 0) + f["calls"]
    check(calls.get("main") == 1, f"main: 1 call ({calls.get('main')})")
    check(calls.get("work") == 3, f"work: 3 calls ({calls.get('work')})")
    # the program's own calls from main on: the dynamic linker's, while it
    # loaded the runtime, came before the binding
    check(calls.get("free") == int(counts["nfree"]), f"free: {calls.get('free')} calls, the program made "
          f"{counts['nfree']}")
    if "nmalloc" in counts:
        check(calls.get("malloc") == int(counts["nmalloc"]), f"malloc: {calls.get('malloc')} calls, the program "
              f"made {counts['nmalloc']}")
    check("init" not in calls and "before_main" not in calls,
          f"the constructor ran before recording began ({calls.get('init')}, {calls.get('before_main')})")
    check(SAID in " ".join(j["session"]["warnings"]), f"JSON says recording began at main ({j['session']['warnings']})")
    text = subprocess.run([report, dumps[0]], capture_output=True, text=True)
    head = text.stdout.split("\n\n")[0]
    check(SAID in head, f"the report's header says recording began at main:\n{head[:800]}")
    if threshold:
        v = subprocess.run([report, "-v", dumps[0]], capture_output=True, text=True).stdout
        check(f"under threshold={threshold} " in v, f"the units' threshold records reached the runtime:\n{v[:1200]}")


check(counts["nfree"] == "3", f"the plain build frees work's 3 strings ({want!r})")
for_every_identity(work, [plain, instr], case)
sys.exit(exit_status())

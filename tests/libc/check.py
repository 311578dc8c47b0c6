#!/usr/bin/env python3
"""check.py PLAIN INSTR REPORT WORK - a program that defines malloc, free
and getpid (own-libc.c): the runtime calls none of them (issue 38 §2).
The instrumented run's counts are the plain run's, its dump is named by the
process's real pid and ends complete, and the report's malloc and free
rows count the calls the program's own code made; as root, as uid 65534
and as root in a user namespace."""
import glob, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, complete_dump_json, exit_status, for_every_identity  # noqa: E402

plain, instr, report, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def counts(out):
    return dict(line.split("=") for line in out.split())


want = counts(subprocess.run([plain], capture_output=True, text=True, check=True).stdout)


def case(d, prefix):
    for f in glob.glob(os.path.join(d, "*.instr")):
        os.remove(f)
    p = subprocess.run(prefix + [instr], capture_output=True, text=True, cwd=d)
    check(p.returncode == 0, f"the instrumented program exits 0 ({p.returncode}: {p.stderr[-300:]})")
    got = counts(p.stdout)
    check(got == want, f"its own counts are the plain build's ({got} against {want})")
    dumps = glob.glob(os.path.join(d, "*.instr"))
    check(len(dumps) == 1 and not dumps[0].endswith(".1.instr"),
          f"one dump, named by the real pid, not the program's getpid ({[os.path.basename(x) for x in dumps]})")
    if len(dumps) != 1:
        return
    j = complete_dump_json(report, dumps[0])
    if j is None:
        return
    calls, files = {}, {}
    for f in j["functions"]:
        if not f.get("pseudo"):
            calls[f["name"]] = calls.get(f["name"], 0) + f["calls"]
            files[f["name"]] = os.path.basename(f.get("file") or "")
    # where they are defined, not the header that declared them first
    for name in ("malloc", "free", "getpid"):
        check(files.get(name) == "own-libc.c", f"{name}'s file is own-libc.c ({files.get(name)})")
    check(calls.get("work") == 40, f"work: 40 calls ({calls.get('work')})")
    # main's 40 mallocs and 20 frees, and no call from the runtime
    check(calls.get("malloc") == int(want["nmalloc"]), f"malloc: {calls.get('malloc')} calls, the program made "
          f"{want['nmalloc']}")
    check(calls.get("free") == int(want["nfree"]), f"free: {calls.get('free')} calls, the program made {want['nfree']}")


for_every_identity(work, [plain, instr], case)
sys.exit(exit_status())

#!/usr/bin/env python3
"""End-to-end: sud's budget (INSTR_SUD_RATE).  A thread making a system
call in each of 100,000 intervals goes far past any budget: with a budget
of 2,000 traps a second, sud pauses on it, the report says in a note for
how much of the thread's time system calls went unseen, and most of those
intervals are no longer flagged syscall; with INSTR_SUD_RATE=0 (no
budget) every one is flagged and no note is given.
Usage: check-sud-budget.py EXE REPORT"""
import glob, json, os, re, subprocess, sys, tempfile

exe, report = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

N = 100000


def run(rate):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "b.%p.instr"), INSTR_SUD_RATE=str(rate))
        env.pop("INSTR_DETECTOR", None)
        out = subprocess.run([exe, str(N)], env=env, check=True, capture_output=True, text=True).stdout
        check(out.strip() == f"calls={N}", f"INSTR_SUD_RATE={rate}: the program's own output ({out.strip()})")
        dump = glob.glob(os.path.join(work, "*.instr"))[0]
        p = subprocess.run([report, "--format", "json", "--raw", dump], capture_output=True, text=True)
        if p.returncode not in (0, 3):
            sys.exit(f"instr-report failed: {p.stderr}")
        rep = json.loads(p.stdout)
        return rep, p.stderr


rep0, err0 = run(0)
if "sud" not in rep0["session"]["detector_set"].split("+"):
    print("SKIP: sud is not in the detector set here")
    sys.exit(77)
work0 = next(f for f in rep0["functions"] if f["name"] == "work")
rep1, err1 = run(2000)
work1 = next(f for f in rep1["functions"] if f["name"] == "work")
check(work0["calls"] == N and work1["calls"] == N, f"{N} calls of work() counted either way")
check("not seen" not in err0, "no budget: no note")
m = re.search(r"system calls that do not block were not seen in ([0-9.]+)% of the time of 1 thread", err1)
print(err1.strip())
check(m is not None and float(m.group(1)) > 30,
      f"budget 2,000/s: the note says for how much of the thread's time ({m.group(1) if m else 'none'}%)")
# The system call is in the pseudo-frame of the call site into libc's
# syscall(): every one of its intervals flagged syscall without a budget;
# with one, only those before sud paused (about 200 in the first window).
# (Counts, not times: on a loaded machine the times are mostly off the CPU.)
def syscall_flagged(rep):
    f = next(f for f in rep["functions"] if f["name"] == "syscall")
    return f["calls"], f["flagged_by_kind"]["syscall"]["intervals"]


calls0, flagged0 = syscall_flagged(rep0)
calls1, flagged1 = syscall_flagged(rep1)
check(calls0 == N and flagged0 >= N - 10, f"no budget: {flagged0} of {calls0} system calls seen")
check(calls1 == N and flagged1 < N // 10, f"budget 2,000/s: {flagged1} of {calls1} system calls seen (want < 10%)")
sys.exit(exit_status())

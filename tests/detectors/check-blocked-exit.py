#!/usr/bin/env python3
"""End-to-end (issue 20 §2): a thread blocked in pthread_cond_wait when the
process exits.  Its wait is not Application time nor CPU time; each
thread's CPU Inclusive stays within its CPU clock at the end (the dump's
exit-cpu records), and so does the CPU total.
Usage: check-blocked-exit.py EXE REPORT DUMP-TOOL"""
import glob, json, os, re, subprocess, sys, tempfile

exe, report, dumptool = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures as fails  # noqa: E402


for detector in ("auto", "rseq_cs", "rseq_cs+perf+cpuclock"):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "b.%p.instr"), INSTR_DETECTOR=detector)
        subprocess.run([exe], env=env, check=True)
        dump = glob.glob(os.path.join(work, "*.instr"))[0]
        p = subprocess.run([report, "--format", "json", "--units", "ns", dump], capture_output=True, text=True)
        check(p.returncode == 0, f"[{detector}] instr-report exits 0 ({p.returncode}: {p.stderr.strip()[:200]})")
        rep = json.loads(p.stdout)
        text = subprocess.run([dumptool, dump], capture_output=True, text=True).stdout
        clock = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^exit-cpu (\d+) ns=(\d+)", text, re.M)}
    check(len(clock) == 2, f"[{detector}] both threads' CPU clocks recorded at exit ({clock})")
    worker = [t for t in rep["threads"] if t["index"] != 0]
    if len(worker) != 1:
        check(False, f"[{detector}] one worker thread ({len(worker)})")
        continue
    w = worker[0]
    el, app = w["elapsed_inclusive_ns"], w["application_inclusive_ns"]
    # The wait is about 1 s; the thread ran well under a millisecond.
    check(el > 5e8, f"[{detector}] the worker's Elapsed covers its wait ({el / 1e6:.3f} ms)")
    check(app < 0.01 * el, f"[{detector}] its wait is not Application time ({app / 1e6:.3f} of {el / 1e6:.3f} ms)")
    cpu_known = rep["session"]["totals"].get("cpu_inclusive_ns") is not None
    if "cpuclock" in detector or detector == "auto":
        # The tick rate's rounding: a few ns; the clock's own resolution: 1 ns.
        for t in rep["threads"]:
            ci, c = t.get("cpu_inclusive_ns"), clock.get(t["index"])
            if ci is None or c is None:
                check(False, f"[{detector}] thread {t['index']}: CPU Inclusive and clock ({ci}, {c})")
                continue
            check(ci <= c * 1.001 + 1000,
                  f"[{detector}] thread {t['index']}: CPU Inclusive {ci / 1e6:.3f} ms <= its CPU clock {c / 1e6:.3f} ms")
        total = rep["session"]["totals"]["cpu_inclusive_ns"]
        check(total is not None and total <= sum(clock.values()) * 1.001 + 1000,
              f"[{detector}] CPU total {total} ns <= the threads' clocks {sum(clock.values())} ns")
    elif cpu_known:
        check(False, f"[{detector}] CPU values unknown without cpuclock")

print(f"{len(fails)} failed")
sys.exit(1 if fails else 0)

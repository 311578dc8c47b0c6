#!/usr/bin/env python3
"""--os-events (issue 12, section 2) on a program that runs its own SIGPROF
profiler (tests/e2e/sigprof.c, the gperftools way: ITIMER_PROF and a
handler).  The handler counts the signals that landed in `leaf`; the
detector must see them as kind `signal`, the default report must leave
those intervals out of Application time, and --os-events=sched,syscall,fault
(everything but signal) must give them back.  On a loaded machine some of
the same intervals are also preempted (kind sched) and stay out either way,
so the bound on what comes back is the signal time not shared with another
kind.  Exit 77 (skipped) when the detector cannot tell a signal (no perf
ring and no sud here) or no signal came."""
import json, subprocess, sys, tempfile

from e2e_check import check, failures, parse_args, run_recorded



def report(tool, dump, *extra):
    p = subprocess.run([tool, "--format", "json", *extra, dump], capture_output=True, text=True)
    check(p.returncode == 0, f"instr-report {' '.join(extra)} exit status 0 ({p.returncode})")
    return json.loads(p.stdout)


def leaf(rep):
    return [f for f in rep["functions"] if f["name"] == "leaf"][0]


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory() as work:
        proc, dumps = run_recorded(args.exe, work)
        dump = dumps[0]
        default = report(args.report, dump)
        nosig = report(args.report, dump, "--os-events=sched,syscall,fault")
    sees = default["session"]["programs"][0]["detector_sees"]
    in_leaf = int(proc.stdout.split("signals_in_leaf=")[1].split()[0])
    if "signal" not in sees or in_leaf < 20:
        print(f"skipped: detector sees {sees}, {in_leaf} signals in leaf")
        return 77
    d, n = leaf(default), leaf(nosig)
    k = d["flagged_by_kind"]
    check(k["signal"]["intervals"] >= in_leaf // 2,
          f"the detector saw the signals as kind signal ({k['signal']['intervals']} intervals, {in_leaf} signals in leaf)")
    # Signal time not shared with another kind: a lower bound of the time
    # flagged only by the program's own profiler.
    only = k["signal"]["ns"] - sum(k[o]["ns"] for o in ("sched", "syscall", "fault", "irq", "unknown"))
    ei = d["elapsed_inclusive_ns"]
    check(d["application_inclusive_ns"] <= ei - only,
          f"default: leaf loses its signal intervals (AI {d['application_inclusive_ns']/1e6:.2f} ms of EI {ei/1e6:.2f} ms, "
          f"signal-only >= {only/1e6:.2f} ms)")
    # On a loaded machine SIGPROF (sent at a scheduler tick) and a
    # preemption (decided at the same tick) often share an interval: that
    # time stays out (sched), and the lower bound is then <= 0.
    gain = n["application_inclusive_ns"] - d["application_inclusive_ns"]
    check(gain >= max(only, 0) and (gain > 0 or only <= 0),
          f"--os-events without signal gives them back (+{gain/1e6:.2f} ms, at least {max(only, 0)/1e6:.2f} ms; "
          f"AI {n['application_inclusive_ns']/1e6:.2f} ms)")
    check(nosig["session"]["os_events"] == "sched,syscall,fault", "the session says which kinds counted")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

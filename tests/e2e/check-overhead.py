#!/usr/bin/env python3
"""Probe-overhead compensation against the uninstrumented truth (overhead.c).

Runs the program RUNS times.  Each run times two workloads uninstrumented
(plain_caller, plain_ilp_caller: thread CPU time, summed over their
repetitions) and records the same workloads instrumented (caller,
ilp_caller).  The report's Elapsed Inclusive of each caller, compensated
(the default) and --raw, is compared with it.  On a loaded machine the
comparison uses on-CPU time: Elapsed Inclusive less the exact off-CPU time
of caller and leaf (the cpuclock backend); without that backend, wall time.

The CI test (the default) checks what holds on every machine: on every run,
the calls, compensated below raw, the Probe Overhead exactly raw -
compensated; over the runs' medians, compensated below raw and both callers
in a sanity window no machine state reaches (compensation takes out
neither most of the time nor nothing).

--precision (bench/, not gated by CI) adds the precision targets, which
depend on the machine: ilp_caller's leaf has a known cost (independent
arithmetic), its compensated value within 5 % of the truth (issue 12's
target); caller's leaf waits on its own stores, the case compensation
cannot get right (docs/reading-a-report.md: "Probe overhead"), in a wide window; raw visibly
above the truth."""
import argparse, glob, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures  # noqa: E402


def report(tool, dump, *extra):
    proc = subprocess.run([tool, "--format", "json", "--units", "ns", "--flagged", *extra, dump],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"instr-report exited {proc.returncode}")
    return json.loads(proc.stdout)


def one_run(args, work):
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%e.%p.instr"),
               # no sud: the program's own clock reads must not trap into
               # the plain runs' CPU time
               INSTR_DETECTOR="rseq_cs+cpuclock")
    proc = subprocess.run([args.exe], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write(proc.stdout)
    check(proc.returncode == 0, "program exit status 0")
    out = dict(kv.split("=") for kv in proc.stdout.split())
    dumps = glob.glob(os.path.join(work, "*.instr"))
    check(len(dumps) == 1, "one dump")
    comp, raw = report(args.report, dumps[0]), report(args.report, dumps[0], "--raw")
    for d in dumps:
        os.unlink(d)
    po = comp["session"].get("probe_overhead")
    check(po is not None and po["compensated"], "the dump has hook costs and compensation is on by default")
    check(raw["session"]["probe_overhead"]["compensated"] is False, "--raw: not compensated")
    hc = comp["session"]["programs"][0].get("hook_cost") or {}
    check(all(hc.get(k) and hc[k]["rounds"] > 0 for k in ("enter", "exit", "call", "return")),
          "the dump has every hook kind's cost: " +
          ", ".join(f"{k} {v['before_ticks']:.1f}+{v['after_ticks']:.1f}" for k, v in hc.items() if v))
    # The calibration records nothing of its own: no function, no thread.
    check(sorted(f["name"] for f in comp["functions"]) == ["caller", "ilp_caller", "ilp_leaf", "leaf"],
          "only the program's functions recorded (calibration invisible)")
    check(len(comp["threads"]) == 1, "one thread recorded")
    print(f"clamped {po['clamped_intervals']} of {po['intervals']} intervals, "
          f"{po['unpaid_ticks']} ticks unpaid")
    fc = {f["name"]: f for f in comp["functions"]}
    fr = {f["name"]: f for f in raw["functions"]}
    ratios = []
    for pre in ("", "ilp_"):  # the program's output keys carry the same prefix
        caller, leaf = pre + "caller", pre + "leaf"
        check(fc[leaf]["calls"] == int(out[pre + "calls"]), f"{leaf} called {out[pre + 'calls']} times")
        check(fc[caller]["calls"] == int(out["caller_calls"]), f"{caller} called as often as the program says")
        c, r = fc[caller], fr[caller]
        check(r["elapsed_inclusive_ticks"] - c["elapsed_inclusive_ticks"] == c["probe_overhead_ticks"] ==
              r["probe_overhead_ticks"],
              f"Probe Overhead of {caller} = raw EI - compensated EI, the same with --raw")
        if comp["session"]["off_cpu_exact"]:
            off = sum(f["off_cpu_ns"] for f in comp["functions"] if f["name"] in (caller, leaf))
            truth, unit = int(out[pre + "plain_cpu_ns"]), "on-CPU"
        else:
            off, truth, unit = 0, int(out[pre + "plain_wall_ns"]), "wall"
        # Per call: the plain times cover REPS repetitions, the callers'
        # values REPS + 1 (their warm-up call is recorded too).
        truth /= int(out[pre + "plain_calls"])
        comp_v = (c["elapsed_inclusive_ns"] - off) / int(out[pre + "calls"])
        raw_v = (r["elapsed_inclusive_ns"] - off) / int(out[pre + "calls"])
        rc, rr = comp_v / truth, raw_v / truth
        print(f"{caller}: ratio to uninstrumented ({unit}): compensated {rc:.3f}, raw {rr:.3f} "
              f"({truth:.1f} ns a call uninstrumented)")
        check(rc < rr, f"{caller}: compensated below raw")
        ratios.append((rc, rr))
    return ratios


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--precision", action="store_true",
                    help="check the machine-dependent precision targets too (a benchmark, not CI)")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.runs):
            runs.append(one_run(args, work))
    # The medians over the runs: one run may lose a share of its time to
    # stalls no detector sees (the host's, on a VM), on either side.
    def medians(i, caller, precision):
        ratios = [r[i] for r in runs]
        print(f"{caller} compensated/uninstrumented:", " ".join(f"{a:.3f}" for a, _ in ratios))
        print(f"{caller} raw/uninstrumented:        ", " ".join(f"{b:.3f}" for _, b in ratios))
        mc = sorted(a for a, _ in ratios)[len(ratios) // 2]
        mr = sorted(b for _, b in ratios)[len(ratios) // 2]
        if precision:
            check(mr >= 1.03, f"raw {caller} EI visibly above the uninstrumented time (median {mr:.3f} >= 1.03)")
        check(mc < mr, f"{caller}: compensated below raw (medians)")
        return mc

    ilp_c = medians(1, "ilp_caller", args.precision)
    c = medians(0, "caller", args.precision)
    if not args.precision:
        # Sanity, not precision: a fresh machine of another class had the
        # known-cost leaf at 1.051, a loaded VM the store-bound one at
        # 0.67 (see below); these bounds are far outside both.
        for name, mc in (("ilp_caller", ilp_c), ("caller", c)):
            check(0.4 <= mc <= 2.5, f"compensated {name} EI of the order of the uninstrumented time "
                  f"(median {mc:.3f} in [0.4, 2.5]; the precision is bench-compensation's)")
    else:
        # The known cost: within 5 %.
        check(0.95 <= ilp_c <= 1.05,
              f"compensated ilp_caller EI within 5 % of the uninstrumented time (median {ilp_c:.3f} in [0.95, 1.05])")
        # The window is what this project's loaded 2-core VM allows
        # (docs/performance.md: "Probe overhead"): a hook's cost is not a constant the start-up
        # measurement could catch exactly.  Next to a leaf whose loop waits on
        # its own stores, an out-of-order core runs part of the hooks' work in
        # the shadow of that wait: how much depends on the machine's state
        # (the leaf alone took 120 or 226 ticks a call on the same VM minutes
        # apart; the hooks added 85 and 50 ticks a call to it).  At its most
        # the shadow hides nearly all of them: on 2026-11-26 three runs of
        # this test in a row (after two CPU hogs had run beside it) had raw
        # 1.04-1.08 in all five processes, and compensation, subtracting what
        # the hooks cost at start, gave 0.67-0.70; the forty runs around them
        # gave 0.76-1.15.  The lower bound leaves room for that state.
        check(0.6 <= c <= 1.5, f"compensated caller EI near the uninstrumented time (median {c:.3f} in [0.6, 1.5])")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

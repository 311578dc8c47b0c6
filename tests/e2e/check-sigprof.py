#!/usr/bin/env python3
"""--os-events (issue 12, section 2) on a program that runs its own SIGPROF
profiler (tests/e2e/sigprof.c, the gperftools way: ITIMER_PROF and a
handler; leaf spins until three of its signals have landed in it; then
the same signal from a wall-clock timer into many short calls of step).

Checked:
  - the detector sees the signals as kind signal, and nearly all of leaf's
    time (>= 90%) is in intervals the program's own profiler flagged: by
    the definitions that time is not Application time, and with only
    `signal` counting (--os-events=signal) leaf keeps at most 10% of it;
  - --os-events=sched,syscall,fault (everything but signal) gives back
    exactly the intervals flagged by signal alone: leaf's Application time
    then equals, from the dump itself (instr-dump, raw ticks), the time of
    its intervals flagged by no other kind, and the default's the time of
    its unflagged ones; the same for step.
On a loaded machine most of leaf's intervals are also preempted (kind
sched, at the same scheduler tick as the CPU-time timer) and stay out
either way: what comes back is printed.  step's signals come from a
high-resolution timer, not at the tick: most of them land in an interval
nothing else flagged, so there the time given back is visible whatever the
load (more than half of its signals' intervals).  Exit 77 (skipped) when the detector cannot
tell a signal (no rseq_cs, sud or perf here) or no signal came."""
import json, subprocess, sys, tempfile

from e2e_check import check, failures, parse_args, run_recorded

OTHER = {"sched", "syscall", "fault", "irq", "unknown"}


def report(tool, dump, *extra):
    p = subprocess.run([tool, "--format", "json", "--raw", *extra, dump], capture_output=True, text=True)
    check(p.returncode == 0, f"instr-report {' '.join(extra)} exit status 0 ({p.returncode})")
    return json.loads(p.stdout)


def fn(rep, name):
    return [f for f in rep["functions"] if f["name"] == name][0]


def intervals(text, name):
    """(ticks, kinds) of every interval of the calls of NAME in thread 0: from
    its call site's CALL to the RETURN after it (NAME calls nothing).  An
    event's os= bits flag the interval it ends; a RUNTIME event's ticks are
    the runtime's (the next interval starts after them)."""
    sites = set()
    out, inside, prev = [], False, None
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        if tok[0] == "callsite" and "callee=" + name in tok:
            sites.add(tok[1])
        if tok[0] != "0" or len(tok) < 3:
            continue
        tick, ev = int(tok[1]), tok[2]
        kinds = set()
        for t in tok:
            if t.startswith("os="):
                kinds = set(t[3:].split(",")) - {"none"} or {"none"}
        if inside and prev is not None:
            out.append((tick - prev, kinds))
        if ev == "call" and tok[3] in sites:
            inside = True
        elif ev == "return" and inside:
            inside = False
        prev = tick + int(tok[3]) if ev == "runtime" else tick
    return out


def main():
    args = parse_args(dump_tool=True)
    with tempfile.TemporaryDirectory() as work:
        proc, dumps = run_recorded(args.exe, work)
        dump = dumps[0]
        default = report(args.report, dump)
        nosig = report(args.report, dump, "--os-events=sched,syscall,fault")
        onlysig = report(args.report, dump, "--os-events=signal")
        text = subprocess.run([args.dump_tool, dump], capture_output=True, text=True, check=True).stdout
    out = dict(kv.split("=") for kv in proc.stdout.split())
    sees = default["session"]["programs"][0]["detector_sees"]
    if "signal" not in sees or int(out["signals_in_leaf"]) < 10:
        print(f"skipped: detector sees {sees}, {out['signals_in_leaf']} signals in leaf")
        return 77
    d, s = fn(default, "leaf"), fn(onlysig, "leaf")
    ei = d["elapsed_inclusive_ticks"]
    ns_per_tick = d["elapsed_inclusive_ns"] / ei
    ms = lambda t: f"{t * ns_per_tick / 1e6:.2f} ms"
    k = d["flagged_by_kind"]
    check(k["signal"]["intervals"] >= int(out["full_calls"]),
          f"the detector saw the signals as kind signal ({k['signal']['intervals']} intervals; "
          f"{out['full_calls']} of {out['calls']} calls took 3 signals)")
    check(k["signal"]["ticks"] >= 0.9 * ei,
          f"nearly all of leaf's time is in intervals its profiler flagged ({ms(k['signal']['ticks'])} of {ms(ei)})")
    check(s["application_inclusive_ticks"] <= 0.1 * ei,
          f"--os-events=signal: leaf keeps {ms(s['application_inclusive_ticks'])} of {ms(ei)} as Application time")

    for name in ("leaf", "step"):
        d, n = fn(default, name), fn(nosig, name)
        ei = d["elapsed_inclusive_ticks"]
        iv = intervals(text, name)
        total = sum(t for t, _ in iv)
        clean = sum(t for t, kinds in iv if not kinds)
        alone = [t for t, kinds in iv if kinds and not kinds & (OTHER | {"none"})]
        slack = max(1, ei // 1000)  # a runtime event's share of a rounding; 0 in practice
        check(abs(total - ei) <= slack,
              f"{name}: the dump's intervals add up to its Elapsed Inclusive ({total} vs {ei} ticks)")
        check(abs(d["application_inclusive_ticks"] - clean) <= slack,
              f"{name}: by default its Application time is its unflagged intervals "
              f"({ms(d['application_inclusive_ticks'])}, dump {ms(clean)}, of {ms(ei)})")
        gain = n["application_inclusive_ticks"] - d["application_inclusive_ticks"]
        check(abs(gain - sum(alone)) <= slack,
              f"{name}: --os-events=sched,syscall,fault gives back exactly its {len(alone)} intervals flagged by "
              f"signal alone (+{ms(gain)}; dump {ms(sum(alone))})")
    steps = int(out["signals_in_step"])
    if steps >= 20:
        check(len(alone) >= steps // 2 and gain > 0,
              f"step: the wall-clock timer's signals mostly land in intervals nothing else flagged "
              f"({len(alone)} intervals for {steps} signals), and come back (+{ms(gain)})")
    else:
        print(f"no wall-clock timer check: {steps} signals in step")
    check(nosig["session"]["os_events"] == "sched,syscall,fault", "the session says which kinds counted")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

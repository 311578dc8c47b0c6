#!/usr/bin/env python3
"""End-to-end checks: run an instrumented test program, report its dump(s)
with instr-report --format json and assert what is stable: exact call
counts, shapes, the spec's invariants, and timing facts as generous ratios."""
import argparse, glob, json, os, shlex, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures  # noqa: E402


def run_program(exe, workdir, env_extra=None, runner=""):
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(workdir, "%e.%p.instr"))
    env.update(env_extra or {})
    proc = subprocess.run([*shlex.split(runner), exe], cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc


def report(tool, dumps, *extra):
    proc = subprocess.run([tool, "--format", "json", "--units", "ns", *extra, *dumps],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"instr-report exited {proc.returncode}")
    return json.loads(proc.stdout)


def functions(rep, name):
    """Entries whose demangled name is `name` or starts with `name(`."""
    return [f for f in rep["functions"] if f["name"] == name or f["name"].startswith(name + "(")]


def fn(rep, name):
    found = functions(rep, name)
    check(len(found) == 1, f"exactly one function named {name} (found {len(found)})")
    return found[0] if found else None


def check_invariants(rep):
    ee = ae = 0.0
    for f in rep["functions"]:
        ei, fee = f["elapsed_inclusive_ns"], f["elapsed_exclusive_ns"]
        ai, fae = f["application_inclusive_ns"], f["application_exclusive_ns"]
        ok = ei >= fee and ei >= ai >= fae and fee >= fae
        if not ok:
            check(False, f"EI>=EE, EI>=AI>=AE, EE>=AE for {f['name']}: {ei} {fee} {ai} {fae}")
        ee += f["elapsed_exclusive_pct"]
        ae += f["application_exclusive_pct"]
    check(abs(ee - 100) < 0.01, f"Elapsed Exclusive % adds up to 100 ({ee:.4f})")
    if any(f["application_inclusive_ns"] for f in rep["functions"]):
        check(abs(ae - 100) < 0.01, f"Application Exclusive % adds up to 100 ({ae:.4f})")


def repairs(rep, reason):
    return rep["session"]["repairs"].get(reason, 0)


def other_repairs(rep, *expected):
    return {k: v for k, v in rep["session"]["repairs"].items() if v and k not in expected}


def case_calls(args, rep, out):
    check(fn(rep, "fib")["calls"] == 21891, "fib(20) entered 21891 times")
    check(fn(rep, "leaf")["calls"] == 1000, "leaf entered 1000 times")
    check(fn(rep, "main")["calls"] == 1, "main entered once")
    check(not functions(rep, "hidden"), "no_instrument_function is not recorded")
    tiny = functions(rep, "tiny")
    if args.inline_before:
        check(len(tiny) == 1 and tiny[0]["calls"] == 1000, "before inlining: tiny recorded 1000 times")
    elif args.opt != "O0":
        check(not tiny, "after inlining: the inlined tiny has no frame")
    f = fn(rep, "fib")
    # Recursion: inclusive counted once per interval, so fib's EI cannot exceed main's.
    check(f["elapsed_inclusive_ns"] <= fn(rep, "main")["elapsed_inclusive_ns"], "recursive fib EI <= main EI")


def steal_ns():
    """The machine's steal time so far, all CPUs (/proc/stat, in USER_HZ
    ticks of 10 ms): time the hypervisor ran something else on a vCPU."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) * 10_000_000 if fields[0] == "cpu" and len(fields) > 8 else 0
    except OSError:
        return 0


def case_timing(args, rep, out):
    main_ns = int(out.split("main_ns=")[1].split()[0])
    sleeper, spinner, main = fn(rep, "sleeper"), fn(rep, "spinner"), fn(rep, "main")
    check(sleeper["elapsed_inclusive_ns"] >= 50e6 * 0.98, f"sleeper EI >= 50 ms ({sleeper['elapsed_inclusive_ns']/1e6:.2f} ms)")
    check(sleeper["application_inclusive_ns"] < 0.2 * sleeper["elapsed_inclusive_ns"],
          f"sleeper AI far below its EI ({sleeper['application_inclusive_ns']/1e6:.3f} ms)")
    # Busy code: Application time is its time on the CPU (the program's own
    # thread CPU clock), which is its Elapsed time on a quiet machine.  That
    # clock also counts what no value holds: the runtime's own work in the
    # thread (Runtime:, 5 ms of a 25-ms spinner in a loaded CI run) and the
    # hooks' cost when compensated.
    cpu_ns = int(out.split("spinner_cpu_ns=")[1].split()[0])
    ai = spinner["application_inclusive_ns"]
    lacks = rep["session"]["runtime_ns"] + (spinner["probe_overhead_ns"]
                                            if rep["session"]["probe_overhead"]["compensated"] else 0)
    check(0.8 * (cpu_ns - lacks) <= ai <= spinner["elapsed_inclusive_ns"],
          f"spinner AI close to its CPU time less the runtime's and the hooks' ({ai/1e6:.2f} ms, on CPU "
          f"{cpu_ns/1e6:.2f} ms less {lacks/1e6:.2f} ms, EI {spinner['elapsed_inclusive_ns']/1e6:.2f} ms)")
    # Exact off-CPU time (cpuclock backend): the sleep is off the CPU, and
    # the busy part is off it exactly as long as it was not on it.
    if rep["session"].get("off_cpu_exact"):
        sleep = fn(rep, "nanosleep")
        off = sleep["off_cpu_ns"]
        check(0.9 * sleep["elapsed_inclusive_ns"] <= off <= sleep["elapsed_inclusive_ns"],
              f"nanosleep off the CPU for its whole time ({off/1e6:.2f} of {sleep['elapsed_inclusive_ns']/1e6:.2f} ms)")
        busy = [f for f in rep["functions"] if f["name"] in ("spinner", "step", "clock_gettime")]
        busy_off = sum(f["off_cpu_ns"] for f in busy)
        # The thread's CPU clock also counts the hooks' own time, which a
        # compensated EI lacks (compare with the raw EI), and the runtime's
        # own work in the thread (Runtime:, which no value holds): off the
        # CPU is between raw EI - CPU and that plus the runtime's time.
        raw_ei = spinner["elapsed_inclusive_ns"] + (spinner["probe_overhead_ns"]
                                                    if rep["session"]["probe_overhead"]["compensated"] else 0)
        # Time the hypervisor stole from the vCPU is not on the thread's CPU
        # clock, and no detector in the guest sees it (the thread was never
        # switched out): it may be missing from the off-CPU time (19 ms of
        # a 50-ms spinner in one CI run on a busy host).
        preempted, runtime, stolen = raw_ei - cpu_ns, rep["session"]["runtime_ns"], args.stolen_ns
        check(preempted - stolen - 0.1 * raw_ei <= busy_off <= preempted + runtime + 0.1 * raw_ei,
              f"spinner off the CPU as long as it was preempted ({busy_off/1e6:.2f} ms, raw EI - CPU = "
              f"{preempted/1e6:.2f} ms, + runtime {runtime/1e6:.2f} ms, steal on the host {stolen/1e6:.0f} ms)")
    else:
        print("note: the cpuclock backend did not run: off-CPU checks skipped")
    # The runtime's own slow work (Runtime:) is cut from every value: main's
    # EI and it make the time the program measured (a loaded machine made
    # that work 11.8 ms of a 104.6-ms run, main's EI alone 0.890 of it).
    ratio = (main["elapsed_inclusive_ns"] + rep["session"]["runtime_ns"]) / main_ns
    check(0.9 <= ratio <= 1.1, f"main EI and the runtime's own work close to the run time measured by the program "
                               f"(ratio {ratio:.3f})")
    check(fn(rep, "step")["calls"] > 100, "step called many times")


def case_unwind(args, rep, out):
    inner, middle, outer = fn(rep, "inner"), fn(rep, "middle"), fn(rep, "outer")
    check(inner["calls"] == 3 and middle["calls"] == 3 and outer["calls"] == 3, "3 calls each of inner, middle, outer")
    # inner spins 10 ms per call, the catcher 30 ms: late closing would give inner ~40 ms per call.
    check(inner["elapsed_inclusive_ns"] < 0.5 * outer["elapsed_inclusive_ns"],
          f"frames closed when the exception was caught (inner {inner['elapsed_inclusive_ns']/1e6:.1f} ms, outer {outer['elapsed_inclusive_ns']/1e6:.1f} ms)")
    check(middle["elapsed_inclusive_ns"] < 0.5 * outer["elapsed_inclusive_ns"], "middle closed at the catch too")
    check(repairs(rep, "unwound_exception") == 6, f"6 exception exits counted ({repairs(rep, 'unwound_exception')})")
    check(not other_repairs(rep, "unwound_exception"), f"no other repairs ({other_repairs(rep, 'unwound_exception')})")


def case_jump(args, rep, out):
    deep2, top = fn(rep, "deep2"), fn(rep, "top")
    check(deep2["calls"] == 1 and fn(rep, "deep1")["calls"] == 1, "deep1 and deep2 entered once")
    check(deep2["elapsed_inclusive_ns"] < 0.5 * top["elapsed_inclusive_ns"],
          f"frames left by longjmp closed at the next hook (deep2 {deep2['elapsed_inclusive_ns']/1e6:.1f} ms, top {top['elapsed_inclusive_ns']/1e6:.1f} ms)")
    check(repairs(rep, "unwound_stack") == 2, f"2 frames left by longjmp closed ({rep['session']['repairs']})")
    check(not other_repairs(rep, "unwound_stack"), f"no other repairs ({other_repairs(rep, 'unwound_stack')})")


def case_threads(args, rep, out, dumps, tool):
    check(len(dumps) == 2, f"one dump per process ({len(dumps)})")
    parent = child = None
    for d in dumps:
        r = report(tool, [d])
        if functions(r, "child_work"):
            child = r
        else:
            parent = r
    if not (parent and child):
        check(False, "a parent dump and a child dump")
        return
    check(fn(parent, "work")["calls"] == 3000, "parent: work called 1000 + 2000 times")
    names = sorted(t.get("name", "") for t in parent["threads"])
    check("worker-1" in names and "worker-2" in names, f"thread names recorded ({names})")
    check(len(parent["threads"]) == 3, f"parent has 3 threads ({len(parent['threads'])})")
    check(fn(child, "work")["calls"] == 7 and fn(child, "child_work")["calls"] == 1, "child: its own calls only")
    check(fn(rep, "work")["calls"] == 3007, "merged session: 3007 calls of work")


CASES = {"calls": case_calls, "timing": case_timing, "unwind": case_unwind, "jump": case_jump,
         "threads": case_threads}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--opt", default="O2")
    ap.add_argument("--inline-before", action="store_true")
    # Another architecture's program (tests/aarch64): the command that runs
    # it, and the machine and ticks its dumps must say.
    ap.add_argument("--runner", default="", help="run the program through this command (qemu-aarch64-static ...)")
    ap.add_argument("--arch", help="the session's arch and tick source, as ARCH:TICKS (aarch64:cntvct_el0)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        before = steal_ns()
        proc = run_program(args.exe, work, runner=args.runner)
        args.stolen_ns = steal_ns() - before  # during the program's run (case_timing)
        check(proc.returncode == 0, f"program exit status unchanged (0, got {proc.returncode})")
        dumps = sorted(glob.glob(os.path.join(work, "*.instr")))
        check(len(dumps) >= 1, "a dump was written")
        if not dumps:
            return 1
        # timing compares with times the program measured itself, hooks
        # included: the raw values (no probe-overhead compensation).
        rep = report(args.report, dumps, *(["--raw"] if args.case == "timing" else []))
        check_invariants(rep)
        if args.arch:
            arch, ticks = args.arch.split(":")
            got = (rep["session"].get("arch"), rep["session"].get("tick_source"))
            check(got == (arch, ticks), f"the dump says {arch}, ticks {ticks} (report: {got})")
            check(rep["session"].get("tick_ns", 0) > 0, f"a tick's length is known ({rep['session'].get('tick_ns')})")
            text = subprocess.run([args.report, *dumps], capture_output=True, text=True, timeout=120).stdout
            line = next((ln for ln in text.splitlines() if ln.startswith("Machine:")), "")
            check(line.startswith(f"Machine:    {arch}; ticks: {ticks} at ") and "ns a tick" in line,
                  f"the text report's header says the machine, its ticks and their length ({line!r})")
        if args.case == "threads":
            case_threads(args, rep, proc.stdout, dumps, args.report)
        else:
            check(len(dumps) == 1, f"one dump ({len(dumps)})")
            CASES[args.case](args, rep, proc.stdout)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

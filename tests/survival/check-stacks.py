#!/usr/bin/env python3
"""Survival checks for programs that manage their own stacks (issue 14
item 7: ucontext coroutines; item 10b: small alternate signal stacks and
the program's view of its fatal-signal dispositions).  Runs one case
instrumented and checks what the program did and what the report says
against what the program counted itself.  Exit 77 = skipped."""
import glob, importlib.util, json, os, re, subprocess, sys, tempfile

_spec = importlib.util.spec_from_file_location(
    "survival_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py"))
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)
check, SKIP = sc.check, sc.SKIP


def run(exe, args, work, env=None):
    e = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%e.%p.instr"))
    e.pop("INSTR_LOG", None)
    e.update(env or {})
    return subprocess.run([exe, *args], cwd=work, env=e, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def counted(out):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^# (\S+) (\d+)$", out, re.M)}


def chrome_nests(a, work):
    """The Chrome export of the dumps in work: every thread's complete
    events nest (a suspended call is several segments, never a slice that
    overlaps another partly)."""
    out = os.path.join(work, "trace.json")
    dumps = sorted(glob.glob(os.path.join(work, "*.instr*")))
    p = subprocess.run([a.report, "--export", "chrome", "-o", out, *dumps],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"--export chrome exits 0 ({p.stderr.strip()[:200]})")
    if p.returncode:
        return
    doc = json.load(open(out))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    os.unlink(out)
    by_tid, total = {}, {}
    for e in events:
        if e.get("ph") == "X":
            by_tid.setdefault((e["pid"], e["tid"]), []).append((e["ts"], -e["dur"]))
            total[e["name"]] = total.get(e["name"], 0) + e["dur"] * 1000
    bad = 0
    for slices in by_tid.values():
        slices.sort()
        ends = []
        for ts, mdur in slices:
            end = ts - mdur
            while ends and ends[-1] <= ts + 0.002:
                ends.pop()
            if ends and end > ends[-1] + 0.002:
                bad += 1
            ends.append(end)
    check(bad == 0 and by_tid, f"the timeline's slices nest in each thread ({bad} overlap partly)")
    return total


def report(a, work):
    dumps = sorted(glob.glob(os.path.join(work, "*.instr*")))
    p = subprocess.run([a.report, "--format", "json", "--units", "ns", *dumps],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"instr-report exits 0 (got {p.returncode}: {p.stderr.strip()[:300]})")
    for d in dumps:
        os.unlink(d)
    return json.loads(p.stdout) if p.returncode in (0, 3) and p.stdout else None


def total_calls(rep, name):
    """Calls of the function's rows (not the pseudo-frame rows of call
    sites whose callee's entry came after a signal's events: the call is
    counted by the function's own row all the same)."""
    return sum(f["calls"] for f in rep["functions"] if f["name"] == name and not f.get("pseudo"))


DETECTORS = ("none", "sud", "perf", "cpuclock", "rseq_cs", "auto")


def case_altstack(a, work):
    """Item 10b: handlers on a 5,500 or 6,000-byte alternate signal stack
    calling instrumented functions, under every detector backend: the
    program exits 0 as it does plain (a second signal frame, sud's SIGSYS,
    does not fit there) and every handler's calls are in the report."""
    for det in DETECTORS:
        for size in ("5500", "6000"):
            for attempt in range(3):  # the timer lands somewhere else each run
                p = run(a.exe, ["altstack", size], work, {"INSTR_DETECTOR": det})
                check(p.returncode == 0, f"{det}, {size}-byte altstack, run {attempt}: exit 0 "
                      f"(got {p.returncode}: {p.stderr[:200]})")
                want = counted(p.stdout)
                rep = report(a, work)
                if p.returncode or not rep:
                    continue
                for name, calls in want.items():
                    got = total_calls(rep, name)
                    check(got == calls, f"{det}, {size}: {name} called {calls} times (report: {got})")


def case_dispositions(a, work):
    """Item 10b: a program that asks about its fatal-signal dispositions
    sees what it sees plain (SIG_DFL), not the runtime's crash handlers;
    SIGSYS excepted while the sud backend runs (it is sud's)."""
    plain = subprocess.run([a.plain, "dispositions"], capture_output=True, text=True, timeout=60)
    check(plain.returncode == 0 and "dfl" in plain.stdout, "the plain program runs")
    for det in DETECTORS:
        p = run(a.exe, ["dispositions"], work, {"INSTR_DETECTOR": det})
        check(p.returncode == 0, f"{det}: exit 0")
        rep = report(a, work)
        sudon = rep and "sud" in rep["session"].get("detector_set", "")
        for want, got in zip(plain.stdout.splitlines(), p.stdout.splitlines()):
            if sudon and want.startswith("Bad system call"):
                continue
            check(want == got, f"{det}: '{want}' instrumented too (got '{got}')")
        check(len(p.stdout.splitlines()) == len(plain.stdout.splitlines()), f"{det}: every signal listed")


def fn(rep, name):
    found = [f for f in rep["functions"] if f["name"] == name]
    return found[0] if len(found) == 1 else None


def case_coroutines(a, work):
    """Item 7: three stacks passing control round-robin with swapcontext.
    Calls exact, nothing repaired (each stack's frames nest on their own),
    and the switching function's own time per call is that of the same
    function without the switch (ping_cal), not the other stacks' work."""
    n = 20000
    for det in ("none", "auto", "rseq_cs"):
        # Each share is checked on the lowest of up to 3 runs: one
        # preemption of half a second landed in ping on a loaded machine
        # (95%, the others 5% in all); a shared shadow stack gives ping
        # nearly all of it in every run.
        lowest = {}
        for attempt in range(3):
            rep = coroutines_run(a, work, det, n, attempt)
            if not rep:
                break
            for name in ("ping", "pong1", "pong2"):
                pct = (fn(rep, name) or {}).get("elapsed_inclusive_pct", 100)
                lowest[name] = min(lowest.get(name, 100), pct)
            if max(lowest.values()) < 90:
                break
        for name in ("ping", "pong1", "pong2") if rep else ():
            check(lowest[name] < 90, f"{det}: {name}'s Elapsed Inclusive is its own stack's "
                  f"({lowest[name]}%, the lowest of {attempt + 1} run(s))")
        if rep:
            ratio_check(rep, det, n)


def coroutines_run(a, work, det, n, attempt):
    """One run of the coroutines program with detector det: the exact
    checks (calls, repairs, nesting); returns the report."""
    tag = f"{det}" if attempt == 0 else f"{det}, run {attempt}"
    p = run(a.exe, [str(n)], work, {"INSTR_DETECTOR": det})
    check(p.returncode == 0, f"{tag}: the program exits 0 (got {p.returncode}: {p.stderr[:200]})")
    want = counted(p.stdout)
    slices = chrome_nests(a, work) if det == "none" else None
    rep = report(a, work)
    if not rep:
        return None
    for name in ("ping", "pong1", "co1_body") if slices else ():
        f = fn(rep, name)
        ei = f and f["elapsed_inclusive_ns"]
        check(ei and abs(slices.get(name, 0) - ei) <= 0.02 * ei + 1000,
              f"{tag}: {name}'s slices on the timeline last its Elapsed Inclusive "
              f"({slices.get(name, 0):.0f} ns, report {ei} ns)")
    for name, calls in want.items():
        f = fn(rep, name)
        check(f is not None and f["calls"] == calls,
              f"{tag}: {name} called {calls} times (report: {f and f['calls']})")
    r = rep["session"]["repairs"]
    check(r["unwound_stack"] == 0 and r["unmatched_exits"] == 0 and r["runtime_unmatched_exits"] == 0,
          f"{tag}: no frame repaired: each stack keeps its own frames ({r})")
    # ping, pong1, pong2 and the two bodies are open (suspended or
    # running) when main returns: main's own stack closed cleanly.
    check(r["incomplete_frames"] <= 6, f"{tag}: only the coroutines' frames are left open ({r['incomplete_frames']})")
    # Each switching function's inclusive time is its own stack's work,
    # not the other two stacks' (they run while it is suspended): the
    # three shares add up to at most the whole (a shared shadow stack
    # nested them: ping nearly all of it, pong1 two thirds, pong2 a
    # third, 200% in all).  One share alone is about a third, but a
    # preemption on a loaded machine lands in one of them (ping 67% and
    # 95% were seen) or in the calibration loop (the three 78%), so each
    # is only checked to be well below the whole, in the best run.
    pcts = [(fn(rep, n) or {}).get("elapsed_inclusive_pct", 0) for n in ("ping", "pong1", "pong2")]
    check(sum(pcts) <= 120, f"{tag}: ping, pong1 and pong2 do not nest ({sum(pcts):.1f}% in all)")
    return rep


def ratio_check(rep, det, n):
    """The switching function's own time per call is that of the same
    function without the switch.  Application time, so a preemption (the
    machine is shared) is left out; rseq_cs alone, so no per-syscall check
    of sud's is in ping's intervals and not in ping_cal's."""
    if det != "rseq_cs" or rep["session"].get("detector_set") != "rseq_cs":
        return
    cal, ping = fn(rep, "ping_cal"), fn(rep, "ping")
    if cal and ping:
        per_cal = cal["application_exclusive_ns"] / n
        per_ping = ping["application_exclusive_ns"] / n
        check(per_ping <= 8 * per_cal + 200,
              f"{det}: ping's own time per call {per_ping:.0f} ns is that of ping_cal's "
              f"({per_cal:.0f} ns), not the other stacks' work")
        sw = fn(rep, "swapcontext")
        check(sw is not None and sw["calls"] == 3 * n, f"{det}: swapcontext called {3 * n} times")


CASES = {"coroutines": case_coroutines, "altstack": case_altstack, "dispositions": case_dispositions}


def main():
    return sc.cases_main(CASES, ("--plain", dict(help="the uninstrumented twin (dispositions)")))


if __name__ == "__main__":
    sys.exit(main())

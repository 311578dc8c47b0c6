#!/usr/bin/env python3
"""Overhead benchmark, run side by side in one invocation (machines here are
noisy: medians of interleaved runs, and ratios).

Reports, for the call-heavy program:
  - ns per instrumented call (enter+exit, dump writing included) for instr and
    for -finstrument-functions with empty hooks, both against the plain build;
    instr's default build (callsites=all) also has call-site hooks around
    every call, so its figure is per call with four hooks; --variant adds
    other instr builds (callsites=external, none), per call of the same
    program (the call count of the default build);
  - bytes per event of the dump;
  - instr-report's events per second and peak memory on that dump.
"""
import argparse, glob, json, os, resource, statistics, subprocess, sys, tempfile, time


def timed(cmd, env=None, cwd=None):
    start = time.perf_counter()
    pid = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL).pid
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[0]} failed with status {status}")
    return elapsed, usage.ru_maxrss * 1024


def main():
    # The report's speed is its walk: no profile kept from an earlier
    # report of the same dump (tools/model/profile-cache.h).
    os.environ["INSTR_REPORT_CACHE"] = "off"
    ap = argparse.ArgumentParser()
    for k in ("plain", "cyg", "instr", "report"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--variant", action="append", default=[], help="NAME=PATH: another instr build to time")
    ap.add_argument("--scale", default="2")
    a = ap.parse_args()
    for k in ("plain", "cyg", "instr", "report"):
        setattr(a, k, os.path.abspath(getattr(a, k)))
    variants = dict(v.rsplit("=", 1) for v in a.variant)
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "bench.%p.instr"))
        times = {"plain": [], "cyg": [], **{k: [] for k in variants}, "instr": []}
        exe = {"plain": a.plain, "cyg": a.cyg, "instr": a.instr, **{k: os.path.abspath(p) for k, p in variants.items()}}
        for _ in range(a.runs):
            for k in times:
                for f in glob.glob(os.path.join(work, "*.instr")):
                    os.unlink(f)
                times[k].append(timed([exe[k], a.scale], env=env, cwd=work)[0])
        dump = glob.glob(os.path.join(work, "*.instr"))[0]
        out = subprocess.run([a.report, "--format", "json", dump], capture_output=True, text=True, check=True)
        rep = json.loads(out.stdout)
        # Calls of instrumented functions (the program's calls); the events
        # also count the call-site hooks (pseudo-frames and merged sites).
        calls = sum(f["calls"] for f in rep["functions"] if not f.get("pseudo"))
        events = rep["session"]["events"]
        size = os.path.getsize(dump)
        report_times, peak = [], 0
        for _ in range(max(3, a.runs // 2)):
            t, rss = timed([a.report, "--format", "csv", dump])
            report_times.append(t)
            peak = max(peak, rss)
    med = {k: statistics.median(v) for k, v in times.items()}
    per_call = lambda k: (med[k] - med["plain"]) / calls * 1e9
    best = lambda k: (min(times[k]) - min(times["plain"])) / calls * 1e9
    print(f"calls: {calls}  (runs: {a.runs}, medians of interleaved runs; fastest in brackets)")
    print(f"plain: {med['plain']*1e3:.1f} ms   -finstrument-functions+empty hooks: {med['cyg']*1e3:.1f} ms   instr: {med['instr']*1e3:.1f} ms")
    print(f"ns per call, instr (callsites=all: enter, exit and the call site's two hooks): {per_call('instr'):.1f} [{best('instr'):.1f}]")
    for k in variants:
        print(f"ns per call, instr {k}: {per_call(k):.1f} [{best(k):.1f}]   ({med[k]*1e3:.1f} ms)")
    # instr against the bare recorder (rdtsc + a 16-byte store per hook,
    # nothing else) through the same binding: what the runtime adds.
    for mode, ours in (("all", "instr"), ("none", "callsites=none")):
        bare = f"bare-recorder,callsites={mode}"
        if bare in med and ours in med:
            print(f"ratio instr / bare recorder, callsites={mode}:    {per_call(ours)/max(per_call(bare),1e-9):.2f}")
    print(f"ns per call (enter+exit), empty cyg hooks:       {per_call('cyg'):.1f}")
    print(f"ratio instr / empty cyg hooks:                   {per_call('instr')/max(per_call('cyg'),1e-9):.2f}")
    print(f"dump: {size} bytes for {events} events = {size/events:.2f} bytes/event (file size, chunk headers and padding included)")
    rt = statistics.median(report_times)
    print(f"instr-report: {events/rt/1e6:.1f} M events/s ({rt*1e3:.0f} ms), peak RSS {peak/2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The hybrid's promise on a real program (issue 9 target): the instrumented
values of a run with INSTR_SAMPLE=1000 equal those of the same run without
it, within noise, Application time included.  Not gated by CI: the numbers
go in the notes.

Lua 5.4 built with the plugin (defaults, -O2 -g; Debian's source fetched by
bench/run-real.py's fetch_lua into BUILD/real/src once) runs
bench/real/bench.lua, rounds interleaved: without sampling, then with
INSTR_SAMPLE=1000.  Per variant, medians (min-max) over the rounds of:

  - main's Elapsed, Application and CPU Inclusive (ms); the run's calls;
  - intervals flagged as OS activity, and of them those flagged as a
    signal (sampling delivers none: this must not move);
  - the Elapsed and Application Exclusive of the 8 functions with the most
    Elapsed Exclusive time (in the first run without sampling);

then each value's paired ratio (with / without, the median of the rounds'
ratios), and from the sampled runs' --view samples: samples, the rate
achieved, lost, the share of samples inside the runtime, and how many of
the 8 functions the report flags as disagreeing.

  bench/hybrid-values.py --build build [--runs 7] [--scale 2]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchutil import run_real

HERE = os.path.dirname(os.path.abspath(__file__))


def report(rep, dump, *args):
    r = subprocess.run([rep, "--format", "json", "--units", "ms", *args, dump], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        raise SystemExit("instr-report %s failed: %s" % (dump, r.stderr))
    return json.loads(r.stdout)


def values(rep, dump, top):
    j = report(rep, dump)
    f = {x["name"]: x for x in j["functions"]}
    m = f["main"]
    v = {"main EI ms": m["elapsed_inclusive_ns"] / 1e6, "main AI ms": m["application_inclusive_ns"] / 1e6,
         "main CPU incl ms": m["cpu_inclusive_ns"] / 1e6,
         "calls": sum(x["calls"] for x in j["functions"] if not x.get("pseudo")),
         "flagged intervals": sum(x["flagged_intervals"] for x in j["functions"]),
         "flagged as signal": sum(x["flagged_by_kind"]["signal"]["intervals"] for x in j["functions"])}
    if top is None:
        top = [x["name"] for x in sorted(j["functions"], key=lambda x: -x["elapsed_exclusive_ns"])[:8]]
    for n in top:
        x = f.get(n, {})
        v["%s EE ms" % n] = x.get("elapsed_exclusive_ns", 0) / 1e6
        v["%s AE ms" % n] = x.get("application_exclusive_ns", 0) / 1e6
    return v, top


def mmm(v):
    return "%.1f (%.1f-%.1f)" % (statistics.median(v), min(v), max(v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="instr build directory (plugin/instr.so, bin/instr-report)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--scale", default="2")
    ap.add_argument("--rate", default="1000")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    plugin, rep = os.path.join(b, "plugin", "instr.so"), os.path.join(b, "bin", "instr-report")
    cache = os.path.join(b, "real")
    rr = run_real()
    files, cflags, libs = rr.lua_sources(rr.fetch_lua(cache))
    work = tempfile.mkdtemp(prefix="instr-hybrid-values-")
    try:
        lua = rr.build(os.path.join(work, "lua"), "gcc", files, ["-g", *cflags], libs, ["-fplugin=" + plugin])
        cmd = [lua, os.path.join(HERE, "real", "bench.lua"), a.scale]
        env = {k: v for k, v in os.environ.items() if not k.startswith("INSTR_")}
        variants = {"without": {}, "INSTR_SAMPLE=" + a.rate: {"INSTR_SAMPLE": a.rate}}
        res = {k: [] for k in variants}
        hyb = []
        top = None
        for i in range(a.runs):
            for name, extra in variants.items():
                dump = os.path.join(work, "run.instr")
                if os.path.exists(dump):
                    os.unlink(dump)
                subprocess.run(cmd, env=dict(env, INSTR_OUTPUT=dump, **extra), check=True, cwd=work,
                               stdout=subprocess.DEVNULL)
                v, top = values(rep, dump, top)
                res[name].append(v)
                if extra:
                    h = report(rep, dump, "--view", "samples")
                    s = h["session"]
                    fl = {x["name"]: x for x in h["functions"]}
                    hyb.append((s["samples"], s["rate_achieved_hz"], s["lost"], s["in_runtime_pct"],
                                sum(1 for n in top if fl.get(n, {}).get("disagree"))))
            print("round %d/%d done" % (i + 1, a.runs), file=sys.stderr)
        w, s = list(variants)
        print("lua 5.4 bench.lua %s built with the plugin, %d interleaved rounds, medians (min-max), %d CPUs"
              % (a.scale, a.runs, os.cpu_count()))
        print("%-28s %24s %24s %8s" % ("value", w, s, "paired"))
        for k in res[w][0]:
            x = [r[k] for r in res[w]]
            y = [r[k] for r in res[s]]
            ratios = [q / p for p, q in zip(x, y) if p]
            print("%-28s %24s %24s %8s" % (k, mmm(x), mmm(y), "%.3f" % statistics.median(ratios) if ratios else "-"))
        print("(paired: median over rounds of the sampled run's value / that round's run without)")
        print("--view samples: samples %s; rate achieved %s Hz; lost %s; in the runtime %s %%; "
              "disagreeing among the 8: %s" % tuple([round(h[k], 1) for h in hyb] for k in range(5)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

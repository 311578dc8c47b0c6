#!/usr/bin/env python3
"""switchable's cost on Lua 5.4 (not gated by CI; needs perf for --perf).

Builds Lua (Debian source, as bench/run-real.py does) plain, with instr's
defaults, and with -fplugin-arg-instr-switchable, then runs
bench/real/bench.lua interleaved (every variant once per round):
  plain | switchable, INSTR_START=off | switchable, started | default build
and prints medians (min-max), the ratio to plain (stopped) or to the
default build (started), and ns per call = (median - plain median) / calls
of instrumented functions (the default build's dump).

Counts: the started switchable dump's calls per function against the
default build's (both hook the code after inlining, so they must be equal).

--perf: perf record -e cpu-clock -F 10000 of plain (twice: the noise floor)
and of the stopped switchable build, and the distance of the distributions
by the method of the fidelity research (total variation over functions,
libc/libm/ld.so grouped, kernel dropped; copies named NAME.instr_on.N
folded into NAME).

Usage: bench/switch-bench.py --build BUILD [--runs 5] [--scale 1] [--perf]
"""
import argparse, collections, json, os, re, statistics, subprocess, sys

from benchutil import interleaved, lua_builds, perf_user_rows, run_real  # noqa: E402
rr = run_real()

LIBS = re.compile(r"^(libc|libm|ld-linux|libstdc\+\+|libgcc)")


def perf_shares(cmd, env, cwd, out):
    rr.sh(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-o", out, "--", *cmd], env=env, cwd=cwd)
    text = rr.sh(["perf", "report", "-i", out, "--no-children", "--sort", "dso,sym", "--stdio", "-q"])
    shares = collections.Counter()
    for pct, dso, sym in perf_user_rows(text):
        if LIBS.match(dso):
            sym = "<libs>"
        sym = re.sub(r"\.instr_on\.\d+$", "", sym)
        shares[sym] += pct
    total = sum(shares.values())
    return {k: 100 * v / total for k, v in shares.items()}


def distance(p, q):
    return 0.5 * sum(abs(p.get(k, 0) - q.get(k, 0)) for k in set(p) | set(q))


def calls_by_function(report, dump):
    rep = json.loads(rr.sh([report, "--format", "json", dump], ok=(0, 3)))
    return {f["name"]: f["calls"] for f in rep["functions"] if not f.get("pseudo")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", default="1")
    ap.add_argument("--perf", action="store_true")
    a = ap.parse_args()
    exes, report, args, work = lua_builds(a.build, "switch", (
        ("plain", []), ("default", ["-fplugin={plugin}"]),
        ("switchable", ["-fplugin={plugin}", "-fplugin-arg-instr-switchable"])))
    args.append(a.scale)
    base = dict(os.environ, INSTR_LOG="none")
    runs = [("plain", "plain", {}), ("stopped", "switchable", {"INSTR_START": "off"}),
            ("started", "switchable", {}), ("default", "default", {})]
    times, dumps = interleaved(exes, args, runs, work, a.runs)
    default_calls = calls_by_function(report, dumps["default"])
    started_calls = calls_by_function(report, dumps["started"])
    calls = sum(default_calls.values())
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"Lua 5.4, bench.lua {a.scale}, {a.runs} interleaved runs; {calls} calls of instrumented functions")
    for label, _, _ in runs:
        v = times[label]
        line = f"  {label:10s} {med[label]:.3f} s ({min(v):.3f}-{max(v):.3f})"
        if label == "stopped":
            line += f"  {med[label] / med['plain']:.3f}x plain, {(med[label] - med['plain']) * 1e9 / calls:+.2f} ns/call"
        if label in ("started", "default"):
            line += f"  {med[label] / med['default']:.3f}x default, {(med[label] - med['plain']) * 1e9 / calls:.1f} ns/call over plain"
        print(line)
    diff = {k: (default_calls.get(k), started_calls.get(k)) for k in set(default_calls) | set(started_calls)
            if default_calls.get(k) != started_calls.get(k)}
    print(f"  counts: {len(default_calls)} functions in the default dump, {len(started_calls)} in the started one; "
          f"{len(diff)} differ" + (f": {sorted(diff.items())[:10]}" if diff else ""))
    if os.path.exists(os.path.join(work, "run-stopped", "lua.instr")):
        print("  stopped run wrote a dump:",
              sum(calls_by_function(report, os.path.join(work, "run-stopped", "lua.instr")).values()), "calls")
    if a.perf:
        d = os.path.join(work, "perf")
        os.makedirs(d, exist_ok=True)
        p1 = perf_shares([exes["plain"], *args], base, d, os.path.join(d, "plain1.data"))
        p2 = perf_shares([exes["plain"], *args], base, d, os.path.join(d, "plain2.data"))
        s = perf_shares([exes["switchable"], *args], dict(base, INSTR_START="off"), d, os.path.join(d, "stopped.data"))
        print(f"  perf: plain vs plain {distance(p1, p2):.1f} points (noise floor); "
              f"stopped switchable vs plain {distance(s, p1):.1f} and {distance(s, p2):.1f}")
        top = sorted(p1, key=lambda k: -p1[k])[:8]
        print("   " + ", ".join(f"{k} {p1[k]:.1f}/{p2.get(k, 0):.1f}/{s.get(k, 0):.1f}" for k in top)
              + "  (plain/plain/stopped %)")


if __name__ == "__main__":
    main()

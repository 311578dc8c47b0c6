#!/usr/bin/env python3
"""The record-time filters' cost and effect on Lua 5.4 (not gated by CI).

Builds Lua (Debian source, as bench/run-real.py does) plain and with
instr's defaults, then runs bench/real/bench.lua interleaved (every
variant once per round):
  plain | defaults | INSTR_DEPTH=1000 (filters on, nothing left out: the
  slow path every hook then takes) | INSTR_DEPTH=4 | INSTR_MIN_DURATION=1us
  | INSTR_TRIGGER=sort:on,sort:off (Lua's table.sort only)
and prints per variant the median wall time (min-max), its ratio to the
defaults, the dump's size, the calls the report counts and the calls the
filters left out (the header's counts), and the report's wall time.

Usage: bench/filter-bench.py --build BUILD [--runs 5] [--scale 1]
"""
import argparse, json, os, statistics, subprocess, time

from benchutil import interleaved, lua_builds  # noqa: E402

VARIANTS = [("plain", "plain", {}), ("defaults", "instr", {}),
            ("depth=1000", "instr", {"INSTR_DEPTH": "1000"}),
            ("depth=4", "instr", {"INSTR_DEPTH": "4"}),
            ("min=1us", "instr", {"INSTR_MIN_DURATION": "1us"}),
            ("trigger sort", "instr", {"INSTR_TRIGGER": "sort:on,sort:off"})]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", default="1")
    a = ap.parse_args()
    exes, report, args, work = lua_builds(a.build, "filter", (("plain", []), ("instr", ["-fplugin={plugin}"])))
    args.append(a.scale)
    times, dumps = interleaved(exes, args, VARIANTS, work, a.runs)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"Lua 5.4, bench.lua {a.scale}, {a.runs} interleaved runs (medians, min-max)")
    for label, _, _ in VARIANTS:
        v = times[label]
        line = f"  {label:13s} {med[label]:.3f} s ({min(v):.3f}-{max(v):.3f})"
        if label != "plain":
            dump = dumps[label]
            t0 = time.monotonic()
            rep = json.loads(subprocess.run([report, "--format", "json", dump], capture_output=True,
                                            text=True).stdout)
            rt = time.monotonic() - t0
            calls = sum(f["calls"] for f in rep["functions"] if not f.get("pseudo"))
            flt = rep["session"]["programs"][0].get("filters", {})
            left = flt.get("filtered_depth", 0) + flt.get("filtered_short", 0) + flt.get("filtered_off", 0)
            line += (f"  {med[label] / med['defaults']:.2f}x defaults, dump {os.path.getsize(dump) / 1e6:.1f} MB, "
                     f"{calls} calls recorded, {left} left out, report {rt:.2f} s")
        print(line)


if __name__ == "__main__":
    main()

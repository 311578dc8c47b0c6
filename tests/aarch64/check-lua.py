#!/usr/bin/env python3
"""Lua 5.4 (Debian's source, INSTR_LUA_SOURCE) built four ways: plain and
instrumented, for x86-64 and (cross) for aarch64; bench/real/bench.lua run
by each (aarch64 under qemu).  Checks: the four print the same; both
instrumented builds' dumps report the same functions; the calls of
each function are equal except where the two compilers made different
calls (builtins such as memcpy expanded inline by one and called by the
other, both counted as call sites of uninstrumented callees), which are
printed, and the totals within 0.5%.  Lua's own functions that differ
are printed too: luaS_new's string cache is keyed by addresses, so a few
string creations differ with the memory layout.
  check-lua.py --src DIR --plugin PLUGIN --cross-plugin PLUGIN --report REPORT --runner CMD --workload LUA"""
import argparse, json, os, shlex, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures  # noqa: E402


def calls(report, dumps):
    p = subprocess.run([report, "--format", "json", *dumps], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise SystemExit(p.stderr)
    out = {}
    for f in json.loads(p.stdout)["functions"]:
        out[f["name"]] = out.get(f["name"], 0) + f["calls"]
    return out


def main():
    ap = argparse.ArgumentParser()
    for a in ("--src", "--plugin", "--cross-plugin", "--report", "--runner", "--workload"):
        ap.add_argument(a, required=True)
    ap.add_argument("--major", default="12")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        inc = os.path.join(work, "inc")
        os.mkdir(inc)
        with open(os.path.join(inc, "lua5.4-deb-multiarch.h"), "w") as f:
            f.write('#define DEB_HOST_MULTIARCH "lua-test"\n')
        files = [os.path.join(a.src, f) for f in sorted(os.listdir(a.src)) if f.endswith(".c") and f != "luac.c"]
        # bench/run-real.py's flags: Lua's randomness made constant.
        flags = ["-O2", "-I" + inc, "-DLUA_USE_POSIX", "-Dl_randomizePivot()=0u", "-Dluai_makeseed(L)=0u"]
        builds = {"x86-plain": ("gcc-" + a.major, []), "x86-instr": ("gcc-" + a.major, ["-fplugin=" + a.plugin]),
                  "arm-plain": ("aarch64-linux-gnu-gcc-" + a.major, []),
                  "arm-instr": ("aarch64-linux-gnu-gcc-" + a.major, ["-fplugin=" + a.cross_plugin])}
        outs, dumps = {}, {}
        for name, (cc, extra) in builds.items():
            exe = os.path.join(work, "lua-" + name)
            subprocess.run([cc, *flags, *extra, "-o", exe, *files, "-lm"], check=True)
            d = os.path.join(work, name)
            os.mkdir(d)
            runner = shlex.split(a.runner) if name.startswith("arm") else []
            p = subprocess.run([*runner, exe, a.workload, "1"], capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, INSTR_OUTPUT=os.path.join(d, "%e.%p.instr")))
            check(p.returncode == 0, f"{name} exits 0 ({p.returncode})")
            outs[name] = p.stdout
            dumps[name] = [os.path.join(d, f) for f in os.listdir(d)]
        check(len(set(outs.values())) == 1, "the four builds print the same")
        x, r = calls(a.report, dumps["x86-instr"]), calls(a.report, dumps["arm-instr"])
        check(set(x) == set(r), f"the same functions ({sorted(set(x) ^ set(r))[:10]})")
        same = [n for n in x if x[n] == r.get(n)]
        differ = sorted((n for n in x if x[n] != r.get(n)), key=lambda n: -abs(x[n] - r.get(n, 0)))
        print(f"{len(same)} of {len(x)} functions with equal calls; x86-64 {sum(x.values())} calls, "
              f"aarch64 {sum(r.values())}")
        for n in differ:
            print(f"  differ: {n}: x86-64 {x[n]}, aarch64 {r.get(n)}")
        tx, tr = sum(x.values()), sum(r.values())
        check(abs(tx - tr) <= 0.005 * tx, f"total calls within 0.5% ({tx}, {tr})")
        check(len(differ) <= 0.05 * len(x), f"at most 5% of the functions differ ({len(differ)} of {len(x)})")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Real-program benchmark (not gated by CI: numbers move +-10% here).

Real programs, each built uninstrumented, with the bare recorder (rdtsc + a
16-byte store per hook through -finstrument-functions: bench/bare-recorder.c,
the floor), with instr at callsites=all (the default), external and none, and
with -finstrument-functions for `uftrace record` (the peer; its -pg mode,
which rewrites return addresses, crashes on Lua's coroutines: longjmp;
its PLT hooks crash there too, hence --no-libcall):
  - Lua 5.4 from Debian's source package, fetched with apt-get source into
    BUILD/real/src through a private apt configuration (deb-src lines
    copied from the deb entries of the system's apt sources, which are not
    touched: scripts/apt_sources.py), running bench/real/bench.lua;
  - the test suite of double-conversion (Google's C++ library for
    correctly rounded number <-> text conversion, used by V8 and Firefox),
    Debian's source fetched the same way: cctest running every test, 44 M
    calls of instrumented functions (the C++ program);
  - with --only shapes, examples/shapes.cpp from this repository (virtual
    calls, a template, exceptions; 19 k calls in 5 ms: too small for
    per-call figures).
--before PLUGIN adds the instr builds made with another plugin (e.g. main's
build directory), so a change is measured side by side in one run.

Runs are interleaved (every build once per round), medians with min-max.
ns per call = (median - plain median) / calls of instrumented functions in
the callsites=all dump.  Prints the targets of issue 10 beside the numbers.

Usage: bench/run-real.py --build BUILD [--before OTHER_BUILD/plugin/instr.so]
       [--runs 5] [--scale 1] [--only lua|dconv|shapes] [--no-uftrace] [--user UID]
"""
import argparse, hashlib, glob, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import apt_sources  # noqa: E402  (the machine's own apt archives, as deb-src)


def sh(cmd, ok=(0,), **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode not in ok:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def fetch_lua(cache):
    """Debian's lua5.4 source, unpacked under cache/src (once)."""
    return os.path.dirname(fetch_debian_source(cache, "lua5.4", os.path.join("lua5.4-*", "src", "lua.c")))


def fetch_dconv(cache):
    """Debian's double-conversion source, unpacked under cache/src (once)."""
    probe = os.path.join("double-conversion-*", "test", "cctest", "cctest.cc")
    return os.path.dirname(os.path.dirname(os.path.dirname(fetch_debian_source(cache, "double-conversion", probe))))


def dconv_sources(src):
    files = sorted(glob.glob(os.path.join(src, "double-conversion", "*.cc")) +
                   glob.glob(os.path.join(src, "test", "cctest", "*.cc")))
    return files, ["-I" + src], []


def fetch_debian_source(cache, package, probe):
    """The path matching probe under cache/src, after `apt-get source
    package` there if nothing matches yet."""
    found = glob.glob(os.path.join(cache, "src", probe))
    if found:
        return found[0]
    apt = os.path.join(cache, "apt")
    for d in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(apt, d), exist_ok=True)
    lines = apt_sources.deb_src_lines()
    if not lines:
        raise SystemExit("apt has no deb entry to fetch sources from (/etc/apt/sources.list, sources.list.d)")
    with open(os.path.join(apt, "sources.list"), "w") as f:
        f.write(lines)
    opts = ["-o", f"Dir::Etc::SourceList={apt}/sources.list", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache={apt}/cache", "-o", "Debug::NoLocking=1"]
    sh(["apt-get", *opts, "update"])
    os.makedirs(os.path.join(cache, "src"), exist_ok=True)
    sh(["apt-get", *opts, "source", package], cwd=os.path.join(cache, "src"))
    found = glob.glob(os.path.join(cache, "src", probe))
    if not found:
        raise SystemExit(f"apt-get source {package}: no {probe}")
    return found[0]


def lua_sources(src):
    inc = os.path.join(os.path.dirname(src), "..", "deb-inc")
    os.makedirs(inc, exist_ok=True)
    with open(os.path.join(inc, "lua5.4-deb-multiarch.h"), "w") as f:
        f.write('#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n')
    files = [os.path.join(src, f) for f in sorted(os.listdir(src)) if f.endswith(".c") and f != "luac.c"]
    # Lua's own randomness made constant, in every build alike: table.sort's
    # pivots (from clock() and time()) and the string hash seed (from time()
    # and addresses), so the calls a run makes repeat from run to run and
    # compare with callgrind's on the plain build (bench/fidelity.py).
    deterministic = ["-Dl_randomizePivot()=0u", "-Dluai_makeseed(L)=0u"]
    return files, ["-I" + inc, "-DLUA_USE_POSIX", *deterministic], ["-lm"]


def build(out, compiler, sources, cflags, libs, extra, extra_objs=(), fresh=False):
    """Compiles and links sources into out + a digest of the command's flags
    (a change of flags builds again), unless that exists and not fresh.
    Returns the executable's path."""
    flags = repr((compiler, list(cflags), list(extra), list(libs), [os.path.basename(o) for o in extra_objs]))
    out = out + "-" + hashlib.sha1(flags.encode()).hexdigest()[:8]
    if os.path.exists(out) and not fresh:
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    sh([compiler, "-O2", *cflags, *extra, "-o", out + ".tmp", *sources, *extra_objs, *libs])
    os.rename(out + ".tmp", out)
    return out


def variants(plugin, before, uftrace=True):
    v = {"plain": [], "bare recorder (floor)": ["-finstrument-functions"]}
    if uftrace:
        v["uftrace record"] = ["-finstrument-functions"]
    for mode in ("all", "external", "none"):
        v[f"instr callsites={mode}"] = [f"-fplugin={plugin}", f"-fplugin-arg-instr-callsites={mode}"]
    # Exact calls and call edges without time: instr's count mode and gprof.
    v["instr mode=count"] = [f"-fplugin={plugin}", "-fplugin-arg-instr-mode=count"]
    v["gprof -pg"] = ["-pg"]
    if before:
        for mode in ("all", "none"):
            v[f"before: instr callsites={mode}"] = [f"-fplugin={before}", f"-fplugin-arg-instr-callsites={mode}"]
        v["before: instr mode=count"] = [f"-fplugin={before}", "-fplugin-arg-instr-mode=count"]
    return v


def timed(cmd, env, cwd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{cmd} failed: {err}")
    return wall, ru.ru_utime + ru.ru_stime


def du(path):
    if os.path.isdir(path):
        files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
    else:
        files = [path]
    return sum(os.path.getsize(f) for f in files), sum(os.stat(f).st_blocks * 512 for f in files)


def mmm(v):
    return f"{statistics.median(v)*1e3:8.1f} ({min(v)*1e3:.0f}-{max(v)*1e3:.0f})"


def bench_program(name, exes, args, report, runs, work, user=None):
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%e.%p.instr"))
    as_user = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    times = {k: [] for k in exes}
    cpu = {k: [] for k in exes}
    info = {k: {} for k in exes}
    for r in range(runs):
        for k, exe in exes.items():
            d = os.path.join(work, re.sub(r"[^a-z0-9]+", "-", k.lower()))
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            if user is not None:
                os.chmod(d, 0o1777)
            cmd = [exe, *args]
            if k.startswith("uftrace"):
                cmd = ["uftrace", "record", "--no-libcall", "-d", os.path.join(d, "uftrace.data"), *cmd]
            w, c = timed(as_user + cmd, dict(env, INSTR_OUTPUT=os.path.join(d, "%e.%p.instr")), d)
            times[k].append(w)
            cpu[k].append(c)
            if r == runs - 1:  # keep the last round's output to measure
                dumps = glob.glob(os.path.join(d, "*.instr"))
                if dumps:
                    info[k]["dump"] = dumps[0]
                elif k.startswith("uftrace"):
                    info[k]["dump"] = os.path.join(d, "uftrace.data")
                elif os.path.exists(os.path.join(d, "gmon.out")):
                    info[k]["dump"] = os.path.join(d, "gmon.out")
    calls = None
    rows = []
    for k in exes:
        i = info[k]
        if "dump" in i and i["dump"].endswith(".instr") and k.endswith("instr mode=count"):
            text = sh([report, i["dump"]], ok=(0, 3))
            m = re.search(r"^Functions: +\d+ counted, (\d+) calls", text, re.M)
            i["count_calls"] = int(m.group(1)) if m else None
        elif "dump" in i and i["dump"].endswith(".instr"):
            rep = json.loads(sh([report, "--format", "json", i["dump"]], ok=(0, 3)))  # 3: warnings
            s = rep["session"]
            i["calls"] = sum(f["calls"] for f in rep["functions"] if not f.get("pseudo"))
            i["events"], i["runtime_ms"], i["dropped"] = s["events"], s["runtime_ns"] / 1e6, s["dropped"]
            i["duration_ms"] = s["duration_ns"] / 1e6
            # main's Elapsed Inclusive compensated (the default): compared
            # with the plain run's wall time (issue 12: compensation).
            cmain = [f for f in rep["functions"] if f.get("name") == "main"]
            if cmain and s.get("probe_overhead", {}).get("compensated"):
                i["main_comp_ms"] = cmain[0].get("elapsed_inclusive_ns", 0) / 1e6
            # main's Elapsed Inclusive as recorded (--raw): the target is
            # about the time the runtime cuts out, not the hooks' cost the
            # default compensation subtracts.
            raw = json.loads(sh([report, "--raw", "--format", "json", i["dump"]], ok=(0, 3)))
            main = [f for f in raw["functions"] if f.get("name") == "main"]
            if main:
                i["main_ei_ms"] = main[0].get("elapsed_inclusive_ns", 0) / 1e6
            text = sh([report, i["dump"]], ok=(0, 3))
            m = re.search(r"^Runtime:.*$", text, re.M)
            i["runtime_line"] = m.group(0) if m else ""
            if k == "instr callsites=all":
                calls = i["calls"]
        if "dump" in i:
            i["size"], i["disk"] = du(i["dump"])
    print(json.dumps({"times": times, "cpu": cpu}), file=sys.stderr)  # raw, for later analysis
    plain = statistics.median(times["plain"])
    print(f"\n== {name}: {' '.join(args)}   ({runs} interleaved runs; wall ms median (min-max))")
    print(f"calls of instrumented functions (callsites=all dump): {calls}")
    print(f"{'build':34} {'wall ms':>22} {'cpu ms':>9} {'slowdown':>8} {'ns/call':>8} {'dump MB':>8} {'disk MB':>8} {'B/event':>7} {'Runtime ms':>10} {'%run':>5}")
    per_call = {}
    for k in exes:
        med = statistics.median(times[k])
        i = info[k]
        pc = (med - plain) / calls * 1e9 if calls else float("nan")
        per_call[k] = pc
        bpe = f"{i['disk'] / i['events']:.2f}" if i.get("events") else ""
        rt = f"{i['runtime_ms']:.1f}" if "runtime_ms" in i else ""
        rtp = f"{100 * i['runtime_ms'] / i['duration_ms']:.1f}" if "runtime_ms" in i else ""
        size = f"{i['size'] / 1e6:.1f}" if "size" in i else ""
        disk = f"{i['disk'] / 1e6:.1f}" if "disk" in i else ""
        print(f"{k:34} {mmm(times[k]):>22} {statistics.median(cpu[k])*1e3:9.1f} {med / plain:8.2f} "
              f"{pc if k != 'plain' else 0:8.1f} {size:>8} {disk:>8} {bpe:>7} {rt:>10} {rtp:>5}")
    for k in exes:
        if info[k].get("runtime_line"):
            extra = ""
            if "main_ei_ms" in info[k]:
                extra = f"   main EI (--raw) / duration {info[k]['main_ei_ms'] / info[k]['duration_ms']:.3f}"
            if "main_comp_ms" in info[k]:
                extra += f"; main EI compensated / plain run {info[k]['main_comp_ms'] / (plain * 1e3):.2f}"
            print(f"  {k}: {info[k]['runtime_line']}{extra}")
    if "instr mode=count" in info and info["instr mode=count"].get("count_calls") is not None:
        cc = info["instr mode=count"]["count_calls"]
        # Not equal on Lua: its table.sort picks pivots from clock() and
        # time() (l_randomizePivot), so its comparisons vary from run to run.
        print(f"  instr mode=count: {cc} calls counted; callsites=all dump: {calls} "
              f"({100 * (cc - calls) / calls:+.2f}%)")
    report_speed(info, report)
    floor = per_call["bare recorder (floor)"]
    print("targets (issue 10):")

    def tgt(what, ok):
        print(f"  [{'met' if ok else 'NOT met'}] {what}")

    if "instr callsites=none" in per_call:
        n = per_call["instr callsites=none"]
        tgt(f"callsites=none <= 1.3x the floor per call: {n:.1f} ns vs floor {floor:.1f} ns = {n / floor:.2f}x",
            n <= 1.3 * floor)
        tgt(f"callsites=none <= 25 ns per call: {n:.1f} ns", n <= 25)
    a = per_call.get("instr callsites=all")
    u = per_call.get("uftrace record")
    if a is not None and u is not None:
        tgt(f"defaults cheaper than uftrace per call: {a:.1f} vs {u:.1f} ns", a < u)
    if a is not None:
        tgt(f"defaults <= 2x the floor per call: {a / floor:.2f}x", a <= 2 * floor)
        i = info["instr callsites=all"]
        tgt(f"<= 4 bytes per event on disk: {i['disk'] / i['events']:.2f} (dropped {i['dropped']})",
            i["disk"] / i["events"] <= 4 and i["dropped"] == 0)
        tgt(f"Runtime <= 1% of the run: {100 * i['runtime_ms'] / i['duration_ms']:.2f}%",
            i["runtime_ms"] <= 0.01 * i["duration_ms"])
        if "main_ei_ms" in i:
            r = i["main_ei_ms"] / i["duration_ms"]
            tgt(f"main's Elapsed Inclusive within 2% of the run's duration: {r:.3f}", r >= 0.98)
    c = per_call.get("instr mode=count")
    if c is not None:
        g = per_call.get("gprof -pg")
        tgt(f"mode=count <= 5 ns per call: {c:.1f} ns", c <= 5)
        if g is not None:
            tgt(f"mode=count cheaper than gprof -pg per call: {c:.1f} vs {g:.1f} ns", c < g)
    if "report_eps" in info.get("instr callsites=all", {}):
        e = info["instr callsites=all"]["report_eps"]
        tgt(f"instr-report >= 100 M events/s on this dump: {e / 1e6:.1f} M/s", e >= 100e6)


def cpu_time(cmd):
    """CPU seconds (user + system) of cmd, its output thrown away: on a
    loaded machine the wall time of one core says nothing."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 3):  # 3: warnings
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return ru.ru_utime + ru.ru_stime


def report_speed(info, report):
    """instr-report (a plain report, one core) on the callsites=all dump
    against `uftrace report` on the uftrace run's data: events per CPU
    second, medians of 3; uftrace's events are its 16-byte records."""
    i = info.get("instr callsites=all", {})
    if "events" not in i:
        return
    t = [cpu_time(["taskset", "-c", "0", report, i["dump"]]) for _ in range(3)]
    i["report_eps"] = i["events"] / statistics.median(t)
    line = (f"  instr-report: {i['events']} events in {statistics.median(t) * 1e3:.0f} ms CPU = "
            f"{i['report_eps'] / 1e6:.1f} M events/s")
    u = info.get("uftrace record", {})
    if "dump" in u and os.path.isdir(u["dump"]):
        recs = sum(os.path.getsize(os.path.join(u["dump"], f)) for f in os.listdir(u["dump"])
                   if f.endswith(".dat")) // 16
        t = [cpu_time(["taskset", "-c", "0", "uftrace", "report", "-d", u["dump"]]) for _ in range(3)]
        line += (f";  uftrace report: {recs} records in {statistics.median(t) * 1e3:.0f} ms CPU = "
                 f"{recs / statistics.median(t) / 1e6:.1f} M records/s")
    print(line)


def main():
    # The report's speed is its walk: no profile kept from an earlier
    # report of the same dump (tools/model/profile-cache.h).
    os.environ["INSTR_REPORT_CACHE"] = "off"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="instr build directory (plugin/instr.so, bin/instr-report)")
    ap.add_argument("--before", help="another plugin (instr.so) to compare against, e.g. main's build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", default="1")
    ap.add_argument("--only", choices=("lua", "dconv", "shapes"))
    ap.add_argument("--no-uftrace", action="store_true", help="leave out the peer (its runs take minutes)")
    ap.add_argument("--user", type=int, help="run every build as this uid (setpriv; as root): what users see")
    a = ap.parse_args()
    if not a.no_uftrace and not shutil.which("uftrace"):
        sys.exit("run-real.py: uftrace (the peer) is not installed: apt-get install uftrace, or --no-uftrace")
    b = os.path.abspath(a.build)
    plugin, report = os.path.join(b, "plugin", "instr.so"), os.path.join(b, "bin", "instr-report")
    cache = os.path.join(b, "real")
    os.makedirs(cache, exist_ok=True)
    bare_obj = os.path.join(cache, "bare-recorder.o")
    sh(["gcc", "-O2", "-fvisibility=hidden", "-I" + os.path.join(ROOT, "common"), "-c", "-o", bare_obj,
        os.path.join(HERE, "bare-recorder.c")])
    vs = variants(plugin, a.before and os.path.abspath(a.before), not a.no_uftrace)
    progs = []
    if a.only in (None, "lua"):
        files, cflags, libs = lua_sources(fetch_lua(cache))
        progs.append(("lua 5.4 (Debian source)", "gcc", files, cflags, libs,
                      [os.path.join(HERE, "real", "bench.lua"), a.scale]))
    if a.only in (None, "dconv"):
        files, cflags, libs = dconv_sources(fetch_dconv(cache))
        progs.append(("double-conversion 3.2 tests (Debian source)", "g++", files, cflags, libs, []))
    if a.only == "shapes":
        progs.append(("examples/shapes.cpp", "g++", [os.path.join(ROOT, "examples", "shapes.cpp")], ["-std=c++14"],
                      [], []))
    tag = str(os.stat(plugin).st_mtime_ns) + (str(os.stat(a.before).st_mtime_ns) if a.before else "")
    with tempfile.TemporaryDirectory(dir=cache) as work:
        if a.user is not None:
            os.chmod(work, 0o755)
        for name, cc, files, cflags, libs, args in progs:
            exes = {}
            for k, extra in vs.items():
                slug = re.sub(r"[^a-z0-9]+", "-", (name + " " + k).lower())
                out = os.path.join(cache, "bin", tag if "instr" in k else "any", slug)
                objs = [bare_obj] if k.startswith("bare") else []
                exes[k] = build(out, cc, files, cflags, libs, extra, objs)
            bench_program(name, exes, args, report, a.runs, work, a.user)
    return 0


if __name__ == "__main__":
    sys.exit(main())

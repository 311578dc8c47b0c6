"""benchutil.py - helpers two or more of bench/'s scripts share (they run as
bench/NAME.py, so this folder is on their import path): run-real.py's
functions (building Debian's sources), reading the rows of `perf report`,
and timing a command with its children's CPU time."""
import importlib.util
import os
import re
import resource
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_real():
    """bench/run-real.py as a module (its name has a hyphen: no import)."""
    spec = importlib.util.spec_from_file_location("run_real", os.path.join(HERE, "run-real.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


_PERF_ROW = re.compile(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$")


def perf_user_rows(text):
    """(percent, dso, symbol) for each user-space row of `perf report
    --no-children --sort dso,sym --stdio -q`; kernel rows are dropped."""
    for line in text.splitlines():
        m = _PERF_ROW.match(line)
        if not m:
            continue
        pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
        if kind == "k" or dso.startswith("[kernel"):
            continue
        yield pct, dso, sym


def timed(cmd, cwd):
    """Runs cmd in cwd, output discarded: (wall seconds, CPU seconds of
    user + system time its process tree used)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def lua_builds(build, workname, variants):
    """Lua 5.4 (Debian source, as run-real.py builds it) once per variant
    (name -> extra compiler flags; '{plugin}' stands for BUILD's plugin),
    under BUILD/real/WORKNAME/NAME/lua-DIGEST, built afresh each time:
    (executables by name, instr-report,
    bench.lua's command-line arguments but the scale, WORK)."""
    rr = run_real()
    build = os.path.abspath(build)
    plugin = os.path.join(build, "plugin", "instr.so")
    cache = os.path.join(build, "real")
    work = os.path.join(cache, workname)
    os.makedirs(work, exist_ok=True)
    files, cflags, libs = rr.lua_sources(rr.fetch_lua(cache))
    exes = {}
    for name, extra in variants:
        exes[name] = rr.build(os.path.join(work, name, "lua"), "gcc", files, ["-g", *cflags], libs,
                              [f.format(plugin=plugin) for f in extra], fresh=True)
    return exes, os.path.join(build, "bin", "instr-report"), [os.path.join(HERE, "real", "bench.lua")], work


def interleaved(exes, args, runs, work, rounds):
    """Each run (label, executable name, environment) once per round, in
    a directory of its own under WORK emptied first, INSTR_LOG=none and
    INSTR_OUTPUT=lua.instr there: (wall times by label, the last dump of
    each label that wrote one)."""
    rr = run_real()
    base = dict(os.environ, INSTR_LOG="none")
    times, dumps = {}, {}
    for _ in range(rounds):
        for label, exe, env in runs:
            d = os.path.join(work, "run-" + label.replace(" ", "-"))
            os.makedirs(d, exist_ok=True)
            for f in os.listdir(d):
                os.remove(os.path.join(d, f))
            dump = os.path.join(d, "lua.instr")
            wall, _ = rr.timed([exes[exe], *args], dict(base, **env, INSTR_OUTPUT=dump), d)
            times.setdefault(label, []).append(wall)
            if os.path.exists(dump):
                dumps[label] = dump
    return times, dumps

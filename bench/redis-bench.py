#!/usr/bin/env python3
"""Server benchmark (issue 24 item 5; not gated by CI: it fetches sources,
and numbers move +-10% on a shared machine).

Redis 7.0 from Debian's source package (fetched with apt-get source into
BUILD/real/src, as bench/run-real.py fetches Lua: its functions are reused)
is built with its own Makefile, `make -C src redis-server MALLOC=libc
USE_SYSTEMD=no BUILD_TLS=no OPTIMIZATION=-O2` (Redis's DEBUG adds -g), in a
copy of the source tree per build:
  - plain;
  - the bare recorder (the floor: -finstrument-functions and rdtsc + a
    16-byte store per hook, bench/bare-recorder.c, as in run-real.py);
  - instr defaults, instr callsites=none and instr mode=count (the plugin
    in CFLAGS and LDFLAGS, which Redis's Makefile hands to its bundled
    hiredis, lua and hdr_histogram too; the plugin's binding loads the
    runtime, no -l flag);
  - and at run time, instr defaults with the cheapest detector set,
    INSTR_DETECTOR=rseq_cs+perf+cpuclock (no sud trap per system call:
    the reference of issue 20 item 3).
MALLOC=libc, not the bundled jemalloc: jemalloc's configure runs its test
programs with the plugin's flags, takes minutes a build, and adds a
background thread; the glibc allocator is not instrumented either way.

Each run starts one server on a free loopback port (`--save "" --appendonly
no`, its dump, INSTR_OUTPUT, in a fresh temporary directory), runs
`redis-benchmark -q -t set,get,incr,lpush,lpop -n N -c 50` against it, once
without pipelining and once with -P 16, each against its own server, and
stops it with `redis-cli shutdown nosave` so the dump is complete.  Rounds
are interleaved (every build once per round); medians with min-max of
requests/s per test, the ratio to plain (per test, and the geometric mean
of the five), the server's CPU time per request (user + system of all its
threads: where redis-benchmark and other jobs share the cores, throughput
also says how the cores were shared; CPU per request says what the server
cost), the dump size and its bytes per second of the server's life.
The last round's dump of instr defaults without pipelining is read with
instr-report (the check that it is readable): its 5 functions of most
Application Exclusive time.  --perf adds one run of the plain build and
one of instr defaults, not counted, under `perf record -e cpu-clock`, and
prints their 5 user-space functions of most samples.

Needs redis-tools (redis-benchmark, redis-cli; Debian package) and, for
--perf, perf.  Prints the targets of issues 24 and 20 beside the numbers.

Usage: bench/redis-bench.py --build BUILD [--runs 3] [-n 50000] [--user UID]
       [--perf]
"""
import argparse, glob, json, math, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
from benchutil import perf_user_rows, run_real  # noqa: E402
rr = run_real()
sh = rr.sh

TESTS = ("SET", "GET", "INCR", "LPUSH", "LPOP")
CHEAP = "rseq_cs+perf+cpuclock"
DEFAULTS = "instr defaults"
DETECT = "instr defaults, cheapest detectors"  # INSTR_DETECTOR=CHEAP


def builds(plugin, bare_obj):
    """name -> (CFLAGS, LDFLAGS) of each build of redis-server."""
    p = f"-fplugin={plugin}"
    return {
        "plain": ("", ""),
        "bare recorder (floor)": ("-finstrument-functions", bare_obj),
        DEFAULTS: (p, p),
        "instr callsites=none": (f"{p} -fplugin-arg-instr-callsites=none",) * 2,
        "instr mode=count": (f"{p} -fplugin-arg-instr-mode=count",) * 2,
    }


def build_redis(src, out, cflags, ldflags):
    """redis-server built in out (a copy of src), once."""
    exe = os.path.join(out, "src", "redis-server")
    if os.path.exists(exe):
        return exe
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, symlinks=True)
    print(f"building {os.path.basename(out)} ...", file=sys.stderr, flush=True)
    sh(["make", f"-j{os.cpu_count() or 1}", "-C", os.path.join(tmp, "src"), "redis-server", "MALLOC=libc",
        "USE_SYSTEMD=no", "BUILD_TLS=no", "OPTIMIZATION=-O2", f"CFLAGS={cflags}", f"LDFLAGS={ldflags}"])
    os.rename(tmp, out)
    return exe


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_exit(pid, timeout):
    """(exit code, CPU seconds) of child pid, or None after timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            return os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime
        time.sleep(0.05)
    return None


def serve(exe, env, d, as_user, bench_args, prefix=()):
    """One server in directory d, redis-benchmark against it: (requests/s
    by test, server lifetime s, server CPU s, benchmark output)."""
    port = free_port()
    cli = [*as_user, "redis-cli", "-h", "127.0.0.1", "-p", str(port)]
    log = open(os.path.join(d, "server.log"), "w")
    t0 = time.perf_counter()
    p = subprocess.Popen([*prefix, *as_user, exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--dir", d, "--daemonize", "no"],
                         env=env, cwd=d, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    try:
        for _ in range(600):
            if p.poll() is not None:
                break
            r = subprocess.run([*cli, "ping"], capture_output=True, text=True)
            if r.stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        else:
            raise SystemExit(f"{exe}: no PONG on port {port} in 30 s")
        if p.poll() is not None:
            raise SystemExit(f"{exe} exited at start:\n{open(os.path.join(d, 'server.log')).read()[-2000:]}")
        out = sh([*as_user, "redis-benchmark", "-h", "127.0.0.1", "-p", str(port), *bench_args])
        subprocess.run([*cli, "shutdown", "nosave"], capture_output=True)
    except BaseException:
        p.kill()
        p.wait()
        raise
    done = wait_exit(p.pid, 600)
    if done is None:
        p.kill()
        raise SystemExit(f"{exe}: still running 600 s after shutdown")
    p.returncode = done[0]  # reaped by wait_exit: keep Popen from waiting again
    life = time.perf_counter() - t0
    if done[0] != 0:
        raise SystemExit(f"{exe} exited {done[0]}:\n{open(os.path.join(d, 'server.log')).read()[-2000:]}")
    rps = {}
    for line in re.split(r"[\r\n]", out):
        m = re.match(r"\s*([A-Z_]+)(?: \([^)]*\))?: ([\d.]+) requests per second", line)
        if m:
            rps[m.group(1)] = float(m.group(2))
    missing = [t for t in TESTS if t not in rps]
    if missing:
        raise SystemExit(f"redis-benchmark printed no result for {missing}:\n{out[-2000:]}")
    return rps, life, done[1], out


def mmm(v):
    return f"{statistics.median(v) / 1e3:.1f} ({min(v) / 1e3:.0f}-{max(v) / 1e3:.0f})"


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def perf_top(exe, env, work, as_user, bench_args, tag):
    """One run of exe under perf record -e cpu-clock: its 5 user-space
    functions of most samples, and the kernel's share."""
    d = os.path.join(work, "perf-" + tag)
    os.makedirs(d)
    os.chmod(d, 0o1777)
    data = os.path.join(work, f"perf-{tag}.data")
    serve(exe, env, d, as_user, bench_args, ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", data,
                                            "--"])
    out = sh(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-q",
              "--percent-limit", "0"])
    user = list(perf_user_rows(out))
    return sorted(user, reverse=True)[:5], 100 - sum(pct for pct, _, _ in user)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="instr build directory (plugin/instr.so, bin/instr-report)")
    ap.add_argument("--runs", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("-n", type=int, default=50000, help="requests per test (redis-benchmark -n; default 50000)")
    ap.add_argument("--user", type=int, help="run servers and benchmark as this uid (setpriv; as root)")
    ap.add_argument("--perf", action="store_true", help="also one run of plain and of instr defaults under perf "
                    "record -e cpu-clock: their top 5 user-space functions")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    plugin, report = os.path.join(b, "plugin", "instr.so"), os.path.join(b, "bin", "instr-report")
    for tool in ("redis-benchmark", "redis-cli") + (("perf",) if a.perf else ()):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found (Debian: apt-get install {'linux-perf' if tool == 'perf' else 'redis-tools'})")
    cache = os.path.join(b, "real")
    os.makedirs(cache, exist_ok=True)
    src = os.path.dirname(os.path.dirname(rr.fetch_debian_source(cache, "redis", os.path.join("redis-*", "src",
                                                                                               "server.c"))))
    bare_obj = os.path.join(cache, "bare-recorder.o")
    sh(["gcc", "-O2", "-fvisibility=hidden", "-I" + os.path.join(os.path.dirname(HERE), "common"), "-c", "-o",
        bare_obj, os.path.join(HERE, "bare-recorder.c")])
    tag = str(os.stat(plugin).st_mtime_ns)
    exes = {}
    for k, (cflags, ldflags) in builds(plugin, bare_obj).items():
        slug = re.sub(r"[^a-z0-9]+", "-", k.lower()).strip("-")
        out = os.path.join(cache, "redis", tag if "instr" in k else "any", slug)
        exes[k] = build_redis(src, out, cflags, ldflags)
    runs = dict(exes)
    runs[DETECT] = exes[DEFAULTS]
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("INSTR_")}
    envs = {k: dict(env0, INSTR_DETECTOR=CHEAP) if k == DETECT else env0 for k in runs}
    as_user = ["setpriv", f"--reuid={a.user}", f"--regid={a.user}", "--clear-groups"] if a.user is not None else []
    modes = {"no pipelining": [], "-P 16": ["-P", "16"]}
    base = ["-q", "-t", ",".join(t.lower() for t in TESTS), "-n", str(a.n), "-c", "50"]
    rps = {(k, m): {t: [] for t in TESTS} for k in runs for m in modes}
    size = {(k, m): [] for k in runs for m in modes}
    rate = {(k, m): [] for k in runs for m in modes}
    cpu = {(k, m): [] for k in runs for m in modes}
    kept = None
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=cache) as work:
        os.chmod(work, 0o755)
        for r in range(a.runs):
            for k, exe in runs.items():
                for m, extra in modes.items():
                    d = os.path.join(work, re.sub(r"[^a-z0-9]+", "-", f"{r} {k} {m}".lower()))
                    os.makedirs(d)
                    os.chmod(d, 0o1777)
                    env = dict(envs[k], INSTR_OUTPUT=os.path.join(d, "%e.%p.instr"))
                    got, life, c, _ = serve(exe, env, d, as_user, base + extra)
                    for t in TESTS:
                        rps[(k, m)][t].append(got[t])
                    cpu[(k, m)].append(c)
                    dumps = glob.glob(os.path.join(d, "*.instr"))
                    if dumps:
                        n = sum(os.path.getsize(f) for f in dumps)
                        size[(k, m)].append(n)
                        rate[(k, m)].append(n / life)
                    if r == a.runs - 1 and k == DEFAULTS and m == "no pipelining" and dumps:
                        kept = dumps[0]
                    else:
                        shutil.rmtree(d)
                print(f"round {r + 1}/{a.runs}: {k} done ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr,
                      flush=True)
        print(json.dumps({"rps": {f"{k} | {m}": v for (k, m), v in rps.items()},
                          "dump_bytes": {f"{k} | {m}": v for (k, m), v in size.items()}}), file=sys.stderr)
        load = os.getloadavg()
        who = f"uid {a.user}" if a.user is not None else "root"
        print(f"\n== Redis {os.path.basename(src).split('-')[-1]} (Debian source, MALLOC=libc) under redis-benchmark "
              f"{' '.join(base)}, as {who}")
        print(f"   {a.runs} interleaved rounds, k requests/s median (min-max); load average {load[0]:.2f} "
              f"{load[1]:.2f} {load[2]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        print(f"   cheapest detectors: INSTR_DETECTOR={CHEAP}; x plain: geometric mean of the 5 tests' ratios;\n"
              "   cpu us/req: the server's CPU time (user + system, all its threads) per request;\n"
              "   cpu x: plain's over this build's (the throughput ratio where the server's CPU is the limit);\n"
              "   MB/s: dump bytes per second of the server's life")
        plain_med = {m: {t: statistics.median(rps[("plain", m)][t]) for t in TESTS} for m in modes}
        ratio = {}
        requests = a.n * len(TESTS)

        def cpu_ratio(k, m):
            return statistics.median(cpu[("plain", m)]) / statistics.median(cpu[(k, m)])

        for m in modes:
            print(f"\n-- {m}")
            print(f"{'build':34} " + " ".join(f"{t:>16}" for t in TESTS) + f" {'x plain':>7} {'cpu us/req':>10} {'cpu x':>5} "
                  f"{'dump MB':>8} {'MB/s':>6}")
            for k in runs:
                med = {t: statistics.median(rps[(k, m)][t]) for t in TESTS}
                ratio[(k, m)] = gmean([med[t] / plain_med[m][t] for t in TESTS])
                dump = f"{statistics.median(size[(k, m)]) / 1e6:8.1f} {statistics.median(rate[(k, m)]) / 1e6:6.1f}" \
                    if size[(k, m)] else f"{'':8} {'':6}"
                print(f"{k:34} " + " ".join(f"{mmm(rps[(k, m)][t]):>16}" for t in TESTS) +
                      f" {ratio[(k, m)]:7.2f} {1e6 * statistics.median(cpu[(k, m)]) / requests:10.1f} "
                      f"{cpu_ratio(k, m):5.2f} {dump}")
            print("  ratio to plain, per test:")
            for k in runs:
                if k != "plain":
                    print(f"    {k:30} " + " ".join(
                        f"{statistics.median(rps[(k, m)][t]) / plain_med[m][t]:>16.2f}" for t in TESTS))
        if kept:
            print(f"\n-- instr-report --sort ae --limit 5 (instr defaults, no pipelining, last round; "
                  f"{os.path.getsize(kept) / 1e6:.1f} MB dump)")
            t0 = time.perf_counter()
            text = sh([report, "--sort", "ae", "--limit", "5", kept], ok=(0, 3))  # 3: reported with warnings
            print(text.rstrip())
            print(f"   (read in {time.perf_counter() - t0:.1f} s)")
        if a.perf:
            for k in ("plain", DEFAULTS):
                top, kern = perf_top(exes[k], envs[k], work, as_user, base, re.sub(r"[^a-z]+", "-", k))
                print(f"\n-- perf record -e cpu-clock, {k}, no pipelining (one run, not counted): kernel "
                      f"{kern:.1f} % of samples; top user-space functions:")
                for pct, dso, sym in top:
                    print(f"   {pct:6.2f} %  {sym}  ({os.path.basename(dso)})")
    print("\ntargets (geometric mean of the 5 tests' median ratios):")

    def tgt(what, ok):
        print(f"  [{'met' if ok else 'NOT met'}] {what}")

    d1, d16 = ratio[(DEFAULTS, "no pipelining")], ratio[(DEFAULTS, "-P 16")]
    c1, c16 = cpu_ratio(DEFAULTS, "no pipelining"), cpu_ratio(DEFAULTS, "-P 16")
    tgt(f"issue 24: defaults >= 0.5x plain without pipelining: {d1:.2f}x (by server CPU: {c1:.2f}x)", d1 >= 0.5)
    tgt(f"issue 24: defaults >= 0.3x plain with -P 16: {d16:.2f}x (by server CPU: {c16:.2f}x)", d16 >= 0.3)
    rel = d1 / ratio[(DETECT, "no pipelining")]
    crel = c1 / cpu_ratio(DETECT, "no pipelining")
    tgt(f"issue 20 item 3: defaults >= 0.85x INSTR_DETECTOR={CHEAP} without pipelining: {rel:.2f}x "
        f"(by server CPU: {crel:.2f}x)", rel >= 0.85)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""MPI job benchmark (issue 35; not gated by CI: it fetches sources, and
numbers move +-10% on a shared machine).

HPC Challenge (hpcc 1.5.0) from Debian's source package, fetched into
BUILD/real/src as bench/run-real.py fetches Lua: HPL, PTRANS, DGEMM,
STREAM, RandomAccess, FFT and the latency/bandwidth rings, each checking
its own results (HPL's and PTRANS's scaled residuals PASSED, RandomAccess's
"Found 0 errors", "Node(s) with error 0", STREAM's "Solution Validates",
the summary's Success=1).  Where `apt-get source` cannot fetch Debian's
patches (a mirror without the .debian.tar), the upstream tarball it did
fetch (Debian's .orig.tar) is unpacked instead, and said.  One change to
the source: HPL_packL.c's MPI_Address and MPI_Type_struct, removed in
MPI-3 (Open MPI 4's mpi.h refuses them), become MPI_Get_address and
MPI_Type_create_struct, the replacements mpi.h names.

Built twice with hpcc's own Makefile (hpl/Make.bench, written here;
reference BLAS, -lblas of libblas-dev), OMPI_CC=gcc mpicc.openmpi -O2 -g:
  - plain;
  - instr: -fplugin=BUILD/plugin/instr.so, linked with the PMPI wrappers
    (-LBUILD/plugin -linstr-mpi-openmpi -Wl,-rpath,BUILD/plugin, after
    the objects: docs/mpi.md);
and run as a third build, the instr build with the cheapest detector set
(INSTR_DETECTOR=rseq_cs+perf+cpuclock: no sud trap per system call, and
an oversubscribed Open MPI rank polls with a system call a loop).

1. Overhead: each build runs `mpirun.openmpi --oversubscribe -np NP hpcc`
   (NP 4, HPL N 1000 NB 80 on a 2 x 2 grid: hpcc's own sample input), in
   interleaved rounds, each run in a fresh directory (the dumps go to
   hpcc.<job>.instr.d there, the default).  Every run's verification must
   pass, and its results (the norms and residuals of HPL and PTRANS,
   FFT's largest error, RandomAccess's errors) must be those of the first
   plain run: the same arithmetic instrumented or not (not DGEMM's
   residual: its matrices are seeded with time(NULL)).  Medians with
   min-max of the job's wall time and of its CPU time per rank (user +
   system of mpirun and its ranks over NP), ratios to plain, dump MB per
   rank.  The last
   instr run's dumps are read with `instr-report --view ranks` (printed:
   the POP line and the rank rows).

2. The report's time for a job of R ranks, R = 1, 2, 4 ... --max-ranks
   (64): the instr build on a tiny problem (HPL N 200 NB 20, grid as
   square as R allows), its dumps read with `instr-report DIR`,
   `--view ranks DIR` and `--view mpi DIR` (INSTR_REPORT_CACHE=off: each
   one walks the dumps): wall and CPU seconds, CPU seconds per GB of
   dumps, peak RSS.

Usage: bench/mpi-bench.py --build BUILD [--runs 5] [--np 4] [-n 1000]
       [--nb 80] [--small-n 200] [--small-nb 20] [--max-ranks 64]
       [--only overhead|report]   (or: cmake --build build --target bench-mpi)
Needs Open MPI (mpicc.openmpi, mpirun.openmpi; libopenmpi-dev) and BLAS
(libblas-dev); as root, mpirun gets --allow-run-as-root.
"""
import argparse, glob, os, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
from benchutil import run_real  # noqa: E402
rr = run_real()
sh = rr.sh

CHEAP = "rseq_cs+perf+cpuclock"
PLAIN, INSTR, DETECT = "plain", "instr (plugin + PMPI wrappers)", f"instr, INSTR_DETECTOR={CHEAP}"

# hpcc's hpl/Make.<arch>: Open MPI's wrapper as compiler and linker, the
# reference BLAS through its Fortran interface (symbols with a trailing _).
MAKE_ARCH = """\
SHELL = /bin/sh
CD = cd
CP = cp
LN_S = ln -s
MKDIR = mkdir -p
RM = /bin/rm -f
TOUCH = touch
ARCH = $(arch)
TOPdir = ../../..
INCdir = $(TOPdir)/include
BINdir = $(TOPdir)/bin/$(ARCH)
LIBdir = $(TOPdir)/lib/$(ARCH)
HPLlib = $(LIBdir)/libhpl.a
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH)
HPL_LIBS = $(HPLlib) -lblas -lm $(EXTRA_LIBS)
HPL_DEFS = -DAdd_ -DF77_INTEGER=int -DStringSunStyle $(HPL_INCLUDES)
CC = mpicc.openmpi
CCNOOPT = $(HPL_DEFS)
CCFLAGS = $(HPL_DEFS) -O2 -g $(EXTRA_CFLAGS)
LINKER = mpicc.openmpi
LINKFLAGS = -O2 -g $(EXTRA_LDFLAGS)
ARCHIVER = ar
ARFLAGS = r
RANLIB = echo
"""

# hpcc's input (its _hpccinf.txt with N, NB and the grid filled in).
HPCCINF = """\
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
{nb}         NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}          Ps
{q}          Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
"""

# The summary's values that are results, not speeds: the same in every run
# of one input and number of ranks.
RESULT_KEYS = ("HPL_RnormI", "HPL_Anorm1", "HPL_AnormI", "HPL_Xnorm1", "HPL_XnormI", "HPL_BnormI",
               "PTRANS_residual", "MPIRandomAccess_Errors", "MPIRandomAccess_LCG_Errors", "MPIFFT_maxErr")


def fetch_hpcc(cache):
    """The unpacked hpcc source tree under cache/src (once)."""
    probe = os.path.join("hpcc-*", "include", "hpcc.h")
    try:
        src = rr.fetch_debian_source(cache, "hpcc", probe)
    except SystemExit as e:
        tars = sorted(glob.glob(os.path.join(cache, "src", "hpcc_*.orig.tar.*")))
        if not tars:
            raise
        print(f"apt-get source hpcc failed ({str(e).splitlines()[-1]}); unpacking {os.path.basename(tars[-1])}, "
              "Debian's copy of the upstream source, without Debian's patches", file=sys.stderr)
        sh(["tar", "xf", tars[-1]], cwd=os.path.join(cache, "src"))
        found = glob.glob(os.path.join(cache, "src", probe))
        if not found:
            raise SystemExit(f"{tars[-1]}: no {probe}")
        src = found[0]
    return os.path.dirname(os.path.dirname(src))


def build_hpcc(src, out, cflags, ldflags, libs):
    """hpcc built in out (a copy of src), once."""
    exe = os.path.join(out, "hpcc")
    if os.path.exists(exe):
        return exe
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, symlinks=True)
    packl = os.path.join(tmp, "hpl", "src", "comm", "HPL_packL.c")
    with open(packl) as f:
        text = f.read()
    with open(packl, "w") as f:
        f.write(text.replace("MPI_Address(", "MPI_Get_address(").replace("MPI_Type_struct(", "MPI_Type_create_struct("))
    with open(os.path.join(tmp, "hpl", "Make.bench"), "w") as f:
        f.write(MAKE_ARCH)
    print(f"building {os.path.basename(out)} ...", file=sys.stderr, flush=True)
    sh(["make", f"-j{os.cpu_count() or 1}", "arch=bench", f"EXTRA_CFLAGS={cflags}", f"EXTRA_LDFLAGS={ldflags}",
        f"EXTRA_LIBS={libs}"], cwd=tmp, env=dict(os.environ, OMPI_CC="gcc"))
    if not os.path.exists(os.path.join(tmp, "hpcc")):
        raise SystemExit(f"{tmp}: make left no hpcc")
    os.rename(tmp, out)
    return exe


def grid(ranks):
    """(P, Q): P x Q = ranks, P <= Q, as square as it gets."""
    p = max(d for d in range(1, int(ranks ** 0.5) + 1) if ranks % d == 0)
    return p, ranks // p


def verify(text):
    """(problems, results) of one hpccoutf.txt: what its own checks say
    failed (empty: all passed), and its result values by name."""
    problems = []
    summary = dict(re.findall(r"^(\w+)=(\S+)$", text, re.M))
    if summary.get("Success") != "1":
        problems.append(f"Success={summary.get('Success')}")
    passed = len(re.findall(r"\bPASSED\b", text))
    failed = re.findall(r"^.*\bFAILED\b.*$", text, re.M)
    if failed or not passed:
        problems.append(f"{passed} PASSED, {len(failed)} FAILED: {failed[:3]}")
    problems += [m for m in re.findall(r"^\s*\d+ tests completed and failed residual checks.*$", text, re.M)
                 if not m.strip().startswith("0 ")]
    problems += [f"RandomAccess: {m}" for m in re.findall(r"^Found \d+ errors.*$", text, re.M) if "(passed)" not in m]
    problems += [f"{m}" for m in re.findall(r"^Node\(s\) with error.*$", text, re.M) if m.split()[-1] != "0"]
    if "Solution Validates" not in text:
        problems.append("STREAM: no 'Solution Validates'")
    results = {k: summary.get(k) for k in RESULT_KEYS}
    results["HPL residual"] = ",".join(re.findall(r"^\|\|Ax-b\|\|_oo.*=\s*(\S+)", text, re.M))
    missing = [k for k, v in results.items() if not v]
    if missing:
        problems.append(f"no {', '.join(missing)} in the output")
    return problems, results


def mpirun(ranks):
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return ["mpirun.openmpi", "--oversubscribe", *root, "-np", str(ranks)]


def run_job(exe, env, d, ranks, n, nb):
    """One job of hpcc in directory d: (wall s, CPU s of mpirun and its
    ranks, hpccoutf.txt's text, dump directory or None)."""
    p, q = grid(ranks)
    with open(os.path.join(d, "hpccinf.txt"), "w") as f:
        f.write(HPCCINF.format(n=n, nb=nb, p=p, q=q))
    log = open(os.path.join(d, "mpirun.log"), "w")
    t0 = time.perf_counter()
    proc = subprocess.Popen([*mpirun(ranks), exe], env=env, cwd=d, stdout=log, stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    log.close()
    if proc.returncode:
        raise SystemExit(f"{exe} -np {ranks} in {d} exited {proc.returncode}:\n"
                         f"{open(os.path.join(d, 'mpirun.log')).read()[-2000:]}")
    out = os.path.join(d, "hpccoutf.txt")
    if not os.path.exists(out):
        raise SystemExit(f"{d}: hpcc wrote no hpccoutf.txt")
    with open(out) as f:
        text = f.read()
    dumps = glob.glob(os.path.join(d, "hpcc.*.instr.d"))
    return wall, ru.ru_utime + ru.ru_stime, text, dumps[0] if dumps else None


def dump_bytes(d):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "*.instr")))


def timed_report(cmd, cwd=None):
    """(wall s, CPU s, peak RSS MB, stdout) of one instr-report, its
    profile cache off (the walk is what is timed); exit 0 or 3 (reported
    with warnings)."""
    env = dict(os.environ, INSTR_REPORT_CACHE="off")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode not in (0, 3):
            raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}:\n{err.read()[-2000:]}")
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.read()


def mmm(v, scale=1, fmt=".2f"):
    return f"{statistics.median(v) * scale:{fmt}} ({min(v) * scale:{fmt}}-{max(v) * scale:{fmt}})"


def overhead(exes, report, work, a, env0):
    runs = {PLAIN: (exes[PLAIN], env0), INSTR: (exes[INSTR], env0),
            DETECT: (exes[INSTR], dict(env0, INSTR_DETECTOR=CHEAP))}
    wall = {k: [] for k in runs}
    cpu = {k: [] for k in runs}
    size = {k: [] for k in runs}
    reference, kept = None, None
    t_start = time.perf_counter()
    for r in range(a.runs):
        for k, (exe, env) in runs.items():
            d = os.path.join(work, re.sub(r"[^a-z0-9]+", "-", f"{r} {k}".lower()).strip("-"))
            os.makedirs(d)
            w, c, text, dumps = run_job(exe, env, d, a.np, a.n, a.nb)
            problems, results = verify(text)
            if problems:
                raise SystemExit(f"{k}, round {r + 1}: hpcc's own checks failed ({d}/hpccoutf.txt):\n  " +
                                 "\n  ".join(problems))
            if reference is None:
                reference = results
            elif results != reference:
                diff = {x: (reference[x], results[x]) for x in results if results[x] != reference[x]}
                raise SystemExit(f"{k}, round {r + 1}: results differ from the first plain run's: {diff}")
            wall[k].append(w)
            cpu[k].append(c / a.np)
            if dumps:
                size[k].append(dump_bytes(dumps) / a.np)
            if r == a.runs - 1 and k == INSTR:
                kept = dumps
            else:
                shutil.rmtree(d)
            print(f"round {r + 1}/{a.runs}: {k} {w:.1f} s ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr,
                  flush=True)
    load = os.getloadavg()
    p, q = grid(a.np)
    print(f"\n== hpcc (HPC Challenge, Debian source), {' '.join(mpirun(a.np))} hpcc; HPL N {a.n} NB {a.nb}, "
          f"{p} x {q} grid; Open MPI, {os.cpu_count()} CPUs")
    print(f"   {a.runs} interleaved rounds, median (min-max); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"   every run: hpcc's own checks passed, and its results identical to the first plain run's:")
    for k, v in reference.items():
        print(f"     {k} = {v}")
    print("   CPU/rank: user + system time of mpirun and its ranks over the ranks; dump: MB a rank\n")
    print(f"{'build':44} {'wall s':>20} {'x plain':>7} {'CPU s/rank':>20} {'x plain':>7} {'dump MB/rank':>12}")
    pw, pc = statistics.median(wall[PLAIN]), statistics.median(cpu[PLAIN])
    for k in runs:
        mb = f"{statistics.median(size[k]) / 1e6:12.1f}" if size[k] else ""
        print(f"{k:44} {mmm(wall[k]):>20} {statistics.median(wall[k]) / pw:7.2f} {mmm(cpu[k]):>20} "
              f"{statistics.median(cpu[k]) / pc:7.2f} {mb}")
    print(f"   per rank: {INSTR} adds {statistics.median(cpu[INSTR]) - pc:.2f} s of CPU and its job "
          f"{statistics.median(wall[INSTR]) - pw:.2f} s of wall time")
    if kept:
        t, c, rss, out = timed_report([report, "--view", "ranks", os.path.basename(kept)], os.path.dirname(kept))
        print(f"\n-- instr-report --view ranks (the last {INSTR} run; {dump_bytes(kept) / 1e6:.0f} MB of dumps, "
              f"read in {t:.1f} s, {c:.1f} s of CPU, {rss:.0f} MB peak RSS)")
        for line in out.splitlines():
            if re.match(r"(Job|POP|Clocks|Detector|Warning|Repairs|Compensation):|\s+\(useful|\s+to its|"
                        r"Ranks of|\(useful|Rank |\s+\d+ ", line):
                print("   " + line)
        shutil.rmtree(os.path.dirname(kept))


def report_scaling(exe, report, work, a, env0):
    print(f"\n== instr-report on one job's dumps, {INSTR} build, HPL N {a.small_n} NB {a.small_nb}: "
          f"{' '.join(mpirun('R'))} hpcc; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    views = {"report": [], "--view ranks": ["--view", "ranks"], "--view mpi": ["--view", "mpi"]}
    print("   per view: wall s / CPU s (user + system) / CPU s per GB of dumps; RSS: the largest peak of the three")
    print(f"{'ranks':>5} {'job s':>7} {'dumps MB':>9} " + " ".join(f"{v:>20}" for v in views) + f" {'RSS MB':>7}")
    ranks = 1
    while ranks <= a.max_ranks:
        d = os.path.join(work, f"scale-{ranks}")
        os.makedirs(d)
        w, _, text, dumps = run_job(exe, env0, d, ranks, a.small_n, a.small_nb)
        problems, _ = verify(text)
        if problems:
            raise SystemExit(f"{ranks} ranks: hpcc's own checks failed ({d}/hpccoutf.txt):\n  " + "\n  ".join(problems))
        n = dump_bytes(dumps)
        row = f"{ranks:5} {w:7.1f} {n / 1e6:9.1f} "
        rss = 0
        for v, args in views.items():
            t, c, mb, out = timed_report([report, *args, dumps])
            rss = max(rss, mb)
            if v == "report":
                m = re.search(r"^Job:.*$", out, re.M)
                job = m.group(0) if m else "no Job: line"
            row += f"{f'{t:.2f} / {c:.2f} / {c / (n / 1e9):.0f}':>20} "
        print(row + f"{rss:7.0f}   ({job.split(',', 1)[-1].strip()})", flush=True)
        shutil.rmtree(d)
        ranks *= 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="instr build directory (plugin/instr.so, bin/instr-report)")
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--np", type=int, default=4, help="ranks of the overhead runs (default 4)")
    ap.add_argument("-n", type=int, default=1000, help="HPL's N in the overhead runs (default 1000)")
    ap.add_argument("--nb", type=int, default=80, help="HPL's NB in the overhead runs (default 80)")
    ap.add_argument("--small-n", type=int, default=200, help="HPL's N in the report's runs (default 200)")
    ap.add_argument("--small-nb", type=int, default=20, help="HPL's NB in the report's runs (default 20)")
    ap.add_argument("--max-ranks", type=int, default=64, help="largest job of the report's runs (default 64)")
    ap.add_argument("--only", choices=("overhead", "report"), help="one of the two parts")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    plugin_dir = os.path.join(b, "plugin")
    plugin, report = os.path.join(plugin_dir, "instr.so"), os.path.join(b, "bin", "instr-report")
    for tool, pkg in (("mpicc.openmpi", "libopenmpi-dev"), ("mpirun.openmpi", "openmpi-bin")):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found (Debian: apt-get install {pkg})")
    if not glob.glob("/usr/lib/*/libblas.so") and not os.path.exists("/usr/lib/libblas.so"):
        raise SystemExit("libblas.so not found (Debian: apt-get install libblas-dev)")
    wrappers = os.path.join(plugin_dir, "libinstr-mpi-openmpi.so")
    if not os.path.exists(wrappers):
        raise SystemExit(f"{wrappers} not built (the build found no mpicc.openmpi?)")
    cache = os.path.join(b, "real")
    os.makedirs(cache, exist_ok=True)
    src = fetch_hpcc(cache)
    tag = str(os.stat(plugin).st_mtime_ns)
    p = f"-fplugin={plugin}"
    exes = {PLAIN: build_hpcc(src, os.path.join(cache, "hpcc", "any", "plain"), "", "", ""),
            INSTR: build_hpcc(src, os.path.join(cache, "hpcc", tag, "instr"), p, p,
                              f"-L{plugin_dir} -linstr-mpi-openmpi -Wl,-rpath,{plugin_dir}")}
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("INSTR_")}
    with tempfile.TemporaryDirectory(dir=cache) as work:
        if a.only != "report":
            overhead(exes, report, work, a, env0)
        if a.only != "overhead":
            report_scaling(exes[INSTR], report, work, a, env0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check-report-mpi.py BIN SRC WORK - instr-report over MPI (mpirun -np K
instr-report-mpi, tools/cmd/instr-report-mpi.c): with 1, 2 and 3 report
ranks, the JSON and CSV of a job's hand-made dumps (mpi-traces/, traces/:
ranks on two hosts, a rank's child, another job's dump) and of four
synthetic dumps on one host are instr-report's, but for Wall Inclusive,
which a report walked by several ranks does not know and says why (-v).
Exit 77: no instr-report-mpi (no MPI at build time) or no mpirun.openmpi."""
import json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

bindir, src, work = sys.argv[1:4]
gen = sys.argv[4] if len(sys.argv) > 4 else None
mpi_report = os.path.join(bindir, "instr-report-mpi")
mpirun = shutil.which("mpirun.openmpi")
if not os.path.exists(mpi_report) or not mpirun:
    print("no instr-report-mpi or mpirun.openmpi: skipped")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, INSTR_REPORT_CACHE="off", HOME=work, TMPDIR=work)
for k in list(env):
    if k.startswith(("OMPI_", "PMIX_", "PMI_")):
        del env[k]


def dumps_from(sub, names):
    out = []
    for t in names:
        d = os.path.join(work, sub + "-" + t[:-4] + ".instr")
        subprocess.run([os.path.join(bindir, "instr-dump"), "--from-text", os.path.join(src, sub, t), "-o", d],
                       check=True)
        out.append(d)
    return out


def run(k, *args):
    if k == 0:
        cmd = [os.path.join(bindir, "instr-report")] + list(args)
    else:
        cmd = [mpirun, "--oversubscribe", "-np", str(k)] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) + \
              [mpi_report] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def no_wall(j):
    """j without its Wall Inclusive values (null when unknown)."""
    if isinstance(j, dict):
        return {k: no_wall(v) for k, v in j.items() if not k.startswith("wall") and k != "concurrency"}
    if isinstance(j, list):
        return [no_wall(v) for v in j]
    return j


sets = {"two hosts": dumps_from("mpi-traces", sorted(os.listdir(os.path.join(src, "mpi-traces")))),
        "a job, a child, another job": dumps_from("traces", sorted(os.listdir(os.path.join(src, "traces"))))}
if gen:
    synth = []
    for i, n in enumerate((400_000, 100_000, 250_000, 50_000)):
        d = os.path.join(work, "synth%d.instr" % i)
        subprocess.run([gen, d, str(n), "2", str(300 + i)], check=True)
        synth.append(d)
    sets["four processes of one host"] = synth
for name, dumps in sets.items():
    plain = run(0, "--format", "json", *dumps)
    want = json.loads(plain.stdout) if plain.stdout else None
    csv0 = run(0, "--format", "csv", "--units", "ns", *dumps).stdout
    for k in (1, 2, 3):
        got = run(k, "--format", "json", *dumps)
        j = json.loads(got.stdout) if got.returncode == plain.returncode and got.stdout else None
        same = j is not None and (j == want if k == 1 else no_wall(j) == no_wall(want))
        check(same, "%s: %d report rank(s): instr-report's JSON (exit %d / %d) %s" %
              (name, k, got.returncode, plain.returncode, got.stderr[-300:]))
        if k > 1 and name.startswith("four"):
            csv = run(k, "--format", "csv", "--units", "ns", *dumps).stdout
            check(len(csv.splitlines()) == len(csv0.splitlines()), "%s: %d ranks: the CSV's rows" % (name, k))
            text = run(k, "-v", *dumps).stdout
            check("Wall:       unknown (the dumps were walked by the MPI report's ranks" in " ".join(text.split()) or
                  "Wall: unknown (the dumps were walked by the MPI report's ranks" in " ".join(text.split()),
                  "%s: %d ranks: Wall said unknown, and why" % (name, k))
sys.exit(exit_status())

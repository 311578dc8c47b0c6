#!/usr/bin/env python3
"""check-mpi.py - an MPI job recorded and reported (label "mpi").

Builds ring.c (rank r does r + 1 units of work per step, then MPI_Sendrecv
around the ring and MPI_Allreduce) with the MPI's compiler wrapper and the
plugin, runs it with 4 ranks, and checks what the runtime learnt from the
launcher and what the report makes of the job:

  ranks     one job directory with 4 dumps, ranks 0..3 of size 4, one job id,
            the host; INSTR_OUTPUT's %r %h %j
  report    --view ranks (text, CSV, JSON), the POP metrics (load balance
            near 1:2:3:4's 0.625), rank 0 more in MPI than rank 3, the
            per-function statistics across ranks; a rank's dump removed:
            the report says which rank is missing

  ends      abort.c: rank 2 ends mid-run by MPI_Abort ("abort") or by raising
            SIGKILL ("kill"), the others wait in MPI_Barrier until the launcher
            ends them (Open MPI: SIGTERM, then SIGKILL 2 ms later; MPICH:
            SIGKILL): every dump reads, the report says how each rank ended
            and where its record ends, a rank without an end record ends at
            its last event (the job's runtime covers every rank), and a
            rank whose dump is gone is said missing; linked with
            libinstr-mpi (when built), MPI_Abort's error code 3 as well
  traces    hand-made dumps of a job (traces/) with known POP figures, rows and spreads;
            and of a job whose ranks ended four ways (traces-ends/): exit 0,
            SIGTERM, MPI_Abort, no end record (its last event 1.1 ms, its
            last calibration 0.71 ms): how each ended, and the job's runtime
  launchers the launcher table without MPI (each launcher's variables set by
            hand on a plain program), INSTR_JOB_ID, a planted job directory
  prefixes  --mpi-prefixes: shmem.c (run as a rank by hand) spends about 3/4 of
            its time in shmem_wait, MPI time only with +shmem_ (or shmem_);
            the traces' work as MPI time with --mpi-prefixes=work, exactly

usage: check-mpi.py MPI(openmpi|mpich) CHECK --bin DIR --plugin SO --src DIR --work DIR [--cc GCC] [--uid 65534]
--cc: the GCC the plugin was built for (INSTR_GCC), which the MPI's wrapper
runs (OMPI_CC, MPICH_CC); default gcc.
Exit 77: this MPI is not installed (or no setpriv for --uid).
"""
import argparse, csv, io, json, os, re, shutil, subprocess, sys

MPIS = {
    "openmpi": {"cc": "mpicc.openmpi", "run": "mpirun.openmpi", "cc_var": "OMPI_CC",
                "run_args": ["--oversubscribe"], "root_args": ["--allow-run-as-root"]},
    "mpich": {"cc": "mpicc.mpich", "run": "mpirun.mpich", "cc_var": "MPICH_CC",
              "run_args": [], "root_args": []},
}
NRANKS = 4


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, env=None, uid=None, cwd=None, check=True):
    if uid is not None:
        cmd = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"] + cmd
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    if check and p.returncode != 0:
        fail("%s: exit %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def compile_env(m, cc):
    """The environment of the MPI's compiler wrapper: it runs cc, the GCC
    the plugin was built for (a plugin loads only into its own GCC), not the
    wrapper's default gcc, which may be another release."""
    env = dict(os.environ)
    env[m["cc_var"]] = cc
    return env


def job_env(m, work, uid, extra=None):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("INSTR_", "OMPI_COMM", "PMI_", "PMIX_", "SLURM_")):
            del env[k]
    if uid is not None:  # mpirun needs a home and a temporary directory of its own
        env["HOME"] = env["TMPDIR"] = os.path.join(work, "home")
    if extra:
        env.update(extra)
    return env


def launch(m, exe, cwd, work, uid, steps="10", extra=None):
    args = [shutil.which(m["run"])] + m["run_args"]
    if os.geteuid() == 0 and uid is None:
        args += m["root_args"]
    return run(args + ["-np", str(NRANKS), exe, steps], env=job_env(m, work, uid, extra), uid=uid, cwd=cwd)


def header(binp, dump):
    out = run([os.path.join(binp, "instr-dump"), dump]).stdout
    line = next(l for l in out.splitlines() if l.startswith("header "))
    return dict(kv.split("=", 1) for kv in re.findall(r'(\w+=(?:"[^"]*"|\S+))', line))


def check_ranks(a, m, exe, work, uid):
    run_dir = os.path.join(work, "run")
    os.makedirs(run_dir)
    if uid is not None:
        os.chmod(run_dir, 0o777)
    launch(m, exe, run_dir, work, uid)
    entries = os.listdir(run_dir)
    dirs = [e for e in entries if e.endswith(".instr.d")]
    if len(dirs) != 1 or len(entries) != 1:
        fail("expected one job directory, found %s" % entries)
    jdir = os.path.join(run_dir, dirs[0])
    st = os.stat(jdir)
    if st.st_mode & 0o077:
        fail("the job directory is open to others: %o" % st.st_mode)
    if uid is not None and st.st_uid != uid:
        fail("the job directory belongs to uid %d" % st.st_uid)
    dumps = sorted(os.listdir(jdir))
    if len(dumps) != NRANKS or not all(re.fullmatch(r"rank\d+\.\d+\.instr", d) for d in dumps):
        fail("expected %d rankR.PID.instr dumps, found %s" % (NRANKS, dumps))
    heads = [header(a.bin, os.path.join(jdir, d)) for d in dumps]
    ranks = sorted(int(h["rank"]) for h in heads)
    if ranks != list(range(NRANKS)):
        fail("ranks %s" % ranks)
    if {h["size"] for h in heads} != {str(NRANKS)} or len({h["job"] for h in heads}) != 1:
        fail("size or job differ: %s" % [(h["size"], h["job"]) for h in heads])
    host = os.uname().nodename
    if {h["host"] for h in heads} != {host}:
        fail("host %s, not %s" % ({h["host"] for h in heads}, host))
    for d, h in zip(dumps, heads):
        if not d.startswith("rank%s." % h["rank"]) or not dirs[0] == "ring.%s.instr.d" % h["job"]:
            fail("%s/%s named apart from its header's rank %s, job %s" % (dirs[0], d, h["rank"], h["job"]))
    # INSTR_OUTPUT's %r %h %j (the directory made, as it names a job)
    out2 = os.path.join(work, "out2")
    os.makedirs(out2)
    if uid is not None:
        os.chmod(out2, 0o777)
    launch(m, exe, out2, work, uid, steps="1", extra={"INSTR_OUTPUT": "%j-%h/r%r.instr"})
    sub = os.listdir(out2)
    # another job: another id, made as the first job's was
    if len(sub) != 1 or not sub[0].endswith("-" + host) or len(sub[0]) == len(host) + 1:
        fail("INSTR_OUTPUT=%%j-%%h/r%%r.instr made %s" % sub)
    names = sorted(os.listdir(os.path.join(out2, sub[0])))
    if names != ["r%d.instr" % r for r in range(NRANKS)]:
        fail("INSTR_OUTPUT=%%j-%%h/r%%r.instr: %s/%s" % (sub[0], names))
    print("ranks: %s with %s, job %s on %s" % (dirs[0], dumps, heads[0]["job"], host))
    return jdir


def report(a, *args):
    return run([os.path.join(a.bin, "instr-report")] + list(args)).stdout


def check_report(a, jdir, work):
    dumps = sorted(os.path.join(jdir, d) for d in os.listdir(jdir))
    text = report(a, "--view", "ranks", *dumps)
    rows = [l.split() for l in text.splitlines() if re.match(r"\s*\d+\s+\S+\s+\d+\s+[\d.]+", l)]
    if [int(r[0]) for r in rows] != list(range(NRANKS)):
        fail("--view ranks rows: %s\n%s" % (rows, text))
    if not re.search(r"^Job: .*%d of %d ranks on 1 host" % (NRANKS, NRANKS), text, re.M):
        fail("no Job: line saying %d of %d ranks\n%s" % (NRANKS, NRANKS, text))
    pop = re.search(r"^POP: +load balance ([\d.]+), communication efficiency ([\d.]+), parallel efficiency ([\d.]+)",
                    text, re.M)
    if not pop:
        fail("no POP line\n" + text)
    lb, ce, pe = (float(x) for x in pop.groups())
    # rank r does r + 1 units: 2.5 / 4 = 0.625 (oversubscribed ranks: a generous range)
    if not 0.45 <= lb <= 0.8:
        fail("load balance %.3f, not near 0.625\n%s" % (lb, text))
    if not (0 < ce <= 1 and abs(pe - lb * ce) < 0.002):
        fail("communication efficiency %.3f, parallel efficiency %.3f" % (ce, pe))
    if report(a, "--view", "ranks", jdir) != text:
        fail("instr-report JOBDIR is not instr-report JOBDIR/*.instr")
    c = list(csv.DictReader(io.StringIO(report(a, "--view", "ranks", "--format", "csv", *dumps))))
    if [int(r["rank"]) for r in c] != list(range(NRANKS)):
        fail("CSV ranks %s" % c)
    mpi = [float(r["mpi_pct"]) for r in c]
    useful = [float(r["useful_ms"]) for r in c]
    if not mpi[0] > mpi[-1]:
        fail("rank 0 should spend a larger share in MPI than rank %d: %s" % (NRANKS - 1, mpi))
    if not useful[-1] > 2 * useful[0]:
        fail("rank %d should compute about 4 times rank 0's: %s" % (NRANKS - 1, useful))
    j = json.loads(report(a, "--view", "ranks", "--format", "json", *dumps))
    sj, sp = j["session"]["job"], j["session"]["pop"]
    if sj["size"] != NRANKS or sj["ranks"] != NRANKS or sj["missing_ranks"] != [] or \
            abs(sp["load_balance"] - lb) > 0.001 or len(j["ranks"]) != NRANKS:
        fail("JSON job %s pop %s ranks %s" % (sj, sp, j.get("ranks")))
    # per function across ranks (Elapsed Inclusive): work's max is rank 3's, 4 / 2.5 of the mean, on
    # a machine of 4 cores; on 2 oversubscribed ones the scheduler blurs it: rank 2 or 3, above the mean
    f = next(x for x in j["functions"] if x["name"] == "work")
    sp_ = f["ranks"]
    if sp_["max_rank"] not in (NRANKS - 2, NRANKS - 1) or not 1.1 <= sp_["max_over_mean"] <= 2.5 or not \
            sp_["min_ns"] <= sp_["mean_ns"] <= sp_["max_ns"]:
        fail("work across ranks: %s" % sp_)
    fc = list(csv.DictReader(io.StringIO(report(a, "--format", "csv", *dumps))))
    w = next(x for x in fc if x["function"] == "work")
    if int(w["max_rank"]) != sp_["max_rank"] or abs(float(w["max_over_mean"]) - sp_["max_over_mean"]) > 0.001:
        fail("CSV work across ranks: %s" % w)
    if not re.search(r"Max/Mean", report(a, *dumps)):
        fail("the text table of a job has no Max/Mean column")
    # rank 2's dump gone (a rank killed before it wrote): said, in text and JSON
    gone = [d for d in dumps if not os.path.basename(d).startswith("rank2.")]
    text = report(a, *gone)
    if not re.search(r"^Missing: +rank 2: ", text, re.M) or "3 of 4 ranks" not in text:
        fail("rank 2's dump removed: not said\n" + text)
    j = json.loads(report(a, "--format", "json", *gone))
    if j["session"]["job"]["missing_ranks"] != [2]:
        fail("JSON missing_ranks %s" % j["session"]["job"])
    print("report: load balance %.3f, communication efficiency %.3f; MPI %% %s; useful ms %s" % (lb, ce, mpi, useful))


def check_ends(a, m, work):
    """abort.c in both ways, and linked with libinstr-mpi: known answers for
    how each rank ended."""
    exe = os.path.join(work, "abort")
    env = compile_env(m, a.cc)
    run([m["cc"], "-O2", "-g", "-fplugin=" + a.plugin, os.path.join(a.src, "abort.c"), "-o", exe], env=env)
    ways = [("abort", exe), ("kill", exe)]
    libdir = os.path.dirname(a.plugin)
    if os.path.exists(os.path.join(libdir, "libinstr-mpi-%s.so" % a.mpi)):
        wexe = os.path.join(work, "abort-pmpi")
        run([m["cc"], "-O2", "-g", "-fplugin=" + a.plugin, os.path.join(a.src, "abort.c"), "-o", wexe,
             "-L" + libdir, "-linstr-mpi-" + a.mpi, "-Wl,-rpath," + libdir], env=env)
        ways.append(("abort-pmpi", wexe))
    else:
        print("libinstr-mpi-%s.so not built: MPI_Abort's code not checked" % a.mpi)
    for how, exe in ways:
        pmpi = how == "abort-pmpi"
        how = how.replace("-pmpi", "")
        d = os.path.join(work, "run-" + how + ("-pmpi" if pmpi else ""))
        os.makedirs(d)
        args = [shutil.which(m["run"])] + m["run_args"] + (m["root_args"] if os.geteuid() == 0 else [])
        p = run(args + ["-np", str(NRANKS), exe, how], env=job_env(m, work, None), cwd=d, check=False)
        if p.returncode == 0:
            fail("%s: the launcher exited 0\n%s%s" % (how, p.stdout, p.stderr))
        jdirs = [e for e in os.listdir(d) if e.endswith(".instr.d")]
        if len(jdirs) != 1:
            fail("%s: expected one job directory, found %s" % (how, os.listdir(d)))
        jdir = os.path.join(d, jdirs[0])
        dumps = sorted(os.path.join(jdir, f) for f in os.listdir(jdir))
        if len(dumps) != NRANKS:
            fail("%s: %d dumps, not %d: %s" % (how, len(dumps), NRANKS, dumps))
        for f in dumps:  # each reads: 0, or 3 (a process that did not finish), never 2 (unusable)
            r = run([os.path.join(a.bin, "instr-report"), f], check=False)
            if r.returncode not in (0, 3) or not r.stdout.startswith("instr report"):
                fail("%s: %s: exit %d\n%s" % (how, f, r.returncode, r.stderr))
        r = run([os.path.join(a.bin, "instr-report"), "--view", "ranks", "--format", "json", jdir], check=False)
        if r.returncode != 3:
            fail("%s: the job's report exited %d, not 3 (ranks that did not finish)\n%s" % (how, r.returncode, r.stderr))
        j = json.loads(r.stdout)
        ends = {x["rank"]: x["end"] for x in j["ranks"]}
        if sorted(ends) != list(range(NRANKS)):
            fail("%s: ranks %s" % (how, sorted(ends)))
        # rank 2: its record ends in the call that ended it, from end_rank
        want2 = {"how": "call", "call": "MPI_Abort", "in": "MPI_Abort", "from": "end_rank"} if how == "abort" \
            else {"how": "none", "in": "raise", "from": "end_rank"}
        if pmpi:  # the wrapper recorded the call as it was entered, with its code
            want2["abort_code"] = 3
        if {k: v for k, v in ends[2].items() if k != "at_ns"} != want2:
            fail("%s: rank 2 ended %s, not %s" % (how, ends[2], want2))
        # the others: in MPI_Barrier, ended by the launcher's SIGTERM (Open MPI, when the handler ran
        # before its SIGKILL came) or with no end record (SIGKILL); never an exit
        for r_, e in ends.items():
            if r_ != 2 and not (e["in"] == "MPI_Barrier" and e["from"] == "main" and
                                (e["how"] == "none" or (e["how"] == "signal" and e["signal"] == "SIGTERM"))):
                fail("%s: rank %d ended %s" % (how, r_, e))
        if a.mpi == "mpich" and any(e["how"] == "signal" for e in ends.values()):
            fail("%s: MPICH's launcher kills with SIGKILL, yet %s" % (how, ends))
        # no end invented: each rank's end (its last event, without an end record) is after its
        # Elapsed, and the job's runtime covers them all (it took the last chunk's calibration, 7 ms
        # into a rank that ran 500)
        pop, sess = j["session"]["pop"], j["session"]
        for x in j["ranks"]:
            if x["end"]["at_ns"] + 1e6 < x["elapsed_ns"] or pop["job_runtime_ns"] + 1e6 < x["elapsed_ns"] or \
                    sess["duration_ns"] + 1e6 < x["elapsed_ns"]:
                fail("%s: rank %d ends at %s ns, its Elapsed %s ns; job runtime %s, duration %s" %
                     (how, x["rank"], x["end"]["at_ns"], x["elapsed_ns"], pop["job_runtime_ns"], sess["duration_ns"]))
        if not 0 < pop["communication_efficiency"] <= 1:
            fail("%s: communication efficiency %s" % (how, pop))
        text = report_rc(a, jdir)
        first = ("rank 2: MPI_Abort, code 3 (from end_rank)" if pmpi else "rank 2: MPI_Abort (from end_rank)") \
            if how == "abort" else "rank 2: no end recorded, last in raise (from end_rank)"
        if not re.search(r"^Ends: +(.*; )?%s(;|$)" % re.escape(first), text, re.M):
            fail("%s: no %r on the Ends: line\n%s" % (how, first, text))
        rows = {int(l.split()[0]): l for l in report_rc(a, "--view", "ranks", jdir).splitlines()
                if re.match(r"\s*\d+\s+\S+\s+\d+\s+[\d.]+", l)}
        if not rows[2].endswith(first[len("rank 2: "):]):
            fail("%s: --view ranks row of rank 2: %s" % (how, rows[2]))
        # the rank that ended first gone: said missing
        gone = [f for f in dumps if not os.path.basename(f).startswith("rank2.")]
        if not re.search(r"^Missing: +rank 2: ", report_rc(a, *gone), re.M):
            fail("%s: rank 2's dump removed: not said" % how)
        print("ends %s%s: %s" % (how, " (libinstr-mpi)" if pmpi else "", {r_: (e["how"], e.get("signal") or e.get("call") or "", e["in"])
                                     for r_, e in sorted(ends.items())}))


def report_rc(a, *args):
    """The report of a job some of whose ranks did not finish (exit 3)."""
    r = run([os.path.join(a.bin, "instr-report")] + list(args), check=False)
    if r.returncode not in (0, 3):
        fail("instr-report %s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def check_launchers(a, work):
    """The launcher table without MPI: a plain program run with each
    launcher's variables set by hand; INSTR_JOB_ID; a job directory
    planted by another user."""
    exe = os.path.join(work, "plain")
    run([a.cc, "-O2", "-fplugin=" + a.plugin, os.path.join(a.src, "plain.c"), "-o", exe])
    cases = [
        ("openmpi", {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_MCA_ess_base_jobid": "77",
                     "PMIX_RANK": "2", "PMIX_NAMESPACE": "ns"}, ("2", "8", "77")),
        ("pmix", {"PMIX_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3", "PMIX_NAMESPACE": "prterun-vm-1@1"},
         ("1", "3", "prterun-vm-1@1")),
        ("hydra", {"PMI_RANK": "0", "PMI_SIZE": "2"}, ("0", "2", None)),
        # an mpirun in a Slurm allocation: the batch step's SLURM_PROCID is not the rank
        ("hydra", {"PMI_RANK": "3", "PMI_SIZE": "4", "SLURM_PROCID": "0", "SLURM_NTASKS": "1",
                   "SLURM_JOB_ID": "9"}, ("3", "4", None)),
        ("slurm", {"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_JOB_ID": "123", "SLURM_STEP_ID": "4"},
         ("5", "6", "123.4")),
        ("slurm", {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_JOB_ID": "12/../x", "SLURM_STEP_ID": "0",
                   "INSTR_JOB_ID": "mine"}, ("0", "2", "mine")),
    ]
    for i, (launcher, env_vars, (rank, size, job)) in enumerate(cases):
        d = os.path.join(work, "l%d" % i)
        os.makedirs(d)
        env = job_env(MPIS["openmpi"], work, None, env_vars)
        run([exe], env=env, cwd=d)
        jdirs = os.listdir(d)
        if len(jdirs) != 1 or not jdirs[0].startswith("plain.") or not jdirs[0].endswith(".instr.d"):
            fail("%s %s: %s" % (launcher, env_vars, jdirs))
        dumps = os.listdir(os.path.join(d, jdirs[0]))
        if len(dumps) != 1 or not dumps[0].startswith("rank%s." % rank):
            fail("%s %s: %s/%s" % (launcher, env_vars, jdirs[0], dumps))
        h = header(a.bin, os.path.join(d, jdirs[0], dumps[0]))
        got = (h.get("launcher"), h.get("rank"), h.get("size"))
        if got != (launcher, rank, size) or (job and h.get("job") != job) or \
                (not job and not h.get("job", "").startswith("hydra-")) or "/" in h.get("job", "/"):
            fail("%s %s: header %s" % (launcher, env_vars, h))
    # not a rank (no launcher; a Slurm batch script, which has no step): the usual name, no job fields
    for i, extra in enumerate([{}, {"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "5"},
                               {"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "5",
                                "SLURM_STEP_ID": "4294967294"}]):
        d = os.path.join(work, "none%d" % i)
        os.makedirs(d)
        run([exe], env=job_env(MPIS["openmpi"], work, None, extra), cwd=d)
        names = os.listdir(d)
        if len(names) != 1 or not re.fullmatch(r"plain\.\d+\.instr", names[0]) or \
                "rank" in header(a.bin, os.path.join(d, names[0])):
            fail("not a rank (%s): %s" % (extra, names))
    # a job directory of that name planted by another user: not used, said
    if os.geteuid() == 0:
        d = os.path.join(work, "planted")
        os.makedirs(os.path.join(d, "plain.77.instr.d"))
        os.chmod(os.path.join(d, "plain.77.instr.d"), 0o777)
        os.chown(os.path.join(d, "plain.77.instr.d"), 65534, 65534)
        run([exe], env=job_env(MPIS["openmpi"], work, None, cases[0][1]), cwd=d)
        inside = os.listdir(os.path.join(d, "plain.77.instr.d"))
        beside = [n for n in os.listdir(d) if n.startswith("plain.77.instr.d.rank2.")]
        said = report(a, *[os.path.join(d, n) for n in beside])
        if inside or len(beside) != 1 or "is not this user's: recording to" not in said:
            fail("planted job directory: inside %s, beside %s, report:\n%s" % (inside, beside, said))
    print("launchers: %d cases" % len(cases))


def check_prefixes(a, work):
    """--mpi-prefixes: a frame is MPI time by its name's prefix, the defaults
    (MPI_, PMPI_) added to with '+' or replaced."""
    exe = os.path.join(work, "shmem")
    run([a.cc, "-O2", "-fplugin=" + a.plugin, os.path.join(a.src, "shmem.c"), "-o", exe])
    d = os.path.join(work, "shmem-run")
    os.makedirs(d)
    run([exe], env=job_env(MPIS["openmpi"], work, None, {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1",
                                                          "OMPI_MCA_ess_base_jobid": "7"}), cwd=d)
    jdir = os.path.join(d, os.listdir(d)[0])

    def ranks(*opts):
        j = json.loads(report(a, "--view", "ranks", "--format", "json", *opts, jdir))
        return j["session"]["pop"]["mpi_prefixes"], j["ranks"][0]

    pre, r = ranks()
    if pre != ["MPI_", "PMPI_"] or r["mpi_ns"] != 0:
        fail("default prefixes: %s, rank 0 %s" % (pre, r))
    for opt, want in (("+shmem_", ["MPI_", "PMPI_", "shmem_"]), ("shmem_", ["shmem_"]),
                      ("+shmem_,MPI_,shmem_", ["MPI_", "PMPI_", "shmem_"])):
        pre, r2 = ranks("--mpi-prefixes=" + opt)
        # shmem_wait spins 3 units of 4: MPI time now, out of useful time (generous: a loaded machine)
        if pre != want or not 0.5 <= r2["mpi_pct"] / 100 <= 0.95 or not r2["useful_ns"] < 0.6 * r["useful_ns"] or \
                r2["elapsed_ns"] != r["elapsed_ns"]:
            fail("--mpi-prefixes=%s: prefixes %s, rank 0 %s (without: %s)" % (opt, pre, r2, r))
    pre, r3 = ranks("--mpi-prefixes=none")
    if pre != [] or r3["mpi_ns"] != 0:
        fail("--mpi-prefixes=none: %s %s" % (pre, r3))
    text = report(a, "--mpi-prefixes=+shmem_", jdir)
    if "MPI frames: names beginning MPI_,PMPI_,shmem_ (--mpi-prefixes)" not in text:
        fail("the header does not say which prefixes were used\n" + text)
    if "MPI frames:" in report(a, jdir):
        fail("an MPI frames: line with the default prefixes")
    for bad in ("a,,b", "+", "sh mem_"):
        p = run([os.path.join(a.bin, "instr-report"), "--mpi-prefixes=" + bad, jdir], check=False)
        if p.returncode != 1 or "--mpi-prefixes" not in p.stderr:
            fail("--mpi-prefixes=%s: exit %d %s" % (bad, p.returncode, p.stderr))
    # the traces, exactly: work (100, 200, 400 us of 1000) as the MPI time instead of MPI_Allreduce
    dumps = []
    for t in sorted(os.listdir(os.path.join(a.src, "traces"))):
        out = os.path.join(work, t[:-4] + ".instr")
        run([os.path.join(a.bin, "instr-dump"), "--from-text", os.path.join(a.src, "traces", t), "-o", out])
        dumps.append(out)
    j = json.loads(report(a, "--view", "ranks", "--format", "json", "--mpi-prefixes=work", *dumps))
    rows = [(x["rank"], x["useful_ns"], x["mpi_ns"]) for x in j["ranks"]]
    if rows != [(0, 900000, 100000), (1, 800000, 200000), (3, 600000, 400000)] or \
            abs(j["session"]["pop"]["load_balance"] - 0.8519) > 1e-4:
        fail("traces with --mpi-prefixes=work: %s, pop %s" % (rows, j["session"]["pop"]))
    print("prefixes: shmem_wait %.1f%% of rank 0 with +shmem_, 0 without" % r2["mpi_pct"])


def check_traces(a, work):
    """Hand-made dumps of a job with known answers (traces/): ranks 0, 1, 3
    of 4 (rank 2 missing) compute 100, 200, 400 us of 1000 and spend the
    rest in MPI_Allreduce; a fork child of rank 0 and a rank of another job."""
    dumps = []
    for t in sorted(os.listdir(os.path.join(a.src, "traces"))):
        out = os.path.join(work, t[:-4] + ".instr")
        run([os.path.join(a.bin, "instr-dump"), "--from-text", os.path.join(a.src, "traces", t), "-o", out])
        dumps.append(out)
    j = json.loads(report(a, "--view", "ranks", "--format", "json", "--units", "us", *dumps))
    job, pop = j["session"]["job"], j["session"]["pop"]
    want_job = {"id": "42", "launcher": "openmpi", "size": 4, "ranks": 3, "missing_ranks": [2], "missing_count": 1, "hosts": 2,
                "children_dumps": 1, "other_jobs_dumps": 1}
    if job != want_job:
        fail("job %s, not %s" % (job, want_job))
    # useful 100, 200, 400 (Elapsed outside MPI: no CPU values): 233.3 / 400; 400 / 1000
    if abs(pop["load_balance"] - 0.5833) > 1e-4 or abs(pop["communication_efficiency"] - 0.4) > 1e-4 or \
            abs(pop["parallel_efficiency"] - 0.2333) > 1e-4 or pop["job_runtime_ns"] != 1000000 or \
            pop["useful"] != "elapsed_outside_mpi":
        fail("pop %s" % pop)
    rows = [(r["rank"], r["host"], r["pid"], r["useful_ns"], r["mpi_ns"], r["mpi_pct"]) for r in j["ranks"]]
    want = [(0, "node0", 100, 100000, 900000, 90.0), (1, "node0", 101, 200000, 800000, 80.0),
            (3, "node1", 103, 400000, 600000, 60.0)]
    if rows != want:
        fail("ranks %s, not %s" % (rows, want))
    f = {x["name"]: x["ranks"] for x in j["functions"]}
    if f["work"] != {"min_ns": 100000, "mean_ns": 233333, "max_ns": 400000, "max_rank": 3, "max_over_mean": 1.7143}:
        fail("work across ranks %s" % f["work"])
    if f["MPI_Allreduce"]["max_rank"] != 0 or f["MPI_Allreduce"]["min_ns"] != 600000:
        fail("MPI_Allreduce across ranks %s" % f["MPI_Allreduce"])
    text = report(a, "--units", "us", *dumps)
    for line in ["Job:        42 (openmpi), 3 of 4 ranks on 2 hosts; 1 more dump of a rank's children; "
                 "1 dump of other jobs left out of the ranks",
                 "Missing:    rank 2: no dump of it among the inputs",
                 "POP:        load balance 0.583, communication efficiency 0.400, parallel efficiency 0.233"]:
        if line not in text:
            fail("no %r in\n%s" % (line, text))
    c = report(a, "--view", "ranks", "--format", "csv", "--units", "us", *dumps).splitlines()
    if c[0] != "rank,host,pid,elapsed_us,useful_us,mpi_us,mpi_pct,job,end,exit_status,end_signal,end_call,end_in," \
               "end_from,end_us,abort_code" or c[3] != "3,node1,103,1000.000,400.000,600.000,60.0000,42,exit,0,,,,,1000.000,":
        fail("CSV %s" % c)
    print("traces: pop %s" % pop)
    check_traces_ends(a, work)


def check_traces_ends(a, work):
    """traces-ends/: ranks 0-3 of job 44, 1 tick a ns, all started at 0 but
    rank 3 (at 0.7 ms): rank 0 exits 0 at 1 ms; rank 1 is ended by SIGTERM at
    0.9 ms in MPI_Barrier; rank 2's record ends at 0.3 ms in MPI_Abort (no
    end record; libinstr-mpi's record of the call has code 7); rank 3 has no end record, its last event at 1.1 ms (the
    call of MPI_Barrier), its last calibration at 0.71 ms."""
    dumps = []
    for t in sorted(os.listdir(os.path.join(a.src, "traces-ends"))):
        out = os.path.join(work, "ends-" + t[:-4] + ".instr")
        run([os.path.join(a.bin, "instr-dump"), "--from-text", os.path.join(a.src, "traces-ends", t), "-o", out])
        dumps.append(out)
    r = run([os.path.join(a.bin, "instr-report"), "--view", "ranks", "--format", "json", *dumps], check=False)
    if r.returncode != 3:
        fail("traces-ends: exit %d, not 3\n%s" % (r.returncode, r.stderr))
    j = json.loads(r.stdout)
    ends = [x["end"] for x in j["ranks"]]
    want = [{"how": "exit", "exit_status": 0, "at_ns": 1000000},
            {"how": "signal", "signal": "SIGTERM", "in": "MPI_Barrier", "from": "main", "at_ns": 900000},
            {"how": "call", "call": "MPI_Abort", "abort_code": 7, "in": "MPI_Abort", "from": "main", "at_ns": 300000},
            {"how": "none", "in": "MPI_Barrier", "from": "main", "at_ns": 400000}]
    if ends != want:
        fail("traces-ends: ends %s, not %s" % (ends, want))
    # from the first start (0) to rank 3's last event (1.1 ms), not its calibration (0.71 ms)
    if j["session"]["pop"]["job_runtime_ns"] != 1100000 or j["session"]["duration_ns"] != 1100000:
        fail("traces-ends: runtime %s, duration %s, not 1100000" % (j["session"]["pop"], j["session"]["duration_ns"]))
    text = report_rc(a, *dumps)
    line = ("Ends:       rank 2: MPI_Abort, code 7 (from main); rank 3: no end recorded, last in MPI_Barrier (from main); "
            "rank 1: SIGTERM in MPI_Barrier (from main); rank 0: exit 0")
    if line not in text.splitlines():
        fail("traces-ends: no %r in\n%s" % (line, text))
    c = list(csv.DictReader(io.StringIO(report_rc(a, "--view", "ranks", "--format", "csv", "--units", "us", *dumps))))
    got = [(x["end"], x["exit_status"], x["end_signal"], x["end_call"], x["end_in"], x["end_from"], x["end_us"],
            x["abort_code"]) for x in c]
    if got != [("exit", "0", "", "", "", "", "1000.000", ""),
               ("signal", "", "SIGTERM", "", "MPI_Barrier", "main", "900.000", ""),
               ("call", "", "", "MPI_Abort", "MPI_Abort", "main", "300.000", "7"),
               ("none", "", "", "", "MPI_Barrier", "main", "400.000", "")]:
        fail("traces-ends: CSV %s" % got)
    # --view mpi counts the MPI_Abort as a call of rank 2, invalid nothing
    m = json.loads(report_rc(a, "--view", "mpi", "--format", "json", *dumps))["mpi"]
    if m["calls"] != 1 or m["invalid"] != 0 or [x["call"] for x in m["sites"]] != ["MPI_Abort"]:
        fail("traces-ends: --view mpi %s" % m)
    print("traces-ends: %s" % [e["how"] for e in ends])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mpi", choices=sorted(MPIS))
    ap.add_argument("check", choices=["ranks", "report", "ends", "launchers", "traces", "prefixes"])
    ap.add_argument("--cc", default="gcc", help="the GCC the plugin was built for")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--uid", type=int)
    a = ap.parse_args()
    m = MPIS[a.mpi]
    if a.check in ("launchers", "traces", "prefixes"):
        work = os.path.abspath(a.work)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(os.path.join(work, "home"))
        {"launchers": check_launchers, "traces": check_traces, "prefixes": check_prefixes}[a.check](a, work)
        print("ok")
        return
    if not shutil.which(m["cc"]) or not shutil.which(m["run"]):
        print("%s not installed: skipped" % a.mpi)
        sys.exit(77)
    if a.uid is not None and (os.geteuid() != 0 or not shutil.which("setpriv")):
        print("not root or no setpriv: cannot run as uid %d: skipped" % a.uid)
        sys.exit(77)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "home"))
    if a.uid is not None:
        os.chmod(work, 0o755)
        os.chown(os.path.join(work, "home"), a.uid, a.uid)
    if a.check == "ends":
        check_ends(a, m, work)
        print("ok")
        return
    exe = os.path.join(work, "ring")
    env = compile_env(m, a.cc)
    run([m["cc"], "-O2", "-g", "-fplugin=" + a.plugin, os.path.join(a.src, "ring.c"), "-o", exe], env=env)
    os.chmod(exe, 0o755)
    jdir = check_ranks(a, m, exe, work, a.uid)
    if a.check == "report":
        check_report(a, jdir, work)
    print("ok")


if __name__ == "__main__":
    main()

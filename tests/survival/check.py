#!/usr/bin/env python3
"""Survival checks: run one case of survive (instrumented) and of its
uninstrumented twin (the oracle), compare what the program does (stdout,
stderr without the runtime's "instr:" lines, exit status or signal), then
report the instrumented run's dumps and check that every event up to the
end is there and every repair is counted.  The cases of issue 22
(EVERY_IDENTITY) do so as root, as uid 65534 and as root in a user
namespace (instrtest.identities), each in directories of its own.

Lines starting with '#' in the program's output carry run-dependent values:
they are read, not compared.  Exit code 77 = skipped (the machine cannot
run the case, e.g. no mount); the reason is printed."""
import argparse, glob, importlib.util, json, os, re, resource, shlex, shutil, signal, subprocess, sys, tempfile, time

_spec = importlib.util.spec_from_file_location(
    "e2e_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "check.py"))
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)
check, fn, functions = e2e.check, e2e.fn, e2e.functions
from instrtest import NOBODY, checking_as, identities, open_dir  # noqa: E402  (on the path e2e set)

SKIP = 77
# The cases run as every identity (issue 22 items); the others as the
# invoking user.
EVERY_IDENTITY = {"fork-children-exit", "exit-busy", "_exit"}


def cases_main(cases, *options):
    """The case checkers' main.  argv: CASE --exe EXE --report REPORT and
    the checker's own options, (flag, argparse keywords) pairs.  Runs
    cases[CASE](args, work) in a fresh directory others may enter (the
    unprivileged runs); exit 0, 1 when a check failed, or SKIP."""
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(cases))
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    for flag, kw in options:
        ap.add_argument(flag, **kw)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o755)
        if cases[a.case](a, work) == SKIP:
            return SKIP
    print(f"{len(e2e.failures)} check(s) failed")
    return 1 if e2e.failures else 0


class Run:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err
        self.stable_out = [l for l in out.splitlines() if not l.startswith("#")]
        self.instr_lines = [l for l in err.splitlines() if l.startswith("instr:")]
        self.stable_err = [l for l in err.splitlines() if not l.startswith("instr:")]

    def value(self, key):
        m = re.search(r"^# %s (-?\d+)$" % re.escape(key), self.out, re.M)
        return int(m.group(1)) if m else None


def run(cmd, workdir, env_extra=None, limits=None, user=False, term_after_ready=False, cwd=None, prefix=()):
    """Runs cmd in workdir (or cwd), its dumps written there, as the
    invoking user or with the command prefix that runs it as another
    identity (user=True: uid 65534)."""
    # The runtime says its lines on stderr only when asked (INSTR_LOG) or
    # to a terminal: these checks read them there.
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(workdir, "%e.%p.instr"), SURVIVE_SECONDS="2",
               INSTR_LOG="stderr")
    env.update(env_extra or {})
    cmd = [*(NOBODY if user else prefix), *cmd]

    def pre():
        for res, val in (limits or {}).items():
            resource.setrlimit(res, (val, val))

    p = subprocess.Popen(cmd, cwd=cwd or workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=pre)
    if term_after_ready:
        first = p.stdout.readline()
        time.sleep(0.2)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        out = first + out
    else:
        out, err = p.communicate(timeout=100)
    return Run(p.returncode, out, err)


def report(tool, dumps, fmt="json"):
    proc = subprocess.run([tool, "--format", fmt, "--units", "ns", *dumps], capture_output=True, text=True,
                          timeout=120)
    check(proc.returncode in (0, 3), f"instr-report succeeds on {len(dumps)} dump(s) (exit {proc.returncode})")
    if proc.returncode not in (0, 3):
        sys.stderr.write(proc.stderr)
        return None, proc
    return (json.loads(proc.stdout) if fmt == "json" else proc.stdout), proc


def calls(rep, name):
    found = functions(rep, name)
    return sum(f["calls"] for f in found)


def session(rep):
    return rep["session"]


def programs(rep):
    return rep["session"]["programs"]


# ---- per-case expectations ------------------------------------------------------
# Each gets (args, inst: Run, oracle: Run, dumps, workdir) and checks the dumps.

def one_dump(a, dumps):
    check(len(dumps) == 1, f"one dump ({len(dumps)})")
    if not dumps:
        return None, None
    rep, proc = report(a.report, dumps)
    return rep, proc


def expect_complete(a, inst, dumps, work=100):
    rep, proc = one_dump(a, dumps)
    if not rep:
        return None
    check(calls(rep, "work") == work, f"work called {work} times ({calls(rep, 'work')})")
    check(programs(rep)[0]["complete"], "the dump is complete")
    check(proc.returncode == 0, f"report without warnings (exit {proc.returncode}: {proc.stderr.strip()})")
    check(not inst.instr_lines, f"the runtime said nothing ({inst.instr_lines})")
    return rep


def expect_ended(a, dumps, work, sig, min_open, must_say):
    """A process that did not exit: all its events, the end shown, open frames counted."""
    rep, proc = one_dump(a, dumps)
    if not rep:
        return None
    check(calls(rep, "work") == work, f"work called {work} times before the end ({calls(rep, 'work')})")
    prog = programs(rep)[0]
    check(not prog["complete"], "the dump is not marked complete")
    check(prog["end_signal"] == sig, f"end signal recorded: {sig} ({prog['end_signal']})")
    check(prog["open_frames_at_end"] >= min_open,
          f"at least {min_open} frames open at the end ({prog['open_frames_at_end']})")
    check(session(rep)["repairs"]["incomplete_frames"] == prog["open_frames_at_end"],
          "open frames are counted as incomplete repairs")
    check(proc.returncode == 3, f"report exit code 3: damaged/unfinished ({proc.returncode})")
    text, _ = report(a.report, dumps, "text")
    check(text is not None and must_say in text, f"the report says '{must_say}'")
    return rep


def case_return(a, inst, orc, dumps, work):
    rep = expect_complete(a, inst, dumps)
    if rep:
        check(fn(rep, "main")["calls"] == 1, "main entered once")


def case_exit_thread(a, inst, orc, dumps, work):
    rep, proc = one_dump(a, dumps)
    if rep:
        check(calls(rep, "exiter_work") == 1, "exiter_work called once")
        check(calls(rep, "work") >= 100, f"work called >= 100 times ({calls(rep, 'work')})")
        check(programs(rep)[0]["complete"], "exit() from a thread completes the dump")
        check(len(rep["threads"]) == 4, f"4 threads recorded ({len(rep['threads'])})")


def case_exit_busy(a, inst, orc, dumps, work):
    """exit() while 8 threads call work(): a thread caught between the call
    site's hook and work's entry hook ends inside work, not in a pseudo-frame
    of it (a row named work of no module, besides the real one)."""
    rep, proc = one_dump(a, dumps)
    if rep:
        rows = functions(rep, "work")
        check(len(rows) == 1, f"one row named work ({[(f['name'], f.get('module')) for f in rows]})")
        check(calls(rep, "exiter_work") == 1, "exiter_work called once")
        check(programs(rep)[0]["complete"], "exit() from a thread completes the dump")
        check(len(rep["threads"]) == 10, f"10 threads recorded ({len(rep['threads'])})")
        text, _ = report(a.report, dumps, "text")
        odd = [l for l in (text or "").splitlines() if re.search(r"\s\?\s+work\s*$", l)]
        check(not odd, f"no row of work in module '?' ({odd})")


def case__exit(a, inst, orc, dumps, work):
    """_exit from an instrumented function: the plugin's ending hook before it
    records the end (lifecycle.c), with or without the sud trap."""
    rep = expect_complete(a, inst, dumps)
    if rep:
        check(programs(rep)[0]["exit_status"] == 4, f"exit status 4 recorded ({programs(rep)[0]['exit_status']})")


def case_fork_children_exit(a, inst, orc, dumps, work):
    """Children that leave with _exit(0) (a server's background saves) ended
    normally: no warning, instr-report exits 0 (the ending hook; no sud
    needed)."""
    rep = session_checks(a, dumps, 4, 121, 3)
    if rep:
        check(all(p["complete"] for p in programs(rep)), "every dump complete")
        check(all(p["exit_status"] == 0 for p in programs(rep)), "every exit status 0")
        text = subprocess.run([a.report, *dumps], capture_output=True, text=True, timeout=120)
        check(text.returncode == 0 and not text.stderr.strip(),
              f"instr-report exits 0 without a warning ({text.returncode}: {text.stderr.strip()!r})")
        check("did not finish" not in text.stdout, "no dump said unfinished")


def case_fork_child_killed(a, inst, orc, dumps, work):
    """A child killed by SIGKILL is still incomplete (what _exit no longer is)."""
    rep = session_checks(a, dumps, 2, 107, 1)
    if rep:
        done = sorted(p["complete"] for p in programs(rep))
        check(done == [False, True], f"the parent complete, the killed child not ({done})")
        text = subprocess.run([a.report, *dumps], capture_output=True, text=True, timeout=120)
        check(text.returncode == 3 and "did not finish" in text.stdout,
              f"instr-report says it and exits 3 ({text.returncode})")


def case_abort(a, inst, orc, dumps, work):
    expect_ended(a, dumps, 100, 6, 1, "killed by signal 6 (SIGABRT)")


def case_segv(a, inst, orc, dumps, work):
    rep = expect_ended(a, dumps, 100, 11, 2, "killed by signal 11 (SIGSEGV)")
    if rep:
        check(calls(rep, "crash") == 1, "crash entered once")


def case_terminate(a, inst, orc, dumps, work):
    rep = expect_ended(a, dumps, 100, 6, 4, "killed by signal 6 (SIGABRT)")
    if rep:
        check(calls(rep, "thrower") == 3, f"thrower entered 3 times ({calls(rep, 'thrower')})")


def case_sigkill(a, inst, orc, dumps, work):
    expect_ended(a, dumps, 100, 0, 1, "did not finish")


def case_sigterm(a, inst, orc, dumps, work):
    expect_ended(a, dumps, 100, 15, 1, "killed by signal 15 (SIGTERM)")


def case_sigterm_handler(a, inst, orc, dumps, work):
    expect_complete(a, inst, dumps)


def case_sigterm_external(a, inst, orc, dumps, work):
    rep, proc = one_dump(a, dumps)
    if rep:
        check(calls(rep, "work") > 0, "work recorded until the kill")
        check(programs(rep)[0]["end_signal"] == 15, "end signal 15 recorded")
        check(session(rep)["repairs"]["incomplete_frames"] >= 1, "main still open: counted incomplete")


def by_function(a, dumps, name):
    """The dumps whose report has function `name`."""
    out = []
    for d in dumps:
        r, _ = report(a.report, [d])
        if r and functions(r, name):
            out.append((d, r))
    return out


def session_checks(a, dumps, want_dumps, work, child_work):
    check(len(dumps) == want_dumps, f"{want_dumps} dumps ({len(dumps)})")
    rep, proc = report(a.report, dumps)
    if not rep:
        return None
    check(calls(rep, "work") == work, f"session: work called {work} times ({calls(rep, 'work')})")
    check(calls(rep, "child_work") == child_work, f"session: child_work called {child_work} times")
    r = session(rep)["repairs"]
    check(r["bad_chunks"] == 0 and r["unmatched_exits"] == 0, f"no bad chunks, no unmatched exits ({r})")
    return rep


def case_fork(a, inst, orc, dumps, work):
    rep = session_checks(a, dumps, 2, 107, 1)
    if rep:
        check(all(p["complete"] for p in programs(rep)), "both dumps complete")
        check(sum(p["fork_child"] for p in programs(rep)) == 1, "one dump is the forked child's")


def case_fork_exec(a, inst, orc, dumps, work):
    # parent, forked child (until exec), exec'd image
    session_checks(a, dumps, 3, 105, 1)


def case_vfork(a, inst, orc, dumps, work):
    # Calls made by the vfork child before exec land in the parent's stream.
    rep = session_checks(a, dumps, 2, 107, 2)
    parent = [r for d, r in by_function(a, dumps, "main") if calls(r, "work") >= 100]
    check(len(parent) == 1 and programs(parent[0])[0]["complete"], "the parent's dump is complete and valid")


def case_posix_spawn(a, inst, orc, dumps, work):
    session_checks(a, dumps, 2, 105, 1)


def case_daemon(a, inst, orc, dumps, work):
    # parent, session leader (_exit), daemon (_exit) after chdir("/")
    session_checks(a, dumps, 3, 109, 1)


def case_threads_unjoined(a, inst, orc, dumps, work):
    rep, proc = one_dump(a, dumps)
    if rep:
        check(programs(rep)[0]["complete"], "complete although threads still run")
        check(len(rep["threads"]) == 5, f"5 threads ({len(rep['threads'])})")
        check(calls(rep, "work") >= 100, "work recorded")
        check(session(rep)["repairs"]["incomplete_frames"] >= 4, "the running threads' frames counted incomplete")


def case_threads_1000(a, inst, orc, dumps, work):
    rep, proc = one_dump(a, dumps)
    if rep:
        check(calls(rep, "work") == 10000, f"work called 10000 times ({calls(rep, 'work')})")
        check(len(rep["threads"]) == 1001, f"1001 threads ({len(rep['threads'])})")
        check(session(rep)["repairs"]["incomplete_frames"] == 0, "no incomplete frames")


def case_threads_64(a, inst, orc, dumps, work):
    rep, proc = one_dump(a, dumps)
    n = inst.value("calls")
    if rep and n is not None:
        got, dropped = calls(rep, "work"), session(rep)["dropped"]
        if dropped:
            check(got < n and got + dropped // 2 + 1 >= n,
                  f"recorded + dropped account for every call ({got} + {dropped} events of {n})")
        else:
            check(got == n, f"every call recorded ({got} of {n})")
        check(len(rep["threads"]) == 65, f"65 threads ({len(rep['threads'])})")


def case_recursion(a, inst, orc, dumps, work):
    rep = expect_complete(a, inst, dumps, 0)
    if rep:
        check(calls(rep, "recurse") == 100001, f"recurse entered 100001 times ({calls(rep, 'recurse')})")


def case_signal_handler(a, inst, orc, dumps, work):
    rep, proc = one_dump(a, dumps)
    total = inst.value("total_handled")
    if rep and total is not None:
        h = calls(rep, "in_handler")
        # Synchronous ones always; a timer signal landing inside a hook is not recorded.
        check(50 <= h <= total, f"in_handler recorded 50..{total} times ({h})")
        r = session(rep)["repairs"]
        check(r["bad_chunks"] == 0 and r["unmatched_exits"] == 0, f"no bad chunks or unmatched exits ({r})")
        check(proc.returncode == 0, "no warnings")


def case_siglongjmp(a, inst, orc, dumps, work):
    rep = expect_complete(a, inst, dumps, 10)
    if rep:
        check(calls(rep, "interrupted") == 40, f"interrupted entered 40 times ({calls(rep, 'interrupted')})")
        check(calls(rep, "jump_from_handler") == 10, "jump_from_handler entered 10 times")
        st = session(rep)["repairs"]["unwound_stack"]
        check(st >= 50, f"frames left by siglongjmp closed and counted ({st})")


def case_lifecycle(a, inst, orc, dumps, work):
    rep = expect_complete(a, inst, dumps, 100)
    if rep:
        for name in ("in_destructor", "in_atexit"):
            check(calls(rep, name) == 1, f"{name} recorded once ({calls(rep, name)})")
        check(calls(rep, "in_constructor") == 1, f"constructor before main recorded ({calls(rep, 'in_constructor')})")


def case_close_fds(a, inst, orc, dumps, work):
    expect_complete(a, inst, dumps, 200)


def case_chdir(a, inst, orc, dumps, work):
    expect_complete(a, inst, dumps, 200)


def events_per_call(a, work):
    """Events one more work() call writes (enter, exit, and call-site events
    if the build records them): two reference runs of `lots`."""
    n = []
    for k in (1000, 2000):
        d = tempfile.mkdtemp(dir=work)
        run([a.exe, "lots"], d, env_extra={"SURVIVE_CALLS": str(k)})
        rep, _ = report(a.report, glob.glob(os.path.join(d, "*.instr")))
        n.append(session(rep)["events"] if rep else 0)
    # A whole number: a hook whose detectors fired also writes the time
    # they took (EXT RUNTIME), one event more now and then in either run.
    return round((n[1] - n[0]) / 1000)


def dropped_checks(a, inst, dumps, expected, say, work):
    check(len(inst.instr_lines) == 1 and say in inst.instr_lines[0],
          f"one line on stderr saying '{say}' ({inst.instr_lines})")
    rep, proc = one_dump(a, dumps)
    if not rep:
        return
    got, dropped = calls(rep, "work"), session(rep)["dropped"]
    per_call = events_per_call(a, work)
    check(dropped > 0, f"dropped events counted ({dropped})")
    # A few dozen events besides work()'s (main, open, printf call sites).
    check(got < expected and abs(got + dropped / per_call - expected) <= 100,
          f"recorded calls + dropped events account for all {expected} calls "
          f"({got} + {dropped}/{per_call:g} = {got + dropped / per_call:.0f})")
    check(any("dropped" in w for w in session(rep)["warnings"]), "the report warns about dropped events")


def case_nofile(a, inst, orc, dumps, work):
    m = re.search(r"^opened (\d+) before", inst.out, re.M)
    opened = int(m.group(1)) if m else 0
    dropped_checks(a, inst, dumps, opened * 10000 + 200000, "recording paused", work)


def case_unwritable_dir(a, inst, orc, dumps, work):
    check(not dumps, "no dump")
    check(len(inst.instr_lines) == 1 and "Permission denied" in inst.instr_lines[0],
          f"one line on stderr: {inst.instr_lines}")


def case_full_disk(a, inst, orc, dumps, work):
    dropped_checks(a, inst, dumps, 2000000, "No space left on device", work)


def case_file_size_limit(a, inst, orc, dumps, work):
    dropped_checks(a, inst, dumps, 2000000, "RLIMIT_FSIZE", work)


def case_setuid(a, inst, orc, dumps, work):
    found = glob.glob(os.path.join(work, "**", "*.instr"), recursive=True)
    check(not found, f"a set-user-ID program writes no dump ({found})")
    check(not inst.instr_lines, f"and says nothing ({inst.instr_lines})")


CASES = {name[5:].replace("_", "-") if not name.startswith("case__") else "_" + name[6:]: f
         for name, f in globals().items() if name.startswith("case_")}


def one_run(a, work, exe, oracle, args, outdir, opts):
    """The oracle and the instrumented program run once each, as the
    identity opts' prefix gives; what they did compared, the dumps in
    outdir checked by the case."""
    try:
        orc_dir = open_dir(work)
        runner = shlex.split(a.runner)  # another architecture's programs (tests/aarch64)
        orc = run([*runner, oracle] + args, orc_dir, **opts)
        inst = run([*runner, exe] + args, outdir, **opts)
    finally:
        if a.case == "full-disk":
            dumps = sorted(glob.glob(os.path.join(outdir, "*.instr")))
            tmpcopy = os.path.join(work, "copied")
            os.mkdir(tmpcopy)
            for d in dumps:
                shutil.copy(d, tmpcopy)
            subprocess.run(["umount", outdir])
            outdir = tmpcopy
    sys.stdout.write(inst.out)
    sys.stderr.write(inst.err)
    check(inst.rc == orc.rc, f"exit status unchanged ({orc.rc}, got {inst.rc})")
    check(inst.stable_out == orc.stable_out, "standard output unchanged")
    check(inst.stable_err == orc.stable_err, "standard error unchanged (apart from instr: lines)")
    dumps = sorted(glob.glob(os.path.join(outdir, "*.instr")))
    CASES[a.case](a, inst, orc, dumps, work)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--exe", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--runner", default="", help="run the programs through this command (qemu-aarch64-static ...)")
    a = ap.parse_args()
    mode = {"terminate": None, "sigterm-external": "sigterm-external", "unwritable-dir": "return",
            "full-disk": "lots", "file-size-limit": "lots", "setuid": "return"}.get(a.case, a.case)
    args = [] if mode is None else [mode]
    opts = {}
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o755)
        outdir = work
        if a.case == "nofile":
            opts["limits"] = {resource.RLIMIT_NOFILE: 8}
        if a.case == "file-size-limit":
            opts["limits"] = {resource.RLIMIT_FSIZE: 6 << 20}
        if a.case == "sigterm-external":
            opts["term_after_ready"] = True
        if a.case == "unwritable-dir":
            outdir = os.path.join(work, "readonly")
            os.mkdir(outdir, 0o755)  # root's: uid 65534 cannot write here
            opts["user"] = True
        if a.case == "full-disk":
            outdir = os.path.join(work, "small")
            os.mkdir(outdir)
            m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", outdir], capture_output=True,
                               text=True)
            if m.returncode != 0:
                print(f"SKIP: cannot mount a small tmpfs ({m.stderr.strip()}); file-size-limit covers ENOSPC-like stops")
                return SKIP
        exe, oracle = a.exe, a.oracle
        if a.case == "setuid":
            if os.geteuid() != 0 or shutil.which("setpriv") is None:
                print("SKIP: needs root and setpriv to make and run a set-user-ID copy")
                return SKIP
            exe = os.path.join(work, "suid-" + os.path.basename(a.exe))
            shutil.copy(a.exe, exe)
            os.chown(exe, 0, 0)
            os.chmod(exe, 0o4755)
            outdir = os.path.join(work, "open")
            os.mkdir(outdir)
            os.chmod(outdir, 0o777)
            opts["user"] = True
            opts["cwd"] = outdir
            probe = subprocess.run(NOBODY + ["sh", "-c", "test -x " + exe], capture_output=True)
            if probe.returncode != 0:
                print("SKIP: uid 65534 cannot reach the build directory")
                return SKIP
        if opts.get("user"):
            probe = subprocess.run(NOBODY + [exe] + args, capture_output=True, env=dict(os.environ, INSTR_OUTPUT="/dev/null/x"))
            if probe.returncode == 126 or probe.returncode == 127:
                print("SKIP: uid 65534 cannot run the build's programs")
                return SKIP
        ids = identities(exe, oracle) if a.case in EVERY_IDENTITY else [(None, ())]
        for who, prefix in ids:
            with checking_as(who):
                if who:
                    outdir = open_dir(work)
                one_run(a, work, exe, oracle, args, outdir, dict(opts, prefix=prefix))
    print(f"{len(e2e.failures)} failed")
    return 1 if e2e.failures else 0


if __name__ == "__main__":
    sys.exit(main())

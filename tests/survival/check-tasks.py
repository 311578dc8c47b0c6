#!/usr/bin/env python3
"""The runtime creates no task the program can see (issue 22 item 1):
survive-tasks (tasks.c) built plain and instrumented gives the same whole
output and status in every case, run as root, as uid 65534 (setpriv; nproc
as a uid of its own), as root in a user namespace (unshare -Ur) and as PID 1
of a PID namespace (unshare -Urpf --mount-proc), with the runtime's defaults.
The instrumented run's dump must also read cleanly.

Usage: check-tasks.py CASE --exe INSTR --oracle PLAIN --report REPORT
       [--runs N] [--env NAME=VALUE]
(--env NAME=VALUE runs the instrumented build with a setting of the runtime.)"""
import argparse, glob, os, shutil, signal, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--exe", required=True)
ap.add_argument("--oracle", required=True)
ap.add_argument("--report", required=True)
ap.add_argument("--runs", type=int, default=1)
ap.add_argument("--env", action="append", default=[])
a = ap.parse_args()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures as fails, identities  # noqa: E402


def run(cmd, env, cwd):
    """(status, output) of one run; jobctl is stopped and continued as a
    shell's job control would (kill -STOP -PGID, kill -CONT -PGID)."""
    jobctl = a.case == "jobctl"
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.PIPE if jobctl else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = ""
    if jobctl:
        first = p.stdout.readline()
        time.sleep(0.2)
        os.killpg(p.pid, signal.SIGSTOP)
        time.sleep(0.2)
        os.killpg(p.pid, signal.SIGCONT)
        time.sleep(0.2)
        p.stdin.close()
        p.stdin = None
    out, err = p.communicate(timeout=60)
    out = first + out
    return p.returncode, out, err


with tempfile.TemporaryDirectory() as work:
    os.chmod(work, 0o1777)
    exes = {}
    for k, path in (("plain", a.oracle), ("instr", a.exe)):
        exes[k] = os.path.join(work, os.path.basename(path))
        shutil.copy(path, exes[k])
        os.chmod(exes[k], 0o755)
    env = dict(os.environ)
    for e in a.env:
        k, v = e.split("=", 1)
        env[k] = v
    # RLIMIT_NPROC counts the uid's processes machine-wide: nproc runs as
    # a uid no other test uses, so that a parallel test's processes (as
    # 65534) do not change how many forks succeed.
    ids = identities(exes["plain"], exes["instr"], uid=61234 if a.case == "nproc" else 65534, pid_namespace=True)
    for who, prefix in ids:
        same = 0
        for i in range(a.runs):
            d = tempfile.mkdtemp(dir=work)
            os.chmod(d, 0o777)
            env["INSTR_OUTPUT"] = os.path.join(d, "t.%p.instr")
            plain = run([*prefix, exes["plain"], a.case], env, d)
            instr = run([*prefix, exes["instr"], a.case], env, d)
            if i == 0:
                print(f"{who}: plain   status {plain[0]}: {plain[1].strip()!r}")
            ok = plain[:2] == instr[:2]
            if not ok:
                print(f"{who}: run {i + 1}: instr status {instr[0]}: {instr[1].strip()!r} {instr[2].strip()[-300:]!r}")
            dumps = sorted(glob.glob(os.path.join(d, "*.instr")))
            bad = [r for r in (subprocess.run([a.report, "--format", "json", x], capture_output=True, text=True)
                               for x in dumps) if r.returncode not in (0, 3)]
            # kill0's child is signalled as it is born: the sent signal
            # waits for its dump to exist, so it has one, ended SIGNALED.
            if not dumps or bad or (a.case == "kill0" and len(dumps) != 2):
                ok = False
                print(f"{who}: run {i + 1}: dumps {len(dumps)}, unreadable {len(bad)}: "
                      f"{bad[0].stderr.strip() if bad else ''}")
            same += ok
            shutil.rmtree(d)
        check(same == a.runs, f"{a.case}, {who}: instrumented = plain (output and status) in {same} of {a.runs} runs")
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)

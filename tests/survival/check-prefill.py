#!/usr/bin/env python3
"""The runtime's prefill helper (runtime/prefill.c) runs only when asked
(INSTR_PREFILL=1): by default, even without privilege, it never starts.
Asked for, it stays out of the program's sight as far as a task can
(check-tasks.py shows what it cannot hide): once it runs, the program still has one task, its
waitpid(-1) finds no child, unshare(CLONE_NEWUSER) (refused to a process
with two threads) works; the helper is gone soon after the program execs
or exits; the dump is whole.  It runs only without privilege: as root
(run so here) it never starts; the cases run as uid 65534.
Usage: check-prefill.py EXE REPORT"""
import glob, json, os, shutil, subprocess, sys, tempfile, time

EXE, REPORT = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures as fails  # noqa: E402


def group_members(pgid):
    """Live processes of process group pgid (a zombie has ended: init, or
    the program after an exec, reaps it)."""
    n = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            fields = s[s.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                n.append((int(p), s[s.index("(") + 1:s.rindex(")")]))
    return n


with tempfile.TemporaryDirectory() as work:
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "p.%p.instr"))
    env.pop("INSTR_PREFILL", None)
    user = []
    if os.geteuid() == 0:
        r = subprocess.run([EXE, "see"], env=env, capture_output=True, text=True)
        env["INSTR_PREFILL"] = "1"
        r = subprocess.run([EXE, "see"], env=env, capture_output=True, text=True)
        check("helper=0" in r.stdout, "as root, even asked for: no helper (%s)" % r.stdout.split("\n")[0])
        env.pop("INSTR_PREFILL")
        for d in glob.glob(os.path.join(work, "*.instr")):
            os.unlink(d)
        if not shutil.which("setpriv"):
            print("setpriv missing: the unprivileged cases are skipped")
            sys.exit(1 if fails else 77)
        os.chmod(work, 0o1777)
        exe = os.path.join(work, os.path.basename(EXE))
        shutil.copy(EXE, exe)
        EXE = exe
        user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    r = subprocess.run([*user, EXE, "see"], env=env, capture_output=True, text=True)
    check("helper=0" in r.stdout, "without INSTR_PREFILL=1: no helper (%s)" % r.stdout.split("\n")[0])
    for d in glob.glob(os.path.join(work, "*.instr")):
        os.unlink(d)
    env["INSTR_PREFILL"] = "1"
    p = subprocess.Popen([*user, EXE, "see"], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
    out = p.communicate(timeout=120)[0]
    kv = {l.split("=")[0]: l.split()[0].split("=")[1] for l in out.split("\n") if "=" in l}
    kv["waitpid_errno"] = out.split("waitpid=")[1].split("errno=")[1].split()[0] if "waitpid=" in out else None
    print(out.strip())
    check(p.returncode == 0, "the program exits 0")
    check(kv.get("helper") == "1", "the helper runs (a child process named instr-prefill)")
    check(kv.get("tasks") == "1", "the program has one task")
    check(kv.get("waitpid") == "-1" and kv.get("waitpid_errno") == "10", "waitpid(-1) finds no child (ECHILD)")
    # uid 65534 may be refused a user namespace by policy (EPERM), never for
    # having two threads (EINVAL).
    check(kv.get("unshare") == "0" or "errno=1\n" in out.split("unshare=")[1] + "\n",
          "unshare(CLONE_NEWUSER) is not refused for threads: %s" % kv)
    time.sleep(0.3)
    left = group_members(p.pid)
    check(not left, "nothing of the program's alive 0.3 s after it exited: %s" % left)
    dumps = glob.glob(os.path.join(work, "*.instr"))
    check(len(dumps) == 1, "one dump")
    if dumps:
        r = subprocess.run([REPORT, "--format", "json", dumps[0]], capture_output=True, text=True)
        check(r.returncode == 0, "the report reads it cleanly (%d: %s)" % (r.returncode, r.stderr.strip()))
        if r.returncode in (0, 3):
            f = {x["name"]: x for x in json.loads(r.stdout)["functions"]}
            check(f.get("tick", {}).get("calls") == 3000000, "tick's 3 000 000 calls all in the dump")
        for d in dumps:
            os.unlink(d)

    # exec: the helper leaves once its parent's address space is another.
    p = subprocess.Popen([*user, EXE, "exec"], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
    line = p.stdout.readline()
    check(line.strip() == "helper=1", "exec case: the helper ran before the exec (%s)" % line.strip())
    time.sleep(0.4)
    left = [m for m in group_members(p.pid) if m[0] != p.pid]
    check(not left, "0.4 s after the exec, only the new image is left: %s" % left)
    p.wait(timeout=30)
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)

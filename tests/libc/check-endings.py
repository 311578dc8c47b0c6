#!/usr/bin/env python3
"""check-endings.py PROG REPORT WORK - a process that ends in exec, _exit or
daemon() leaves a dump without an end record; the report says which ending
it was (from the call-site frame still open), as a note: exit status 0, the
"Ended:" line and JSON "ended" name the call and its caller.  A process
killed by SIGKILL still reads as not finished (exit 3), and an exec that
failed and returned is not taken for one (issue 38 §2)."""
import glob, json, os, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

prog, report, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def run(how, *extra, detector=None, name=None):
    d = os.path.join(work, name or how)
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "*")):
        os.remove(f)
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(d, "%p.instr"))
    if detector:
        env["INSTR_DETECTOR"] = detector
    subprocess.run([prog, how, *extra], cwd=d, env=env, capture_output=True)
    return d, None


def report_of(dump):
    t = subprocess.run([report, dump], capture_output=True, text=True)
    j = subprocess.run([report, "--format", "json", dump], capture_output=True, text=True)
    return t, json.loads(j.stdout) if j.stdout else {}


for how, words, caller, detector in (("exec", "replaced by exec: execl", "run_exec", None),):
    d, _ = run(how, detector=detector)
    dumps = glob.glob(os.path.join(d, "*.instr"))
    check(len(dumps) == 1, f"{how}: one dump ({dumps})")
    if not dumps:
        continue
    t, j = report_of(dumps[0])
    expect = f"{words}, called from {caller}, did not return"
    check(t.returncode == 0, f"{how}: a known ending is a note, exit 0 (got {t.returncode}: {t.stderr.strip()})")
    check(f"Ended:      pid" in t.stdout and expect in t.stdout, f"{how}: the Ended line says '{expect}':\n{t.stdout[:600]}")
    check(expect in t.stderr and "did not finish" not in t.stderr, f"{how}: the note replaces 'did not finish': {t.stderr}")
    ended = [p.get("ended") for p in j.get("session", {}).get("programs", [])]
    check(ended and ended[0] and expect in ended[0], f"{how}: JSON 'ended' ({ended})")

# _exit is noreturn, so it has no call-site frame: the plugin's ending hook
# before it records the end, status included, with or without the sud
# backend (which would see its exit_group), and in count mode too.
for detector in (None, "none", "cpuclock"):
    d, _ = run("exit", detector=detector, name=f"exit-{detector}")
    dumps = glob.glob(os.path.join(d, "*.instr"))
    t, j = report_of(dumps[0]) if dumps else (None, {})
    check(t is not None and t.returncode == 0 and "exit status 7" in t.stdout and "Ended:" not in t.stdout,
          f"exit, detector {detector or 'auto'}: complete, exit status 7:\n{t.stdout[:400] if t else dumps}")

# daemon(): the parent's dump ends in daemon; the daemon (a fork child) finishes.
done = os.path.join(work, "daemon-done")
if os.path.exists(done):
    os.remove(done)
d, _ = run("daemon", done)
for _ in range(200):
    if os.path.exists(done):
        break
    time.sleep(0.05)
time.sleep(0.3)  # the daemon's exit path writes its end record after the file
dumps = sorted(glob.glob(os.path.join(d, "*.instr")))
check(len(dumps) == 2, f"daemon: two dumps, the parent's and the daemon's ({dumps})")
texts = [report_of(x)[0] for x in dumps]
parent = [t for t in texts if "ended in daemon()" in t.stdout]
check(len(parent) == 1 and parent[0].returncode == 0 and "daemon, called from detach, did not return" in parent[0].stdout,
      "daemon: the parent's dump says it ended in daemon(), exit 0:\n" + "\n".join(t.stdout[:400] for t in texts))
check(any(t.returncode == 0 and "Ended:" not in t.stdout for t in texts), "daemon: the daemon's own dump is complete")

# Not known endings: SIGKILL still reads as unfinished; a failed exec returned.
d, _ = run("kill")
dumps = glob.glob(os.path.join(d, "*.instr"))
if dumps:
    t, j = report_of(dumps[0])
    check(t.returncode == 3 and "did not finish" in t.stdout and "did not return" not in t.stdout,
          f"kill: still 'did not finish', exit 3 (got {t.returncode}):\n{t.stdout[:400]}")
else:
    check(False, "kill: a dump")
d, _ = run("exec-fails")
dumps = glob.glob(os.path.join(d, "*.instr"))
if dumps:
    t, j = report_of(dumps[0])
    check(t.returncode == 0 and "Ended:" not in t.stdout, f"exec-fails: a complete dump ({t.returncode}):\n{t.stdout[:400]}")
else:
    check(False, "exec-fails: a dump")
sys.exit(exit_status())

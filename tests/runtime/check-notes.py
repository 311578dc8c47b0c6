#!/usr/bin/env python3
"""check-notes.py PROGRAM REPORT WORK COUNT_PROGRAM - what the runtime says of a setting
it did not take reaches the report whatever INSTR_LOG is (issue 37 §2):
the dump keeps the lines (header notes, runtime/log.c), and instr-report
prints each in its header and JSON, exit status 0 (a note, not damage).
INSTR_DETECTOR naming no detector runs the default set (said), not none.
An INSTR_TRIGGER no function that ran matched is said at exit with the
nearest names (issue 37 §1).
A run with nothing to say has no such line.  INSTR_SAMPLE on a count-mode
build (COUNT_PROGRAM), which takes no samples, is said."""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

prog, report, work, count_prog = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def run(env, prog=prog):
    for f in glob.glob(os.path.join(work, "*.instr")):
        os.remove(f)
    # stderr is a pipe, INSTR_LOG unset: the runtime's lines go nowhere but the dump
    e = {k: v for k, v in os.environ.items() if not k.startswith("INSTR_")}
    p = subprocess.run([prog], env=dict(e, **env), cwd=work, capture_output=True, text=True)
    check(p.returncode == 0 and p.stderr == "", f"{env}: the program runs, nothing on its stderr ({p.stderr!r})")
    dump = glob.glob(os.path.join(work, "*.instr"))[0]
    text = subprocess.run([report, dump], capture_output=True, text=True)
    js = subprocess.run([report, "--format", "json", dump], capture_output=True, text=True).stdout
    return text, json.loads(js) if js else None  # count-mode dumps: text only


text, j = run({"INSTR_DETECTOR": "bogus", "INSTR_TRIGGER": "run_query"})
check(text.returncode == 0, f"exit 0: notes, not damage ({text.returncode})")
for want in ("the runtime said: unknown detector 'bogus' in INSTR_DETECTOR, ignored",
             "the runtime said: INSTR_DETECTOR=bogus names no detector; using auto",
             "the runtime said: INSTR_TRIGGER=run_query: each trigger is FUNCTION:on or FUNCTION:off"):
    check(any(l.startswith("Warning:") and want in l for l in text.stdout.splitlines()), f"the header says: {want}")
    check(any(want in w for w in j["session"].get("warnings", [])), f"JSON session.warnings has: {want}")
det = [l for l in text.stdout.splitlines() if l.startswith("Detector:")]
check(det and "none" not in det[0], f"INSTR_DETECTOR=bogus runs the default detectors ({det})")
# A trigger no function that ran matched: said at exit, with the nearest names.
text, j = run({"INSTR_TRIGGER": "stepp:on"})
line = [l for l in text.stdout.splitlines() if "INSTR_TRIGGER: stepp never matched a function that ran" in l]
check(len(line) == 1 and "nearest: step" in line[0], f"the trigger that never matched, with its nearest name ({line})")
text, j = run({"INSTR_TRIGGER": "step:on"})
check("never matched" not in text.stdout, "a trigger that matched: no such line")
text, j = run({})
check("the runtime said" not in text.stdout + text.stderr, "nothing said: no such line")
text, j = run({"INSTR_SAMPLE": "4000"}, count_prog)
want = "the runtime said: INSTR_SAMPLE=4000 ignored: a count-mode build counts calls and records no time"
check(text.returncode == 0 and want in text.stdout,
      f"INSTR_SAMPLE on a count-mode build is said ({text.returncode}):\n{text.stdout[:600]}")
text, j = run({}, count_prog)
check("INSTR_SAMPLE" not in text.stdout, "a count-mode run without INSTR_SAMPLE: no such line")
sys.exit(exit_status())

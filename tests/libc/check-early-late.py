#!/usr/bin/env python3
"""check-early-late.py PROG REPORT WORK - pthread_key destructors that run
at thread exit are recorded (in_destructor's calls in the dump equal the
program's count), and the .preinit_array function that ran before the
hooks were bound is said in the report, not lost without a word (issue 38
§2)."""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

prog, report, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
for f in glob.glob(os.path.join(work, "*.instr")):
    os.remove(f)
out = subprocess.run([prog], cwd=work, capture_output=True, text=True, check=True).stdout
own = dict((l.split()[0], int(l.split()[1])) for l in out.splitlines())
dump = glob.glob(os.path.join(work, "*.instr"))[0]
r = subprocess.run([report, "--format", "json", dump], capture_output=True, text=True)
j = json.loads(r.stdout)
calls = {f["name"]: f["calls"] for f in j["functions"]}
check(own["in_destructor"] == 12, f"the program made 12 destructor calls ({own})")
check(calls.get("in_destructor") == own["in_destructor"],
      f"every pthread_key destructor's call recorded ({calls.get('in_destructor')} of {own['in_destructor']})")
check(own["in_preinit"] == 1 and "in_preinit" not in calls, f"in_preinit ran once, unrecorded ({calls.get('in_preinit')})")
text = subprocess.run([report, dump], capture_output=True, text=True)
said = ".preinit_array ran 1 function(s) before recording began"
check(said in text.stdout and said in " ".join(j["session"]["warnings"]),
      f"the report says the .preinit_array function ran unrecorded:\n{text.stdout[:800]}")
check(text.returncode == 0, f"a note: exit 0 ({text.returncode})")
sys.exit(exit_status())

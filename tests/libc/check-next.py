#!/usr/bin/env python3
"""check-next.py INSTR REPORT WORK - next-malloc.c's malloc calls libc's
through dlsym(RTLD_NEXT): the report keeps the two apart (issue 38 §2).
JSON has two malloc rows, the program's and libc's, each in its module and
with its own calls; the program's malloc's callee is libc's malloc (not
itself); the text table names their modules; the program's malloc is in
next-malloc.c."""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

instr, report, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
for f in glob.glob(os.path.join(work, "*.instr")):
    os.remove(f)
subprocess.run([instr], cwd=work, check=True, capture_output=True)
dump = glob.glob(os.path.join(work, "*.instr"))[0]
j = json.loads(subprocess.run([report, "--format", "json", dump], capture_output=True, text=True, check=True).stdout)
rows = [f for f in j["functions"] if f["name"] == "malloc"]
mods = sorted(os.path.basename(f["module"]) for f in rows)
check(len(rows) == 2 and sum(m.startswith("libc.so") for m in mods) == 1 and "libc-next-malloc" in mods,
      f"two malloc rows, libc's and the program's ({mods})")
own = [f for f in rows if os.path.basename(f["module"]) == "libc-next-malloc"]
libc = [f for f in rows if os.path.basename(f["module"]).startswith("libc.so")]
if own and libc:
    check(own[0]["calls"] >= 10 and libc[0]["calls"] == own[0]["calls"],
          f"each of the program's malloc calls calls libc's once ({own[0]['calls']}, {libc[0]['calls']})")
    check(os.path.basename(own[0].get("file") or "") == "next-malloc.c", f"the program's malloc in next-malloc.c "
          f"({own[0].get('file')})")
callees = subprocess.run([report, "--view", "callees", "malloc", dump], capture_output=True, text=True).stdout
lines = [l for l in callees.splitlines() if l.rstrip().endswith("malloc")]
check(len(lines) == 2 and "libc.so" in lines[1] and "*" not in lines[1],
      "the program's malloc calls libc's malloc, in libc's module:\n" + "\n".join(lines))
text = subprocess.run([report, dump], capture_output=True, text=True).stdout
check("malloc [libc.so.6]" in text and "malloc [libc-next-malloc]" in text, "the text table names the two modules")
sys.exit(exit_status())

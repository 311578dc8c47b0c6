#!/usr/bin/env python3
"""check-output-file.py BIN CORPUS WORK - instr-report's -o FILE is written
whole or not at all (tools/cmd/output-file.c):

- a report refused after the output was opened (an unknown function in a
  sampling dump's callers view, a --diff with a sort it cannot honour)
  leaves no file, and a file that was there as it was, with no temporary
  file beside it;
- a report written replaces the file: a new file gets the umask's mode, an
  old one keeps its own; a symbolic link stays a link, its target written;
- /dev/null is written in place, /dev/full is a write error (exit 2);
- as uid 65534, a file it may write in a directory it may not still
  receives the report (written in place)."""
import os, stat, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

bindir, corpus, work = sys.argv[1:4]
report = os.path.join(bindir, "instr-report")
sampling = os.path.join(corpus, "sampling.dump")
dump = os.path.join(corpus, "golden-threads.dump")
os.makedirs(work, exist_ok=True)
os.chmod(work, 0o755)
for n in os.listdir(work):
    os.remove(os.path.join(work, n))
os.umask(0o022)


def run(*args, user=None):
    pre = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if user else []
    return subprocess.run(pre + [report, *args], capture_output=True, text=True)


def at(name):
    return os.path.join(work, name)


def leftovers():
    return [n for n in os.listdir(work) if n.startswith(".")]


old = at("old.txt")
with open(old, "w") as f:
    f.write("old\n")
for what, args in (("an unknown function (sampling dump)", ["--view", "callers", "NOSUCH", sampling]),
                   ("--diff --sort bogus", ["--diff", "--sort", "bogus", dump, dump])):
    p = run("-o", old, *args)
    check(p.returncode == 1, f"{what}: exit 1 ({p.returncode}: {p.stderr.strip()[:200]})")
    check(open(old).read() == "old\n", f"{what}: the file that was there is as it was")
    p = run("-o", at("new.txt"), *args)
    check(not os.path.exists(at("new.txt")), f"{what}: no file left behind")
    check(leftovers() == [], f"{what}: no temporary file left ({leftovers()})")

plain = run(dump).stdout
p = run("-o", at("new.txt"), dump)
check(p.returncode == 0 and open(at("new.txt")).read() == plain, "a report written to a new file")
check(stat.S_IMODE(os.stat(at("new.txt")).st_mode) == 0o644, "a new file has the umask's mode (0644)")
os.chmod(old, 0o600)
p = run("-o", old, dump)
check(open(old).read() == plain and stat.S_IMODE(os.stat(old).st_mode) == 0o600,
      "an old file replaced keeps its mode (0600)")
os.symlink("target.txt", at("link.txt"))
p = run("-o", at("link.txt"), dump)
check(os.path.islink(at("link.txt")) and open(at("target.txt")).read() == plain,
      "a link stays a link, its target written")
p = run("-o", "/dev/null", dump)
check(p.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null written in place")
if os.path.exists("/dev/full"):
    p = run("-o", "/dev/full", dump)
    check(p.returncode == 2 and "write error" in p.stderr, f"/dev/full: a write error, exit 2 ({p.returncode})")
check(leftovers() == [], f"no temporary file left ({leftovers()})")

if os.geteuid() == 0:
    locked = at("locked")
    os.makedirs(locked, exist_ok=True)
    os.chmod(locked, 0o755)
    theirs = os.path.join(locked, "theirs.txt")
    with open(theirs, "w") as f:
        f.write("")
    os.chmod(theirs, 0o666)
    p = run("-o", theirs, dump, user=65534)
    check(p.returncode == 0 and open(theirs).read() == plain,
          f"uid 65534: a file it may write in a directory it may not, written in place ({p.stderr.strip()[:200]})")
    os.remove(theirs)
    os.rmdir(locked)
else:
    print("skip  the uid 65534 case (not root)")
sys.exit(exit_status())

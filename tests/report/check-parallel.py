#!/usr/bin/env python3
"""check-parallel.py GEN BIN WORK - a session's dumps walked by several
threads at once (session.c, INSTR_REPORT_THREADS) give the report one
thread gives, to the byte: five synthetic dumps of different sizes, text
and JSON, with and without the profile cache; a damaged dump in the middle
stops both alike, with the same message and status.  strace shows the
threads were there (clone calls), and that one thread makes none."""
import os, shutil, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
dumps = []
for i, events in enumerate((200_000, 1_000_000, 50_000, 600_000, 300_000)):
    d = os.path.join(work, "d%d.instr" % i)
    subprocess.run([gen, d, str(events), str(1 + i % 3), str(100 + i)], check=True)  # five processes
    dumps.append(d)
report = os.path.join(bindir, "instr-report")


def run(threads, *args, cache="off", trace=None):
    env = dict(os.environ, INSTR_REPORT_THREADS=str(threads), INSTR_REPORT_CACHE=cache)
    cmd = [report] + list(args)
    if trace:
        cmd = ["strace", "-f", "-qq", "-e", "trace=clone,clone3", "-o", trace] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


for args in ((), ("--format", "json"), ("-v", "--view", "threads")):
    one, four = run(1, *args, *dumps), run(4, *args, *dumps)
    check(one.returncode == 0 and (one.stdout, one.stderr, one.returncode) == (four.stdout, four.stderr, four.returncode),
          "%s: 4 threads' report is 1 thread's (exit %d, %d)" % (" ".join(args) or "text", one.returncode,
                                                                  four.returncode))
# a damaged dump among them: the same refusal either way
bad = os.path.join(work, "bad.instr")
with open(dumps[1], "rb") as f:
    head = f.read(4096 + 100)
with open(bad, "wb") as f:
    f.write(head[:200])
inputs = dumps[:2] + [bad] + dumps[2:]
one, four = run(1, *inputs), run(4, *inputs)
check((one.returncode, one.stderr) == (four.returncode, four.stderr) and one.returncode != 0,
      "a damaged third dump: exit %d / %d, %r / %r" % (one.returncode, four.returncode, one.stderr[-200:],
                                                        four.stderr[-200:]))
if shutil.which("strace"):
    for threads, want in ((1, False), (4, True)):
        t = os.path.join(work, "strace.%d" % threads)
        p = run(threads, *dumps, trace=t)
        clones = sum(1 for line in open(t) if "clone" in line)
        check(p.returncode == 0 and (clones > 0) == want, "%d thread(s): %d clone calls" % (threads, clones))
else:
    print("no strace: the threads themselves not checked")
sys.exit(exit_status())

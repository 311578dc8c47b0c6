#!/usr/bin/env python3
"""check-small-dumps.py PROG REPORT DUMP_TOOL WORK [--runner CMD...] - a process that made a few
calls leaves a dump of a few KiB (issue 39 §4): a stream's first chunk is
one page (its size in its chunk header, dump version 2), where a first
chunk of the dump's chunk_size (32 KiB) made a hello world's dump 68 KiB.

Hello world, fork children (_exit and exit), threads and a process killed
by SIGKILL: each dump holds a header page and a page per stream, and
reports what the program says it did (work()'s calls, the exit status).
A long run's dump goes on in chunks of the dump's chunk_size after each
stream's first, and reads the same.  The text form of a dump of mixed
chunk sizes (instr-dump) builds a dump that reports the same."""
import glob, json, os, shlex, signal, struct, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

prog, report, dumptool, work = sys.argv[1:5]
# --runner: what runs PROG (qemu-aarch64-static -L ..., tests/aarch64).
runner = shlex.split(" ".join(sys.argv[sys.argv.index("--runner") + 1:])) if "--runner" in sys.argv else []
os.makedirs(work, exist_ok=True)
PAGE = 4096
ENV = {k: v for k, v in os.environ.items() if not k.startswith("INSTR_")}


def clean():
    for f in glob.glob(os.path.join(work, "*")):
        os.remove(f)


def chunks(path):
    """(offset, kind, own chunk_size) of each chunk, walked as the reader does."""
    data = open(path, "rb").read()
    version, header_size, chunk_size = struct.unpack_from("<III", data, 8)
    out, off = [], header_size
    while off + 64 <= len(data):
        kind = struct.unpack_from("<H", data, off + 4)[0]
        own = struct.unpack_from("<I", data, off + 32)[0] if version >= 2 else 0
        out.append((off, kind, own))
        off += own or chunk_size
    return out


def reported(dump):
    r = subprocess.run([report, "--format", "json", dump], capture_output=True, text=True, timeout=120)
    j = json.loads(r.stdout) if r.stdout else {"functions": [], "session": {"programs": [{}]}}
    calls = {f["name"]: f["calls"] for f in j["functions"]}
    return r.returncode, calls.get("work", 0), j


def own_calls(out):
    return int(out.split("work ")[1].split()[0]) if "work " in out else -1


def run(*args):
    """PROG with args, its output; a run that hangs (2 minutes) fails its checks, not the checker."""
    try:
        return subprocess.run([*runner, prog, *map(str, args)], cwd=work, env=ENV, capture_output=True, text=True,
                              timeout=120)
    except subprocess.TimeoutExpired:
        print(f"# {args}: still running after 2 minutes")
        return subprocess.CompletedProcess(args, None, "", "")


# Hello world: a header page, the metadata's first chunk and the thread's.
clean()
p = run("hello")
dumps = glob.glob(os.path.join(work, "*.instr"))
check(p.returncode == 0 and len(dumps) == 1, f"hello: ran, one dump ({p.returncode}, {dumps})")
if len(dumps) != 1:
    sys.exit(exit_status())
size = os.path.getsize(dumps[0])
check(size <= 16 * 1024, f"hello: the dump is at most 16 KiB ({size} bytes; first chunks of 32 KiB made 68 KiB)")
check(size == 3 * PAGE, f"hello: a header page and a page per stream ({size} bytes)")
rc, calls, j = reported(dumps[0])
check(rc == 0 and calls == own_calls(p.stdout) and j["session"]["programs"][0].get("exit_status") == 0,
      f"hello: reports work() {calls} of {own_calls(p.stdout)} calls, exit status 0 (report exit {rc})")
hello = dumps[0]

# The text form of a dump of one-page chunks builds a dump that reports the same.
txt = os.path.join(work, "hello.txt")
with open(txt, "w") as f:
    rc1 = subprocess.run([dumptool, hello], stdout=f).returncode
rebuilt = os.path.join(work, "rebuilt.dump")
rc2 = subprocess.run([dumptool, "--from-text", txt, "-o", rebuilt]).returncode
a = subprocess.run([report, "--format", "json", hello], capture_output=True, text=True).stdout
b = subprocess.run([report, "--format", "json", rebuilt], capture_output=True, text=True).stdout
# (Times may differ by a tick: the text form rounds the hook costs.)
shape = lambda js: sorted((f["name"], f["module"], f["line"], f["calls"]) for f in json.loads(js)["functions"])
check(rc1 == 0 and rc2 == 0 and shape(a) == shape(b) and shape(a),
      f"hello: its text form rebuilds a dump with the same functions and calls ({rc1}, {rc2})")

# Fork children, ended by _exit (even) and exit (odd): each dump small.
clean()
n = 6
p = run("fork", n)
dumps = sorted(glob.glob(os.path.join(work, "*.instr")), key=os.path.getmtime)
check(p.returncode == 0 and len(dumps) == n + 1, f"fork: {n} children and the parent, a dump each ({len(dumps)})")
total, statuses = 0, []
for d in dumps:
    rc, calls, j = reported(d)
    total += calls
    size = os.path.getsize(d)
    check(size <= 4 * PAGE, f"fork: {os.path.basename(d)} is at most 16 KiB ({size} bytes), report exit {rc}")
    statuses.append(j["session"]["programs"][0].get("exit_status"))
check(total == own_calls(p.stdout), f"fork: the children's dumps hold every work() call ({total} of {own_calls(p.stdout)})")
check(sorted(s for s in statuses if s is not None).count(5) == n // 2,
      f"fork: the children that called exit(5) say so ({statuses})")

# Threads: a page per thread that made calls.
clean()
n = 4
p = run("threads", n)
dumps = glob.glob(os.path.join(work, "*.instr"))
size = os.path.getsize(dumps[0]) if dumps else 0
rc, calls, j = reported(dumps[0]) if dumps else (None, 0, {})
check(p.returncode == 0 and size <= (2 + n + 1) * PAGE,
      f"threads: {n} threads, the dump at most a header, a metadata page and a page per thread ({size} bytes)")
check(rc == 0 and calls == own_calls(p.stdout), f"threads: work() {calls} of {own_calls(p.stdout)} calls (exit {rc})")

# SIGKILL: no exit path ran, the dump is as small and readable.
clean()
proc = subprocess.Popen([*runner, prog, "wait"], cwd=work, env=ENV, stdout=subprocess.PIPE, text=True)
line = ""
while "ready" not in line:
    line = proc.stdout.readline()
    if not line:
        break
proc.kill()
proc.wait()
dumps = glob.glob(os.path.join(work, "*.instr"))
size = os.path.getsize(dumps[0]) if dumps else 0
rc, calls, j = reported(dumps[0]) if dumps else (None, 0, {})
check(proc.returncode == -signal.SIGKILL and size <= 16 * 1024,
      f"killed: the dump of a killed process is at most 16 KiB ({size} bytes)")
check(rc == 3 and calls == 3, f"killed: reported as not finished (exit 3, got {rc}) with its 3 calls ({calls})")

# A long run: each stream's first chunk is a page, the next ones the dump's chunk_size.
clean()
n = 300000
p = run("big", n)
dumps = glob.glob(os.path.join(work, "*.instr"))
size = os.path.getsize(dumps[0]) if dumps else 0
cs = chunks(dumps[0]) if dumps else []
firsts = [c for c in cs if c[2] == PAGE]
check(size > (1 << 20) and len(firsts) == 2 and all(c[2] in (0, PAGE) for c in cs),
      f"big: a dump of {size} bytes, {len(cs)} chunks, 2 of a page (the streams' first: {len(firsts)})")
rc, calls, j = reported(dumps[0]) if dumps else (None, 0, {})
check(rc == 0 and calls == n, f"big: work() {calls} of {n} calls (exit {rc})")

sys.exit(exit_status())

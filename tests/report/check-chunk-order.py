#!/usr/bin/env python3
"""The reader takes chunks in seq order wherever the file holds them, and
keeps one of a chunk found twice (runtime/dump-file.c writes each stream
in a staging chunk and copies every full one out, so the file holds a
stream's last chunk first, and a kill between a copy and the staging
chunk's reset leaves that chunk twice, identical).

From a dump of several chunks (chunk_size 256: 40 functions of long
names, two threads of 300 calls each): every chunk reversed in the file, with an identical copy of one
events chunk and of one metadata chunk appended, reports exactly as the
original, with no warning; a copy that differs is skipped with a warning.
Usage: check-chunk-order.py BIN_DIR WORK"""
import os, struct, subprocess, sys

BIN, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what)


def report(path):
    r = subprocess.run([os.path.join(BIN, "instr-report"), "--units", "ticks", "--view", "calltree", path],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


small = os.path.join(WORK, "small.txt")
with open(small, "w") as out:
    out.write("instr-dump 1\nheader pid=100 ppid=1 exe=/bin/app start_tsc=0 start_ns=0 end_tsc=100000 "
              "end_ns=100000 detector=rseq_cs sees=sched,signal flags=complete chunk_size=256\nmodule 0 /bin/app\n")
    for f in range(1, 41):
        out.write(f"function {f} module=0 line={f} file=app.c name=function_with_a_long_name_number_{f}\n")
    for th in (0, 1):
        out.write(f"thread {th} tid={100 + th} name=t{th}\n")
    for th in (0, 1):
        out.write(f"{th} 0 enter 1\n")
        for k in range(300):
            out.write(f"{th} {10 + 30 * k} enter {2 + (k * 7 + th) % 39}\n{th} {20 + 30 * k + th} exit\n")
        out.write(f"{th} 99000 exit\n")
good = os.path.join(WORK, "good.instr")
subprocess.run([os.path.join(BIN, "instr-dump"), "--from-text", small, "-o", good], check=True)
data = open(good, "rb").read()
header_size, chunk_size = struct.unpack_from("<II", data, 12)
head = data[:header_size]
chunks = [data[o:o + chunk_size] for o in range(header_size, len(data), chunk_size)]
kinds = [struct.unpack_from("<H", c, 4)[0] for c in chunks]
events = [c for c, k in zip(chunks, kinds) if k == 1]
meta = [c for c, k in zip(chunks, kinds) if k == 2]
check(len(events) >= 2 and len(meta) >= 2, f"the trace spans several chunks of each kind ({kinds})")

rc0, want, err0 = report(good)
check(rc0 == 0, f"the original reports cleanly ({rc0}: {err0})")


def write(name, body):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(head + b"".join(body))
    return path


staged = write("staged.instr", chunks[::-1] + [events[0], meta[0]])
rc, got, err = report(staged)
check(rc == 0 and not err, f"reversed with identical copies: clean ({rc}: {err.strip()})")
check(got == want, "reversed with identical copies: the same report")

bad = bytearray(events[0])
used = struct.unpack_from("<I", bad, 20)[0]
bad[64 + used - 1] ^= 0x01 if bad[64 + used - 1] != 1 else 0x03
differ = write("differ.instr", chunks + [bytes(bad)])
rc, got, err = report(differ)
check(rc == 3 and "duplicate chunk seq 0 skipped" in err, f"a differing copy: warned ({rc}: {err.strip()})")
body = lambda text: [l for l in text.splitlines() if "arning" not in l and "duplicate" not in l]
check(body(got) == body(want), "a differing copy: the first in the file is kept")

# An open, empty chunk of seq 0 first in the file (a chunk switch left
# midway by siglongjmp): the closed one is kept.
empty = bytearray(events[0][:64]) + bytes(chunk_size - 64)
struct.pack_into("<I", empty, 20, 0)
stale = write("stale.instr", [bytes(empty)] + chunks)
rc, got, err = report(stale)
check(rc == 3 and "duplicate chunk seq 0 skipped" in err, f"an open empty copy: warned ({rc}: {err.strip()})")
check(body(got) == body(want), "an open empty copy: the closed one is kept")

sys.exit(1 if failures else 0)

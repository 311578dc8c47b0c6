#!/usr/bin/env python3
"""Sampling overhead, side by side: a real program built normally (Debian's
gzip, or xz) on a big input, run bare, under instr-sample --rate 1000 and
under `perf record -F 1000 -g` (the peer), interleaved; medians of wall and
CPU time.  Then the achieved rate of the sampled runs and how fast
instr-report processes samples (a large synthetic dump built from the real
one).  Not gated: the numbers go in the notes.

  sample-bench.py --sample build/bin/instr-sample --report build/bin/instr-report \
                  --dump build/bin/instr-dump [--runs 7] [--program gzip]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchutil import timed


def make_input(path, size):
    """Deterministic, compressible: the system's libraries, concatenated."""
    with open(path, "wb") as out:
        n = 0
        for root in ("/usr/lib/x86_64-linux-gnu", "/usr/bin"):
            for dirpath, _, files in sorted(os.walk(root)):
                for f in sorted(files):
                    p = os.path.join(dirpath, f)
                    if os.path.islink(p) or not os.path.isfile(p):
                        continue
                    try:
                        data = open(p, "rb").read(size - n)
                    except OSError:
                        continue
                    out.write(data)
                    n += len(data)
                    if n >= size:
                        return


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--program", default="gzip", choices=["gzip", "xz"])
    ap.add_argument("--size-mb", type=int, default=48)
    a = ap.parse_args()
    a.sample, a.report, a.dump = (os.path.abspath(x) for x in (a.sample, a.report, a.dump))  # runs in its work dir
    work = tempfile.mkdtemp(prefix="instr-sample-bench-")
    try:
        inp = os.path.join(work, "input")
        make_input(inp, a.size_mb << 20)
        prog = shutil.which(a.program)
        base = [prog, "-6", "-c", inp] if a.program == "gzip" else [prog, "-6", "-T1", "-c", inp]
        # gzip -c writes to stdout (DEVNULL): the program's work only
        variants = {"bare": base,
                    "instr-sample": [a.sample, "--rate", "1000", "-o", os.path.join(work, "s.%p.instr"), *base]}
        perf = shutil.which("perf")
        if perf and subprocess.run([perf, "record", "-q", "-F", "1000", "-g", "-o", os.path.join(work, "p.data"),
                                    "true"], capture_output=True).returncode == 0:
            variants["perf record -F 1000 -g"] = [perf, "record", "-q", "-F", "1000", "-g", "-o",
                                                  os.path.join(work, "p.data"), *base]
        res = {k: [] for k in variants}
        rates = []
        for i in range(a.runs):
            for name, cmd in variants.items():
                for f in os.listdir(work):
                    if f.startswith("s.") or f.startswith("p.data"):
                        os.unlink(os.path.join(work, f))
                res[name].append(timed(cmd, work))
                if name == "instr-sample":
                    dumps = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("s.")]
                    j = json.loads(subprocess.run([a.report, "--format", "json", *dumps], capture_output=True,
                                                  text=True).stdout)
                    rates.append((j["session"]["rate_achieved_hz"], j["session"]["samples"], j["session"]["lost"],
                                  j["session"]["truncated"]))
                    keep = dumps[0]
                    shutil.copy(keep, os.path.join(work, "keep.instr"))
        bare_w = statistics.median(w for w, _ in res["bare"])
        bare_c = statistics.median(c for _, c in res["bare"])
        print("%s -6 on %d MiB, %d interleaved runs, medians (%d CPUs)" % (a.program, a.size_mb, a.runs,
                                                                         os.cpu_count()))
        print("%-24s %10s %10s %10s %10s" % ("", "wall s", "+wall %", "CPU s", "+CPU %"))
        for name, v in res.items():
            w = statistics.median(x for x, _ in v)
            c = statistics.median(x for _, x in v)
            print("%-24s %10.3f %+10.1f %10.3f %+10.1f" % (name, w, 100 * (w / bare_w - 1), c, 100 * (c / bare_c - 1)))
        r = statistics.median(x[0] for x in rates)
        print("achieved rate: median %.0f Hz of 1000 asked (%.1f%%); samples %s; lost %s; truncated %s" % (
            r, r / 10, [x[1] for x in rates], [x[2] for x in rates], [x[3] for x in rates]))
        # Report speed: the kept dump's samples repeated into one big dump.
        txt = subprocess.run([a.dump, os.path.join(work, "keep.instr")], capture_output=True, text=True).stdout
        head, samples = [], []
        for line in txt.splitlines():
            f = line.split(" ", 3)
            (samples if len(f) > 2 and f[0].isdigit() and f[2] in ("stack", "lost") else head).append(f)
        last = max(int(f[1]) for f in samples)
        first = min(int(f[1]) for f in samples)
        span = last - first + 1
        reps = max(1, 1000000 // max(1, len(samples)))
        with open(os.path.join(work, "big.txt"), "w") as out:
            for f in head:
                out.write(" ".join(f) + "\n")
            for k in range(reps):
                for f in samples:
                    out.write("%s %d %s\n" % (f[0], int(f[1]) + k * span, " ".join(f[2:])))
        big = os.path.join(work, "big.instr")
        subprocess.run([a.dump, "--from-text", os.path.join(work, "big.txt"), "-o", big], check=True)
        walls, cpus = [], []
        for _ in range(3):
            w, c = timed([a.report, "--format", "json", "-o", os.path.join(work, "big.json"), big], work)
            walls.append(w)
            cpus.append(c)
        n = json.load(open(os.path.join(work, "big.json")))["session"]["samples"]
        print("instr-report: %d samples (one run's %d samples repeated), best of 3: %.3f s wall = %.2f M "
              "samples/s, %.3f s CPU = %.2f M samples/s" % (n, len(samples), min(walls), n / min(walls) / 1e6,
                                                             min(cpus), n / min(cpus) / 1e6))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""exchange_common.py - what the exchange checkers (tests/exchange/) that run the tools on
the golden trace and on real programs share (check-perfetto.py,
check-pprof.py, check-speedscope.py): their inputs, the JSON report and
one export of them, and a protobuf reader."""
import glob
import json
import os
import shutil

from instrtest import run


def inputs(args, traces=(), exe_args=()):
    """(name, [dumps]) for the golden exchange trace, each of the report
    tests' traces named in traces, and each program of --exe run once with
    exe_args recording into its own directory."""
    os.makedirs(args.work, exist_ok=True)
    out = []
    for name, path in [("exchange", os.path.join(args.src, "traces", "exchange.txt"))] + [
            (t, os.path.join(args.src, "..", "report", "traces", t + ".txt")) for t in traces]:
        dump = os.path.join(args.work, name + ".instr")
        run([os.path.join(args.bin, "instr-dump"), "--from-text", path, "-o", dump])
        out.append((name, [dump]))
    for exe in args.exe:
        name = os.path.basename(exe)
        d = os.path.join(args.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        run([exe, *exe_args], env=dict(os.environ, INSTR_OUTPUT=os.path.join(d, name + ".%p.instr")), cwd=d)
        out.append((name, sorted(glob.glob(os.path.join(d, "*.instr")))))
    return out


def report(args, dumps):
    """instr-report's JSON of dumps, in ns."""
    p = run([os.path.join(args.bin, "instr-report"), "--format", "json", "--units", "ns", *dumps], ok=(0, 3))
    return json.loads(p.stdout)


def export(args, dumps, fmt, out):
    """dumps exported as fmt into out; returns out."""
    run([os.path.join(args.bin, "instr-report"), "--export", fmt, "-o", out, *dumps], ok=(0, 3))
    return out


def pb_fields(buf):
    """(field, wire type, value) of each field of one protobuf message (the
    pprof and Perfetto checkers read the exports with it): varints and
    fixed64/fixed32 as ints, length-delimited fields as bytes."""
    i = 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    while i < len(buf):
        key = varint()
        f, wt = key >> 3, key & 7
        if wt == 0:
            yield f, wt, varint()
        elif wt == 2:
            n = varint()
            yield f, wt, bytes(buf[i:i + n])
            i += n
            if i > len(buf):
                raise ValueError("length past the end")
        elif wt == 1:
            yield f, wt, int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wt == 5:
            yield f, wt, int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"wire type {wt}")

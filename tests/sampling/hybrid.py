#!/usr/bin/env python3
"""Hybrid sampling (INSTR_SAMPLE=HZ on an instrumented program):
hybrid.py SCENARIO INSTR_REPORT BUSY DENY_PERF [DL_LIB].

shares:       samples placed on the shadow stack agree with the on-CPU
              Elapsed Exclusive shares within the sampling error; the rate
              achieved is near the rate asked; nothing is lost.
application:  the Application time of a run with sampling is within a
              generous ratio of one without (no interval flagged by it).
unprivileged: the same as uid 65534 (perf_event_paranoid 2).
deny:         perf events refused (seccomp): one line says so, the run is
              recorded without samples.
libc:         memset's call-site frame (libc, uninstrumented) gets the
              samples taken inside memset: its sampled share matches its
              EE share (a call site's frame is decided by the next event:
              the samples under it once landed on the caller); and, with
              INSTR_SAMPLE alone, the runtime's MAP records name the leaf
              below the call site: libc's memset (an ifunc variant), for
              >= 90% of the site's samples.
leaf-exact:   a synthetic INSTR_SAMPLE dump (text form, hand-chosen ticks
              and PCs in DL_LIB, copied as libA.so and libB.so mapped at
              the same address, libB's map later): exact rows of the
              section below the call site; a sample is named by the map
              holding its PC at its time in ticks (not its raw ns); one in
              the hooks and one outside every map are not named; one under
              the caller's own frame is not below a call site.
dlopen:       (DL_LIB, uninstrumented, dlopen'ed after the first round) the
              library's map is written after the start (ticks > 0) and the
              samples under its call site name its function as the leaf.
instr-sample: instr-sample run on the instrumented program: its dump's
              samples, given beside the instrumented dump, are placed on
              the shadow stack by time (shares agree as above), and the
              frames below memset's call site are libc's.
sampler-rate: instr-sample --rate 700 on the instrumented program: the
              hybrid view says the rate instr-sample asked (its dump's
              SAMPLING record), in JSON and in text, not "unknown"; as
              root, as uid 65534 and as root in a user namespace, the
              program's status and output as without instr-sample.
align:        (BUSY = hybrid-short) the kernel's sample times and the hooks'
              ticks line up: samples whose PC is inside a ~0.3 us function
              are placed on that function (checked against the program's
              symbols and the dump's events, outside the report), and its
              sampled share matches its exact on-CPU EE share.
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

scenario, REPORT, BUSY, DENY = sys.argv[1:5]
DL_LIB = sys.argv[5] if len(sys.argv) > 5 else None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check_quiet as check, failures, skip_unless_unprivileged_perf  # noqa: E402
from instrtest import for_every_identity  # noqa: E402


def run(cmd, env=None, **kw):
    e = dict(os.environ)
    e.pop("INSTR_SAMPLE", None)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=e, **kw)


# The busy program for check_shares: long rounds (10 ms, 16 times the
# default: rounds as long as the sampling period lock the samples to one
# phase of them), about 0.3 s of CPU, 300 samples at 1 kHz (300 short
# rounds took 0.19 s on a quiet machine: 191 samples, under
# check_shares' 200).
SHARE_ROUNDS = "30"
SHARE_EXTRA = ("long",)


def record(work, name, rate=None, prefix=(), busy=BUSY, rounds="300", extra=()):
    env = {"INSTR_OUTPUT": os.path.join(work, name + ".instr"), "INSTR_LOG": "stderr"}
    if rate:
        env["INSTR_SAMPLE"] = str(rate)
    r = run([*prefix, busy, rounds, *extra], env=env)
    check(r.returncode == 0, "%s exits 0 (%d: %s)" % (name, r.returncode, r.stderr))
    return env["INSTR_OUTPUT"], r


def samples_json(dump):
    r = run([REPORT, "--view", "samples", "--format", "json", dump])
    check(r.returncode == 0, "--view samples exits 0 (%d: %s)" % (r.returncode, r.stderr))
    return json.loads(r.stdout) if r.returncode == 0 else None


# The lowest achieved rate of 1000 Hz asked: a cpu-clock timer fires late
# when the host takes the vCPU away (782 Hz once beside two CPU hogs on a
# 2-vCPU guest; 630 Hz in a CI run at a load average of 10, beside two
# builds and another test suite); a counting error shows above (it once
# read 1414 Hz), a sampler that stopped far below.
RATE_LOW = 500


def check_shares(j, who, names=("heavy", "light")):
    s = j["session"]
    check(s["samples"] >= 200, "%s: enough samples (%s)" % (who, s))
    check(s["lost"] == 0, "%s: no sample lost (%s)" % (who, s))
    check(s["placed"] >= 0.95 * s["samples"], "%s: samples placed on a frame (%s)" % (who, s))
    check(RATE_LOW <= s["rate_achieved_hz"] <= 1100, "%s: rate achieved near 1000 Hz (%s)" % (who, s))
    ref = s["compared_with"]
    f = {r["name"]: r for r in j["functions"]}
    for name in names:
        r = f.get(name)
        check(r is not None, "%s: %s has a row" % (who, name))
        if r:
            d = abs(r["exclusive_samples_pct"] - r[ref])
            # 2 sigma is the report's flag; the test allows 3 sigma (a run
            # of this test must not fail one time in twenty by chance).
            check(d <= 1.5 * r["sampling_error_pct"],
                  "%s: %s sampled %.2f%% vs %s %.2f%% (error %.2f)" % (who, name, r["exclusive_samples_pct"], ref,
                                                                        r[ref], r["sampling_error_pct"]))
    check(f["heavy"]["exclusive_samples_pct"] > f["light"]["exclusive_samples_pct"], "%s: heavy above light" % who)


def application_ms(dump):
    r = run([REPORT, "--format", "json", "--units", "ms", dump])
    check(r.returncode == 0, "report exits 0 (%s)" % r.stderr)
    j = json.loads(r.stdout)
    return {x["name"]: x for x in j["functions"]}


def scenario_shares(work):
    dump, r = record(work, "s", 1000, rounds=SHARE_ROUNDS, extra=SHARE_EXTRA)
    check("perf events" not in r.stderr, "no refusal line (%s)" % r.stderr)
    j = samples_json(dump)
    if j:
        check_shares(j, "root")
        print(json.dumps(j["session"]))
    # many tiny calls: samples whose PC is in the hooks are counted (probe
    # overhead measured), per function and in all; the events filled many
    # chunks, so the sampler drained at chunk switches too
    dump, r = record(work, "t", 1000, rounds="150", extra=("tiny",))
    j = samples_json(dump)
    if j:
        s = j["session"]
        f = {x["name"]: x for x in j["functions"]}
        print(json.dumps(s))
        check(s["lost"] == 0 and s["samples"] >= 100, "tiny: samples, none lost (%s)" % s)
        check(s["in_runtime_pct"] >= 5, "tiny: samples in the hooks (%s)" % s)
        # the rate counts the hooks' CPU time too (it once read 1414 Hz here)
        check(RATE_LOW <= s["rate_achieved_hz"] <= 1100, "tiny: rate achieved near 1000 Hz (%s)" % s)
        check("tiny" in f and f["tiny"]["in_runtime_pct"] >= 50 and f["heavy"]["in_runtime_pct"] <= 5,
              "tiny's samples are mostly in the hooks, heavy's not: %s" % f)
    # a damaged sample chunk: one warning line, exit 3, the rest reported
    bad = os.path.join(work, "bad.instr")
    shutil.copy(dump, bad)
    with open(bad, "r+b") as f:
        data = bytearray(f.read())
        hsize, csize = struct.unpack_from("<II", data, 12)
        off = hsize
        while off + 64 <= len(data):
            magic, kind = struct.unpack_from("<IH", data, off)
            if magic == 0x4b484349 and kind == 3:
                data[off + 64] = 0xEE  # no such record kind
                break
            off += struct.unpack_from("<I", data, off + 32)[0] or csize  # its own size (a first chunk: a page)
        f.seek(0)
        f.write(data)
    r = run([REPORT, "--view", "samples", bad])
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 3 and len(lines) == 1 and "sample chunk ended on invalid bytes" in lines[0]
          and "heavy" in r.stdout, "damaged sample chunk: warning and exit 3 (%d: %s)" % (r.returncode, r.stderr))
    # an instrumented dump recorded without samples says so
    plain, _ = record(work, "plain", None, rounds="5")
    r = run([REPORT, "--view", "samples", plain])
    check(r.returncode == 1 and "no samples" in r.stderr and len(r.stderr.splitlines()) == 1,
          "without samples: one line (%d: %s)" % (r.returncode, r.stderr))


def scenario_libc(work):
    dump, r = record(work, "l", 1000, rounds="40", extra=("libc",))
    j = samples_json(dump)
    if j:
        print(json.dumps(j["session"]))
        check_shares(j, "libc", ("heavy", "light", "memset"))
        f = {x["name"]: x for x in j["functions"]}
        check(f["memset"]["exclusive_samples"] >= 50, "memset's frame has samples: %s" % f["memset"])
        check(f["main"]["exclusive_samples"] <= 0.05 * j["session"]["samples"], "few on main: %s" % f["main"])
        check_below(j, "memset", "libc.so.6", "memset")


def check_below(j, site, module, leaf):
    """INSTR_SAMPLE alone: the leaf below the call site, named through the
    runtime's MAP records, for >= 90% of the site's samples."""
    check(j["session"].get("below_frames") == "leaf", "below_frames is leaf: %s" % j["session"])
    f = {x["name"]: x for x in j["functions"]}
    below = j.get("below_call_sites", [])
    print(json.dumps(below))
    mb = [b for b in below if b["call_site"] == site]
    good = sum(b["samples"] for b in mb if b["module"] == module and leaf in b["frames"] and ";" not in b["frames"])
    n = f.get(site, {}).get("exclusive_samples", 0)
    print("%s: %d of its %d samples have a leaf in %s naming %s" % (site, good, n, module, leaf))
    check(n >= 50 and good >= 0.9 * n, "below %s: a leaf %s in %s for >= 90%% of %d samples: %d" % (site, leaf, module, n, good))
    check(all(b["call_site"] in f for b in below), "below rows are under call sites")


def scenario_instr_sample(work):
    sample = os.path.join(os.path.dirname(REPORT), "instr-sample")
    if not os.path.exists(sample):
        print("no instr-sample: skipped")
        sys.exit(77)
    rt = os.path.join(work, "rt.instr")
    sd = os.path.join(work, "s.instr")
    r = run([sample, "-o", sd, BUSY, "40", "libc"], env={"INSTR_OUTPUT": rt})
    check(r.returncode == 0, "instr-sample on the instrumented program exits 0 (%d: %s)" % (r.returncode, r.stderr))
    r = run([REPORT, "--view", "samples", "--format", "json", rt, sd])
    check(r.returncode == 0, "--view samples RT SD exits 0 (%d: %s)" % (r.returncode, r.stderr))
    if r.returncode:
        return
    j = json.loads(r.stdout)
    print(json.dumps(j["session"]))
    check(j["session"]["samples_from"] == "instr-sample", "samples from instr-sample: %s" % j["session"])
    check_shares(j, "instr-sample", ("heavy", "light", "memset"))
    f = {x["name"]: x for x in j["functions"]}
    below = j["below_call_sites"]
    print(json.dumps(below))
    mb = [b for b in below if b["call_site"] == "memset"]
    check(mb and all(b["module"] == "libc.so.6" and "memset" in b["frames"] for b in mb),
          "below memset: libc's memset frames: %s" % mb)
    n = sum(b["samples"] for b in mb)
    check(n >= 0.9 * f["memset"]["exclusive_samples"] and f["memset"]["exclusive_samples"] >= 50,
          "memset's samples have the frames below it: %d of %s" % (n, f["memset"]))
    check(all(b["call_site"] in f for b in below), "below rows are under call sites")
    # the text form says so; the sampling dump alone, or with no partner, still reports
    t = run([REPORT, "--view", "samples", rt, sd]).stdout
    check("Below call sites" in t and "Samples from: instr-sample" in t, "text sections:\n" + t)
    r = run([REPORT, "--view", "samples", sd])
    check(r.returncode == 1 and "instrumented dump of the same process" in r.stderr and len(r.stderr.splitlines()) == 1,
          "a sampling dump alone: one line (%d: %s)" % (r.returncode, r.stderr))


def scenario_sampler_rate(work):
    sample = os.path.join(os.path.dirname(REPORT), "instr-sample")
    if not os.path.exists(sample):
        print("no instr-sample: skipped")
        sys.exit(77)
    for_every_identity(work, (sample, BUSY), lambda d, prefix: sampler_rate_as(sample, d, prefix))


def sampler_rate_as(sample, d, prefix):
    rt = os.path.join(d, "rt.instr")
    sd = os.path.join(d, "s.instr")
    alone = run([*prefix, BUSY, "40"], env={"INSTR_OUTPUT": os.path.join(d, "alone.instr")})
    r = run([*prefix, sample, "--rate", "700", "-o", sd, BUSY, "40"], env={"INSTR_OUTPUT": rt})
    check(r.returncode == 0, "instr-sample on the instrumented program exits 0 (%d: %s)" % (r.returncode, r.stderr))
    check((r.returncode, r.stdout, r.stderr) == (alone.returncode, alone.stdout, alone.stderr),
          "status and output as without instr-sample (%d %r %r, without: %d %r %r)"
          % (r.returncode, r.stdout, r.stderr, alone.returncode, alone.stdout, alone.stderr))
    r = run([REPORT, "--view", "samples", "--format", "json", rt, sd])
    check(r.returncode == 0, "--view samples RT SD exits 0 (%d: %s)" % (r.returncode, r.stderr))
    if r.returncode:
        return
    s = json.loads(r.stdout)["session"]
    check(s["rate_asked_hz"] == 700, "the asked rate is instr-sample's: %s" % s)
    t = run([REPORT, "--view", "samples", rt, sd]).stdout
    line = [l for l in t.splitlines() if l.startswith("Rate:")]
    check(line and line[0].startswith("Rate: asked 700 Hz,"), "text: %s" % line)


def scenario_dlopen(work):
    dump, r = record(work, "dl", 1000, rounds="40", extra=("dl", DL_LIB))
    j = samples_json(dump)
    if j:
        print(json.dumps(j["session"]))
        check_below(j, "dl_busy", os.path.basename(DL_LIB), "dl_busy")
    # the library's map: written after the start (its ticks > 0: mapped
    # after the runtime's first look), the start's at 0
    txt = run([os.path.join(os.path.dirname(REPORT), "instr-dump"), dump]).stdout
    mods = dict(re.findall(r"^module (\d+) (\S+)", txt, re.M))
    maps = [(mods.get(m, ""), int(at)) for m, at in re.findall(r"^map (\d+) .* at=(\d+)$", txt, re.M)]
    print(maps)
    lib = [at for path, at in maps if path.endswith(os.path.basename(DL_LIB))]
    check(len(lib) == 1 and lib[0] > 0, "one map of the dlopen'ed library, after the start: %s" % lib)
    check(any(path.endswith("/libc.so.6") and at == 0 for path, at in maps), "libc's map at the start: %s" % maps)


def scenario_leaf_exact(work):
    dump_tool = os.path.join(os.path.dirname(REPORT), "instr-dump")
    libs = [shutil.copy(DL_LIB, os.path.join(work, n)) for n in ("libA.so", "libB.so")]
    seg = None
    for l in run(["readelf", "-lW", DL_LIB]).stdout.splitlines():
        p = l.split()
        if p and p[0] == "LOAD" and "E" in p[6:-1]:
            seg = (int(p[1], 16), int(p[2], 16))  # p_offset, p_vaddr
    vaddr = next(int(l.split()[0], 16) for l in run(["nm", DL_LIB]).stdout.splitlines() if l.endswith(" dl_busy"))
    start, off = 0x7f0000000000, seg[0] & ~0xfff
    pc = vaddr + start - off + seg[0] - seg[1]  # the load bias (tools/elf-file.c instr_elf_bias)
    # 2 ticks per ns, tick 1000 = 500 ns: a sample's ns n is tick 2n
    tick = lambda ns: 1000 + 2 * (ns - 500)
    lines = [
        "instr-dump 1",
        "header pid=7 exe=%s start_tsc=1000 start_ns=500 end_tsc=%d end_ns=1000500 flags=complete chunk_size=512"
        % (BUSY, tick(1000500)),
        "module 1 %s load=0x560000000000" % BUSY,
        "module 2 %s load=%#x" % (libs[0], start - off),
        "module 3 %s load=%#x" % (libs[1], start - off),
        "function 1 module=1 line=1 file=x.c name=main",
        "callsite 1 caller=1 line=2 flags=direct callee=dl_busy module=2 offset=%#x site=0" % vaddr,
        "thread 0 tid=7 name=t",
        "sampling rate=1000 period=1000000 stack=0 unwinder=none",
        "map 2 %#x %#x off=%#x at=0" % (start, start + 0x1000, off),
        # libB replaces libA at ns 600000 (tick 1200000)
        "map 3 %#x %#x off=%#x at=%d" % (start, start + 0x1000, off, tick(600000)),
        "0 1000 enter 1",
        "0 3000 call 1",
        "0 %d return" % tick(950000),
        "0 %d exit" % tick(1000000),
        "0 1000 stack %#x" % pc,                  # tick 2000: on main's own frame
        "0 100500 stack %#x" % pc,                # libA
        "0 300500 stack %#x" % (pc + 4),          # libA
        "0 400500 stack flags=runtime %#x" % pc,  # in the hooks: not named below
        "0 500500 stack 0x10",                    # outside every map
        "0 550500 stack %#x" % pc,                # tick 1101000 < 1200000: libA
        "0 700500 stack %#x" % pc,                # ns below 1200000, tick above: libB
        "0 800500 stack %#x" % pc,                # libB
    ]

    def from_text(name, lines):
        txt, dump = os.path.join(work, name + ".txt"), os.path.join(work, name + ".instr")
        with open(txt, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = run([dump_tool, "--from-text", txt, "-o", dump])
        check(r.returncode == 0, "instr-dump --from-text %s (%s)" % (name, r.stderr))
        return dump
    dump = from_text("leaf", lines)
    r = run([dump_tool, dump])
    check("flags=runtime" in r.stdout and "map 3 " in r.stdout, "the text form goes round: %s" % r.stdout[-600:])
    j = samples_json(dump)
    if not j:
        return
    s = j["session"]
    print(json.dumps(s))
    check((s["samples"], s["placed"], s["in_runtime"], s["samples_from"], s["below_frames"]) ==
          (8, 8, 1, "INSTR_SAMPLE", "leaf"), "session: %s" % s)
    f = {x["name"]: x for x in j["functions"]}
    check(f["dl_busy"]["exclusive_samples"] == 7 and f["main"]["exclusive_samples"] == 1, "frames: %s" % f)
    below = [(b["call_site"], b["frames"], b["module"], b["samples"], b["of_site_pct"]) for b in j["below_call_sites"]]
    print(below)
    check(below == [("dl_busy", "dl_busy", "libA.so", 3, 42.8571), ("dl_busy", "dl_busy", "libB.so", 2, 28.5714)],
          "below call sites: %s" % below)
    t = run([REPORT, "--view", "samples", dump]).stdout
    print(t)
    check("the sampled PC only" in t and "dl_busy                           3    42.86%  dl_busy  [libA.so]" in t,
          "the text section: %s" % t)
    # the same dump without its MAP records: no section, and JSON says so
    j = samples_json(from_text("bare", [l for l in lines if not l.startswith("map ")]))
    check(j and j["session"]["below_frames"] is None and "below_call_sites" not in j, "without maps: %s" % j)


def scenario_application(work):
    """Sampling delivers no signal: it must not flag intervals, so the
    Application time stays (a signal-based 1 kHz sampler drops it ~15x)."""
    ratios = []
    for k in range(2):
        a, _ = record(work, "a%d" % k, None)
        b, _ = record(work, "b%d" % k, 1000)
        fa, fb = application_ms(a), application_ms(b)
        keys = [k2 for k2 in fa["main"] if k2.startswith("app") and "incl" in k2]
        key = keys[0] if keys else None
        check(key is not None, "an application inclusive column in %s" % list(fa["main"]))
        if key:
            ratios.append((fa["main"][key], fb["main"][key]))
    print("application main without / with sampling:", ratios)
    # the better of two pairs: the host's load moves Application time a lot
    best = max(y / x if x else 0 for x, y in ratios)
    check(best >= 0.4, "Application time with sampling within a generous ratio of without: %s" % ratios)


def scenario_unprivileged(work):
    skip_unless_unprivileged_perf()
    os.chmod(work, 0o1777)
    busy = shutil.copy(BUSY, work)
    dump, r = record(work, "u", 1000, prefix=("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                     busy=busy, rounds=SHARE_ROUNDS, extra=SHARE_EXTRA)
    check("perf events" not in r.stderr, "no refusal as uid 65534 (%s)" % r.stderr)
    check(os.path.exists(dump) and os.stat(dump).st_uid == 65534, "the dump belongs to the user")
    if os.path.exists(dump):
        j = samples_json(dump)
        if j:
            check_shares(j, "uid 65534")


def scenario_deny(work):
    dump, r = record(work, "d", 1000, prefix=(DENY,), rounds="20")
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "perf events are not allowed" in lines[0] and "recording without samples" in lines[0],
          "one line says perf events are refused: %r" % r.stderr)
    rr = run([REPORT, "--format", "json", dump])
    check(rr.returncode == 0 and "heavy" in rr.stdout, "recorded normally (%d: %s)" % (rr.returncode, rr.stderr))
    rs = run([REPORT, "--view", "samples", dump])
    check(rs.returncode == 1 and "no samples" in rs.stderr, "no samples in the dump (%s)" % rs.stderr)


def pc_agreement(dump, prog, fn):
    """Of the samples whose PC lies in fn (nm), how many the dump's events
    put on fn at the sample's time (converted with the header's pairs, as
    tools/hybrid.c does)."""
    import bisect
    txt = run([os.path.join(os.path.dirname(REPORT), "instr-dump"), dump]).stdout.splitlines()
    hdr = dict(re.findall(r"(\w+)=(\S+)", txt[1]))
    st, sn, et, en = (int(hdr[k]) for k in ("start_tsc", "start_ns", "end_tsc", "end_ns"))
    rate = (et - st) / (en - sn)
    fname, sites, base = {}, {}, None
    for l in txt:
        m = re.match(r"module 1 \S+ load=(0x[0-9a-f]+)", l)
        if m:
            base = int(m.group(1), 16)
        m = re.match(r"function (\d+) .*name=(\S+)", l)
        if m:
            fname[int(m.group(1))] = m.group(2)
        m = re.match(r"callsite (\d+) .*callee=(\S+)", l)
        if m:
            sites[int(m.group(1))] = m.group(2)
    lo = hi = None
    for l in run(["nm", "-S", prog]).stdout.splitlines():
        p = l.split()
        if len(p) == 4 and p[3] == fn:
            lo = base + int(p[0], 16)
            hi = lo + int(p[1], 16)
    starts, tops, stack, samples = [], [], [], []
    for l in txt:
        f = l.split()
        if len(f) < 3 or f[0] != "0" or not f[1].isdigit():
            continue
        t, k = int(f[1]), f[2]
        if k == "stack":
            samples.append((t, int(f[-1], 16)))
            continue
        if k == "enter":
            stack.append(fname[int(f[3])])
        elif k == "call":
            stack.append("site " + sites[int(f[3])])
        elif k in ("exit", "return"):
            if stack:
                stack.pop()
        else:
            continue
        starts.append(t)
        tops.append(stack[-1] if stack else None)
    inside = placed = 0
    for ns, pc in samples:
        if lo is None or not lo <= pc < hi:
            continue
        inside += 1
        i = bisect.bisect_right(starts, st + (ns - sn) * rate) - 1
        placed += i >= 0 and tops[i] == fn
    return inside, placed


def scenario_align(work):
    ok = []
    for k in range(2):
        dump, r = record(work, "al%d" % k, 1000, rounds="500000", extra=("200",))
        inside, placed = pc_agreement(dump, BUSY, "short_fn")
        print("samples with the PC in short_fn: %d, placed on short_fn: %d" % (inside, placed))
        check(inside >= 10, "enough samples inside short_fn (%d)" % inside)
        ok.append(placed >= 0.9 * inside)
        j = samples_json(dump)
        if j:
            f = {x["name"]: x for x in j["functions"]}
            s = f.get("short_fn", {})
            ref = j["session"]["compared_with"]
            print("short_fn sampled %.2f%%, %s %.2f%% (error %.2f)" % (s.get("exclusive_samples_pct", 0), ref,
                                                                      s.get(ref) or 0, s.get("sampling_error_pct", 0)))
            # The exact share leaves the hooks' cost out (compensated), while
            # samples also land in the hooks, most of them under a function
            # as short as short_fn (in_runtime_pct): compare the shares of
            # the samples outside the runtime, the same time on both sides.
            # Generous: 4 standard errors of that share, at least 5 points
            # (about 160 samples a run, taken by a CPU timer and so not
            # independent; 3 errors failed once in a CI run, 38.3% against
            # 50.9% with 3 errors 11.8, and eight runs here gave 45-57%).
            sess = j["session"]
            own = s.get("exclusive_samples", 0) * (1 - s.get("in_runtime_pct", 0) / 100)
            total = sess["samples"] - sess["in_runtime"]
            share = 100 * own / total if total else 0
            p = (s.get(ref) or 0) / 100
            err = 400 * math.sqrt(p * (1 - p) / total) if total else 0
            print("outside the runtime: short_fn %.2f%% of %d samples (4 errors: %.2f)" % (share, total, err))
            check(s and total >= 30 and abs(share - s[ref]) <= max(5, err),
                  "short_fn's sampled share outside the runtime matches its exact share: %.2f%% vs %s" % (share, s))
    check(all(ok), "samples inside short_fn are placed on it (>= 90%% in each run): %s" % ok)


with tempfile.TemporaryDirectory() as work:
    {"shares": scenario_shares, "application": scenario_application, "libc": scenario_libc,
     "instr-sample": scenario_instr_sample, "unprivileged": scenario_unprivileged,
     "deny": scenario_deny, "align": scenario_align, "dlopen": scenario_dlopen,
     "leaf-exact": scenario_leaf_exact, "sampler-rate": scenario_sampler_rate}[scenario](work)
if failures:
    sys.exit(1)
print("ok")

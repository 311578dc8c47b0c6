#!/usr/bin/env python3
"""Consumer tests of the exchange formats: each file we write is read by
the tool that consumes it (or checked against the rules those tools rely
on), and its numbers compared with instr-report's own.

  check-consumers.py CHECK --bin BIN --src SRC --work DIR [--exe EXE]

CHECK: callgrind  callgrind_annotate reads our file; its totals and
                  per-function self costs are our Session EI/AI and EE/AE
       callgrind-lines  a real C++ program (--exe): callgrind_annotate puts
                  each call on its call site's source line, every source
                  file is absolute, each object named once (compressed)
       chrome     the trace-event rules Perfetto and chrome://tracing rely
                  on; per function, the outermost complete events add up
                  to its Elapsed Inclusive; --split-size parts are valid
       chrome-thin  a trace of more calls than the cap (lowered with
                  INSTR_CHROME_MAX_CALLS, the test switch) keeps by default
                  exactly the calls of at least the cut, the most under the
                  cap, each with its caller; the note on stderr and in
                  otherData; --min-duration 0, --time-range, --split-size
                  keep every call; under the cap nothing changes
       folded     per frame, the weights of the lines containing it (once
                  per line: recursion) add up to its inclusive value
       roundtrip  export visualiser -> import: Elapsed values equal within
                  the microsecond rounding
       fixture    the real visualiser file, values checked by hand
       bad-lines  malformed visualiser lines: file:line: reason, the rest
                  read, exit code 3
       api        a program using instr_event/instr_counter, built with the
                  plugin: marks and counters in the dump and the exports
       api-plain  the same program built without the plugin: runs, no dump
Exit 77 = skipped (a consumer is not installed), with the reason printed."""
import argparse, glob, json, os, re, shutil, subprocess, sys

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402


def run(cmd, ok=(0,), **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode not in ok:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"{cmd[0]} exited {p.returncode}")
    return p


def dump_of(args, name):
    """The exchange trace (1 GHz: ticks = ns) as a binary dump."""
    os.makedirs(args.work, exist_ok=True)
    out = os.path.join(args.work, name + ".instr")
    run([os.path.join(args.bin, "instr-dump"), "--from-text", os.path.join(args.src, "traces", name + ".txt"),
         "-o", out])
    return out


def report_json(args, inputs, *extra, ok=(0,)):
    p = run([os.path.join(args.bin, "instr-report"), "--format", "json", "--units", "ns", *extra, *inputs], ok=ok)
    return json.loads(p.stdout)


def export(args, fmt, inputs, out, *extra, ok=(0,)):
    run([os.path.join(args.bin, "instr-report"), "--export", fmt, "-o", out, *extra, *inputs], ok=ok)
    return out


# ---- callgrind -------------------------------------------------------------

def check_callgrind(args):
    tool = shutil.which("callgrind_annotate")
    if not tool:
        print("SKIPPED: callgrind_annotate not installed (Debian package valgrind; .ci/run installs it)")
        return SKIP
    d = dump_of(args, "exchange")
    rep = report_json(args, [d])
    cg = export(args, "callgrind", [d], os.path.join(args.work, "exchange.callgrind"))
    out = run([tool, "--auto=no", "--threshold=100", "--inclusive=no", cg]).stdout
    print(out)
    num = lambda s: int(s.replace(",", ""))
    tot = re.search(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?([\d,]+)\s+(?:\([^)]*\)\s+)?PROGRAM TOTALS", out, re.M)
    check(tot is not None, "callgrind_annotate prints PROGRAM TOTALS for both events")
    if tot:
        t = rep["session"]["totals"]
        check(num(tot.group(1)) == t["elapsed_inclusive_ns"], f"Elapsed total {tot.group(1)} = Session EI {t['elapsed_inclusive_ns']}")
        check(num(tot.group(2)) == t["application_inclusive_ns"], f"Application total {tot.group(2)} = Session AI {t['application_inclusive_ns']}")
    # Per function: self costs are EE and AE.
    selfs = {}
    for m in re.finditer(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?([\d,]+)\s+(?:\([^)]*\)\s+)?\S*:(\S+) \[", out, re.M):
        selfs[m.group(3)] = (num(m.group(1)), num(m.group(2)))
    for f in rep["functions"]:
        got = selfs.get(f["name"])
        check(got == (f["elapsed_exclusive_ns"], f["application_exclusive_ns"]),
              f"{f['name']}: callgrind self {got} = (EE, AE) ({f['elapsed_exclusive_ns']}, {f['application_exclusive_ns']})")
    # Inclusive view: callgrind_annotate adds call costs; without recursion
    # that is our EI (rec recurses: callgrind counts its inner call twice).
    out = run([tool, "--auto=no", "--threshold=100", "--inclusive=yes", cg]).stdout
    for m in re.finditer(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?[\d,]+\s+(?:\([^)]*\)\s+)?\S*:(\S+) \[", out, re.M):
        f = next((x for x in rep["functions"] if x["name"] == m.group(2)), None)
        if f and f["name"] != "rec":
            check(num(m.group(1)) == f["elapsed_inclusive_ns"], f"{f['name']}: callgrind inclusive {m.group(1)} = EI {f['elapsed_inclusive_ns']}")
    return 0


def check_callgrind_lines(args):
    tool = shutil.which("callgrind_annotate")
    if not tool:
        print("SKIPPED: callgrind_annotate not installed (Debian package valgrind)")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    for old in glob.glob(os.path.join(args.work, "*.instr")):
        os.remove(old)
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(args.work, "run.%p.instr"))
    run([args.exe], env=env, cwd=args.work)
    dumps = glob.glob(os.path.join(args.work, "run.*.instr"))
    cg = export(args, "callgrind", dumps, os.path.join(args.work, "run.callgrind"), ok=(0, 3))
    text = open(cg).read()
    files = re.findall(r"^(?:fl|cfi|cfl)=\(\d+\) (.*)$", text, re.M)
    check(files and all(f == "???" or f.startswith("/") for f in files), f"source files absolute: {files}")
    obs = re.findall(r"^c?ob=\(\d+\) (.*)$", text, re.M)
    check(len(obs) == len(set(obs)), f"each object named once: {obs}")
    out = run([tool, "--auto=yes", "--threshold=100", "--context=1000", cg]).stdout
    # An annotated source line, then the calls made on it ("=> callee").
    last_src = {}
    src = None
    for line in out.splitlines():
        m = re.match(r"^\s*(?:[\d,]+(?: \([^)]*\))?|\.)\s+(?:[\d,]+(?: \([^)]*\))?|\.)?\s*(=> )?(.*)$", line)
        if not m:
            continue
        if m.group(1):
            callee = m.group(2).split(":", 1)[-1]
            last_src.setdefault(re.sub(r" \(\d[\d,]*x\)$", "", callee), src)
        else:
            src = m.group(2)
    for callee, code in (("printf", "std::printf("), ("__cxa_begin_catch", "catch (")):
        got = last_src.get(callee)
        check(got is not None and code in got, f"the call to {callee} is annotated on the line with '{code}': {got!r}")
    return 0


# ---- chrome ----------------------------------------------------------------

def validate_trace(path):
    """The trace-event rules viewers rely on.  Returns the events."""
    with open(path) as fh:
        doc = json.load(fh)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    check(isinstance(ev, list), f"{os.path.basename(path)}: traceEvents is a list")
    open_b = {}
    ok = {"pid/tid": True, "ts": True, "dur": True, "C": True, "ph": True, "i": True}
    for e in ev:
        ph = e.get("ph")
        if ph not in ("B", "E", "X", "i", "I", "C", "M", "b", "e"):
            ok["ph"] = False
        if not isinstance(e.get("pid"), int) or (ph != "C" and not isinstance(e.get("tid"), int)):
            ok["pid/tid"] = False
        if ph != "M" and not isinstance(e.get("ts"), (int, float)):
            ok["ts"] = False
        if ph == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            ok["dur"] = False
        if ph == "C" and not (isinstance(e.get("args"), dict) and e["args"] and
                              all(isinstance(v, (int, float)) for v in e["args"].values())):
            ok["C"] = False
        if ph in ("i", "I") and e.get("s", "t") not in ("g", "p", "t"):
            ok["i"] = False
        if ph == "B":
            open_b.setdefault((e["pid"], e["tid"]), []).append(e)
        if ph == "E":
            st = open_b.get((e["pid"], e["tid"]), [])
            if not st or st[-1]["ts"] > e["ts"]:
                ok["ph"] = False
            else:
                st.pop()
        if ph in ("b", "e"):
            # async slices: matched by pid, cat, name and id, e after its b
            k = ("async", e["pid"], e.get("cat"), e.get("name"), e.get("id"))
            if ph == "b":
                ok["ph"] = ok["ph"] and k not in open_b
                open_b[k] = [e]
            elif k not in open_b or open_b[k][0]["ts"] > e["ts"]:
                ok["ph"] = False
            else:
                del open_b[k]
    check(all(not v for v in open_b.values()), "every B has its E on the same pid/tid, in order")
    check(not x_overlaps(ev), f"X events nest as a reader adding ts and dur in doubles sees them "
                              f"{x_overlaps(ev)[:2]}")
    tids = {(e["pid"], e["tid"]) for e in ev if e.get("ph") != "M" or e.get("name") == "thread_name"}
    check(all((e["pid"], e["tid"]) in tids | {(e["pid"], e["pid"])} for e in ev if e.get("ph") == "M"),
          "metadata events name only real threads (no tid 0: a phantom thread in Perfetto)")
    for k, v in ok.items():
        check(v, f"rule {k}: " + {"pid/tid": "pid and tid set (integers)", "ts": "ts in µs (a number)",
                                   "dur": "X events have dur >= 0", "C": "counters are C with numeric args",
                                   "ph": "known phases, E after its B", "i": "instant scope g/p/t"}[k])
    return ev


def x_overlaps(events):
    """The X events that overlap a call they do not fit in, their end being
    ts + dur added in doubles as JavaScript viewers (speedscope, Chrome's)
    add them: such a call's successor is drawn inside it."""
    by, bad = {}, []
    for e in events:
        if e.get("ph") == "X":
            by.setdefault((e["pid"], e["tid"]), []).append(e)
    for xs in by.values():
        xs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in xs:
            end = float(e["ts"]) + float(e["dur"])
            while stack and stack[-1][0] <= e["ts"]:
                stack.pop()
            if stack and end > stack[-1][0]:
                bad.append((stack[-1][1], e["name"], e["ts"]))
            stack.append((end, e["name"]))
    return bad


def outermost_sums(events):
    """Per (name): the durations of X events not inside another X event of
    the same name on the same thread (recursion counted once)."""
    sums = {}
    by = {}
    for e in events:
        if e.get("ph") == "X":
            by.setdefault((e["pid"], e["tid"], e["name"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for (pid, tid, name), iv in by.items():
        iv.sort(key=lambda x: (x[0], -x[1]))
        end = -1.0
        for a, b in iv:
            if a >= end - 1e-9:
                sums[name] = sums.get(name, 0) + (b - a)
                end = b
    return sums


def chrome_adds_up(args, name, slack=0.5):
    """Per function, the outermost complete events of the trace add up to
    its Elapsed Inclusive in the report (within slack ns).  Returns the
    trace's events."""
    d = dump_of(args, name)
    rep = report_json(args, [d])
    ev = validate_trace(export(args, "chrome", [d], os.path.join(args.work, name + ".json")))
    sums = outermost_sums(ev)
    for f in rep["functions"]:
        check(abs(sums.get(f["name"], 0) * 1000 - f["elapsed_inclusive_ns"]) < slack,
              f"{name}: {f['name']}: complete events add up to EI {f['elapsed_inclusive_ns']} ns")
    return d, rep, ev


def check_chrome(args):
    d, rep, ev = chrome_adds_up(args, "exchange")
    # The runtime's own work (EXT RUNTIME), cut from every value, is cut
    # from the timeline too: main 550 ns, not 1300 with the runtime's 750.
    chrome_adds_up(args, "runtime-gap")
    # A call ending where the next begins, and a callee where its caller
    # ends, at ends whose decimal sum is not a double's (0.1 + 0.2 us):
    # printed so that a reader's sum is the end's double (validate_trace),
    # the durations still the ns's.
    chrome_adds_up(args, "float-ends")
    # A switchable run's gaps (hooks off before 200, from 500 to 800 ns):
    # an async slice each on the process, and only those --time-range
    # keeps (0.3 to 0.9 us: the second).
    sw = os.path.join(args.work, "switched.instr")
    run([os.path.join(args.bin, "instr-dump"), "--from-text",
         os.path.join(args.src, "..", "report", "traces", "switched.txt"), "-o", sw])
    for extra, want in (((), [("b", 0, 0.0), ("e", 0, 0.2), ("b", 1, 0.5), ("e", 1, 0.8)]),
                        (("--time-range", "0.0003:0.0009"), [("b", 1, 0.5), ("e", 1, 0.8)])):
        sev = validate_trace(export(args, "chrome", [sw], os.path.join(args.work, "switched.json"), *extra))
        got = [(e["ph"], e["id"], e["ts"]) for e in sev if e["ph"] in ("b", "e")]
        check(got == want and all(e["name"] == "recording off" and e["pid"] == 100 for e in sev if e["ph"] in ("b", "e")),
              f"switched {' '.join(extra)}: the hooks' gaps as async slices {got}")
    calls = sum(f["calls"] for f in rep["functions"])
    check(sum(1 for e in ev if e["ph"] == "X") == calls, f"one X event per call ({calls})")
    check([e["name"] for e in ev if e["ph"] == "i"] == ["Frame Start", "Frame Start"], "instant events: the marks")
    check([e["args"]["value"] for e in ev if e["ph"] == "C"] == [3, -2], "counter events: the values")
    # Large traces: split parts are each a valid trace, and hold everything.
    base = os.path.join(args.work, "split.json")
    for p in glob.glob(os.path.join(args.work, "split*.json")):
        os.remove(p)
    os.environ["INSTR_CHROME_MIN_SPLIT"] = "0"  # the test switch: parts of 500 bytes
    export(args, "chrome", [d], base, "--split-size", "0.0005")
    del os.environ["INSTR_CHROME_MIN_SPLIT"]
    parts = sorted(glob.glob(os.path.join(args.work, "split*.json")))
    check(len(parts) > 2, f"--split-size 0.0005 (500 bytes) writes several parts ({len(parts)})")
    # Each part opens on its own: the calls open at its edges are repeated
    # as B/E pairs (validate_trace: balanced per thread), and over all parts
    # every function covers the time it covers in one file.
    whole = {}
    for e in ev:
        if e["ph"] == "X":
            whole[e["name"]] = whole.get(e["name"], 0) + e["dur"]
    split = {}
    edges = 0
    for p in parts:
        pe = validate_trace(p)
        check(os.path.getsize(p) < 2000, f"{os.path.basename(p)}: about the size asked ({os.path.getsize(p)} bytes)")
        check(any(e["ph"] == "M" and e["name"] == "process_name" for e in pe), f"{os.path.basename(p)}: names its process")
        stack = {}
        for e in pe:
            if e["ph"] == "X":
                split[e["name"]] = split.get(e["name"], 0) + e["dur"]
            elif e["ph"] == "B":
                stack.setdefault(e["tid"], []).append(e)
                edges += 1
            elif e["ph"] == "E":
                b = stack[e["tid"]].pop()
                split[b["name"]] = split.get(b["name"], 0) + e["ts"] - b["ts"]
    check(edges > 0, f"calls open at the parts' edges are repeated as B/E ({edges} B events)")
    check(whole.keys() == split.keys() and all(abs(whole[k] - split[k]) < 1e-6 for k in whole),
          f"the parts cover each function's time once: {sorted(split.items())} = {sorted(whole.items())}")
    # Writing a string must not ask the stream where it is (an lseek each:
    # a 298 MB dump's export took 638 s instead of 51 s).
    if shutil.which("strace"):
        log = os.path.join(args.work, "strace.log")
        run(["strace", "-f", "-e", "trace=lseek", "-o", log, os.path.join(args.bin, "instr-report"),
             "--export", "chrome", "-o", os.path.join(args.work, "strace.json"), d])
        with open(log) as fh:
            seeks = sum(1 for l in fh if "lseek(" in l)
        check(seeks < 10, f"no lseek per string written ({seeks} lseeks for {calls} calls)")
    else:
        print("note: strace not installed, lseek count not checked")
    # --time-range and --min-duration: of the calls overlapping 3..8.5 µs,
    # clipped to it, those of 1.5 µs or more: main 3..8.5, rec 3.5..6 (its
    # inner call is 1 µs), worker's rec 3..6, sort_it 6.5..8.5, qsort
    # 7..8.5; helper ends at 3 (0 µs left), cmp 8..8.5.
    r = validate_trace(export(args, "chrome", [d], os.path.join(args.work, "range.json"),
                              "--time-range", "0.003:0.0085", "--min-duration", "1.5"))
    xs = [e for e in r if e["ph"] == "X"]
    check(all(3 - 1e-9 <= e["ts"] and e["ts"] + e["dur"] <= 8.5 + 1e-9 and e["dur"] >= 1.5 for e in xs),
          "--time-range clips to the range, --min-duration drops short calls")
    check(sorted(e["name"] for e in xs) == ["main", "qsort", "rec", "rec", "sort_it"],
          "the calls overlapping 3..8.5 µs and at least 1.5 µs long: " + ",".join(sorted(e["name"] for e in xs)))
    return 0


# ---- chrome: thinned by default --------------------------------------------

def thin_trace(args):
    """A text trace at 1 GHz (ticks = ns) of random call trees on two
    threads: durations from a set of values 6% apart (a histogram bucket is
    1.1% wide: the cut falls between two of them), many calls of each (ties
    at the cut), and pairs of a caller and a callee of the same ticks (a tie
    that must go or stay together).  Returns the dump and its calls as
    {(tid, start, dur, name): parent key or None}."""
    import random
    rng = random.Random(11)
    durs = sorted({int(70 * 1.06 ** k) for k in range(70)})
    names = ["f%d" % i for i in range(1, 9)] + ["tie_outer", "tie_inner"]
    lines = ["instr-dump 1",
             "header pid=7 ppid=1 exe=/opt/thin start_tsc=0 start_ns=0 end_tsc=100000000 end_ns=100000000 "
             "detector=rseq_cs sees=sched,signal flags=complete,tsc_invariant",
             "module 1 /opt/thin"]
    lines += [f"function {i + 1} module=1 line={i + 1} file=thin.c name={n}" for i, n in enumerate(names)]
    lines += ["thread 0 tid=700 name=main", "thread 1 tid=701 name=worker"]
    calls, events = {}, []

    def call(th, tid, t0, dur, parent, depth):
        if rng.random() < 0.04 and depth < 6:  # a caller and its callee of the same ticks
            outer = (tid, t0, dur, "tie_outer")
            inner = (tid, t0, dur, "tie_inner")
            calls[outer], calls[inner] = parent, outer
            events.extend([(th, t0, "enter 9"), (th, t0, "enter 10"), (th, t0 + dur, "exit"), (th, t0 + dur, "exit")])
            return
        name = rng.randrange(8)
        key = (tid, t0, dur, names[name])
        calls[key] = parent
        events.append((th, t0, f"enter {name + 1}"))
        t = t0 + 1
        while depth < 6:
            fit = [d for d in durs if d <= t0 + dur - t - 1]
            if not fit or rng.random() < 0.3:
                break
            d = rng.choice(fit[-12:] if rng.random() < 0.5 else fit)
            call(th, tid, t, d, key, depth + 1)
            t += d + rng.randrange(1, 4)
        events.append((th, t0 + dur, "exit"))

    for th, tid in ((0, 700), (1, 701)):
        t = 10
        for _ in range(40):
            d = rng.choice(durs[-20:]) * 8
            call(th, tid, t, d, None, 0)
            t += d + 5
    for th in (0, 1):
        lines += [f"{e[0]} {e[1]} {e[2]}" for e in events if e[0] == th]
    os.makedirs(args.work, exist_ok=True)
    txt = os.path.join(args.work, "thin.txt")
    with open(txt, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    d = os.path.join(args.work, "thin.instr")
    run([os.path.join(args.bin, "instr-dump"), "--from-text", txt, "-o", d])
    return d, calls


def sums_off(k):
    """Whether a generated call (tid, start, dur, name), ns, has a start and
    duration whose decimals (µs) a reader adds in doubles to other than
    its end's: the export prints such a duration as the double that does
    sum to it (x_overlaps)."""
    tid, t0, dur, name = k
    return t0 / 1e3 + dur / 1e3 != (t0 + dur) / 1e3


def x_events(ev):
    return sorted((e["tid"], round(e["ts"] * 1000), round(e["dur"] * 1000), e["name"]) for e in ev if e["ph"] == "X")


def check_chrome_thin(args):
    d, calls = thin_trace(args)
    total = len(calls)
    cap = total // 4
    env = dict(os.environ, INSTR_CHROME_MAX_CALLS=str(cap))
    rb = os.path.join(args.bin, "instr-report")

    def chrome(name, *extra, cap_env=env):
        out = os.path.join(args.work, name)
        p = run([rb, "--export", "chrome", "-o", out, *extra, d], env=cap_env)
        return p.stderr, out

    # Every call, asked for: all of them, no note.
    err, whole = chrome("all.json", "--min-duration", "0")
    printed = {k: k for k in calls}
    check(any(sums_off(k) for k in calls), "some calls whose decimal ends a reader's doubles do not sum to")
    check(x_events(validate_trace(whole)) == sorted(printed), f"--min-duration 0: every call ({total}), as generated")
    check(err == "", f"--min-duration 0: nothing on stderr ({err!r})")
    # By default: the calls of at least D, D the shortest duration whose
    # calls and longer ones fit under the cap.
    ds = sorted({k[2] for k in calls}, reverse=True)
    cut = ds[0]
    for dd in ds:
        if sum(1 for k in calls if k[2] >= dd) > cap:
            break
        cut = dd
    want = sorted(k for k in calls if k[2] >= cut)
    err, thin = chrome("thin.json")
    ev = validate_trace(thin)
    got = x_events(ev)
    check(got == want, f"by default: the {len(want)} calls of at least {cut} ns, the most under the cap {cap} "
                       f"(got {len(got)} of {total})")
    check(len(want) <= cap < sum(1 for k in calls if k[2] >= ds[ds.index(cut) + 1]),
          "the cut: one duration shorter would pass the cap")
    kept = {printed.get(k) for k in got}
    check(all(calls[k] is None or calls[k] in kept for k in kept), "every kept call's caller is kept")
    check(any(k[3] == "tie_inner" for k in kept) and any(k[3] == "tie_outer" and k[2] < cut for k in calls),
          "callers and callees of the same length on both sides of the cut")
    nest = True
    for tid in (700, 701):
        iv = sorted((k[1], -k[2], k[1] + k[2]) for k in kept if k[0] == tid)
        stack = []
        for a, _, b in iv:
            while stack and stack[-1] <= a:
                stack.pop()
            if stack and b > stack[-1]:
                nest = False
            stack.append(b)
    check(nest, "the kept calls nest (each inside its caller or apart)")
    other = json.load(open(thin))["otherData"].get("thinned", {})
    check(other.get("calls") == total and other.get("kept") == len(want) and other.get("max_calls") == cap and
          round(other.get("min_dur_us", 0) * 1000) == cut and "--min-duration 0" in other.get("note", ""),
          f"otherData says it: {other}")
    note = (f"instr-report: note: the trace keeps the {len(want)} longest of {total} calls (every one of at least "
            f"{cut / 1000:.3f} µs): browser trace viewers load about {cap}; --min-duration 0 keeps every call\n")
    check(err == note, f"the note on stderr: {err!r}")
    # Any choice of the user's keeps what it keeps, every call otherwise.
    err, ranged = chrome("range.json", "--time-range", ":")
    check(len(x_events(validate_trace(ranged))) == total and not err, "--time-range : keeps every call, no note")
    for p in glob.glob(os.path.join(args.work, "part*.json")):
        os.remove(p)
    err, parts = chrome("part.json", "--split-size", "100")
    check(len(x_events(validate_trace(parts))) == total and not err and not glob.glob(os.path.join(args.work, "part.2*")),
          "--split-size 100 keeps every call, no note")
    # Under the cap: byte for byte the trace of every call.
    err, under = chrome("under.json", cap_env=dict(os.environ, INSTR_CHROME_MAX_CALLS=str(total)))
    check(open(under, "rb").read() == open(whole, "rb").read() and not err,
          f"a cap of {total} (every call): the same file as --min-duration 0, no note")
    return 0


# ---- folded ----------------------------------------------------------------

def check_folded(args):
    print("flame graph tools: none is a Debian package here; speedscope (npm) is a browser viewer,"
          " so the folded semantics are checked directly")
    d = dump_of(args, "exchange")
    rep = report_json(args, [d])
    for weight, ei in (("elapsed", "elapsed_inclusive_ns"), ("application", "application_inclusive_ns")):
        path = export(args, "folded", [d], os.path.join(args.work, f"exchange.{weight}.folded"), "--weight", weight)
        width = {}
        total = 0
        for line in open(path):
            stack, w = line.rstrip("\n").rsplit(" ", 1)
            total += int(w)
            for frame in set(stack.split(";")):  # a frame counts once per stack
                width[frame] = width.get(frame, 0) + int(w)
        for f in rep["functions"]:
            check(width.get(f["name"], 0) == f[ei], f"{weight}: {f['name']} frames sum to {f[ei]} (got {width.get(f['name'], 0)})")
        key = "elapsed_inclusive_ns" if weight == "elapsed" else "application_inclusive_ns"
        check(total == rep["session"]["totals"][key], f"{weight}: the weights add up to the session total")
    # Recursion: rec's inner frame is not counted twice (an inclusive-weight
    # exporter would give main;rec;rec 1000 and main;rec 2500 -> rec 3500+...).
    return 0


# ---- visualiser --------------------------------------------------------------

def values(rep):
    return {f["name"]: f for f in rep["functions"]}


def check_roundtrip(args):
    d = dump_of(args, "exchange")
    a = report_json(args, [d])
    txt = export(args, "visualiser", [d], os.path.join(args.work, "exchange.visualiser.txt"))
    b = report_json(args, [txt])
    # In time order across threads: the visualiser shows a run up to the
    # last E line in file order.
    ts = [int(m.group(1)) for m in re.finditer(r"^(?:[SEY] \d+ \d+|D \d+) (-?\d+)", open(txt).read(), re.M)]
    check(ts == sorted(ts) and len(ts) > 10, f"the file's times never go down ({len(ts)} timed lines)")
    va, vb = values(a), values(b)
    check(set(va) == set(vb), "same functions after the round trip")
    for n, f in va.items():
        g = vb.get(n)
        if not g:
            continue
        # Each call's start and end are rounded to the µs: EI within 1 µs per call.
        tol = 1000 * f["calls"]
        check(abs(g["elapsed_inclusive_ns"] - f["elapsed_inclusive_ns"]) <= tol,
              f"{n}: EI {g['elapsed_inclusive_ns']} ~ {f['elapsed_inclusive_ns']} (±{tol})")
        check(g["calls"] == f["calls"], f"{n}: calls {g['calls']} = {f['calls']}")
        check(g["application_inclusive_ns"] is None, f"{n}: Application unavailable after import (null)")
    check(b["session"]["application_available"] is False, "the imported session says Application is unavailable")
    # A trace already in whole µs comes back exactly, and a second round trip changes nothing.
    fx = os.path.join(args.src, "traces", "visualiser-example.txt")
    t1 = export(args, "visualiser", [fx], os.path.join(args.work, "fixture.1.txt"))
    t2 = export(args, "visualiser", [t1], os.path.join(args.work, "fixture.2.txt"))
    strip = lambda p: [l for l in open(p) if not l.startswith("#")]
    check(strip(t1) == strip(t2), "export -> import -> export is stable")
    v0, v1 = values(report_json(args, [fx])), values(report_json(args, [t1]))
    check(all(v0[n]["elapsed_inclusive_ns"] == v1[n]["elapsed_inclusive_ns"] and
              v0[n]["elapsed_exclusive_ns"] == v1[n]["elapsed_exclusive_ns"] for n in v0),
          "whole-µs times come back exactly")
    return 0


def check_fixture(args):
    """The real file, by hand (µs):
    thread 0: f0 0..1000 -> EI = EE = 1000
              f1 1100..3000 = 1900, containing f2 1400..2000 = 600 -> f1 EE = 1300
    thread 1: f0 250..1500 = 1250 and 1600..2900 = 1300 -> EI 2550, 2 calls
              f1 1700..2900 = 1200 inside the second call -> f0 EE = 2550 - 1200 = 1350
    thread 3: declared, no calls.
    Session EI = 1000 + 1900 + 2550 = 5450; duration 3000 µs (the latest time)."""
    rep = report_json(args, [os.path.join(args.src, "traces", "visualiser-example.txt")])
    want = {
        "A function on First Thread": (1, 1000, 1000),
        "A second function on First Thread": (1, 1900, 1300),
        "Third Function on First Thread": (1, 600, 600),
        "A function on Second Thread": (2, 2550, 1350),
        "A second Function on Second Thread": (1, 1200, 1200),
    }
    got = {f["name"]: (f["calls"], f["elapsed_inclusive_ns"] / 1000, f["elapsed_exclusive_ns"] / 1000)
           for f in rep["functions"]}
    for n, w in want.items():
        check(got.get(n) == w, f"{n}: (calls, EI µs, EE µs) {got.get(n)} = {w}")
    check(len(got) == len(want), "no other function")
    check(rep["session"]["totals"]["elapsed_inclusive_ns"] == 5450000, "Session EI 5450 µs")
    check(all(f["application_inclusive_ns"] is None and f["application_exclusive_pct"] is None
              for f in rep["functions"]), "Application values are null")
    th = {t["name"]: t for t in rep["threads"]}
    check(set(th) == {"My First Thread", "My Second Thread", "A Third Thread"}, "the three threads")
    check(th["My First Thread"]["elapsed_inclusive_ns"] == 2900000 and
          th["My Second Thread"]["elapsed_inclusive_ns"] == 2550000, "threads: 2900 and 2550 µs")
    return 0


def check_bad_lines(args):
    os.makedirs(args.work, exist_ok=True)
    path = os.path.join(args.work, "bad.txt")
    with open(path, "w") as fh:
        fh.write("T 0 main thread\n"        # 1
                 "F 0 0 work\n"             # 2
                 "S 0 0 100\n"              # 3
                 "S 0 7 150\n"              # 4 undeclared function
                 "E 0 0 90\n"               # 5 time goes back
                 "X 1 2\n"                  # 6 unknown type
                 "S 1 0 200\n"              # 7 undeclared thread
                 "E 0 0 abc\n"              # 8 not a number
                 "F 0 0 again\n"            # 9 declared twice
                 "C 0 depth\n"              # 10
                 "D 0 120 99999999999\n"    # 11 not 32-bit
                 "D 0 130 -4\n"             # 12
                 "E 0 0 400\n")             # 13
    p = run([os.path.join(args.bin, "instr-report"), "--format", "json", "--units", "ns", path], ok=(3,))
    lines = [l for l in p.stderr.splitlines() if "bad.txt:" in l]
    print(p.stderr)
    nums = [int(re.search(r"bad\.txt:(\d+): ", l).group(1)) for l in lines]
    check(nums == [4, 5, 6, 7, 8, 9, 11], f"bad lines reported as file:line: reason: {nums}")
    check(all(re.search(r"bad\.txt:\d+: \S", l) for l in lines), "each with a reason")
    rep = json.loads(p.stdout)
    f = values(rep).get("work")
    check(f is not None and f["elapsed_inclusive_ns"] == 300000 and f["calls"] == 1,
          "the rest is read: work 100..400 µs")
    return 0


# ---- the API -----------------------------------------------------------------

def check_api(args):
    os.makedirs(args.work, exist_ok=True)
    for old in glob.glob(os.path.join(args.work, "*.instr")):
        os.remove(old)
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(args.work, "api.%p.instr"))
    p = run([args.exe], env=env, cwd=args.work)
    check(p.stdout.strip() == "frames 5", "the program runs as usual")
    dumps = glob.glob(os.path.join(args.work, "*.instr"))
    check(len(dumps) == 1, "one dump")
    if len(dumps) != 1:
        return 0
    text = run([os.path.join(args.bin, "instr-dump"), dumps[0]]).stdout
    labels = dict(re.findall(r"^label (\d+) (.*)$", text, re.M))
    names = {v.strip('"'): k for k, v in labels.items()}
    for l in ("before main", "Frame Start", "queue depth", "Worker Tick", "worker depth"):
        check(l in names, f"label '{l}' recorded once")
    marks = re.findall(r"^(\d+) \d+ mark (\d+)", text, re.M)
    ctrs = re.findall(r"^(\d+) \d+ counter (\d+) (-?\d+)", text, re.M)
    count = lambda lab: sum(1 for t, l in marks if l == names.get(lab))
    check(count("Frame Start") == 5 and count("Worker Tick") == 5 and count("before main") == 1,
          "marks: 5 frames, 5 worker ticks, one before main")
    check([int(v) for t, l, v in ctrs if l == names.get("queue depth")] == [0, 10, 20, 30, 40], "queue depth values")
    check([int(v) for t, l, v in ctrs if l == names.get("worker depth")] == [0, -1, -2, -3, -4], "worker depth values")
    check(len({t for t, l in marks if l == names.get("Frame Start")} &
              {t for t, l in marks if l == names.get("Worker Tick")}) == 0, "marks on their own threads")
    rep = report_json(args, dumps)
    check(not [f for f in rep["functions"] if f["name"].startswith("instr_")],
          "no frame for instr_event/instr_counter: they only split intervals")
    check(values(rep)["work"]["calls"] == 10, "work called 10 times")
    ch = validate_trace(export(args, "chrome", dumps, os.path.join(args.work, "api.json")))
    check(sum(1 for e in ch if e["ph"] == "i" and e["name"] == "Frame Start") == 5, "chrome: 5 Frame Start instants")
    check(sum(1 for e in ch if e["ph"] == "C" and e["name"] == "queue depth") == 5, "chrome: queue depth counter track")
    vis = open(export(args, "visualiser", dumps, os.path.join(args.work, "api.txt"))).read()
    check(len(re.findall(r"^Y ", vis, re.M)) >= 11 and len(re.findall(r"^D ", vis, re.M)) == 10
          and re.search(r"^C \d+ queue depth$", vis, re.M) and re.search(r"^V \d+ \d+ Frame Start$", vis, re.M),
          "visualiser: V/Y events and C/D counters")
    return 0


def check_api_plain(args):
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(args.work, "plain.%p.instr"))
    p = run([args.exe], env=env, cwd=args.work)
    check(p.stdout.strip() == "frames 5", "built without the plugin: links and runs")
    check(not glob.glob(os.path.join(args.work, "*.instr")), "and records nothing")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--exe")
    args = ap.parse_args()
    fn = {"callgrind": check_callgrind, "callgrind-lines": check_callgrind_lines, "chrome": check_chrome,
          "chrome-thin": check_chrome_thin, "folded": check_folded,
          "roundtrip": check_roundtrip, "fixture": check_fixture, "bad-lines": check_bad_lines,
          "api": check_api, "api-plain": check_api_plain}[args.check]
    rc = fn(args)
    return exit_status(rc)


if __name__ == "__main__":
    sys.exit(main())

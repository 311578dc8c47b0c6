#!/usr/bin/env python3
"""The walk of a dump under unusual but undamaged input.

  check-walk.py CHECK --bin BIN --work DIR

CHECK: clockback  a chunk whose base tick is earlier than the previous
                  event (a clock that went back): a warning on stderr, the
                  report written, exit 0 (nothing is damaged); and calls
                  that nest on the stack nest on the HTML and Chrome
                  timelines across such chunks (none ends before it
                  starts or outlasts its caller)
       deep       --view calltree on a 100,000-deep recursion takes about
                  as long as on a flat trace with as many calls and call
                  paths (100,000 functions called by main): linear in the
                  depth (the text tree indented every level: quadratic)
       deep-folded  --export folded (merged, and rooted at each thread) of a
                  recursion 4N deep takes under 8x the time of N deep
                  (linear: 4x; a line per level holding every frame above
                  it: 16x), and the levels past the deepest line kept
                  weigh what they weighed"""
import argparse, json, os, re, resource, struct, subprocess, sys

HEADER = """instr-dump 1
header pid=100 ppid=1 exe=/bin/app start_tsc=0 start_ns=0 end_tsc=100000000 end_ns=100000000 detector=rseq_cs sees=sched,signal flags=complete,tsc_invariant{extra}
module 0 /bin/app
function 1 module=0 line=3 file=app.c name=main
"""
DUMP_HEADER_SIZE, CHUNK_MAGIC = 4096, 0x4b484349


def dump(args, name, text):
    os.makedirs(args.work, exist_ok=True)
    src, out = os.path.join(args.work, name + ".txt"), os.path.join(args.work, name + ".instr")
    with open(src, "w") as fh:
        fh.write(text)
    subprocess.run([os.path.join(args.bin, "instr-dump"), "--from-text", src, "-o", out], check=True)
    return out


def clocked_back(args, name, body, seqs):
    """A dump of body whose thread-0 events chunks numbered in seqs start 15
    ticks before the event that ended the chunk before them; None if a
    chunk is missing."""
    path = dump(args, name, HEADER.format(extra=" chunk_size=256") + "\n".join(body) + "\n")
    data = bytearray(open(path, "rb").read())
    off, todo = DUMP_HEADER_SIZE, set(seqs)
    while off + 64 <= len(data):
        magic, kind, _, thread, _, seq = struct.unpack_from("<IHHIII", data, off)
        if magic == CHUNK_MAGIC and kind == 1 and thread == 0 and seq in todo:
            base = struct.unpack_from("<Q", data, off + 24)[0]
            struct.pack_into("<Q", data, off + 24, base - 15)
            todo.discard(seq)
        off += 256
    if todo:
        return None
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def html_calls(path):
    """(start, end, depth) of the calls embedded in an HTML export, by thread."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="instr-data">(.*?)</script>', text, re.S)
    out = {}
    for p in json.loads(m.group(1))["procs"]:
        for th in p["threads"]:
            c, s = th["calls"], 0
            for i in range(0, len(c), 7):  # 7 numbers a call (export-html.c)
                s += c[i]
                out.setdefault(th["tid"], []).append((s, s + c[i + 1], c[i + 4]))
    return out


def unnested(calls):
    """Calls (start, end, depth), sorted by start, that end before they
    start or are not within the call one level up."""
    bad, open_ = 0, []
    for s, e, dp in calls:
        del open_[dp:]
        if e < s or (dp and (len(open_) < dp or not (open_[dp - 1][0] <= s and e <= open_[dp - 1][1]))):
            bad += 1
        open_.append((s, e))
    return bad


def chrome_unnested(path):
    """Chrome complete events of one thread not within the enclosing one
    (the viewers nest X events by time)."""
    evs = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    bad, by = 0, {}
    for e in evs:
        by.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["dur"]))
    for lst in by.values():
        lst.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e, d in lst:
            while stack and stack[-1] <= s and not (stack[-1] == s and e == s):
                stack.pop()
            if d < 0 or (stack and e > stack[-1]):
                bad += 1
            stack.append(e)
    return bad


def check_clockback(args):
    ev = ["function 2 module=0 line=9 file=app.c name=foo", "thread 0 tid=100 name=main", "0 100 enter 1"]
    t = 100
    for i in range(200):
        t += 10
        ev.append(f"0 {t} enter 2")
        t += 10
        ev.append(f"0 {t} exit")
    ev.append(f"0 {t + 10} exit")
    # Thread 0's second events chunk starts 15 ticks before the event that
    # ended the first one.
    path = clocked_back(args, "clockback", ev, [1])
    if not path:
        print("FAIL  no second events chunk found")
        return 1
    p = subprocess.run([os.path.join(args.bin, "instr-report"), path], capture_output=True, text=True)
    print(p.stderr)
    ok = p.returncode == 0 and "clock went back" in p.stderr and "foo" in p.stdout
    print(("ok    " if ok else "FAIL  ") + f"clock went back: warning, report, exit {p.returncode} (want 0)")

    # main -> foo -> bar, each step 10 ticks, and every chunk after the
    # first 15 ticks early: the chunks start at every phase of the pattern,
    # a foo's exit among them (told as is, foo would end before its bar).
    ev = ["function 2 module=0 line=9 file=app.c name=foo", "function 3 module=0 line=19 file=app.c name=bar",
          "thread 0 tid=100 name=main", "0 100 enter 1"]
    t = 100
    for i in range(400):
        for e in ("enter 2", "enter 3", "exit", "exit"):
            t += 10
            ev.append(f"0 {t} {e}")
    ev.append(f"0 {t + 10} exit")
    path = clocked_back(args, "clockback-nested", ev, range(1, 9))
    if not path:
        print("FAIL  fewer than 9 events chunks")
        return 1
    html, chrome = os.path.join(args.work, "clockback.html"), os.path.join(args.work, "clockback.json")
    for fmt, out in (("html", html), ("chrome", chrome)):
        subprocess.run([os.path.join(args.bin, "instr-report"), "--export", fmt, "-o", out, path],
                       check=True, capture_output=True)
    calls = html_calls(html)[100]
    bad = unnested(sorted(calls, key=lambda c: (c[0], c[2])))
    good = len(calls) == 801 and bad == 0
    ok &= good
    print(("ok    " if good else "FAIL  ") + f"html: {len(calls)} calls (want 801), {bad} not within their caller")
    bad = chrome_unnested(chrome)
    ok &= bad == 0
    print(("ok    " if bad == 0 else "FAIL  ") + f"chrome: {bad} calls not within their caller")
    return 0 if ok else 1


def cpu_of(cmd, **kw):
    """The CPU time (user + system) of running cmd: unlike the wall time,
    not stretched by the other tests CTest -j runs beside it."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, timeout=600, **kw)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def timed(args, path):
    """The best of 3 (CPU time)."""
    return min(cpu_of([os.path.join(args.bin, "instr-report"), "--view", "calltree", path],
                      stdout=subprocess.DEVNULL) for _ in range(3))


def check_deep(args):
    n = 100000
    deep = ["function 2 module=0 line=9 file=app.c name=rec", "thread 0 tid=100 name=main", "0 1 enter 1"]
    t = 1
    for i in range(n):
        t += 10
        deep.append(f"0 {t} enter 2")
    for i in range(n):
        t += 10
        deep.append(f"0 {t} exit")
    deep.append(f"0 {t + 10} exit")
    flat = [f"function {i + 2} module=0 line={i + 10} file=app.c name=f{i}" for i in range(n)]
    flat += ["thread 0 tid=100 name=main", "0 1 enter 1"]
    t = 1
    for i in range(n):
        flat.append(f"0 {t + 10} enter {i + 2}")
        flat.append(f"0 {t + 20} exit")
        t += 20
    flat.append(f"0 {t + 10} exit")
    d = dump(args, "deep", HEADER.format(extra="") + "\n".join(deep) + "\n")
    f = dump(args, "flat", HEADER.format(extra="") + "\n".join(flat) + "\n")
    td, tf = timed(args, d), timed(args, f)
    ok = td < 4 * tf + 1
    print(("ok    " if ok else "FAIL  ") + f"calltree: 100,000-deep {td:.2f} s, flat {tf:.2f} s of CPU (want deep < 4x flat + 1 s)")
    return 0 if ok else 1


def deep_trace(args, n):
    ev = ["function 2 module=0 line=9 file=app.c name=rec", "thread 0 tid=100 name=main", "0 1 enter 1"]
    t = 1
    for i in range(n):
        t += 10
        ev.append(f"0 {t} enter 2")
    for i in range(n):
        t += 10
        ev.append(f"0 {t} exit")
    ev.append(f"0 {t + 10} exit")
    return dump(args, f"deep{n}", HEADER.format(extra="") + "\n".join(ev) + "\n")


def check_deep_folded(args):
    n = 25000
    small, big = deep_trace(args, n), deep_trace(args, 4 * n)
    ok = True
    for extra in ([], ["--folded-root=thread"]):
        times = []
        for d in (small, big):
            out = os.path.join(args.work, "folded.txt")
            best = min(cpu_of([os.path.join(args.bin, "instr-report"), "--export", "folded", "--units", "ticks",
                               *extra, "-o", out, d]) for _ in range(3))  # the best of 3, CPU time
            times.append(best)
        ratio = times[1] / times[0]
        good = ratio < 8
        ok &= good
        print(("ok    " if good else "FAIL  ") + f"folded {' '.join(extra)}: {n} deep {times[0]:.2f} s, "
              f"{4 * n} deep {times[1]:.2f} s of CPU (ratio {ratio:.1f}, want < 8)")
        # main weighs 10 + 10 ticks, each rec level 10 + 10 but the
        # innermost 10: 20 * 4n + 10 in all.  A line holds 512 frames at
        # most (plus "[deeper frames]"): the root frames (process, thread)
        # and main leave 511 or 509 levels of rec, the rest is one line.
        lines = open(out).read().splitlines()
        w = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in lines}
        deeper = [k for k in w if k.endswith(";[deeper frames]")]
        frames = max(len(k.split(";")) for k in w)
        kept = 511 - (2 if extra else 0)
        good = (len(deeper) == 1 and sum(w.values()) == 20 * 4 * n + 10 and frames == 513 and
                len(lines) == kept + 2 and w[deeper[0]] == 20 * (4 * n - kept) - 10)
        ok &= good
        print(("ok    " if good else "FAIL  ") + f"folded {' '.join(extra)}: {len(lines)} lines of at most "
              f"{frames} frames, total {sum(w.values())}, deeper {[w[k] for k in deeper]}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    return {"clockback": check_clockback, "deep": check_deep,
            "deep-folded": check_deep_folded}[args.check](args)


if __name__ == "__main__":
    sys.exit(main())

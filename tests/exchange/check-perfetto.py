#!/usr/bin/env python3
"""--export perfetto, checked two ways:

  check-perfetto.py decode --bin BIN --src SRC --work DIR [--exe EXE...]
      our own reading of the TracePacket stream (the wire format decoded
      here from scratch, Perfetto's field numbers, compressed_packets
      expanded with zlib in their place): the sequences' packet
      defaults (track, clock) and incremental clocks (timestamps as deltas,
      ClockSnapshot) applied as trace processor does, every event on a
      described track, every interned id defined on its sequence first,
      slices rebuilt from begin/end per thread: per function the calls and
      Elapsed Inclusive (outermost call of a recursion) equal the report's,
      per thread the calls equal the report's, the slices (thread, name,
      start, duration) are the chrome export's, to the ns, and the frames
      open when their thread ended are the slices marked incomplete;
      --no-compress writes the same trace without compressed_packets, the
      default's batches are at most about 1 MB, and a real program's export
      is no bigger than its dump.
  check-perfetto.py trace-processor ...
      the real consumer: Perfetto's trace processor (trace_processor_shell
      on PATH or in $TRACE_PROCESSOR, or the Python package `perfetto`)
      loads our perfetto trace and our chrome JSON; SQL over its slice and
      thread tables gives, per thread and function, the report's calls and
      our decoded durations, and the same for both files.

Each on the golden exchange trace (exact ns) and on the real instrumented
programs given with --exe.  Exit 77 = skipped (no trace processor), with why.
"""
import argparse, csv, glob, io, json, os, shutil, subprocess, sys, zlib

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures, run  # noqa: E402
from exchange_common import export, inputs, pb_fields as fields, report  # noqa: E402


# ---- a protobuf reader ------------------------------------------------------------

def msg(b):
    m = {}
    for f, _, v in fields(b):
        m.setdefault(f, []).append(v)
    return m


def one(m, f, default=None):
    return m[f][0] if f in m else default


def s64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def packets(data, problems, stats):
    """The Trace's packets in order, those of a compressed_packets (a
    zlib-compressed Trace) in its place, as trace processor reads them."""
    for f, wt, pkt in fields(data):
        if f != 1 or wt != 2:
            problems.append(f"Trace field {f}")
            continue
        p = msg(pkt)
        if 50 in p:
            if len(p) > 1:
                problems.append(f"fields {sorted(p)} beside compressed_packets (trace processor ignores them)")
            inner = zlib.decompress(p[50][0])
            stats["batches"] += 1
            stats["largest batch"] = max(stats["largest batch"], len(inner))
            yield from packets(inner, problems, stats)
        else:
            yield p


def decode(path):
    """The trace as Perfetto reads it: tracks, slices per thread track,
    instants, counters; the problems found on the way."""
    data = open(path, "rb").read()
    tracks, seqs, events, problems = {}, {}, [], []
    stats = {"batches": 0, "largest batch": 0}
    for p in packets(data, problems, stats):
        seq = one(p, 10)
        flags = one(p, 13, 0)
        if seq is None:
            problems.append("packet without a sequence id")
        if flags & 1:
            seqs[seq] = {"names": {}, "cats": {}, "locs": {}, "defaults": {}, "clocks": {}}
        st = seqs.get(seq)
        if st is None:
            problems.append(f"sequence {seq} used before its state was cleared")
            st = seqs.setdefault(seq, {"names": {}, "cats": {}, "locs": {}, "defaults": {}, "clocks": {}})
        if 59 in p:
            d = msg(p[59][0])
            ted = msg(d[11][0]) if 11 in d else {}
            st["defaults"] = {"clock": one(d, 58), "track": one(ted, 11)}
        if 12 in p:
            idata = msg(p[12][0])
            for key, field in (("cats", 1), ("names", 2)):
                for e in idata.get(field, []):
                    e = msg(e)
                    st[key][one(e, 1)] = one(e, 2).decode()
            for e in idata.get(4, []):
                e = msg(e)
                st["locs"][one(e, 1)] = (one(e, 2, b"").decode(), one(e, 4))
        if 6 in p:
            clocks = [msg(c) for c in msg(p[6][0]).get(1, [])]
            boot = [one(c, 2) for c in clocks if one(c, 1) == 6]
            for c in clocks:
                cid = one(c, 1)
                if cid >= 64:
                    if not boot:
                        problems.append(f"clock {cid} of sequence {seq} not related to BOOTTIME")
                        continue
                    # (the clock's value now, its offset to BOOTTIME, incremental)
                    st["clocks"][cid] = [one(c, 2, 0), boot[0] - one(c, 2, 0), bool(one(c, 3, 0))]
            continue  # trace processor reads nothing else of a ClockSnapshot packet
        if 60 in p:
            td = msg(p[60][0])
            uuid = one(td, 1)
            if uuid in tracks:
                problems.append(f"track {uuid} described twice")
            t = {"uuid": uuid, "parent": one(td, 5), "name": one(td, 2, b"").decode(), "kind": "track"}
            if 3 in td:
                pd = msg(td[3][0])
                t.update(kind="process", pid=one(pd, 1), pname=one(pd, 6, b"").decode(),
                         cmdline=[a.decode() for a in pd.get(2, [])])
            if 4 in td:
                th = msg(td[4][0])
                t.update(kind="thread", pid=one(th, 1), tid=one(th, 2), tname=one(th, 5, b"").decode())
            if 8 in td:
                t.update(kind="counter")
            tracks[uuid] = t
        if 11 in p:
            te = msg(p[11][0])
            ts, clock = one(p, 8), one(p, 58, st["defaults"].get("clock"))
            if ts is not None and clock is not None and clock != 6:
                c = st["clocks"].get(clock)
                if c is None:
                    problems.append(f"timestamp on clock {clock}, not in a snapshot of sequence {seq}")
                else:
                    c[0] = c[0] + ts if c[2] else ts
                    ts = c[0] + c[1]
            ev = {"ts": ts, "type": one(te, 9), "track": one(te, 11, st["defaults"].get("track"))}
            if 23 in te:
                ev["name"] = one(te, 23).decode()
            for c in te.get(22, []):
                ev["cat"] = c.decode()
            if 10 in te:
                iid = one(te, 10)
                if iid not in st["names"]:
                    problems.append(f"name iid {iid} not interned on sequence {seq}")
                ev["name"] = st["names"].get(iid)
            for c in te.get(3, []):
                if c not in st["cats"]:
                    problems.append(f"category iid {c} not interned")
                ev["cat"] = st["cats"].get(c)
            if 34 in te:
                ev["loc"] = st["locs"].get(one(te, 34))
                if ev["loc"] is None:
                    problems.append("source location not interned")
            if 30 in te:
                ev["value"] = s64(one(te, 30))
            ev["debug"] = {one(msg(d), 10).decode(): one(msg(d), 2) for d in te.get(4, [])}
            events.append(ev)
    slices, instants, counters, open_ = [], [], [], {}
    for ev in events:
        t = tracks.get(ev["track"])
        if t is None:
            problems.append(f"event on undescribed track {ev['track']}")
            continue
        if ev["type"] in (1, 2, 3) and t["kind"] not in ("thread", "track"):
            problems.append(f"slice event on a {t['kind']} track")
        if t["kind"] == "track" and t["parent"] not in tracks:
            problems.append(f"track {t['uuid']} under an undescribed track {t['parent']}")
        if ev["type"] == 4 and t["kind"] != "counter":
            problems.append("counter value on a non-counter track")
        # a thread's slices by (pid, tid); a named track's by (None, its name)
        key = (t.get("pid"), t.get("tid")) if t["kind"] != "track" else (None, t["name"])
        if ev["type"] == 1:
            open_.setdefault(key, []).append(ev)
        elif ev["type"] == 2:
            stack = open_.get(key)
            if not stack:
                problems.append(f"end without begin on {key}")
                continue
            b = stack.pop()
            if ev["ts"] < b["ts"]:
                problems.append("slice ends before it begins")
            slices.append({"pid": key[0], "tid": key[1], "name": b["name"], "ts": b["ts"], "dur": ev["ts"] - b["ts"],
                           "cat": b.get("cat"), "loc": b.get("loc"), "outer": [s["name"] for s in stack],
                           "incomplete": bool(ev["debug"].get("incomplete"))})
        elif ev["type"] == 3:
            instants.append({"pid": key[0], "tid": key[1], "name": ev["name"], "ts": ev["ts"]})
        elif ev["type"] == 4:
            counters.append({"name": t["name"], "parent": t["parent"], "ts": ev["ts"], "value": ev["value"]})
    for key, stack in open_.items():
        if stack:
            problems.append(f"{len(stack)} slices never ended on {key}")
    return {"tracks": tracks, "slices": slices, "instants": instants, "counters": counters,
            "problems": problems, "bytes": len(data), **stats}


def chrome_slices(path):
    """(pid, tid, name, ts ns, dur ns) of the chrome export's X events."""
    ev = json.load(open(path))["traceEvents"]
    return sorted((e["pid"], e["tid"], e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000))
                  for e in ev if e["ph"] == "X")


def inclusive(slices):
    """Per function name: calls and the summed duration of its outermost calls."""
    calls, incl = {}, {}
    for s in slices:
        calls[s["name"]] = calls.get(s["name"], 0) + 1
        if s["name"] not in s["outer"]:
            incl[s["name"]] = incl.get(s["name"], 0) + s["dur"]
    return calls, incl


def check_decode(args):
    for name, dumps in inputs(args, traces=("cpu",), exe_args=("an argument",)):
        rep = report(args, dumps)
        tr = decode(export(args, dumps, "perfetto", os.path.join(args.work, name + ".perfetto-trace")))
        chrome = export(args, dumps, "chrome", os.path.join(args.work, name + ".json"))
        check(not tr["problems"], f"{name}: a well-formed stream {tr['problems'][:5]}")
        calls, incl = inclusive(tr["slices"])
        names = [f["name"] for f in rep["functions"]]
        bad = []
        for f in rep["functions"]:
            n = f["name"]
            if names.count(n) > 1:
                continue  # slices are named by function name: two rows with one name are one
            # each timestamp rounded to the ns: a call's length within 1 ns
            if calls.get(n, 0) != f["calls"] or abs(incl.get(n, 0) - f["elapsed_inclusive_ns"]) > 1 + f["calls"]:
                bad.append((n, calls.get(n), incl.get(n), f["calls"], f["elapsed_inclusive_ns"]))
        check(not bad, f"{name}: per function calls and Elapsed Inclusive = the report's ({len(names)}) {bad[:3]}")
        per_thread = {}
        for s in tr["slices"]:
            per_thread[(s["pid"], s["tid"])] = per_thread.get((s["pid"], s["tid"]), 0) + 1
        want = {(t["pid"], t["tid"]): t["calls"] for t in rep["threads"] if t["calls"]}
        check(per_thread == want, f"{name}: slices per thread = the report's calls per thread {per_thread} {want}")
        ours = sorted((s["pid"], s["tid"], s["name"], s["ts"], s["dur"]) for s in tr["slices"])
        theirs = chrome_slices(chrome)
        same = len(ours) == len(theirs) and all(
            a[:3] == b[:3] and abs(a[3] - b[3]) <= 1 and abs(a[4] - b[4]) <= 2 for a, b in zip(ours, theirs))
        check(same, f"{name}: the slices are the chrome export's ({len(ours)} and {len(theirs)})")
        open_at_end = sum(p["open_frames_at_end"] for p in rep["session"]["programs"])
        chrome_incomplete = sum(1 for e in json.load(open(chrome))["traceEvents"]
                                if e["ph"] in "XE" and e.get("args", {}).get("incomplete"))
        incomplete = sum(s["incomplete"] for s in tr["slices"])
        check(incomplete == open_at_end == chrome_incomplete,
              f"{name}: {incomplete} slices marked incomplete = the report's open frames at the end "
              f"({open_at_end}) = the chrome export's ({chrome_incomplete})")
        if name == "cpu":
            check(open_at_end > 0, f"cpu: the trace has frames open at the end ({open_at_end})")
        threads = [t for t in tr["tracks"].values() if t["kind"] == "thread"]
        procs = {t["uuid"]: t for t in tr["tracks"].values() if t["kind"] == "process"}
        check(len(procs) == len(rep["session"]["programs"]) and
              all(t["parent"] in procs and procs[t["parent"]]["pid"] == t["pid"] for t in threads),
              f"{name}: one process track per dump, each thread track under its process")
        cmds = sorted(p["cmdline"] for p in procs.values())
        check(cmds == sorted(p["command"] or [] for p in rep["session"]["programs"]),
              f"{name}: process command lines {cmds[:2]}")
        if len(tr["slices"]) > 1000:
            check(tr["bytes"] < 0.5 * os.path.getsize(chrome), f"{name}: {tr['bytes']} bytes "
                  f"({tr['bytes'] / len(tr['slices']):.1f} a call), under half the chrome JSON's {os.path.getsize(chrome)}")
        # --no-compress: the same packets, none in compressed_packets; the
        # default compresses them in batches of about 1 MB (a reader holds
        # one at a time).
        unc = os.path.join(args.work, name + ".uncompressed.perfetto-trace")
        run([os.path.join(args.bin, "instr-report"), "--export", "perfetto", "--no-compress", "-o", unc, *dumps],
            ok=(0, 3))
        plain = decode(unc)
        check(plain["batches"] == 0 and not plain["problems"] and
              all(plain[k] == tr[k] for k in ("tracks", "slices", "instants", "counters")),
              f"{name}: --no-compress writes the same trace, no compressed_packets ({plain['bytes']} bytes)")
        check(1 <= tr["batches"] and tr["largest batch"] < 2 << 20 and
              (tr["batches"] > 1 or plain["bytes"] < 2 << 20),
              f"{name}: compressed in batches of at most about 1 MB ({tr['batches']}, the largest "
              f"{tr['largest batch']} bytes, of {plain['bytes']})")
        if name not in ("exchange", "cpu"):
            # A real program's dump: the export is no bigger (issue 23: it
            # was 3.9 times as big).
            size = sum(os.path.getsize(d) for d in dumps)
            check(tr["bytes"] <= size, f"{name}: the export, {tr['bytes']} bytes "
                  f"({tr['bytes'] / max(1, len(tr['slices'])):.2f} a call), is no bigger than the dump ({size})")
        if name == "exchange":
            check(sorted((t["tid"], t["tname"]) for t in threads) == [(100, "main"), (101, "worker")],
                  "exchange: thread tracks main 100 and worker 101")
            check([p["pname"] for p in procs.values()] == ["app"] and [p["pid"] for p in procs.values()] == [42],
                  "exchange: process app, pid 42")
            rec = [s for s in tr["slices"] if s["name"] == "rec"]
            check(all(s["loc"] == ("app.c", 40) and s["cat"] == "function" for s in rec),
                  "exchange: rec's source location app.c:40, category function")
            check({s["cat"] for s in tr["slices"] if s["name"] == "qsort"} == {"call"},
                  "exchange: the call-site frame (qsort) in category call")
            main = [s for s in tr["slices"] if s["name"] == "main"]
            check([(s["ts"], s["dur"]) for s in main] == [(0, 10000)], f"exchange: main 0..10000 ns {main}")
            check(sorted((i["tid"], i["ts"], i["name"]) for i in tr["instants"]) ==
                  [(100, 500, "Frame Start"), (101, 3000, "Frame Start")], f"exchange: the marks {tr['instants']}")
            check(sorted((c["ts"], c["name"], c["value"]) for c in tr["counters"]) ==
                  [(2000, "queue depth", 3), (4000, "queue depth", -2)], f"exchange: the counter {tr['counters']}")
            # Set by main at 2000 and by the worker at 4000: one track per
            # thread and counter, under the thread that set it.
            tids = {t["uuid"]: t["tid"] for t in threads}
            check(sorted((tids.get(c["parent"]), c["value"]) for c in tr["counters"]) == [(100, 3), (101, -2)],
                  f"exchange: a counter track per thread, under the thread's {tr['counters']}")
        elif name != "cpu":
            check(all(p["cmdline"][1:] == ["an argument"] for p in procs.values()),
                  f"{name}: the command line's argument")
            if "api" in name:
                check(any(i["name"] == "Frame Start" for i in tr["instants"]) and
                      any(c["name"] == "worker depth" and c["value"] < 0 for c in tr["counters"]),
                      f"{name}: marks and (negative) counter values")
    # A switchable run's gaps (hooks off before 200 ns and from 500 to 800):
    # a slice each on a track "recording off" under the process's.
    sw = os.path.join(args.work, "switched.instr")
    run([os.path.join(args.bin, "instr-dump"), "--from-text",
         os.path.join(args.src, "..", "report", "traces", "switched.txt"), "-o", sw])
    tr = decode(export(args, [sw], "perfetto", os.path.join(args.work, "switched.perfetto-trace")))
    gaps = [(g["ts"], g["dur"], g["cat"]) for g in tr["slices"] if g["name"] == "recording off"]
    off = [t for t in tr["tracks"].values() if t["name"] == "recording off"]
    procs = {t["uuid"]: t for t in tr["tracks"].values() if t["kind"] == "process"}
    check(not tr["problems"] and gaps == [(0, 200, "instr"), (500, 300, "instr")] and len(off) == 1 and
          procs.get(off[0]["parent"], {}).get("pid") == 100,
          f"switched: the hooks' gaps as slices on a track under the process {gaps} {tr['problems'][:3]}")


# ---- Perfetto's trace processor ------------------------------------------------------

QUERY = """select t.tid as tid, s.name as name, count(*) as n, sum(s.dur) as total
from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)
group by t.tid, s.name order by t.tid, s.name"""


def trace_processor():
    """A function (trace path, SQL) -> rows as dicts, or None and why not."""
    shell = os.environ.get("TRACE_PROCESSOR") or shutil.which("trace_processor_shell") or \
        shutil.which("trace_processor")
    if shell:
        def query(path, sql):
            q = os.path.join(os.path.dirname(path) or ".", "query.sql")
            open(q, "w").write(sql)
            p = run([shell, "-q", q, path])
            lines = [l for l in p.stdout.splitlines() if l.strip()]
            return list(csv.DictReader(io.StringIO("\n".join(lines))))
        return query, None
    try:
        from perfetto.trace_processor import TraceProcessor  # the pip package `perfetto`
    except ImportError:
        return None, ("no trace processor: neither trace_processor_shell (on PATH or in $TRACE_PROCESSOR) nor "
                      "the Python package perfetto (pip install perfetto; it fetches the shell binary on "
                      "first use) is installed; Debian 12 and npm do not ship it")

    def query(path, sql):
        tp = TraceProcessor(trace=path)
        try:
            return [dict(r.__dict__) for r in tp.query(sql)]
        finally:
            tp.close()
    return query, None


def check_trace_processor(args):
    query, why = trace_processor()
    if not query:
        print("SKIP: " + why)
        return SKIP
    for name, dumps in inputs(args, traces=("cpu",), exe_args=("an argument",)):
        rep = report(args, dumps)
        pf = export(args, dumps, "perfetto", os.path.join(args.work, name + ".perfetto-trace"))
        chrome = export(args, dumps, "chrome", os.path.join(args.work, name + ".json"))
        ours = {}
        for s in decode(pf)["slices"]:
            k = (s["tid"], s["name"])
            n, tot = ours.get(k, (0, 0))
            ours[k] = (n + 1, tot + s["dur"])
        for what, path in (("perfetto", pf), ("chrome", chrome)):
            got = {(int(r["tid"]), r["name"]): (int(r["n"]), int(r["total"])) for r in query(path, QUERY)}
            same = got.keys() == ours.keys() and all(
                got[k][0] == ours[k][0] and abs(got[k][1] - ours[k][1]) <= 2 * ours[k][0] for k in ours)
            check(same, f"{name}: trace processor reads the {what} file: per thread and function, calls and "
                        f"summed durations {sorted(got.items())[:3]} vs {sorted(ours.items())[:3]}")
            calls = {}
            for (tid, fn), (n, _) in got.items():
                calls[fn] = calls.get(fn, 0) + n
            names = [f["name"] for f in rep["functions"]]
            check(all(calls.get(f["name"], 0) == f["calls"] for f in rep["functions"] if names.count(f["name"]) == 1),
                  f"{name}: {what} in trace processor: calls per function = the report's")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["decode", "trace-processor"])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--exe", action="append", default=[])
    args = ap.parse_args()
    if args.mode == "decode":
        check_decode(args)
    elif check_trace_processor(args) == SKIP:
        return SKIP
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

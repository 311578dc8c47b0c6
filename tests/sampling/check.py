#!/usr/bin/env python3
"""Sampling tests: check.py SCENARIO INSTR_SAMPLE INSTR_REPORT INSTR_DUMP SPLIT MT DENY_PERF [CLOCKS].

Real runs are compared with generous bounds (samples are statistics); the
synthetic dump (exact) with exact numbers.  Exit 0 pass, 1 fail, 77 skip.
"""
import json
import re
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

scenario, SAMPLE, REPORT, DUMP, SPLIT, MT, DENY = sys.argv[1:8]
CLOCKS = sys.argv[8] if len(sys.argv) > 8 else None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check_quiet as check, failures, skip_unless_unprivileged_perf  # noqa: E402
from instrtest import checking_as, for_every_identity, identities  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def report_json(dumps, *extra):
    r = run([REPORT, "--format", "json", *extra, *dumps])
    if r.returncode not in (0, 3):
        raise SystemExit("instr-report failed: %s" % r.stderr)
    return json.loads(r.stdout), r


def dump_flags(path):
    with open(path, "rb") as f:
        h = f.read(32)
    return struct.unpack_from("<I", h, 20)[0]


def rows_by_name(rows):
    return {r["name"]: r for r in rows}


def sample_split(work, seconds="1.0", extra=()):
    r = run([SAMPLE, *extra, "-o", os.path.join(work, "split.%p.instr"), SPLIT, seconds])
    check(r.returncode == 0, "instr-sample split exits 0 (got %d: %s)" % (r.returncode, r.stderr))
    dumps = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".instr"))
    check(len(dumps) == 1, "one dump for one process (got %s)" % dumps)
    return dumps


def nm_symbols(binary):
    out = run(["nm", binary]).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            syms[parts[2]] = int(parts[0], 16)
    return syms


def exec_segment(binary):
    """(vaddr, offset) of the executable PT_LOAD."""
    out = run(["readelf", "-lW", binary]).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            return int(f[2], 16), int(f[1], 16)
    raise SystemExit("no executable segment in " + binary)


def scenario_exact(work):
    """The spec's counting on a hand-written dump: distinct functions per
    stack, recursion once, top = exclusive, percents of total samples."""
    syms = nm_symbols(SPLIT)
    heavy = next(a for n, a in syms.items() if n.startswith("heavy"))
    light, main = syms["light"], syms["main"]
    vaddr, off = exec_segment(SPLIT)
    start, pgoff = vaddr & ~0xFFF, off & ~0xFFF
    L, H, M = light + 1, heavy + 1, main + 2  # a leaf PC, and return addresses inside
    lines = [
        "instr-dump 1",
        "header pid=10 ppid=1 exe=/x/split start_tsc=0 start_ns=0 end_tsc=2000000000 end_ns=2000000000 flags=complete,sampled",
        "module 1 %s" % SPLIT,
        "thread 0 tid=10 name=main",
        "thread 1 tid=11 name=worker",
        "sampling rate=1000 period=1000000 stack=8192 unwinder=test",
        "map 1 %#x %#x off=%#x at=0" % (start, start + 0x100000, pgoff),
        "cpu-time 0 4000000",
        "cpu-time 1 2000000",
        "0 100 stack %#x,%#x" % (L, M),
        "0 200 stack w=2 %#x,%#x" % (H, M),
        "0 300 stack %#x,%#x,%#x" % (L, light + 5, M),  # light recursing: counted once
        "0 400 lost 3",
        "1 150 stack %#x" % M,
        "1 250 stack flags=truncated %#x,%#x" % (0x10, M),  # outside every mapping
    ]
    txt = os.path.join(work, "exact.txt")
    with open(txt, "w") as f:
        f.write("\n".join(lines) + "\n")
    dump = os.path.join(work, "exact.instr")
    r = run([DUMP, "--from-text", txt, "-o", dump])
    check(r.returncode == 0, "instr-dump --from-text (%s)" % r.stderr)
    # the text form goes round unchanged (sampling records included)
    r2 = run([DUMP, dump])
    check(r2.returncode == 0 and "0 400 lost 3" in r2.stdout and "flags=truncated 0x10," in r2.stdout,
          "instr-dump prints sampling records")
    j, r = report_json([dump])
    check(r.returncode == 0, "exact report exits 0 (%d: %s)" % (r.returncode, r.stderr))
    s = j["session"]
    check(s["samples"] == 6 and s["lost"] == 3 and s["truncated"] == 1 and s["cpu_ns"] == 6000000,
          "session totals %s" % s)
    check(abs(s["rate_achieved_hz"] - 1000.0) < 0.01, "achieved rate 6 samples / 6 ms = 1000 Hz")
    f = rows_by_name(j["functions"])
    hname = next(n for n in f if n.startswith("heavy"))
    want = {"main": (6, 1), "light": (2, 2), hname: (2, 2), "[unknown]": (1, 1)}
    for n, (inc, exc) in want.items():
        got = (f.get(n, {}).get("inclusive_samples"), f.get(n, {}).get("exclusive_samples"))
        check(got == (inc, exc), "%s inclusive/exclusive %s, want %s" % (n, got, (inc, exc)))
    check(abs(f["light"]["inclusive_pct"] - 100 * 2 / 6) < 1e-3 and abs(f["main"]["exclusive_pct"] - 100 / 6) < 1e-3,
          "percents are of total samples")
    check(sum(r["exclusive_samples"] for r in j["functions"]) == 6, "exclusive samples add up to the total")
    m = rows_by_name(j["modules"])
    check((m[SPLIT]["inclusive_samples"], m[SPLIT]["exclusive_samples"]) == (6, 5), "module %s" % m.get(SPLIT))
    t = {r["tid"]: r for r in j["threads"]}
    check((t[10]["inclusive_samples"], t[10]["cpu_ns"]) == (4, 4000000) and t[11]["inclusive_samples"] == 2,
          "threads %s" % t)
    r = run([REPORT, "--export", "folded", dump])
    want_folded = sorted(["main;%s 2" % hname, "main;light 1", "main;light;light 1", "main 1", "main;[unknown] 1"])
    check(sorted(r.stdout.splitlines()) == want_folded, "folded %s" % r.stdout.splitlines())
    check_pprof(work, dump, hname)
    r = run([REPORT, "--format", "csv", "--view", "modules", dump])
    check(r.stdout.splitlines()[0] == "modules,inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct",
          "csv header")
    def csv_rows(*args):
        out = run([REPORT, "--format", "csv", *args, dump]).stdout.splitlines()[1:]
        return [tuple(l.split(",")[:2] + [l.split(",")[2].replace(hname, "heavy")] + l.split(",")[4:6]) for l in out]
    check(csv_rows("--view", "calltree") == [
        ("path", "0", "main", "6", "1"), ("path", "1", "heavy", "2", "2"), ("path", "1", "light", "2", "1"),
        ("path", "2", "light", "1", "1"), ("path", "1", "[unknown]", "1", "1")], "calltree %s" % csv_rows("--view", "calltree"))
    check(csv_rows("--view", "callers", "light") == [("caller", "1", "main", "2", "1"), ("function", "0", "light", "2", "2")],
          "callers of light %s" % csv_rows("--view", "callers", "light"))
    got = sorted(csv_rows("--view", "callees", "main"))
    check(got == sorted([("callee", "1", "heavy", "2", "2"), ("callee", "1", "light", "2", "1"),
                         ("callee", "1", "[unknown]", "1", "1"), ("function", "0", "main", "6", "1")]),
          "callees of main %s" % got)
    check(csv_rows("--view", "callees", "light") == [("callee", "1", "light", "1", "1"), ("function", "0", "light", "2", "2")],
          "callees of light (recursion) %s" % csv_rows("--view", "callees", "light"))
    # callgrind: exclusive samples per function, inclusive per edge, the summary the total
    r = run([REPORT, "--export", "callgrind", dump])
    cg = r.stdout
    check("events: Samples" in cg and "summary: 6" in cg, "callgrind header")
    ann = shutil.which("callgrind_annotate")
    if ann:
        cgf = os.path.join(work, "exact.cg")
        open(cgf, "w").write(cg)
        a = run([ann, "--auto=no", "--inclusive=yes", cgf], cwd="/").stdout
        check("6 (100.0%)  PROGRAM TOTALS" in a and "%s:main" % SPLIT in a and "2 (33.33%)" in a,
              "callgrind_annotate reads it:\n" + a)
    # --diff: percents of each run's total, by the absolute change
    lines_b = lines[:9] + ["0 100 stack w=3 %#x,%#x" % (L, M), "0 200 stack %#x,%#x" % (H, M)]
    with open(txt, "w") as f:
        f.write("\n".join(lines_b) + "\n")
    dump_b = os.path.join(work, "exact-b.instr")
    run([DUMP, "--from-text", txt, "-o", dump_b])
    r = run([REPORT, "--diff", "--format", "csv", dump, dump_b])
    rows = [l.split(",") for l in r.stdout.splitlines()[1:]]
    names = [x[0].replace(hname, "heavy") for x in rows]
    check(r.returncode == 0 and names == ["light", "[unknown]", "heavy", "main"], "diff order %s" % names)
    check(rows and [round(float(v), 2) for v in rows[0][2:]] == [33.33, 75.0, 41.67, 33.33, 75.0, 41.67],
          "diff of light %s" % rows[:1])
    r = run([REPORT, "--diff", "--threshold", "10", "--format", "csv", dump, dump_b])
    check(len(r.stdout.splitlines()) == 3, "--threshold hides small changes %s" % r.stdout)
    # --diff of two builds of one program under other names: matched by the
    # functions' names in the program, whoever it is (issue 37 §4).
    renamed = os.path.join(work, "renamed-build")
    shutil.copy(SPLIT, renamed)
    def named(exe, lines_, name):
        out = os.path.join(work, name + ".instr")
        text = "\n".join(lines_) + "\n"
        text = text.replace("exe=/x/split", "exe=" + exe).replace("module 1 %s\n" % SPLIT, "module 1 %s\n" % exe)
        with open(txt, "w") as f:
            f.write(text)
        run([DUMP, "--from-text", txt, "-o", out])
        return out
    da, db = named(SPLIT, lines, "prog-a"), named(renamed, lines_b, "prog-b")
    r = run([REPORT, "--diff", "--format", "json", da, db])
    j = json.loads(r.stdout) if r.returncode == 0 else {}
    got = {x["name"].split(".")[0]: (round(x["a_inclusive_pct"], 2), round(x["b_inclusive_pct"], 2))
           for x in j.get("diff", [])}
    check(j.get("matched") == 3 and j.get("only_a") == 1 and got.get("light") == (33.33, 75.0) and
          got.get("main") == (100.0, 100.0),
          "--diff of the program renamed: main, light and heavy matched %s %s" % ({k: j.get(k) for k in
                                                                                   ("matched", "only_a", "only_b")}, got))
    r = run([REPORT, "--diff", da, db])
    check("Matched: 3 functions in both" in r.stdout, "--diff says how many matched:\n" + r.stdout[:300])
    r = run([REPORT, "--view", "callers", "nosuch", dump])
    check(r.returncode == 1 and "nosuch" in r.stderr, "an unknown function is a usage error")
    r = run([REPORT, dump])
    check("Lost: 3 samples" in r.stdout and "achieved 1000 Hz" in r.stdout and "Truncated stacks: 1" in r.stdout,
          "text header says lost, rate, truncated:\n" + r.stdout)


def check_pprof(work, dump, hname):
    """--export pprof of the exact dump, decoded by tests/exchange/check-pprof.py
    and, when Go is installed, read by `go tool pprof -top`: per function,
    flat = exclusive and cum = inclusive samples, cpu = samples x the period."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "check_pprof", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exchange", "check-pprof.py"))
    cp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cp)
    pb = os.path.join(work, "exact.pb.gz")
    r = run([REPORT, "--export", "pprof", "-o", pb, dump])
    check(r.returncode == 0, "--export pprof of a sampling dump exits 0 (%d: %s)" % (r.returncode, r.stderr))
    prof = cp.decode(pb)
    check(prof["types"] == [("samples", "count"), ("cpu", "nanoseconds")] and prof["default"] == "samples",
          "pprof sample types %s, default %s" % (prof["types"], prof["default"]))
    flat, cum = {}, {}
    for smp in prof["samples"]:
        names = [prof["funcs"][prof["locs"][l]["func"]]["name"] for l in smp["loc"]]
        check(smp["val"][1] == smp["val"][0] * 1000000, "pprof cpu = samples x 1 ms: %s" % smp["val"])
        leaf = names[0] if names else None
        flat[leaf] = flat.get(leaf, 0) + smp["val"][0]
        for n in set(names):
            cum[n] = cum.get(n, 0) + smp["val"][0]
    want = {"main": (6, 1), "light": (2, 2), hname: (2, 2), "[unknown]": (1, 1)}
    got = {n: (cum.get(n), flat.get(n, 0)) for n in want}
    check(got == want and sum(flat.values()) == 6, "pprof cum/flat per function %s, want %s" % (got, want))
    # Each sample names its thread (pprof -tagfocus, -tags), as the
    # instrumented export does: threads 10 and 11 had 4 and 2 samples.
    by_tid = {}
    for smp in prof["samples"]:
        by_tid[smp["labels"].get("tid")] = by_tid.get(smp["labels"].get("tid"), 0) + smp["val"][0]
    check(by_tid == {10: 4, 11: 2} and all("pid" in smp["labels"] for smp in prof["samples"]),
          "pprof samples per tid label %s, want {10: 4, 11: 2}, each with a pid" % by_tid)
    # Source lines (issue 23): each location of split.c's functions has
    # the line the DWARF line table gives its address, and each function
    # its file, so `go tool pprof -list` finds the source.
    ours = [l for l in prof["locs"].values() if prof["funcs"][l["func"]]["name"] in ("main", "light", hname)]
    check(ours and all(l["line"] > 0 for l in ours), "pprof locations of split.c's functions have lines: %s" % ours)
    files = {prof["funcs"][l["func"]]["file"] for l in ours}
    check(files and all(f.endswith("split.c") and os.path.exists(f) for f in files),
          "their functions name the source file: %s" % files)
    note = run(["readelf", "-n", SPLIT]).stdout
    bid = note.split("Build ID: ")[1].split()[0] if "Build ID: " in note else None
    check(any(m["file"] == SPLIT and m["build_id"] == bid for m in prof["maps"].values()),
          "pprof mapping of %s with its build id %s: %s" % (SPLIT, bid, list(prof["maps"].values())))
    if not shutil.which("go"):
        print("go tool pprof: skipped (no `go`; Debian golang-go)")
        return
    tmp = tempfile.mkdtemp(prefix="instr-go-")
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "cache"), GOPATH=os.path.join(tmp, "gopath"),
               GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=tmp)
    try:
        r = run(["go", "tool", "pprof", "-top", "-nodefraction=0", "-sample_index=samples", pb], env=env)
        # From a directory whose name is not in the source's path: pprof
        # trims a path at its search path's base name (the working
        # directory's) and would look for "split.c" there.
        lst = run(["go", "tool", "pprof", "-list", "^light$", "-sample_index=samples", pb], env=env, cwd=tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(r.returncode == 0 and "of 6 total" in r.stdout, "go tool pprof: 6 samples in all:\n" + r.stdout + r.stderr)
    rows = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0].isdigit() and f[3].isdigit():
            rows[f[5]] = (int(f[3]), int(f[0]))
    check(rows.get("light") == (2, 2) and rows.get("main") == (6, 1), "go tool pprof: light, main cum/flat %s" % rows)
    print("go tool pprof read it: cum/flat %s" % sorted(rows.items()))
    # -list prints the function's source with each line's flat and cum:
    # light's 2 samples on lines of split.c.
    counted = [l for l in lst.stdout.splitlines() if re.match(r"\s+\d+\s+\d+\s+\d+:", l)]
    check(lst.returncode == 0 and "split.c" in lst.stdout and sum(int(l.split()[0]) for l in counted) == 2,
          "go tool pprof -list light: its source with 2 samples on its lines:\n" + lst.stdout + lst.stderr)


def scenario_split(work):
    dumps = sample_split(work)
    j, r = report_json(dumps)
    check(r.returncode == 0, "report exits 0 (%s)" % r.stderr)
    f = rows_by_name(j["functions"])
    heavy = next((r for n, r in f.items() if n.startswith("heavy")), None)
    light = f.get("light")
    check(heavy and 65 <= heavy["exclusive_pct"] <= 75, "heavy Exclusive %% ~70: %s" % heavy)
    check(light and 25 <= light["exclusive_pct"] <= 35, "light Exclusive %% ~30: %s" % light)
    s = j["session"]
    check(s["rate_achieved_hz"] >= 0.85 * s["rate_asked_hz"], "achieved rate %s" % s["rate_achieved_hz"])
    check(s["truncated"] <= 0.05 * s["samples"], "few truncated stacks: %s" % s)
    # libc's qsort (no frame pointers) stands between main and light on the stacks
    r = run([REPORT, "--export", "folded", *dumps])
    light_stacks = [l for l in r.stdout.splitlines() if ";light " in l]
    with_qsort = [l for l in light_stacks
                  if l.index(";main;") < l.find("qsort") < l.index(";light ")]
    n_light = sum(int(l.rsplit(" ", 1)[1]) for l in light_stacks)
    n_q = sum(int(l.rsplit(" ", 1)[1]) for l in with_qsort)
    check(n_light > 0 and n_q >= 0.95 * n_light, "light under main;...qsort...: %d of %d" % (n_q, n_light))
    q = next((r for n, r in f.items() if "qsort" in n), None)
    check(q and q["module"].endswith("libc.so.6"), "the qsort frame is libc's: %s" % q)


def scenario_threads(work):
    r = run([SAMPLE, "-o", os.path.join(work, "mt.%p.instr"), MT])
    check(r.returncode == 0, "instr-sample mt exits 0 (%d: %s)" % (r.returncode, r.stderr))
    dumps = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".instr"))
    check(len(dumps) == 3, "three dumps: parent, forked child, its exec (got %s)" % dumps)
    forked = [d for d in dumps if dump_flags(d) & 0x2]
    check(len(forked) == 1, "one dump is the forked image")
    for d in dumps:
        j, _ = report_json([d])
        threads = j["threads"]
        names = {t["name"].split(" ", 1)[1] if " " in t["name"] else "": t for t in threads}
        f = rows_by_name(j["functions"])
        check("spin_for" in f, "%s: spin_for sampled" % d)
        if len(threads) > 1 or "busy" in names:  # the parent
            main = [t for t in threads if t["tid"] == t["pid"]]
            busy = names.get("busy")
            sleepy = names.get("sleepy")
            check(main and main[0]["inclusive_samples"] >= 80, "parent main thread sampled: %s" % main)
            check(busy and busy["inclusive_samples"] >= 120, "busy thread sampled: %s" % busy)
            check(sleepy is None or sleepy["inclusive_samples"] <= 5, "sleeping thread (nearly) unsampled: %s" % sleepy)
        elif d in forked:
            check(j["session"]["samples"] >= 40, "forked image sampled: %s" % j["session"])
        else:
            check(j["session"]["samples"] >= 80, "exec'd image sampled: %s" % j["session"])


def scenario_unprivileged(work):
    skip_unless_unprivileged_perf()
    os.chmod(work, 0o1777)
    for b in (SAMPLE, SPLIT):
        shutil.copy(b, work)
    r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             os.path.join(work, "instr-sample"), "-o", os.path.join(work, "u.%p.instr"),
             os.path.join(work, os.path.basename(SPLIT)), "0.3"], cwd=work)
    check(r.returncode == 0, "instr-sample as uid 65534 exits 0 (%d: %s)" % (r.returncode, r.stderr))
    dumps = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("u.")]
    check(len(dumps) == 1, "a dump as uid 65534: %s" % dumps)
    if dumps:
        check(os.stat(dumps[0]).st_uid == 65534, "the dump belongs to the user")
        j, _ = report_json(dumps)
        check(j["session"]["samples"] >= 150, "samples as uid 65534: %s" % j["session"])


def scenario_setuid(work):
    """Issue 38 §4: the kernel takes perf events off a process whose exec
    changes its user (a set-user-ID program of another user) or that
    execs a file its user may not read.  instr-sample ran such a program
    unsampled, exit 0, with an empty dump named '.PID.instr' and no word:
    it must refuse with the reason, exit 124, and not run it.  Root's own
    set-user-ID copy is still sampled."""
    skip_unless_unprivileged_perf()
    os.chmod(work, 0o1777)
    sample = os.path.join(work, "instr-sample")
    shutil.copy(SAMPLE, sample)
    prog = os.path.join(work, "suid-split")
    shutil.copy(SPLIT, prog)
    os.chown(prog, 0, 0)
    os.chmod(prog, 0o4755)
    noread = os.path.join(work, "noread-split")
    shutil.copy(SPLIT, noread)
    os.chmod(noread, 0o711)
    out = os.path.join(work, "out")
    os.mkdir(out)
    os.chmod(out, 0o777)
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    for p, says in ((prog, "set-user-ID (owner root)"), (noread, "not readable")):
        r = run(nobody + [sample, p, "0.2"], cwd=out)
        check(r.returncode == 124, "uid 65534, %s: exit 124 (got %d: %s)" % (os.path.basename(p), r.returncode, r.stderr))
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1 and says in lines[0] and "cannot be sampled" in lines[0],
              "one line saying why (%r)" % r.stderr)
        check(r.stdout == "", "the program did not run unsampled (%r)" % r.stdout)
        check(not os.listdir(out), "no dump written (%s)" % os.listdir(out))
    r = run([sample, "-o", os.path.join(out, "root.%p.instr"), prog, "0.3"], cwd=out)
    check(r.returncode == 0, "root samples its own set-user-ID program (%d: %s)" % (r.returncode, r.stderr))
    dumps = [os.path.join(out, f) for f in os.listdir(out)]
    if dumps:
        j, _ = report_json(dumps)
        check(j["session"]["samples"] >= 100, "with samples: %s" % j["session"]["samples"])


def scenario_deny(work):
    r = run([DENY, SAMPLE, "-o", os.path.join(work, "d.%p.instr"), SPLIT, "0.1"])
    check(r.returncode == 124, "exit 124 when perf events are refused (got %d)" % r.returncode)
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and "not allowed" in lines[0] and "sysctl kernel.perf_event_paranoid=2" in lines[0],
          "one line naming the cause and the fix: %r" % r.stderr)
    check(r.stdout == "", "the program did not run unsampled")
    check(not os.listdir(work), "no dump written")


def scenario_corrupt(work):
    dumps = sample_split(work, "0.3")
    good = dumps[0]
    data = bytearray(open(good, "rb").read())
    hsize, csize = struct.unpack_from("<II", data, 12)
    n = (len(data) - hsize) // csize
    kinds = [struct.unpack_from("<H", data, hsize + i * csize + 4)[0] for i in range(n)]
    check(3 in kinds, "the dump has a SAMPLES chunk")
    first = hsize + kinds.index(3) * csize + 64
    bad = bytearray(data)
    bad[first] = 0x7F  # an unknown record kind where the first record starts
    badp = os.path.join(work, "bad.instr")
    open(badp, "wb").write(bad)
    before, _ = report_json([good])
    r = run([REPORT, badp])
    check(r.returncode == 3, "damaged sample chunk: exit 3 (got %d)" % r.returncode)
    warn = [l for l in r.stderr.splitlines() if "invalid bytes" in l]
    check(len(warn) == 1, "one warning line says what was skipped: %r" % r.stderr)
    check("Samples:" in r.stdout, "the rest is still reported")
    r = run([DUMP, badp])
    check(r.returncode == 3 and "sample chunk seq 0: invalid bytes" in r.stdout, "instr-dump notes the bad chunk")
    # a frame count beyond the record
    bad = bytearray(data)
    kind, = struct.unpack_from("<B", bad, first)
    check(kind == 1, "first record is a stack")
    # record: kind, varint len, varint delta, weight, flags, count...: make the length claim more than the chunk
    bad[first + 1:first + 4] = b"\xff\xff\x7f"
    open(badp, "wb").write(bad)
    r = run([REPORT, badp])
    check(r.returncode == 3 and "invalid bytes" in r.stderr, "oversized record: exit 3 with the reason")
    # a cut file
    cut = os.path.join(work, "cut.instr")
    open(cut, "wb").write(data[: hsize + csize // 2])
    r = run([REPORT, cut])
    check(r.returncode in (2, 3) and ("truncated" in r.stderr or "ends" in r.stderr),
          "cut file: reason given (%d: %r)" % (r.returncode, r.stderr))


def stripped_copy(work, prog, dbg, debuglink):
    """SPLIT copied to prog, its debug sections kept in dbg and the copy
    stripped (with a .gnu_debuglink to dbg if asked); skipped where binutils
    fail."""
    shutil.copy(SPLIT, prog)
    cmds = [["objcopy", "--only-keep-debug", prog, dbg], ["strip", "--strip-all", prog]]
    if debuglink:
        cmds.append(["objcopy", "--add-gnu-debuglink=" + dbg, prog])
    for cmd in cmds:
        r = run(cmd, cwd=work)
        if r.returncode:
            print("binutils failed (%s): skipped" % r.stderr)
            sys.exit(77)


def sampled_names(dump):
    """The function rows of the report of dump, by name."""
    j, _ = report_json([dump])
    return rows_by_name(j["functions"])


def scenario_debuglink(work):
    """A stripped program names its static functions from its debug file
    (found through .gnu_debuglink next to it)."""
    prog = os.path.join(work, "stripped")
    dbg = os.path.join(work, "stripped.debug")
    stripped_copy(work, prog, dbg, True)
    check("light" not in run(["nm", "-D", prog]).stdout, "light is not a dynamic symbol")
    dump = os.path.join(work, "s.instr")
    r = run([SAMPLE, "-o", dump, prog, "0.3"], cwd=work)
    check(r.returncode == 0, "instr-sample on the stripped program (%s)" % r.stderr)
    f = sampled_names(dump)
    check("light" in f and any(n.startswith("heavy") for n in f), "names from the debug file: %s" % sorted(f)[:12])
    os.unlink(dbg)
    f = sampled_names(dump)
    check("light" not in f and "[stripped]" in f, "without it, the module's name: %s" % sorted(f)[:12])


def scenario_build_id(work):
    """A stripped program with no .gnu_debuglink names its static functions
    and finds its source lines from the debug file named by its build-id
    under the debug root (INSTR_DEBUG_ROOT, as /usr/lib/debug for -dbgsym
    packages)."""
    prog = os.path.join(work, "stripped")
    root = os.path.join(work, "root")
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", SPLIT]).stdout)
    if not m:
        print("no build-id in the test program: skipped")
        sys.exit(77)
    bid = m.group(1)
    os.makedirs(os.path.join(root, ".build-id", bid[:2]))
    stripped_copy(work, prog, os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug"), False)
    check(".gnu_debuglink" not in run(["readelf", "-S", prog]).stdout, "no debuglink in the stripped program")
    dump = os.path.join(work, "s.instr")
    r = run([SAMPLE, "-o", dump, prog, "0.3"], cwd=work)
    check(r.returncode == 0, "instr-sample on the stripped program (%s)" % r.stderr)
    os.environ["INSTR_DEBUG_ROOT"] = root
    f = sampled_names(dump)
    check("light" in f and any(n.startswith("heavy") for n in f), "names from the build-id debug file: %s" % sorted(f)[:12])
    r = run([REPORT, "--view", "lines", "--format", "json", dump])
    files = {l["file"] or "" for l in json.loads(r.stdout)["lines"]} if r.returncode in (0, 3) else set()
    check(any(x.endswith("split.c") for x in files), "lines from the build-id debug file: %s" % sorted(files)[:5])
    os.environ["INSTR_DEBUG_ROOT"] = os.path.join(work, "elsewhere")
    f = sampled_names(dump)
    check("light" not in f and "[stripped]" in f, "under another root, the module's name: %s" % sorted(f)[:12])



def scenario_bad_output(work):
    """-o where the dump cannot be created: one line, a non-zero status, and
    the program never runs (as perf record).  As every identity: a missing
    directory; and, for all but root itself, a directory it may not write:
    one of another user (uid 65533, 0755: neither uid 65534 nor root in a
    user namespace, whose capabilities do not reach an unmapped owner's
    files, may write it), or as an ordinary user, /."""
    os.chmod(work, 0o755)
    locked = "/"
    if os.geteuid() == 0:
        locked = os.path.join(work, "locked")
        os.mkdir(locked, 0o755)
        os.chown(locked, 65533, 65533)
    for who, prefix in identities(SAMPLE, SPLIT):
        outs = [os.path.join(work, "missing", "s.%p.instr")]
        if prefix or os.geteuid() != 0:
            outs.append(os.path.join(locked, "s.%p.instr"))
        with checking_as(who):
            for out in outs:
                r = run([*prefix, SAMPLE, "-o", out, SPLIT, "0.3"], cwd=work)
                lines = r.stderr.strip().splitlines()
                where = os.path.dirname(out)
                check(r.returncode == 125, "%s: exit 125 when the output cannot be created (got %d)" % (where, r.returncode))
                check(len(lines) == 1 and "cannot create" in lines[0], "%s: exactly one error line: %r" % (where, r.stderr))
                check(r.stdout == "", "%s: the program did not run unsampled (%r)" % (where, r.stdout))
            print("%s: %s refused" % (who, ", ".join(os.path.dirname(o) for o in outs)))
    if locked != "/":
        check(not os.listdir(locked), "nothing written in %s: %s" % (locked, os.listdir(locked)))
    # the check creates nothing: a writable -o gets the program's one dump
    r = run([SAMPLE, "-o", os.path.join(work, "ok.%p.instr"), SPLIT, "0.1"], cwd=work)
    check(r.returncode == 0 and r.stderr == "", "a writable output: exit 0, silent (%d: %s)" % (r.returncode, r.stderr))
    ok = [f for f in os.listdir(work) if f.startswith("ok.")]
    check(len(ok) == 1, "one dump, no leftover of the check: %s" % ok)


def same_as_plain(plain, sampled, stderr=True):
    """The program under instr-sample behaves as without it: status,
    standard output, and standard error unless the caller checks it."""
    check(sampled.returncode == plain.returncode,
          "status under instr-sample %d, plain %d (%s)" % (sampled.returncode, plain.returncode, sampled.stderr))
    check(sampled.stdout == plain.stdout, "output under instr-sample %r, plain %r" % (sampled.stdout, plain.stdout))
    if stderr:
        check(sampled.stderr == plain.stderr, "standard error under instr-sample %r, plain %r"
              % (sampled.stderr, plain.stderr))


def scenario_vdso(work):
    """Samples inside the vDSO are named from its own symbol table: no
    [vdso] row; a __vdso_* (or clock_gettime/gettimeofday) row instead.
    As every identity, the program's output and status as without
    instr-sample."""
    for_every_identity(work, (SAMPLE, CLOCKS), vdso_as)


def vdso_as(d, prefix):
    plain = run([*prefix, CLOCKS, "clocks", "0.5"], cwd=d)
    r = run([*prefix, SAMPLE, "-o", os.path.join(d, "c.%p.instr"), CLOCKS, "clocks", "0.5"], cwd=d)
    same_as_plain(plain, r)
    check(r.returncode == 0, "instr-sample clocks exits 0 (%d: %s)" % (r.returncode, r.stderr))
    dumps = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".instr")]
    check(len(dumps) == 1, "one dump: %s" % dumps)
    if not dumps:
        return
    j, _ = report_json(dumps)
    rows = j["functions"]
    vdso = [f for f in rows if f.get("module") == "[vdso]"]
    named = [f["name"] for f in vdso]
    print("vdso rows:", [(f["name"], f["exclusive_samples"]) for f in vdso])
    check(vdso and sum(f["exclusive_samples"] for f in vdso) >= 20, "samples in the vDSO: %s" % named)
    check("[vdso]" not in named, "no [vdso] row: %s" % named)
    check(any(n.startswith("__vdso_") or n in ("clock_gettime", "gettimeofday") for n in named),
          "a __vdso_* row: %s" % named)


def wait_for(path):
    for _ in range(600):
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def scenario_daemon(work):
    """A program that daemonizes: sampling stops when its first process
    ends (like perf record), and the daemon's dump and the report say so.
    As every identity, the program's output and status as without
    instr-sample, its daemon run to its end both times."""
    for_every_identity(work, (SAMPLE, CLOCKS), daemon_as)


def daemon_as(d, prefix):
    plain_done, done = os.path.join(d, "plain-done"), os.path.join(d, "done")
    plain = run([*prefix, CLOCKS, "daemon", "0.6"], env=dict(os.environ, CLOCKS_DONE=plain_done), cwd=d)
    check(wait_for(plain_done), "the plain daemon ran to its end")
    r = run([*prefix, SAMPLE, "-o", os.path.join(d, "d.%p.instr"), CLOCKS, "daemon", "0.6"],
            env=dict(os.environ, CLOCKS_DONE=done), cwd=d)
    same_as_plain(plain, r, stderr=False)
    check(r.returncode == 0, "instr-sample exits with the program's status (%d: %s)" % (r.returncode, r.stderr))
    check(wait_for(done), "the daemon ran to its end")
    # The daemon still runs; the middle process (fork, setsid, fork, _exit)
    # may still be on its way out: each one found alive is cut, and says so.
    lines = r.stderr.strip().splitlines()
    dumps = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".instr"))
    cut = [x for x in dumps if dump_flags(x) & 0x80]
    check(1 <= len(cut) <= 2, "the daemon's dump marked cut short (INSTR_DUMP_SAMPLING_CUT): %s of %s" % (cut, dumps))
    check(len(lines) == len(cut) and all("still runs" in l for l in lines),
          "one line per cut process says so: %r" % r.stderr)
    if not cut:
        return
    j, rep = report_json(cut)
    check(rep.returncode == 3 and "still ran when instr-sample stopped" in rep.stderr,
          "the report warns (exit %d: %s)" % (rep.returncode, rep.stderr))
    check(j["session"].get("cut_processes") == len(cut), "JSON counts the cut processes: %s" % j["session"])
    t = run([REPORT, cut[-1]]).stdout
    check("Cut short: 1 process still ran" in t, "the text report says so")


scenarios = {"bad-output": scenario_bad_output, "vdso": scenario_vdso, "daemon": scenario_daemon, "debuglink": scenario_debuglink, "build-id": scenario_build_id, "exact": scenario_exact, "split": scenario_split, "threads": scenario_threads,
             "unprivileged": scenario_unprivileged, "setuid": scenario_setuid, "deny": scenario_deny, "corrupt": scenario_corrupt}
work = tempfile.mkdtemp(prefix="instr-sampling-")
try:
    scenarios[scenario](work)
finally:
    shutil.rmtree(work, ignore_errors=True)
print("%s: %s" % (scenario, "FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)

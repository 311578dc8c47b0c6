#!/usr/bin/env python3
"""--export pprof, checked two ways:

  check-pprof.py decode --bin BIN --src SRC --work DIR [--exe EXE...]
      our own reading of the gzip'd profile.proto (the wire format decoded
      here from scratch): per function, flat (leaf samples) equals the
      report's Exclusive values and cum (samples containing it, once)
      its Inclusive values, calls equal, labels pid/tid, names demangled
      with the mangled system name, mappings carry the module's build id.
  check-pprof.py go ...
      the real consumer: `go tool pprof -top` reads the file; its totals and
      every listed function's flat/cum equal the report's Elapsed and
      Application Exclusive/Inclusive (ns, within rounding).

Each on the golden exchange trace (exact ns) and on the real instrumented
programs given with --exe.  Exit 77 = skipped (Go not installed), with why.
"""
import argparse, glob, gzip, json, os, re, shutil, subprocess, sys, tempfile

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status, run  # noqa: E402
from exchange_common import inputs, pb_fields, report  # noqa: E402


def export(args, dumps, out):
    run([os.path.join(args.bin, "instr-report"), "--export", "pprof", "-o", out, *dumps], ok=(0, 3))
    return out


def close(a, b):
    return abs(a - b) <= 2 + 1e-5 * max(abs(a), abs(b))


# ---- a protobuf reader (profile.proto) -----------------------------------------

def fields(buf):
    """(field, wire type, value) of one message: profile.proto has varints
    and length-delimited fields only."""
    for f, w, v in pb_fields(buf):
        if w not in (0, 2):
            raise ValueError(f"wire type {w}")
        yield f, w, v


def packed(v):
    """A repeated varint field: one value, or a packed run of them."""
    if isinstance(v, int):
        return [v]
    out, cur, shift = [], 0, 0
    for c in v:
        cur |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            out.append(cur)
            cur = shift = 0
    return out


def msg(b):
    d = {}
    for f, w, v in fields(b):
        d.setdefault(f, []).append(v)
    return d


def decode(path):
    p = msg(gzip.open(path).read())
    st = [s.decode() for s in p.get(6, [])]
    types = [(st[msg(t).get(1, [0])[0]], st[msg(t).get(2, [0])[0]]) for t in p.get(1, [])]
    funcs = {}
    for f in p.get(5, []):
        m = msg(f)
        g = lambda k: m.get(k, [0])[0]
        funcs[g(1)] = {"name": st[g(2)], "system_name": st[g(3)], "file": st[g(4)], "line": g(5)}
    maps = {}
    for f in p.get(3, []):
        m = msg(f)
        g = lambda k: m.get(k, [0])[0]
        maps[g(1)] = {"file": st[g(5)], "build_id": st[g(6)], "has_functions": g(7)}
    locs = {}
    for f in p.get(4, []):
        m = msg(f)
        lines = [msg(l) for l in m.get(4, [])]
        locs[m[1][0]] = {"mapping": m.get(2, [0])[0], "func": lines[0][1][0], "line": lines[0].get(2, [0])[0]}
    samples = []
    for f in p.get(2, []):
        m = msg(f)
        loc = [x for b in m.get(1, []) for x in packed(b)]
        val = [x for b in m.get(2, []) for x in packed(b)]
        labels = {}
        for l in m.get(3, []):
            lm = msg(l)
            labels[st[lm[1][0]]] = st[lm[2][0]] if 2 in lm else lm.get(3, [0])[0]
        samples.append({"loc": loc, "val": val, "labels": labels})
    return {"types": types, "funcs": funcs, "maps": maps, "locs": locs, "samples": samples,
            "duration": p.get(10, [0])[0], "default": st[p.get(14, [0])[0]]}


def check_decode(args):
    for name, dumps in inputs(args):
        rep = report(args, dumps)
        prof = decode(export(args, dumps, os.path.join(args.work, name + ".pb.gz")))
        app = rep["session"]["application_available"]
        want = [("calls", "count"), ("elapsed", "nanoseconds")] + ([("application", "nanoseconds")] if app else [])
        check(prof["types"] == want and prof["default"] == "elapsed", f"{name}: sample types {prof['types']}")
        idx = {t: i for i, (t, _) in enumerate(prof["types"])}
        fname = lambda l: prof["funcs"][prof["locs"][l]["func"]]["name"]
        flat, cum = {}, {}
        for s in prof["samples"]:
            names = [fname(l) for l in s["loc"]]
            leaf = names[0]
            flat.setdefault(leaf, [0] * len(idx))
            for k in range(len(idx)):
                flat[leaf][k] += s["val"][k]
            for n in set(names):
                cum.setdefault(n, [0] * len(idx))
                for k in range(len(idx)):
                    cum[n][k] += s["val"][k]
        bad = []
        names = [f["name"] for f in rep["functions"]]
        for f in rep["functions"]:
            n = f["name"]
            if names.count(n) > 1:
                continue  # pprof groups by name: two rows (modules) with one name are one line
            fl, cu = flat.get(n, [0] * len(idx)), cum.get(n, [0] * len(idx))
            ok = (fl[idx["calls"]] == f["calls"] and close(fl[idx["elapsed"]], f["elapsed_exclusive_ns"])
                  and close(cu[idx["elapsed"]], f["elapsed_inclusive_ns"]))
            if app:
                ok = ok and close(fl[idx["application"]], f["application_exclusive_ns"]) and \
                    close(cu[idx["application"]], f["application_inclusive_ns"])
            if not ok:
                bad.append((n, fl, cu, f["calls"], f["elapsed_exclusive_ns"], f["elapsed_inclusive_ns"]))
        check(not bad, f"{name}: per function flat = exclusive, cum = inclusive, calls ({len(names)} functions) {bad[:3]}")
        total = sum(s["val"][idx["elapsed"]] for s in prof["samples"])
        check(close(total, rep["session"]["totals"]["elapsed_inclusive_ns"]),
              f"{name}: sample total {total} = session Elapsed {rep['session']['totals']['elapsed_inclusive_ns']}")
        check(abs(prof["duration"] - rep["session"]["duration_ns"]) <= 1, f"{name}: duration")
        pids = {p["pid"] for p in rep["session"]["programs"]}
        check(all(s["labels"].get("pid") in pids and isinstance(s["labels"].get("tid"), int) and s["labels"]["tid"] > 0
                  for s in prof["samples"]), f"{name}: pid and tid labels on every sample")
        pairs = {(f["name"], f["mangled"]) for f in rep["functions"]}
        check(all((f["name"], f["system_name"]) in pairs for f in prof["funcs"].values()),
              f"{name}: name and system_name are the report's demangled and mangled names")
        if name == "exchange":
            check(sorted(f["name"] for f in prof["funcs"].values()) ==
                  ["cmp", "helper", "main", "qsort", "rec", "sort_it"], "exchange: functions")
            check(prof["funcs"][[k for k, f in prof["funcs"].items() if f["name"] == "rec"][0]]
                  == {"name": "rec", "system_name": "rec", "file": "app.c", "line": 40}, "exchange: rec's file and line")
            w = [s for s in prof["samples"] if s["labels"].get("thread") == "worker"]
            check(len(w) == 1 and w[0]["labels"] == {"pid": 42, "tid": 101, "thread": "worker"}
                  and w[0]["val"] == [1, 4000, 4000], "exchange: the worker's one sample, labels and values")
            check(list(prof["maps"].values())[0]["file"] == "/opt/app", "exchange: the program's mapping first")
        else:
            exe = [e for e in args.exe if os.path.basename(e) == name][0]
            note = run(["readelf", "-n", exe]).stdout
            m = re.search(r"Build ID: ([0-9a-f]+)", note)
            first = list(prof["maps"].values())[0]
            check(m is not None and first["file"] == os.path.realpath(exe) or first["file"] == exe,
                  f"{name}: first mapping is the program ({first['file']})")
            check(m is not None and first["build_id"] == m.group(1), f"{name}: build id {first['build_id']}")
            if name == "shapes":
                area = [f for f in prof["funcs"].values() if f["name"] == "geo::Polygon::area() const"]
                check(len(area) == 1 and area[0]["system_name"].startswith("_ZNK3geo7Polygon4areaEv"),
                      f"{name}: demangled name, mangled system name")


# ---- go tool pprof ------------------------------------------------------------------

def top(path, index, env):
    p = run(["go", "tool", "pprof", "-top", "-unit=ns", "-nodefraction=0", "-edgefraction=0", "-nodecount=100000",
             "-sample_index=" + index, path], env=env)
    total = int(re.search(r"Total samples = (\d+)ns", p.stdout).group(1)) if "Total samples" in p.stdout else 0
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\d+)ns\s+\S+%\s+\S+%\s+(\d+)ns\s+\S+%\s+(.*)$", line)
        if m:
            rows.append((m.group(3), int(m.group(1)), int(m.group(2))))
    return total, rows, p.stdout


def check_go(args):
    if not shutil.which("go"):
        print("skipped: `go` is not installed (Debian golang-go gives `go tool pprof`)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="instr-go-")
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "cache"), GOPATH=os.path.join(tmp, "gopath"),
               GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=tmp)
    try:
        for name, dumps in inputs(args):
            rep = report(args, dumps)
            path = export(args, dumps, os.path.join(args.work, name + ".pb.gz"))
            names = [f["name"] for f in rep["functions"]]
            byname = {f["name"]: f for f in rep["functions"] if names.count(f["name"]) == 1}
            app = rep["session"]["application_available"]
            for index, key, tot in (("elapsed", "elapsed", "elapsed_inclusive_ns"),) + \
                    ((("application", "application", "application_inclusive_ns"),) if app else ()):
                total, rows, text = top(path, index, env)
                want = rep["session"]["totals"][tot]
                check(close(total, want), f"{name}: pprof {index} total {total} ns = report {want}")
                check(bool(rows), f"{name}: pprof -top lists functions")
                if not rows:
                    print(text)
                    continue
                n, fl, cu = rows[0]
                f = byname.get(n)
                check(f is not None and close(fl, f[key + "_exclusive_ns"]) and close(cu, f[key + "_inclusive_ns"]),
                      f"{name}: top function {n} ({index}) flat {fl} cum {cu} = report "
                      f"{f and f[key + '_exclusive_ns']} {f and f[key + '_inclusive_ns']}")
                bad = [(n, fl, cu) for n, fl, cu in rows if n in byname and not (
                    close(fl, byname[n][key + "_exclusive_ns"]) and close(cu, byname[n][key + "_inclusive_ns"]))]
                check(not bad, f"{name}: every listed function ({len(rows)}) flat/cum = report ({index}) {bad[:3]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["decode", "go"])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--exe", action="append", default=[])
    args = ap.parse_args()
    rc = {"decode": check_decode, "go": check_go}[args.check](args)
    return exit_status(rc)


if __name__ == "__main__":
    sys.exit(main())

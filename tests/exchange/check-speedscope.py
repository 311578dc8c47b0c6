#!/usr/bin/env python3
"""Our chrome JSON and folded stacks read by speedscope (npm package
`speedscope`: its own importer, run under node by speedscope-import.js):

  check-speedscope.py --bin BIN --src SRC --work DIR [--exe EXE...]

  chrome: one profile per thread named "program (pid P), thread (tid T)";
      every frame's label is the function's name alone (speedscope puts an
      event's args in its label: the export keeps them off calls); per
      function, summed over the threads, speedscope's total weight is the
      report's Elapsed Inclusive and its self weight the Elapsed Exclusive
      (µs); each profile's total is its thread's time in calls.
  folded: one profile; per function total = Elapsed Inclusive, self =
      Elapsed Exclusive (ns, the file's weights); its total is the session's.

On the golden exchange trace (exact) and the real programs given with
--exe.  Exit 77 = skipped (no node, or no speedscope: npm install -g
speedscope), with why.
"""
import argparse, glob, json, os, shutil, subprocess, sys

SKIP = 77
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures, run  # noqa: E402
from exchange_common import inputs, report, export  # noqa: E402


def speedscope_dir():
    """speedscope's release directory, or None and why not."""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        return None, None, "node is not installed (Debian: nodejs npm)"
    roots = [os.environ.get("SPEEDSCOPE_DIR", "")]
    if shutil.which("npm"):
        p = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True)
        roots.append(os.path.join(p.stdout.strip(), "speedscope"))
    for r in roots:
        rel = os.path.join(r, "dist", "release")
        if r and os.path.isdir(rel):
            return node, rel, None
    return None, None, "speedscope is not installed (npm install -g speedscope, or SPEEDSCOPE_DIR)"


def per_frame(read):
    self_, total = {}, {}
    for p in read["profiles"]:
        for f in p["frames"]:
            self_[f["name"]] = self_.get(f["name"], 0) + f["self"]
            total[f["name"]] = total.get(f["name"], 0) + f["total"]
    return self_, total


def compare(name, what, rep, self_, total, scale, slack):
    """Per function (unique names): total = Elapsed Inclusive, self = Elapsed Exclusive, in units of scale ns."""
    names = [f["name"] for f in rep["functions"]]
    bad = []
    for f in rep["functions"]:
        n = f["name"]
        if names.count(n) > 1:
            continue
        ok = abs(total.get(n, 0) * scale - f["elapsed_inclusive_ns"]) <= slack(f) and \
            abs(self_.get(n, 0) * scale - f["elapsed_exclusive_ns"]) <= slack(f)
        if not ok:
            bad.append((n, total.get(n), self_.get(n), f["elapsed_inclusive_ns"], f["elapsed_exclusive_ns"]))
    check(not bad, f"{name}: {what} in speedscope: per function total = Elapsed Inclusive, self = Exclusive "
                   f"({len(names)} functions) {bad[:3]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--exe", action="append", default=[])
    args = ap.parse_args()
    node, rel, why = speedscope_dir()
    if not node:
        print("SKIP: " + why)
        return SKIP
    helper = os.path.join(args.src, "speedscope-import.js")

    def load(path):
        return json.loads(run([node, helper, rel, path]).stdout)

    for name, dumps in inputs(args):
        rep = report(args, dumps)
        fnames = {f["name"] for f in rep["functions"]}
        # chrome: µs with ns decimals; a call's ends rounded to the ns
        ch = load(export(args, dumps, "chrome", os.path.join(args.work, name + ".json")))
        labels = {f["name"] for p in ch["profiles"] for f in p["frames"]}
        check(labels <= fnames, f"{name}: chrome: the labels are the functions' names, no args "
                                f"{sorted(labels - fnames)[:3]}")
        self_, total = per_frame(ch)
        compare(name, "chrome", rep, self_, total, 1000, lambda f: 2 + 2 * f["calls"] + 1e-4 * f["elapsed_inclusive_ns"])
        threads = {(t["pid"], t["tid"]): t for t in rep["threads"] if t["calls"]}
        check(len(ch["profiles"]) == len(threads) and all(p["unit"] == "microseconds" for p in ch["profiles"]),
              f"{name}: chrome: one profile per thread with calls, in microseconds ({len(ch['profiles'])})")
        want = sorted(f"{os.path.basename(next(p['program'] for p in rep['session']['programs'] if p['pid'] == pid))} "
                      f"(pid {pid}), {t['name'] or 'thread'} (tid {tid})" for (pid, tid), t in threads.items())
        check(sorted(p["name"] for p in ch["profiles"]) == want, f"{name}: chrome: profile names {want[:2]}")
        fo = load(export(args, dumps, "folded", os.path.join(args.work, name + ".folded")))
        self_, total = per_frame(fo)
        compare(name, "folded", rep, self_, total, 1, lambda f: 1 + f["calls"])
        check(abs(sum(p["total"] for p in fo["profiles"]) - rep["session"]["totals"]["elapsed_inclusive_ns"])
              <= 1 + len(rep["functions"]) * 2, f"{name}: folded: the total is the session's Elapsed")
        if name == "exchange":
            check(total.get("rec") == 6500 and self_.get("rec") == 6500 and total.get("main") == 10000 and
                  self_.get("main") == 2000, "exchange: folded: rec 6500/6500, main 10000/2000 ns")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

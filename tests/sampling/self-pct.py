#!/usr/bin/env python3
"""Self % (tools/views/self-pct.c): self-pct.py SCENARIO INSTR_SAMPLE INSTR_REPORT PLAIN INSTRUMENTED.

PLAIN and INSTRUMENTED are self-burn.c built without and with the plugin:
heavy() burns 3 times the CPU of light(); built plainly GCC names them
heavy.constprop.0 and light.isra.0 (checked: the premise of the matching).

plain:        instr-sample of PLAIN, copied under another name (a renamed
              binary), given with --self beside INSTRUMENTED's dump: Self %
              of heavy is 75 +/- 15 and of light 25 +/- 15, the column is in
              the text and CSV, JSON has self_pct per function and
              session.self_source "plain-samples" with its error; the same
              with the sampling dump as a second positional argument.
instrumented: instr-sample of INSTRUMENTED (both dumps of one run given
              together): source "instrumented-samples", the same shares.
in-run:       INSTR_SAMPLE=1000 on INSTRUMENTED: source "in-run-samples",
              the same shares.
none:         the instrumented dump alone: no Self % column, JSON self_pct
              null and self_source "none".
count:        instr-sample of COUNT (self-burn.c built mode=count, the
              sixth argument): the count report of both dumps has the exact
              calls (8 each) and Self % 75 and 25 +/- 15.
Exit 0 pass, 1 fail, 77 skip (perf events not allowed here).
"""
import json, os, shutil, subprocess, sys, tempfile

scenario, SAMPLE, REPORT, PLAIN, INSTR = sys.argv[1:6]
COUNT = sys.argv[6] if len(sys.argv) > 6 else None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check_quiet as check, failures  # noqa: E402


def run(cmd, env=None, ok=(0,)):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode == 124 and cmd[0] == SAMPLE:
        print("SKIP: perf events are not allowed here")
        sys.exit(77)
    if r.returncode not in ok:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout


def shares(args, source):
    """Self % of heavy and light from the JSON report of args."""
    j = json.loads(run([REPORT, "--format", "json", *args]))
    s = j["session"]
    check(s["self_source"] == source, f"self_source {s['self_source']!r}, expected {source!r}")
    x = s["self_sampling"]
    check(x is not None and x["samples"] >= 100, f"self_sampling with enough samples: {x}")
    if x:
        check(0 < x["top_ci95_pct"] < 15, f"a binomial error of the top share: {x['top_ci95_pct']}")
    # the instrumented rows may be clones too (the plugin runs after IPA)
    by = {f["name"].split(".")[0]: f["self_pct"] for f in j["functions"]}
    check(all("self_pct" in f for f in j["functions"]), "self_pct in every function")
    for name, want in (("heavy", 75), ("light", 25)):
        got = by.get(name)
        check(got is not None and abs(got - want) <= 15, f"Self % of {name}: {got}, expected {want} +/- 15")
    # the four values are not touched: Elapsed Exclusive stays the hooks' own
    check(abs(sum(f["elapsed_exclusive_pct"] for f in j["functions"]) - 100) < 0.01, "EE % still adds to 100")
    return by


def main():
    work = tempfile.mkdtemp(prefix="instr-self-")
    os.chmod(work, 0o755)
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "run.instr"))
    dump = os.path.join(work, "run.instr")
    if scenario == "plain":
        syms = run(["nm", PLAIN])
        check("heavy.constprop" in syms and "light.isra" in syms, "the plain build has GCC's clones (premise)")
        renamed = os.path.join(work, "another-name")
        shutil.copy(PLAIN, renamed)
        plain = os.path.join(work, "plain.instr")
        run([SAMPLE, "--rate", "2000", "-o", plain, renamed])
        run([INSTR], env=env)
        a = shares(["--self", plain, dump], "plain-samples")
        b = shares([dump, plain], "plain-samples")
        check(a == b, "--self and a second positional argument give the same Self %")
        # GCC's clones are their source function in the sampled views too,
        # and apart with --clones=split
        def names(*extra):
            return {f["name"] for f in json.loads(run([REPORT, "--format", "json", *extra, plain]))["functions"]}
        folded, split = names(), names("--clones=split")
        check({"heavy", "light"} <= folded and not any(".constprop" in n or ".isra" in n for n in folded),
              f"the sampled rows fold the clones: {sorted(n for n in folded if 'heavy' in n or 'light' in n)}")
        check(any(n.startswith("heavy.constprop") for n in split) and any(n.startswith("light.isra") for n in split),
              f"--clones=split: the clones' own rows {sorted(n for n in split if 'heavy' in n or 'light' in n)}")
        text = run([REPORT, "--self", plain, dump])
        check("Self %" in text and "Self %:" in text, "the text report has the column and its source line")
        csv = run([REPORT, "--format", "csv", "--self", plain, dump])
        check(csv.splitlines()[0].split(",")[1] == "self_pct", "CSV has self_pct after calls")
        # a sampling dump that is not one
        r = subprocess.run([REPORT, "--self", dump, dump], capture_output=True, text=True)
        check(r.returncode == 1 and "not a sampling dump" in r.stderr, f"--self of an instrumented dump refused: {r.stderr}")
    elif scenario == "instrumented":
        samp = os.path.join(work, "samp.instr")
        run([SAMPLE, "--rate", "2000", "-o", samp, INSTR], env=env)
        shares([dump, samp], "instrumented-samples")
        # Samples of the instrumented program speak for their own run only:
        # another run's dump with them is refused, naming the pid (issue 37 §4).
        other = os.path.join(work, "other.instr")
        run([INSTR], env=dict(env, INSTR_OUTPUT=other))
        r = subprocess.run([REPORT, "--self", samp, other], capture_output=True, text=True)
        check(r.returncode == 1 and "a run of the instrumented program that is not among the dumps" in r.stderr,
              f"instrumented samples of another run refused ({r.returncode}: {r.stderr.strip()})")
        # and never mixed with a plain build's samples into one Self %
        plain = os.path.join(work, "plain.instr")
        run([SAMPLE, "--rate", "2000", "-o", plain, PLAIN])
        r = subprocess.run([REPORT, dump, samp, plain], capture_output=True, text=True)
        check(r.returncode == 1 and "one Self % comes from one kind of sample" in r.stderr,
              f"plain and instrumented samples together refused ({r.returncode}: {r.stderr.strip()})")
    elif scenario == "in-run":
        run([INSTR], env=dict(env, INSTR_SAMPLE="1000"))
        shares([dump], "in-run-samples")
    elif scenario == "count":
        # COUNT: self-burn.c built mode=count: the count report of its run
        # under instr-sample has exact calls and a Self % column
        samp, counts = os.path.join(work, "samp.instr"), os.path.join(work, "count.instr")
        run([SAMPLE, "--rate", "2000", "-o", samp, COUNT], env=dict(env, INSTR_OUTPUT=counts))
        text = run([REPORT, counts, samp])
        check("Self %:" in text and "Self %  Function" in text, "the count report has the Self % line and column")
        rows = {}
        for line in text.split("Call graph")[0].splitlines():
            f = line.split()
            if len(f) >= 3 and f[0].isdigit():
                rows[f[2].split(".")[0]] = (int(f[0]), float(f[1]))
        for name, calls, want in (("heavy", 8, 75), ("light", 8, 25)):
            got = rows.get(name)
            check(got is not None and got[0] == calls and abs(got[1] - want) <= 15,
                  f"count report: {name} {got}, expected {calls} calls and Self % {want} +/- 15")
        plain = run([REPORT, counts])
        check("Self %" not in plain, "no Self % without a sampling dump")
        # --self gives the count report the same column, in either order.
        for args in (["--self", samp, counts], [counts, "--self", samp]):
            r = subprocess.run([REPORT, *args], capture_output=True, text=True)
            check(r.returncode == 0 and "Self %  Function" in r.stdout,
                  f"count report with {' '.join(a if a.startswith('-') else os.path.basename(a) for a in args)}: "
                  f"{r.returncode} {r.stderr.strip()}")
        # The files the other way round: said, with the order that works.
        r = subprocess.run([REPORT, "--self", counts, samp], capture_output=True, text=True)
        check(r.returncode == 1 and "not a sampling dump" in r.stderr and "--self SAMPLES DUMP" in r.stderr,
              f"--self COUNTS SAMPLES: the order named: {r.returncode} {r.stderr.strip()}")
    elif scenario == "none":
        run([INSTR], env=env)
        text = run([REPORT, dump])
        check("Self %  " not in text and "Self %:     none: the table ranks the instrumented run" in text
              and "instr-sample -o plain.instr <" in text,
              "no Self % column without samples, and a line saying the ranking is the instrumented run's "
              "and the step to the program's own:\n" + text[:1500])
        csv = run([REPORT, "--format", "csv", dump])
        check("self_pct" not in csv, "no self_pct in CSV without samples")
        j = json.loads(run([REPORT, "--format", "json", dump]))
        check(j["session"]["self_source"] == "none" and j["session"]["self_sampling"] is None, "self_source none")
        check(all(f["self_pct"] is None for f in j["functions"]), "self_pct null without samples")
    else:
        print("unknown scenario", scenario)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
    return 1 if failures else 0


sys.exit(main())

#!/usr/bin/env python3
"""Call counts against an independent oracle: valgrind's callgrind.

Runs an instrumented program under callgrind (which counts call
instructions executed), reports the dump instr wrote in the same run, and
checks for every instrumented function of the executable:
  - its calls equal callgrind's calls into it;
  - the calls it made (its callees in instr, instrumented or not) equal
    callgrind's calls out of it, the instr hooks left out.
So a frame exists exactly when a call instruction runs (plugin: library
builtins expanded inline make no frame, real calls to them do, also those
the optimiser made from loops).

Explained, not hidden: the calls instr does not hook by rule (docs/call-sites.md, "Call
sites": noreturn and returns_twice callees, which have no single "after")
are counted apart from callgrind's, by name (NOT_HOOKED), and printed.
Inlining makes no difference with the default inline=after: a call GCC
inlined is no call instruction, and instr instruments the code after
inlining, so neither side sees it.

--plain PLAIN: callgrind runs the same program built without the plugin
(PLAIN) instead, and instr's dump comes from an ordinary run of PROGRAM:
the instrumented program must make the calls the plain one makes (issue
20: a pure function the optimiser merges in the plain build must be
merged when instrumented too).  Functions are matched by name.

--count: PROGRAM is a count-mode build (mode=count), whose dump has calls
and no time: only the calls into each counted function are compared (its
own call sites leave out library builtins, docs/instrumenting.md).

usage: check-callgrind.py --exe PROGRAM --report INSTR-REPORT [--plain PLAIN] [--count] [--arg A]...
Exit 0 pass, 1 fail, 77 skip (no valgrind).
"""
import argparse
import collections
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

HOOKS = ("__instr_",)
# Library functions whose calls instr does not bracket by rule: noreturn
# (no "after" point) and returns_twice (the "after" would run twice), as
# callgrind names them.  Calls to them are reported apart.
NOT_HOOKED = {
    "_setjmp", "setjmp", "__sigsetjmp", "sigsetjmp", "vfork",                     # returns_twice
    "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "__libc_longjmp",         # noreturn
    "exit", "_exit", "_Exit", "abort", "__assert_fail", "__stack_chk_fail", "pthread_exit",
    "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume", "__cxa_bad_cast", "__cxa_bad_typeid",
}
# GCC moves a function's unlikely parts (a catch block) to "F.cold", a
# symbol of its own that callgrind names; it is still F's code.
COLD = re.compile(r"\.cold(\.[0-9]+)?$")
# GCC's clones ("luaL_getmetafield.part.0", "sweepgen.isra.0") are their
# origin's code: the report names them after it (tools/model/clones.c), so
# callgrind's counts of every clone go to the origin's name too.
CLONE = re.compile(r"(\.(constprop|isra|part|lto_priv|localalias|clone)(\.[0-9]+)*)+$")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def symbol_addresses(exe):
    """name -> address of the functions defined in exe: constructor and
    destructor aliases (C1/C2, D1/D2) share an address, and callgrind names
    a function by one of its symbols while instr names it by another."""
    out = subprocess.run(["nm", "--defined-only", exe], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    addr = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addr[parts[2]] = parts[0]
    return addr


def parse_callgrind(path, exe):
    """(calls into each function of exe, calls out of each function of exe)
    by mangled name; calls to instr's hook trampolines are left out."""
    calls_in = collections.Counter()
    calls_out = collections.Counter()
    not_hooked = collections.defaultdict(collections.Counter)
    ob = fn = cob = cfn = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                ob = line[3:]
            elif line.startswith("fn="):
                fn = COLD.sub("", line[3:])
                cob = cfn = None
            elif line.startswith("cob="):
                cob = line[4:]
            elif line.startswith("cfn="):
                cfn = line[4:]
                if COLD.search(cfn):
                    # Control reaching F.cold from F (an exception landing
                    # there) is no call; callgrind sees a jump between
                    # symbols as one.
                    cfn = None if COLD.sub("", cfn) == fn else COLD.sub("", cfn)
            elif line.startswith("calls="):
                n = int(line[6:].split()[0])
                callee_ob = cob if cob is not None else ob
                if cfn and not cfn.startswith(HOOKS):
                    if callee_ob == exe:
                        calls_in[cfn] += n
                    if ob == exe and fn and not fn.startswith(HOOKS):
                        if cfn in NOT_HOOKED and callee_ob != exe:
                            not_hooked[fn][cfn] += n
                        else:
                            calls_out[fn] += n
                cob = cfn = None
    return calls_in, calls_out, not_hooked


def report_csv(report, dump, *args):
    out = subprocess.run([report, "--format", "csv", *args, dump], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def report_counted(report, dump):
    """A count-mode dump's rows (text: its only format), as report_csv's:
    function, mangled (C: the same), calls, module, line."""
    out = subprocess.run([report, "--limit", "0", dump], check=True, stdout=subprocess.PIPE, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s+(\d+)\s+(\S+)\s+\((.*):(\d+)\)$", line)
        if m:
            rows.append({"function": m.group(2), "mangled": m.group(2), "calls": m.group(1), "line": m.group(4)})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--plain", help="the program built without the plugin: callgrind runs it")
    ap.add_argument("--count", action="store_true", help="PROGRAM is a count-mode build")
    a = ap.parse_args()
    valgrind = shutil.which("valgrind")
    if not valgrind:
        print("SKIP: valgrind not installed")
        sys.exit(77)
    exe = os.path.realpath(a.exe)
    work = tempfile.mkdtemp(prefix="oracle-")
    dump = os.path.join(work, "run.instr")
    cg = os.path.join(work, "callgrind.out")
    env = dict(os.environ)
    # No detector: sud and perf are not for valgrind's synthetic CPU, and
    # call counts do not depend on it.  Bind now: lazy PLT resolution would
    # add dynamic-linker calls callgrind counts and no program made.
    env.update(INSTR_DETECTOR="none", INSTR_OUTPUT=dump, LD_BIND_NOW="1")
    graded = os.path.realpath(a.plain) if a.plain else exe  # what callgrind runs
    if a.plain:
        r = subprocess.run([exe, *a.arg], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            fail("instrumented program exited %d:\n%s" % (r.returncode, r.stderr[-2000:]))
    r = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=" + cg,
                        "--dump-instr=no", "--compress-strings=no", "--compress-pos=no",
                        "--demangle=no", "--separate-recs=1", "--separate-callers=0", graded, *a.arg],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail("program under callgrind exited %d:\n%s" % (r.returncode, r.stderr[-2000:]))
    calls_in, calls_out, not_hooked = parse_callgrind(cg, graded)
    addr = symbol_addresses(graded)

    def key_of(name):
        origin = CLONE.sub("", name)
        return addr.get(origin, origin)

    def by_address(counter):
        merged = collections.Counter()
        for name, n in counter.items():
            merged[key_of(name)] += n
        return merged

    calls_in, calls_out = by_address(calls_in), by_address(calls_out)
    explained = {}
    for name, callees in not_hooked.items():
        explained.setdefault(key_of(name), collections.Counter()).update(callees)

    if a.count:
        mine = [row for row in report_counted(a.report, dump) if row["line"] != "0"]
    else:
        rows = report_csv(a.report, dump)
        mine = [row for row in rows if os.path.realpath(row["module"] or "/") == exe and row["line"] != "0"]
    if not mine:
        fail("no instrumented function of %s in the report" % exe)
    bad = []
    checked_out = 0
    apart_total = 0  # calls of the checked functions to NOT_HOOKED ones
    for row in mine:
        name, mangled, calls = row["function"], row["mangled"], int(row["calls"])
        key = key_of(mangled)
        if calls != calls_in[key]:
            bad.append("%s: called %d times in instr, %d in callgrind" % (name, calls, calls_in[key]))
        if a.count:
            print("%-40s calls %8d (callgrind %8d)" % (name[:40], calls, calls_in[key]))
            continue
        callees = report_csv(a.report, dump, "--view", "callees", mangled)
        made = sum(int(c["calls"]) for c in callees if c["role"] == "callee")
        if made != calls_out[key]:
            bad.append("%s: made %d calls in instr, %d in callgrind" % (name, made, calls_out[key]))
        checked_out += made
        apart = explained.get(key)
        apart_total += sum(apart.values()) if apart else 0
        print("%-40s calls %8d (callgrind %8d)   made %8d (callgrind %8d)%s"
              % (name[:40], calls, calls_in[key], made, calls_out[key],
                 "   not hooked by rule: " + ", ".join("%d to %s" % (n, c) for c, n in sorted(apart.items()))
                 if apart else ""))
    if bad:
        fail("\n  ".join(["call counts differ from callgrind's:"] + bad))
    apart = apart_total
    print("PASS: %d functions, %d calls into them%s equal callgrind's%s%s"
          % (len(mine), sum(int(r["calls"]) for r in mine),
             "" if a.count else " and %d calls out of them" % checked_out,
             " (and %d calls to noreturn or returns_twice functions, not hooked by rule)" % apart if apart else "",
             " on the plain build" if a.plain else ""))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

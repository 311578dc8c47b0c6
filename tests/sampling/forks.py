#!/usr/bin/env python3
"""Processes under sampling: forks.py SCENARIO INSTR_SAMPLE INSTR_REPORT SPLIT FORKS FORKS_INSTRUMENTED.

exe-name:      instr-sample -o '%e.%p.instr' names every dump after the
               program's image after exec, 20 runs in a row (the name
               once came from /proc, read after the process could be gone).
sample-forks:  instr-sample follows fork and exec: the parent, its 3 forked
               children and the exec'd image each get a dump, each sampled
               in its own work function.
hybrid-forks:  INSTR_SAMPLE in an instrumented program keeps sampling in
               fork children: the same 5 dumps, each with samples placed on
               its own work function (but the child that execs: its ring is
               drained at chunk switches and exit, and exec discards it),
               and each with its executable mappings (MAP records).
forks-unprivileged: sample-forks and hybrid-forks as uid 65534.
hybrid-rate:   the asked rate is in an INSTR_SAMPLE dump (SAMPLING record)
               and the --view samples header shows it beside the achieved;
               as root, as uid 65534 and as root in a user namespace, the
               program's status and output as its plain build's.
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

scenario, SAMPLE, REPORT, SPLIT, FORKS, FORKS_I = sys.argv[1:7]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check_quiet as check, failures, skip_unless_unprivileged_perf  # noqa: E402
from instrtest import for_every_identity  # noqa: E402


def run(cmd, env=None, **kw):
    e = dict(os.environ)
    for k in ("INSTR_SAMPLE", "INSTR_OUTPUT"):
        e.pop(k, None)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=e, **kw)


def dumps_in(work):
    return sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".instr"))


def header(path):
    """(flags, pid, ppid) of a dump (dump-format.h: magic, version, ..., flags at 20, pid, ppid)."""
    with open(path, "rb") as f:
        h = f.read(48)
    flags, = struct.unpack_from("<I", h, 20)
    pid, ppid = struct.unpack_from("<QQ", h, 24)
    return flags, pid, ppid


FORK_CHILD = 0x2


def scenario_exe_name(work):
    base = os.path.basename(SPLIT)
    for i in range(20):
        r = run([SAMPLE, "-o", os.path.join(work, "%e.%p.instr"), SPLIT, "0.01"])
        check(r.returncode == 0, "run %d exits 0 (%d: %s)" % (i, r.returncode, r.stderr))
    names = sorted(os.listdir(work))
    bad = [n for n in names if not re.fullmatch(re.escape(base) + r"\.\d+\.instr", n)]
    check(len(names) == 20 and not bad, "20 dumps named %s.<pid>.instr: %d, wrong: %s" % (base, len(names), bad))
    # the exec'd image of a fork child is named after its exec too
    sub = os.path.join(work, "forks")
    os.mkdir(sub)
    r = run([SAMPLE, "-o", os.path.join(sub, "%e.%p.instr"), FORKS])
    names = sorted(os.listdir(sub))
    fb = os.path.basename(FORKS)
    check(r.returncode == 0 and len(names) == 5 and all(n.startswith(fb + ".") for n in names),
          "forks: 5 dumps named %s.*: %s" % (fb, names))


def functions(dump, *view):
    r = run([REPORT, *view, "--format", "json", dump])
    check(r.returncode == 0, "report %s exits 0 (%d: %s)" % (dump, r.returncode, r.stderr))
    return json.loads(r.stdout) if r.returncode == 0 else None


def classify(dumps, top_pid):
    """parent / fork children / exec'd image, by the headers."""
    kinds = {}
    for d in dumps:
        flags, pid, ppid = header(d)
        if pid == top_pid:
            kinds.setdefault("parent", []).append(d)
        elif flags & FORK_CHILD:
            kinds.setdefault("child", []).append(d)
        else:
            kinds.setdefault("exec", []).append(d)
    return kinds


# The floor, of about 150 samples: in full `ctest -j2` runs one fork
# child had 54 (the hybrid, root), an exec'd image 37 (the hybrid, uid
# 65534) and a fork child 43 (instr-sample, root, fresh-clone CI), none
# reproduced alone nor beside two CPU hogs (6 runs each).  A guess, not
# shown: a cpu-clock timer delayed by the host fires once for the periods
# it missed.  30 still fails a sampler that stops.
HYBRID_FLOOR = 30


def check_processes(dumps, who, samples_of, exec_child_sampled=True, floor=HYBRID_FLOOR):
    pids = [header(d)[1] for d in dumps]
    check(len(dumps) == 5, "%s: 5 dumps (parent, 3 fork children, 1 exec'd image): %s" % (who, dumps))
    # the parent: the one whose pid is the others' ppid
    parents = {header(d)[2] for d in dumps}
    top = next((p for p in pids if p in parents), None)
    kinds = classify(dumps, top)
    exec_pids = {header(d)[1] for d in kinds.get("exec", [])}
    want = {"parent": ("parent_work", 1), "child": ("child_work", 3), "exec": ("exec_work", 1)}
    for kind, (fn, n) in want.items():
        got = kinds.get(kind, [])
        check(len(got) == n, "%s: %d %s dump(s), got %d" % (who, n, kind, len(got)))
        for d in got:
            if kind == "child" and not exec_child_sampled and header(d)[1] in exec_pids:
                # the hybrid drains its ring at chunk switches and exit: a
                # child that execs first loses what it sampled since (docs/sampling.md)
                continue
            s = samples_of(d, fn)
            # 0.15 s of CPU at 1 kHz: about 150 samples; a generous floor
            check(s >= floor, "%s: %s %s has %d samples in %s" % (who, kind, os.path.basename(d), s, fn))
    children = kinds.get("child", [])
    check(len({header(d)[1] for d in children}) == len(children), "%s: the children are distinct processes" % who)
    check(all(header(d)[2] == top for d in children), "%s: each child's parent is the parent" % who)


def scenario_sample_forks(work):
    r = run([SAMPLE, "-o", os.path.join(work, "f.%p.instr"), FORKS])
    check(r.returncode == 0, "instr-sample exits 0 (%d: %s)" % (r.returncode, r.stderr))

    def samples_of(d, fn):
        j = functions(d)
        f = {x["name"]: x for x in j["functions"]} if j else {}
        return f.get(fn, {}).get("exclusive_samples", 0)
    check_processes(dumps_in(work), "instr-sample", samples_of)


def hybrid_samples_of(d, fn):
    j = functions(d, "--view", "samples")
    if not j:
        return 0
    f = {x["name"]: x for x in j["functions"]}
    return f.get(fn, {}).get("exclusive_samples", 0)


def scenario_hybrid_forks(work):
    r = run([FORKS_I], env={"INSTR_SAMPLE": "1000", "INSTR_OUTPUT": os.path.join(work, "h.%p.instr"),
                            "INSTR_LOG": "stderr"})
    check(r.returncode == 0, "instrumented run exits 0 (%d: %s)" % (r.returncode, r.stderr))
    check_processes(dumps_in(work), "hybrid", hybrid_samples_of, exec_child_sampled=False, floor=HYBRID_FLOOR)
    # every process's dump has the executable mappings (runtime/maps.c),
    # fork children theirs too: libc's among them
    dump = os.path.join(os.path.dirname(REPORT), "instr-dump")
    for d in dumps_in(work):
        txt = run([dump, d]).stdout
        mods = dict(re.findall(r"^module (\d+) (\S+)", txt, re.M))
        maps = re.findall(r"^map (\d+) ", txt, re.M)
        check(any(mods.get(m, "").endswith("/libc.so.6") for m in maps),
              "hybrid: %s has a map of libc (maps of modules %s)" % (os.path.basename(d), maps))


def scenario_forks_unprivileged(work):
    """Both, as uid 65534 (perf_event_paranoid 2): each child opens its
    own event as the user."""
    skip_unless_unprivileged_perf()
    os.chmod(work, 0o1777)
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    progs = [shutil.copy(p, work) for p in (SAMPLE, FORKS, FORKS_I)]
    for sub in ("s", "h"):
        os.mkdir(os.path.join(work, sub))
        os.chmod(os.path.join(work, sub), 0o1777)
    r = run([*user, progs[0], "-o", os.path.join(work, "s", "%e.%p.instr"), progs[1]], cwd=work)
    check(r.returncode == 0, "instr-sample as uid 65534 (%d: %s)" % (r.returncode, r.stderr))

    def samples_of(d, fn):
        j = functions(d)
        f = {x["name"]: x for x in j["functions"]} if j else {}
        return f.get(fn, {}).get("exclusive_samples", 0)
    dumps = dumps_in(os.path.join(work, "s"))
    check(all(os.stat(d).st_uid == 65534 for d in dumps), "instr-sample's dumps belong to the user")
    check_processes(dumps, "instr-sample as uid 65534", samples_of)
    r = run([*user, progs[2]], cwd=work, env={"INSTR_SAMPLE": "1000", "INSTR_LOG": "stderr",
                                             "INSTR_OUTPUT": os.path.join(work, "h", "h.%p.instr")})
    check(r.returncode == 0 and "perf events" not in r.stderr, "hybrid as uid 65534 (%d: %s)" % (r.returncode, r.stderr))
    dumps = dumps_in(os.path.join(work, "h"))
    check(all(os.stat(d).st_uid == 65534 for d in dumps), "the hybrid's dumps belong to the user")
    check_processes(dumps, "hybrid as uid 65534", hybrid_samples_of, exec_child_sampled=False, floor=HYBRID_FLOOR)


def scenario_hybrid_rate(work):
    for_every_identity(work, (FORKS, FORKS_I), hybrid_rate_as)


def hybrid_rate_as(work, prefix):
    plain = run([*prefix, FORKS, "exec"])
    for hz in (250, 1000):
        out = os.path.join(work, "r%d.instr" % hz)
        r = run([*prefix, FORKS_I, "exec"], env={"INSTR_SAMPLE": str(hz), "INSTR_OUTPUT": out, "INSTR_LOG": "stderr"})
        check(r.returncode == 0, "run exits 0 (%s)" % r.stderr)
        err = [l for l in r.stderr.splitlines() if not l.startswith("instr:")]
        check((r.returncode, r.stdout, err) == (plain.returncode, plain.stdout, plain.stderr.splitlines()),
              "%d Hz: status and output as the plain build's (%d %r %r, plain %d %r %r)"
              % (hz, r.returncode, r.stdout, r.stderr, plain.returncode, plain.stdout, plain.stderr))
        j = functions(out, "--view", "samples")
        s = j["session"] if j else {}
        check(s.get("rate_asked_hz") == hz, "JSON rate_asked_hz %s, want %d" % (s.get("rate_asked_hz"), hz))
        ach = s.get("rate_achieved_hz", 0)
        check(0.4 * hz <= ach <= 1.2 * hz, "achieved %s near the asked %d" % (ach, hz))
        t = run([REPORT, "--view", "samples", out]).stdout
        check(re.search(r"Rate: asked %d Hz, achieved \d+ Hz" % hz, t) is not None, "text header:\n" + t[:400])
        d = run([os.path.join(os.path.dirname(REPORT), "instr-dump"), out]).stdout
        check(re.search(r"^sampling rate=%d period=%d " % (hz, 1000000000 // hz), d, re.M) is not None,
              "the SAMPLING record in the dump")


with tempfile.TemporaryDirectory() as work:
    {"exe-name": scenario_exe_name, "sample-forks": scenario_sample_forks, "hybrid-forks": scenario_hybrid_forks,
     "hybrid-rate": scenario_hybrid_rate, "forks-unprivileged": scenario_forks_unprivileged}[scenario](work)
if failures:
    sys.exit(1)
print("ok")

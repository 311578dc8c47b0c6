#!/usr/bin/env python3
"""Recording-path survival cases (issue 14 items 9, 10, 10a, 14, 17):
recorder.c built with the plugin and without (the oracle); like check.py,
the program must behave as uninstrumented, and the dump must hold every
event or say what it lost.  Exit 77 = skipped (needs root, mount...)."""
import glob, importlib.util, os, resource, shutil, subprocess, sys, tempfile

_spec = importlib.util.spec_from_file_location(
    "survival_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py"))
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)
check, report, calls, session, programs, run = sc.check, sc.report, sc.calls, sc.session, sc.programs, sc.run
SKIP = 77


def same_behaviour(inst, orc):
    check(inst.rc == orc.rc, f"exit status unchanged ({orc.rc}, got {inst.rc})")
    check(inst.stable_out == orc.stable_out, f"standard output unchanged ({orc.stable_out} / {inst.stable_out})")
    check(inst.stable_err == orc.stable_err, "standard error unchanged (apart from instr: lines)")


def both(a, args, work, **opts):
    inst_dir = opts.pop("outdir", None) or tempfile.mkdtemp(dir=work)
    orc_dir = tempfile.mkdtemp(dir=work)
    os.chmod(orc_dir, 0o777)
    orc = run([a.oracle] + args, orc_dir, **opts)
    inst = run([a.exe] + args, inst_dir, **opts)
    sys.stdout.write(inst.out)
    sys.stderr.write(inst.err)
    same_behaviour(inst, orc)
    return inst, inst_dir


def case_chroot(a, work):
    """Item 9: chroot then setuid mid-run; every later event still recorded."""
    if os.geteuid() != 0:
        print("SKIP: needs root to chroot")
        return SKIP
    jail = os.path.join(work, "jail")
    os.mkdir(jail, 0o755)
    inst, d = both(a, ["chroot", jail], work)
    dumps = glob.glob(os.path.join(d, "*.instr"))
    rep, _ = sc.one_dump(a, dumps)
    if rep:
        check(calls(rep, "work") == 301000, f"work called 301000 times ({calls(rep, 'work')})")
        check(session(rep)["dropped"] == 0, f"nothing dropped ({session(rep)['dropped']})")
        check(programs(rep)[0]["complete"], "the dump is complete")
    check(not inst.instr_lines, f"the runtime said nothing ({inst.instr_lines})")


def case_fork_exec_space(a, work):
    """Item 10: a child that forks and execs keeps little of the disk."""
    n = 40
    inst, d = both(a, ["fork-exec", str(n)], work)
    dumps = sorted(glob.glob(os.path.join(d, "*.instr")))
    check(len(dumps) == n + 1, f"{n + 1} dumps ({len(dumps)})")
    rep, _ = report(a.report, dumps)
    if rep:
        check(calls(rep, "work") == 10 * n + 100, f"work called {10 * n + 100} times ({calls(rep, 'work')})")
    parent = max(dumps, key=lambda p: os.path.getsize(p)) if dumps else None
    worst = max((os.stat(p).st_blocks * 512 for p in dumps if p != parent), default=0)
    total = sum(os.stat(p).st_blocks * 512 for p in dumps if p != parent)
    check(worst <= 256 << 10, f"each exec'd child's dump uses at most 256 KiB of disk (largest {worst >> 10} KiB)")
    print(f"# children's dumps: {total >> 10} KiB on disk for {n}")


def case_preempt(a, work):
    """Item 10a: 8 busy threads on 2 cores: the threads' Elapsed Inclusive
    covers most of the wall time they measured themselves.  Time spent in
    the runtime's chunk switches is charged to nobody; with a switch per
    64 KiB chunk that opened, mapped and unmapped the dump the ratio was
    0.16-0.18 on a loaded 2-core machine, with windows pre-faulted ahead
    0.5-0.7 there (what is left is the page-cache work of pre-faulting,
    which waits for the file system's journal under load), and close to 1
    on an idle one.  Generous: 0.4."""
    inst, d = both(a, ["preempt"], work, env_extra={"RECORDER_CALLS": "400000"})
    rep, _ = sc.one_dump(a, glob.glob(os.path.join(d, "*.instr")))
    wall = inst.value("wall_sum_ns")
    if rep and wall:
        # the raw Elapsed Inclusive: the threads' wall time includes the
        # hooks' cost, which the report subtracts by default
        ei = sum(f["elapsed_inclusive_ns"] + f.get("probe_overhead_ns", 0) for f in sc.functions(rep, "busy_body"))
        ratio = ei / wall
        print(f"# busy_body Elapsed Inclusive / measured wall, summed over 8 threads: {ratio:.3f}")
        check(ratio >= 0.4, f"Elapsed Inclusive >= 0.4 x the threads' own wall time ({ratio:.3f})")


def case_planted_names(a, work):
    """Item 14: names planted by another user in a sticky directory: the
    dump still gets written, under an unpredictable name, and it says so."""
    if os.geteuid() != 0:
        print("SKIP: needs root to plant files of another user")
        return SKIP
    shared = os.path.join(work, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    planted = ["fixed.instr"] + [f"fixed.{i}.instr" for i in range(1, 40)]
    for p in planted:
        with open(os.path.join(shared, p), "w") as f:
            f.write("planted")
        os.chown(os.path.join(shared, p), 65534, 65534)
    opts = {"env_extra": {"INSTR_OUTPUT": os.path.join(shared, "fixed.instr"), "RECORDER_CALLS": "1000"},
            "outdir": shared}
    inst, _ = both(a, ["lots"], work, **opts)
    mine = [p for p in glob.glob(os.path.join(shared, "*.instr")) if os.path.basename(p) not in planted]
    check(len(mine) == 1, f"one dump besides the planted files ({mine})")
    if mine:
        tag = os.path.basename(mine[0])[len("fixed."):-len(".instr")]
        check(not tag.isdigit(), f"an unpredictable name, not the next number ({os.path.basename(mine[0])})")
        rep, _ = sc.one_dump(a, mine)
        if rep:
            check(calls(rep, "work") == 1000, f"work called 1000 times ({calls(rep, 'work')})")
    check(all(open(os.path.join(shared, p)).read() == "planted" for p in planted), "planted files untouched")
    check(len(inst.instr_lines) == 1 and "another user" in inst.instr_lines[0],
          f"one line saying why the name changed ({inst.instr_lines})")


def case_max_size(a, work):
    """Item 17: INSTR_MAX_SIZE caps the dump; past it events are dropped,
    counted, and one line says so."""
    inst, d = both(a, ["lots"], work, env_extra={"INSTR_MAX_SIZE": "1M"})
    dumps = glob.glob(os.path.join(d, "*.instr"))
    rep, _ = sc.one_dump(a, dumps)
    if dumps:
        size = os.path.getsize(dumps[0])
        check(size <= (1 << 20), f"the dump stays within 1 MiB ({size})")
    if rep:
        got, dropped = calls(rep, "work"), session(rep)["dropped"]
        check(dropped > 0 and got < 2000000, f"events dropped and counted ({got} calls kept, {dropped} dropped)")
        check(any("dropped" in w for w in session(rep)["warnings"]), "the report warns about dropped events")
    check(len(inst.instr_lines) == 1 and "INSTR_MAX_SIZE" in inst.instr_lines[0],
          f"one line naming INSTR_MAX_SIZE ({inst.instr_lines})")


def case_max_size_tiny(a, work):
    """INSTR_MAX_SIZE below the smallest dump that records a thread (12K:
    a header page and a first chunk of a page per stream): the limit is
    kept, nothing is recorded, and the report says why (the runtime's
    note, in the dump) and exits 3."""
    inst, d = both(a, ["lots"], work, env_extra={"INSTR_MAX_SIZE": "10K"})
    dumps = glob.glob(os.path.join(d, "*.instr"))
    check(len(dumps) == 1 and os.path.getsize(dumps[0]) <= 10 << 10, f"one dump within 10 KiB ({dumps})")
    if dumps:
        p = subprocess.run([a.report, dumps[0]], capture_output=True, text=True)
        said = [l for l in p.stdout.splitlines() if "below the smallest dump that records a thread" in l]
        check(p.returncode == 3 and len(said) == 1 and "INSTR_MAX_SIZE=10K" in said[0],
              f"the report says why nothing was recorded, exit 3 ({p.returncode}, {said})")


def tmpfs(path, size):
    """A tmpfs of `size` at path (made), or None with the reason printed."""
    os.mkdir(path)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True, text=True)
    if m.returncode:
        print(f"SKIP: cannot mount a tmpfs ({m.stderr.strip()})")
        return None
    return path


def case_default_size(a, work):
    """Item 17, without INSTR_MAX_SIZE: the default cap is a quarter of the
    space free when the dump is made (at least 64 MiB); and whatever the
    cap, the processes of a session leave 2% of the file system free."""
    if os.geteuid() != 0:
        print("SKIP: needs root to mount a tmpfs")
        return SKIP
    big = tmpfs(os.path.join(work, "big"), "320m")
    if not big:
        return SKIP
    try:
        sv = os.statvfs(big)
        free = sv.f_bavail * sv.f_frsize
        # ~10 bytes a call: 12 million calls want about 120 MB, past the cap.
        inst, _ = both(a, ["lots"], work, outdir=big,
                       env_extra={"INSTR_MAX_SIZE": "", "RECORDER_CALLS": "12000000"})
        dumps = glob.glob(os.path.join(big, "*.instr"))
        size = os.path.getsize(dumps[0]) if dumps else 0
        print(f"# {free >> 20} MiB free at start, the dump {size / (1 << 20):.1f} MiB")
        check(64 << 20 <= size <= free // 4, f"the dump stops at a quarter of the free space ({size} <= {free // 4})")
        check(len(inst.instr_lines) == 1 and "INSTR_MAX_SIZE" in inst.instr_lines[0],
              f"one line naming INSTR_MAX_SIZE ({inst.instr_lines})")
        rep, _ = sc.one_dump(a, dumps)
        if rep:
            got, dropped = calls(rep, "work"), session(rep)["dropped"]
            check(dropped > 0 and got < 12000000, f"events dropped and counted ({got} calls kept, {dropped} dropped)")
    finally:
        subprocess.run(["umount", big])
    small = tmpfs(os.path.join(work, "small"), "16m")
    if not small:
        return SKIP
    try:
        # No cap per dump: 4 processes of ~20 MB each in 16 MiB.
        lines = []
        for i in range(4):
            inst, _ = both(a, ["lots"], work, outdir=small, env_extra={"INSTR_MAX_SIZE": "unlimited"})
            lines += inst.instr_lines
        sv = os.statvfs(small)
        dumps = glob.glob(os.path.join(small, "*.instr"))
        floor = sv.f_blocks * sv.f_frsize * 2 // 100
        left = sv.f_bavail * sv.f_frsize
        print(f"# {len(dumps)} dumps, {left >> 10} KiB left free of {sv.f_blocks * sv.f_frsize >> 10} KiB")
        # Each dump's header page is made before the guard is asked.
        check(left + len(dumps) * 4096 >= floor, f"2% of the file system left free ({left} + headers >= {floor})")
        check(len(lines) == 4 and all("2%" in l for l in lines),
              f"each process says one line naming the 2% guard ({lines})")
    finally:
        subprocess.run(["umount", small])


def events_of(rep):
    return session(rep)["events"] if rep else 0


def own_calls(rep):
    """Calls of the program's own instrumented functions: the rows that are
    not call sites' pseudo frames (a callee the report could not place, as
    glibc 2.40's __isoc23_strtol, is shown in the program's module)."""
    return sum(f.get("calls", 0) for f in (rep or {}).get("functions", []) if not f.get("pseudo"))


def cut_checks(a, inst, d, names, uncut, label):
    """A dump cut by a limit (issue 38 §4): it says so itself (the header's
    stop_reason, naming the limit), the report warns with it and exits 3,
    and the events lost are counted: with those recorded they make about
    as many as the uncut run recorded (each hook after the stop counts the
    one event it would have written)."""
    dumps = glob.glob(os.path.join(d, "*.instr"))
    rep, proc = sc.one_dump(a, dumps)
    if not rep:
        return
    why = programs(rep)[0].get("stop_reason", "")
    check(names in why, f"{label}: the dump's stop_reason names {names} ({why!r})")
    check(proc.returncode == 3, f"{label}: the report exits 3 ({proc.returncode})")
    warnings = session(rep)["warnings"]
    check(any(names in w and "dropped" in w for w in warnings),
          f"{label}: the report's warning says events were dropped and why ({warnings})")
    got, dropped = events_of(rep), session(rep)["dropped"]
    print(f"# {label}: {os.path.getsize(dumps[0])} bytes, {got} events recorded + {dropped} dropped; "
          f"uncut {uncut}")
    check(dropped > 0 and dropped >= (uncut[0] - got) / 2 and got + dropped <= 2 * uncut[0],
          f"{label}: the events lost are counted ({got} recorded + {dropped} dropped, uncut {uncut[0]})")
    # and the calls lost: each ENTER hook after the stop counts one (one call
    # a thread may be both, the hook its cut came in: seen once with one
    # thread at 100K of file size; with preempt's 8 threads recording when
    # the limit came, up to 2 in 12 runs, more often when their chunk
    # switches move: perf's late open)
    lost_calls = session(rep).get("dropped_calls", 0)
    nthreads = len(rep.get("threads", [])) or 1
    check(0 <= own_calls(rep) + lost_calls - uncut[1] <= nthreads,
          f"{label}: calls recorded + calls dropped = the uncut run's, but for the hook each of the "
          f"{nthreads} thread(s) was in when cut ({own_calls(rep)} + {lost_calls}, uncut {uncut[1]})")
    # one line saying the cut; a limit below the smallest dump that records
    # a thread (12K) is also said at start, before any cut
    early = [l for l in inst.instr_lines if "below the smallest dump that records a thread" in l]
    cut = [l for l in inst.instr_lines if l not in early]
    tiny = "INSTR_MAX_SIZE" in names and _size(opts_size(label)) < 12 << 10
    check(len(cut) == 1 and names in cut[0] and len(early) == (1 if tiny else 0),
          f"{label}: one line naming {names}{', and one that no call will be recorded' if tiny else ''} "
          f"({inst.instr_lines})")


def opts_size(label):
    """The INSTR_MAX_SIZE of a cut's label ("lots INSTR_MAX_SIZE {'INSTR_MAX_SIZE': '40K', ...}"), or ''."""
    import re
    m = re.search(r"'INSTR_MAX_SIZE': '([^']*)'", label)
    return m.group(1) if m else ""


def _size(v):
    """Bytes of an INSTR_MAX_SIZE value (K, M, G), a large number when unset."""
    if not v:
        return 1 << 62
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(v[-1].upper(), 1)
    return int(v.rstrip("KkMmGg")) * mult


def syscalls_after_stop(a, work):
    """A thread whose recording stopped makes no system call per hook: its
    hooks only count.  Before, each made a gettid (no state: 4 KiB) or
    three (registration retried: 40 KiB), 1.2 million for 100,000 calls,
    and the 8 threads of preempt ran 30 times longer.  Counted by strace
    (skipped without it): a few hundred for the runtime's start and end."""
    if shutil.which("strace") is None:
        print("# no strace: system calls not counted")
        return
    for opts in ({"limits": {resource.RLIMIT_FSIZE: 4096}}, {"env_extra": {"INSTR_MAX_SIZE": "40K"}}):
        out = os.path.join(tempfile.mkdtemp(dir=work), "strace.txt")
        env = dict(opts.get("env_extra", {}), RECORDER_CALLS="100000")
        r = run(["strace", "-f", "-c", "-o", out, a.exe, "lots"], tempfile.mkdtemp(dir=work), env_extra=env,
                limits=opts.get("limits"))
        total = None
        if r.rc == 0 and os.path.exists(out):
            for line in open(out):
                f = line.split()
                if f and f[-1] == "total":
                    total = int(f[3])
        print(f"# {opts}: {total} system calls for 400,000 hooks")
        check(total is not None and total < 5000, f"{opts}: no system call per hook after the stop ({total})")


def case_small_limits(a, work):
    """Issue 38 §4: a limit a few chunks small (the file size limit, or
    INSTR_MAX_SIZE) used to leave a dump that said it was complete, with
    nothing dropped: the report showed 0 threads and exited 0.  Each cut
    must be said and counted, also for threads started after the stop
    (preempt: 8 threads)."""
    runs = {}
    for mode in ("lots", "preempt"):
        inst, d = both(a, [mode], work, env_extra={"RECORDER_CALLS": "100000"})
        rep, _ = sc.one_dump(a, glob.glob(os.path.join(d, "*.instr")))
        runs[mode] = (events_of(rep), own_calls(rep))
        check(rep is not None and session(rep)["dropped"] == 0, f"{mode}: the uncut run drops nothing")
    cuts = [("lots", "RLIMIT_FSIZE", {"limits": {resource.RLIMIT_FSIZE: 4096}}),
            ("lots", "RLIMIT_FSIZE", {"limits": {resource.RLIMIT_FSIZE: 40 << 10}}),
            ("lots", "RLIMIT_FSIZE", {"limits": {resource.RLIMIT_FSIZE: 100 << 10}}),
            ("preempt", "RLIMIT_FSIZE", {"limits": {resource.RLIMIT_FSIZE: 4096}}),
            ("lots", "INSTR_MAX_SIZE", {"env_extra": {"INSTR_MAX_SIZE": "4K"}}),
            ("lots", "INSTR_MAX_SIZE", {"env_extra": {"INSTR_MAX_SIZE": "40K"}}),
            ("preempt", "INSTR_MAX_SIZE", {"env_extra": {"INSTR_MAX_SIZE": "40K"}})]
    syscalls_after_stop(a, work)
    # A child forked after its parent's stop records again, in its own dump.
    inst, d = both(a, ["stop-fork"], work, env_extra={"INSTR_MAX_SIZE": "200K", "RECORDER_CALLS": "100000"})
    dumps = sorted(glob.glob(os.path.join(d, "*.instr")), key=os.path.getmtime)
    check(len(dumps) == 2, f"stop-fork: two dumps ({dumps})")
    kids = []
    for p in dumps:
        rep, _ = report(a.report, [p])
        if rep and programs(rep)[0].get("fork_child"):
            kids.append(rep)
    check(len(kids) == 1 and calls(kids[0], "work") == 1000 and session(kids[0])["dropped"] == 0,
          f"stop-fork: the child's dump holds its 1000 calls, nothing dropped "
          f"({[(calls(k, 'work'), session(k)['dropped']) for k in kids]})")
    for mode, names, opts in cuts:
        opts = dict(opts)
        opts["env_extra"] = dict(opts.get("env_extra", {}), RECORDER_CALLS="100000")
        label = f"{mode} {names} {opts.get('limits') or opts['env_extra']}"
        inst, d = both(a, [mode], work, **opts)
        cut_checks(a, inst, d, names, runs[mode], label)


def case_full_tmpfs(a, work):
    """Issue 38 §4: a nearly full small tmpfs (2 MiB, filled up to 64 KiB
    from the end: room for the header, none for a chunk past the 2%
    guard).  Root only (mount); the same checks as small-limits."""
    if os.geteuid() != 0:
        print("SKIP: needs root to mount a tmpfs")
        return SKIP
    small = tmpfs(os.path.join(work, "small"), "2m")
    if not small:
        return SKIP
    try:
        inst, d = both(a, ["lots"], work, env_extra={"RECORDER_CALLS": "100000"})
        rep = sc.one_dump(a, glob.glob(os.path.join(d, "*.instr")))[0]
        uncut = (events_of(rep), own_calls(rep))
        sv = os.statvfs(small)
        with open(os.path.join(small, "filler"), "wb") as f:
            f.write(b"x" * (sv.f_bavail * sv.f_frsize - (64 << 10)))
        out = os.path.join(small, "out")
        os.mkdir(out)
        inst, d = both(a, ["lots"], work, outdir=out, env_extra={"RECORDER_CALLS": "100000"})
        cut_checks(a, inst, d, "No space left on device", uncut, "lots on a full tmpfs")
    finally:
        subprocess.run(["umount", small])


CASES = {"small-limits": case_small_limits, "full-tmpfs": case_full_tmpfs,
         "default-size": case_default_size, "chroot": case_chroot, "fork-exec-space": case_fork_exec_space, "preempt": case_preempt,
         "planted-names": case_planted_names, "max-size": case_max_size, "max-size-tiny": case_max_size_tiny}


def main():
    return sc.cases_main(CASES, ("--oracle", dict(required=True)))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Address space (issue 14 item 8): address-space.c built with the plugin and
without (the oracle), under a low RLIMIT_AS.  The program must behave as
uninstrumented, its threads must record, and what the runtime could not
record must be counted and said, never dropped silently.  Each case also
runs as an unprivileged user (the limits are the same for everyone, but
the runtime's fallbacks differ).  Exit 77 = skipped."""
import glob, importlib.util, os, resource, shutil, subprocess, sys, tempfile

_spec = importlib.util.spec_from_file_location(
    "survival_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py"))
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)
check, report, calls, session, programs, run = sc.check, sc.report, sc.calls, sc.session, sc.programs, sc.run
SKIP = 77


def both(a, args, work, user, **opts):
    inst_dir, orc_dir = tempfile.mkdtemp(dir=work), tempfile.mkdtemp(dir=work)
    for d in (inst_dir, orc_dir):
        os.chmod(d, 0o777)
    orc = run([a.oracle] + args, orc_dir, user=user, **opts)
    inst = run([a.exe] + args, inst_dir, user=user, **opts)
    sys.stdout.write(inst.out)
    sys.stderr.write(inst.err)
    who = "as nobody" if user else "as root"
    check(orc.rc == 0, f"{who}: the uninstrumented program succeeds (the test's premise: {orc.rc}, {orc.out!r})")
    check(inst.rc == orc.rc, f"{who}: exit status unchanged ({orc.rc}, got {inst.rc})")
    check(inst.stable_out == orc.stable_out, f"{who}: output unchanged ({orc.stable_out} / {inst.stable_out})")
    return inst, sorted(glob.glob(os.path.join(inst_dir, "*.instr")))


def users():
    out = [False]
    if os.geteuid() == 0 and shutil.which("setpriv"):
        out.append(True)
    return out


def case_malloc(a, work):
    """`ulimit -v 200000`, then a 100 MiB malloc: works plain, must work
    instrumented, and every call is recorded."""
    for user in users():
        inst, dumps = both(a, ["malloc", "100"], work, user, limits={resource.RLIMIT_AS: 200000 * 1024})
        rep, proc = sc.one_dump(a, dumps)
        if rep:
            check(calls(rep, "work") == 100, f"work called 100 times ({calls(rep, 'work')})")
            check(session(rep)["dropped"] == 0, f"nothing dropped ({session(rep)['dropped']})")
            check(proc.returncode == 0, f"report without warnings (exit {proc.returncode}: {proc.stderr.strip()})")


def case_threads(a, work):
    """RLIMIT_AS lowered to what 5 threads of 256 KiB stacks need plus
    1 MiB each, before they start: each thread records all its calls."""
    for user in users():
        inst, dumps = both(a, ["threads"], work, user)
        rep, proc = sc.one_dump(a, dumps)
        if rep:
            check(calls(rep, "work") == 5100, f"work called 5 x 1000 + 100 times ({calls(rep, 'work')})")
            check(len(rep["threads"]) == 6, f"6 threads recorded ({len(rep['threads'])})")
            check(session(rep)["dropped"] == 0, f"nothing dropped ({session(rep)['dropped']})")
            check(proc.returncode == 0, f"report without warnings (exit {proc.returncode}: {proc.stderr.strip()})")


def case_tight(a, work):
    """RLIMIT_AS lowered to the process's size, threads on stacks the
    program mapped before: the threads run, the runtime cannot map their
    state.  The report must say so: a warning naming the unrecorded
    threads, their events counted as dropped, exit code 3."""
    for user in users():
        inst, dumps = both(a, ["tight"], work, user)
        rep, proc = sc.one_dump(a, dumps)
        if not rep:
            continue
        shown = len(rep["threads"])
        got = calls(rep, "work")
        warnings = session(rep)["warnings"]
        lost = [w for w in warnings if "recorded nothing" in w]
        print(f"# {shown} thread(s) shown, {got} calls kept, {session(rep)['dropped']} events dropped; {warnings}")
        check(got == 5100 or lost, f"all calls recorded, or a warning says which threads were not ({warnings})")
        if lost:
            n = int(lost[0].split(": ")[1].split(" ")[0])
            check(shown + n == 6, f"threads shown + threads not recorded = 6 ({shown} + {n})")
            # Each lost thread's 1000 calls (and thread_body's) are 2 events each.
            check(session(rep)["dropped"] >= n * 2002,
                  f"their events counted as dropped (>= {n * 2002}: {session(rep)['dropped']})")
        if got < 5100:
            check(proc.returncode == 3, f"a report with missing threads exits 3 ({proc.returncode})")
            text, _ = report(a.report, dumps, "text")
            check(text is not None and "recorded nothing" in text.split("\n\n")[0],
                  "the text report's header says threads recorded nothing")


def case_vm(a, work):
    """Not a pass/fail check of behaviour: the address space the runtime
    reserves, instrumented minus plain, with 1 and 8 threads (printed), and
    at most 2 MiB + 1 MiB per thread over the plain program.  Both runs
    with one malloc arena: a thread's first malloc may reserve a 64 MiB
    arena (and trim it) or not, by timing, which swung VmPeak by 64 MiB
    between two runs of the same program."""
    one_arena = {"MALLOC_ARENA_MAX": "1"}
    for n in (1, 8):
        inst, _ = both(a, ["vm", str(n)], work, False, env_extra=one_arena)
        orc = run([a.oracle, "vm", str(n)], tempfile.mkdtemp(dir=work), env_extra=one_arena)
        vi, vo = inst.value("VmSize"), orc.value("VmSize")
        pi, po = inst.value("VmPeak"), orc.value("VmPeak")
        if None in (vi, vo, pi, po):
            check(False, "VmSize and VmPeak printed")
            continue
        print(f"# {n} thread(s): VmPeak {pi} kB instrumented, {po} kB plain (+{pi - po} kB); "
              f"VmSize {vi} kB / {vo} kB (+{vi - vo} kB)")
        limit = 2048 + 1024 * n
        check(pi - po <= limit, f"{n} thread(s): the runtime adds at most {limit} kB of VmPeak (+{pi - po})")


CASES = {"malloc": case_malloc, "threads": case_threads, "tight": case_tight, "vm": case_vm}


def main():
    return sc.cases_main(CASES, ("--oracle", dict(required=True)))


if __name__ == "__main__":
    sys.exit(main())

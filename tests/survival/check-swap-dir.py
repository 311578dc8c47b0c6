#!/usr/bin/env python3
"""Issue 14 item 14, the swapped directory: a root-run program whose
working directory lies in a directory another user controls.  After it
started, that user renames the directory and puts a symbolic link to a
directory of theirs in its place; then the program forks.  The child's
dump must be created in the directory opened at start (openat on the
descriptor kept since then), never through the link.  Exit 77 = skipped."""
import argparse, glob, importlib.util, os, subprocess, sys, tempfile

_spec = importlib.util.spec_from_file_location(
    "survival_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py"))
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)
check, calls, report = sc.check, sc.calls, sc.report


def run(exe, cwd, swap):
    env = dict(os.environ, INSTR_LOG="stderr")
    env.pop("INSTR_OUTPUT", None)  # the default: <exe>.<pid>.instr in the working directory
    p = subprocess.Popen([exe], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    swap()
    out, err = p.communicate("go\n", timeout=60)
    return p.returncode, first + out, err


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--exe", "--oracle", "--report"):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root to give a directory to another user")
        return 77
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o755)
        results = {}
        for name, exe in (("plain", a.oracle), ("instr", a.exe)):
            theirs = os.path.join(work, name + "-theirs")  # the other user's directory
            os.mkdir(theirs)
            os.chown(theirs, 65534, 65534)
            cwd = os.path.join(theirs, "run")
            os.mkdir(cwd)
            os.chown(cwd, 65534, 65534)
            os.chmod(cwd, 0o777)
            evil = os.path.join(theirs, "elsewhere")
            os.mkdir(evil)
            os.chown(evil, 65534, 65534)
            os.chmod(evil, 0o777)

            def swap():
                os.rename(cwd, cwd + ".old")
                os.symlink(evil, cwd)

            results[name] = run(exe, cwd, swap)
            results[name + "-dirs"] = (cwd + ".old", evil)
        (orc_rc, orc_out, _), (rc, out, err) = results["plain"], results["instr"]
        sys.stdout.write(out)
        sys.stderr.write(err)
        check(orc_rc == 0 and rc == orc_rc, f"exit status unchanged ({orc_rc}, got {rc})")
        check(out == orc_out, "standard output unchanged")
        started, evil = results["instr-dirs"]
        in_started = sorted(glob.glob(os.path.join(started, "*.instr")))
        in_evil = glob.glob(os.path.join(evil, "*.instr"))
        check(not in_evil, f"no dump through the swapped-in link ({in_evil})")
        check(len(in_started) == 2, f"the parent's and the child's dumps in the directory opened at start ({in_started})")
        if len(in_started) == 2:
            rep, proc = report(a.report, in_started)
            if rep:
                check(calls(rep, "work") == 210, f"work called 100 + 10 + 100 times ({calls(rep, 'work')})")
    print(f"{len(sc.e2e.failures)} failed")
    return 1 if sc.e2e.failures else 0


if __name__ == "__main__":
    sys.exit(main())

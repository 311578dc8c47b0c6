"""instrtest.py - what the Python checkers of every test area share: one
list of failed checks and the two ways of recording one.

A checker puts tests/lib on its path and imports what it uses:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from instrtest import check, failures

and ends with `sys.exit(1 if failures else 0)` (or its own wording of
that).  check() prints one line per check, ok or FAIL; check_quiet()
prints only the failures, for checkers that test the same property of
many rows and would bury the failure among thousands of ok lines."""

failures = []


def check(cond, what):
    """Records what as failed unless cond; prints "ok    what" or
    "FAIL  what"."""
    if not cond:
        failures.append(what)
    print(("ok    " if cond else "FAIL  ") + what)


def check_quiet(cond, what):
    """Records what as failed unless cond, and prints it then only."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)



def exit_status(rc=None):
    """A checker's exit status: 77 when rc says its check skipped, else 1
    (after a line counting them) when a check failed, else 0."""
    if rc == 77:
        return 77
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0

def run(cmd, ok=(0,), timeout=600, tail=None, **kw):
    """Runs cmd capturing its text output; an exit status not in ok ends
    the checker (its output, or its last tail characters, on stderr)."""
    import subprocess
    import sys
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode not in ok:
        sys.stderr.write(p.stdout[-tail:] + p.stderr[-tail:] if tail else p.stdout + p.stderr)
        raise SystemExit(f"{cmd[0]} exited {p.returncode}")
    return p


def skip_unless_unprivileged_perf():
    """Ends the checker as skipped (exit 77) unless it can run a tool as
    uid 65534 that opens perf events of its own: root with setpriv, and
    perf_event_paranoid at most 2."""
    import os
    import shutil
    import sys
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("needs root and setpriv: skipped")
        sys.exit(77)
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        if int(f.read()) > 2:
            print("perf_event_paranoid > 2: skipped")
            sys.exit(77)

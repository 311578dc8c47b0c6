"""instrtest.py - what the Python checkers of every test area share: one
list of failed checks and the two ways of recording one, and the
identities a case runs as (issue 22: as root, as an ordinary user, as root
in a user namespace).

A checker puts tests/lib on its path and imports what it uses:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from instrtest import check, failures

and ends with `sys.exit(1 if failures else 0)` (or its own wording of
that).  check() prints one line per check, ok or FAIL; check_quiet()
prints only the failures, for checkers that test the same property of
many rows and would bury the failure among thousands of ok lines."""

import contextlib

failures = []
_as = []


@contextlib.contextmanager
def checking_as(who):
    """While it lasts, every check's message starts with who (the identity
    a case runs as), so that a failure says which one failed.  None adds
    nothing."""
    _as.append(who)
    try:
        yield
    finally:
        _as.pop()


def _named(what):
    who = [w for w in _as if w]
    return ", ".join(who) + ": " + what if who else what


def check(cond, what):
    """Records what as failed unless cond; prints "ok    what" or
    "FAIL  what"."""
    what = _named(what)
    if not cond:
        failures.append(what)
    print(("ok    " if cond else "FAIL  ") + what)


def check_quiet(cond, what):
    """Records what as failed unless cond, and prints it then only."""
    if not cond:
        what = _named(what)
        failures.append(what)
        print("FAIL:", what)


# setpriv's arguments that make a command run as uid 65534 (nobody), with
# no supplementary groups.
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def identities(*paths, uid=65534, pid_namespace=False):
    """The identities a case runs as, (name, command prefix) pairs.  As
    root: root itself, uid `uid` (setpriv) and root in a user namespace
    without capabilities outside it (unshare -Ur); as anyone else: that
    user and root in a user namespace.  pid_namespace adds PID 1 of a PID
    namespace (unshare -Urpf --mount-proc: a container's init).

    An identity that cannot start (no setpriv, user namespaces refused) or
    cannot read and run every one of paths (a build under a directory
    uid 65534 may not enter) is left out with a line saying why; a line
    names the identities kept, so that a run under fewer shows it.

    INSTR_TEST_IDENTITIES=self keeps the invoking user only: the sanitizer
    run (scripts/ci-extra.sh), which checks the tools' memory on the dumps,
    not the runtime's behaviour under each identity, which the ordinary
    run does."""
    import os
    import shutil
    import subprocess

    def starts(prefix):
        return subprocess.run([*prefix, "true"], capture_output=True).returncode == 0

    if os.environ.get("INSTR_TEST_IDENTITIES") == "self":
        who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
        print(f"identities: {who} (INSTR_TEST_IDENTITIES=self)")
        return [(who, [])]
    ids, left = [], []
    if os.geteuid() == 0:
        ids.append(("root", []))
        if not shutil.which("setpriv"):
            left.append(f"uid {uid}: no setpriv")
        else:
            ids.append((f"uid {uid}", ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]))
    else:
        ids.append((f"uid {os.geteuid()}", []))
    userns = ["unshare", "-Ur"]
    if shutil.which("unshare") and starts(userns):
        ids.append(("root in a user namespace", userns))
        pidns = ["unshare", "-Urpf", "--mount-proc"]
        if pid_namespace and starts(pidns):
            ids.append(("PID 1 of a PID namespace", pidns))
        elif pid_namespace:
            left.append("PID 1 of a PID namespace: unshare -Urpf --mount-proc refused")
    else:
        left.append("root in a user namespace: unshare -Ur refused or missing")
    # Each path must be readable, and runnable if it is a program.
    tests = [t for p in paths for t in (["-r", p], ["-x", p])[:2 if os.stat(p).st_mode & 0o111 else 1]]
    probe = " && ".join("test %s \"$%d\"" % (t[0], n + 1) for n, t in enumerate(tests)) or "true"
    kept = []
    for who, prefix in ids:
        if prefix and subprocess.run([*prefix, "sh", "-c", probe, "sh", *(t[1] for t in tests)],
                                    capture_output=True).returncode:
            left.append(f"{who}: cannot read or run {', '.join(paths)}")
        else:
            kept.append((who, prefix))
    for why in left:
        print("identity left out:", why)
    print("identities:", ", ".join(who for who, _ in kept))
    return kept


def open_dir(parent):
    """A new directory under parent that every identity may write (the
    dumps' directory of a run as any of them)."""
    import os
    import tempfile
    d = tempfile.mkdtemp(dir=parent)
    os.chmod(d, 0o777)
    return d


@contextlib.contextmanager
def big_dump_report(gen, bindir, work, name, events, threads):
    """A synthetic dump of events over threads (tests/report/gen-big-dump
    gen) in work, reported as JSON: yields (the report's completed process,
    the dump's size, the report's peak RSS in bytes), then removes the
    dump."""
    import os
    import resource
    import subprocess
    os.makedirs(work, exist_ok=True)
    dump = os.path.join(work, name)
    subprocess.run([gen, dump, str(events), str(threads)], check=True)
    try:
        p = subprocess.run([os.path.join(bindir, "instr-report"), "--format", "json", dump],
                           capture_output=True, text=True,
                           env=dict(os.environ, INSTR_REPORT_CACHE="off"))  # the walk is measured
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        check(p.returncode == 0, f"report exit {p.returncode} {p.stderr[-300:]}")
        yield p, os.path.getsize(dump), rss
    finally:
        os.remove(dump)


def for_every_identity(work, paths, case, **kw):
    """Runs case(directory, command prefix) once as each of
    identities(*paths, **kw), in a fresh directory under work (made
    enterable by all of them), its checks named by the identity; a line
    says each one was checked."""
    import os
    os.chmod(work, 0o755)
    for who, prefix in identities(*paths, **kw):
        with checking_as(who):
            case(open_dir(work), prefix)
        print("%s: checked" % who)



def exit_status(rc=None):
    """A checker's exit status: 77 when rc says its check skipped, else 1
    (after a line counting them) when a check failed, else 0."""
    if rc == 77:
        return 77
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0

def complete_dump_json(report, dump):
    """instr-report --format json of dump, checked to exit 0 (a complete
    dump): the parsed report, or None where there is none to read."""
    import json
    import subprocess
    r = subprocess.run([report, "--format", "json", dump], capture_output=True, text=True)
    check(r.returncode == 0, f"the report exits 0: a complete dump ({r.returncode}: {r.stderr.strip()[:300]})")
    if r.returncode not in (0, 3):
        return None
    return json.loads(r.stdout)


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

"""Shared by the e2e checkers (check-cpu.py, check-sigprof.py,
check-wall.py): the ok/FAIL lines, their arguments, and one run of the
instrumented program recording into a scratch directory."""
import argparse, glob, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures  # noqa: E402


def parse_args(dump_tool=False):
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--report", required=True)
    if dump_tool:
        ap.add_argument("--dump-tool", required=True)
    return ap.parse_args()


def run_recorded(exe, work):
    """Runs exe in work with its dumps there; checks it exits 0; returns
    the finished process and the dumps' paths."""
    env = dict(os.environ, INSTR_OUTPUT=os.path.join(work, "%e.%p.instr"))
    proc = subprocess.run([exe], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write(proc.stdout)
    check(proc.returncode == 0, "program exit status 0")
    return proc, glob.glob(os.path.join(work, "*.instr"))

#!/usr/bin/env python3
"""check-pmpi.py - the PMPI wrappers (libinstr-mpi-MPI.so) on a job with
known messages (label "mpi").

Builds msgs.c (tests/mpi/msgs.c says what each rank sends and receives)
with the plugin, linked with -linstr-mpi-MPI, runs it with 4 ranks and
checks each rank's EXT MPI events in the dumps' text form: every call
there with its peer, tag, communicator and bytes, the receives' source and
size from the status, the requests of Isend/Irecv named again by their
Wait/Waitall, the collectives numbered alike on every rank, and nothing
recorded between MPI_Pcontrol(0) and MPI_Pcontrol(1) (the switch's EXT
SWITCH events there instead).

usage: check-pmpi.py MPI(openmpi|mpich) --bin DIR --plugin SO --src DIR --work DIR [--uid 65534]
Exit 77: this MPI or its wrapper library is not there.
"""
import argparse, os, re, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib
cm = importlib.import_module("check-mpi")

NRANKS = cm.NRANKS
CALLS = {1: "MPI_Init", 2: "MPI_Finalize", 3: "MPI_Send", 5: "MPI_Isend", 6: "MPI_Recv", 7: "MPI_Irecv",
         9: "MPI_Wait", 10: "MPI_Waitall", 11: "MPI_Barrier", 12: "MPI_Bcast", 14: "MPI_Allreduce"}
FIELDS = {1: "peer", 2: "tag", 3: "comm", 4: "sent", 5: "received", 6: "source", 7: "rtag", 8: "root", 9: "seq",
          10: "request", 11: "size"}


def mpi_events(binp, dump):
    """[(call name, ticks, {field: value})] of the dump, and its switch events."""
    out = cm.run([os.path.join(binp, "instr-dump"), dump]).stdout
    calls, switches = [], []
    for line in out.splitlines():
        t = line.split()
        if len(t) >= 5 and t[2] == "mpi":
            calls.append([CALLS.get(int(t[3]), t[3]), int(t[4]), {}])
        elif len(t) >= 5 and t[2] == "mpi-field":
            name = FIELDS[int(t[3])]
            if not calls or name in calls[-1][2]:
                cm.fail("%s: mpi-field %s with no MPI event before it, or twice" % (dump, name))
            calls[-1][2][name] = int(t[4])
        elif len(t) >= 4 and t[2] == "switch":
            switches.append(int(t[3]))
    return calls, switches


def expected(r):
    n = NRANKS
    nx, pv = (r + 1) % n, (r - 1) % n
    send = ("MPI_Send", {"peer": nx, "tag": r, "comm": 0, "sent": r * 100 + 8})
    recv = ("MPI_Recv", {"peer": pv, "tag": -1, "comm": 0, "received": pv * 100 + 8, "source": pv, "rtag": pv})
    want = [("MPI_Init", {})] + ([send, recv] if r % 2 == 0 else [recv, send])
    want += [("MPI_Irecv", {"peer": pv, "tag": 100 + pv, "comm": 0, "request": 1}),
             ("MPI_Isend", {"peer": nx, "tag": 100 + r, "comm": 0, "sent": 4 * (r + 1), "request": 2}),
             ("MPI_Waitall", {"peer": pv, "tag": 100 + pv, "comm": 0, "request": 1, "received": 4 * (pv + 1),
                              "source": pv, "rtag": 100 + pv}),
             ("MPI_Waitall", {"peer": nx, "tag": 100 + r, "comm": 0, "request": 2}),
             ("MPI_Irecv", {"peer": pv, "tag": 200, "comm": 0, "request": 3}),
             ("MPI_Send", {"peer": nx, "tag": 200, "comm": 0, "sent": 24}),
             ("MPI_Wait", {"peer": pv, "tag": 200, "comm": 0, "request": 3, "received": 24, "source": pv,
                           "rtag": 200}),
             ("MPI_Barrier", {"comm": 0, "seq": 0, "size": n}),
             ("MPI_Bcast", {"comm": 0, "seq": 1, "size": n, "root": 0,
                            ("sent" if r == 0 else "received"): 64}),
             ("MPI_Allreduce", {"comm": 0, "seq": 2, "size": n, "sent": 32}),
             # the Barrier between Pcontrol(0) and (1) was seq 3, not recorded
             ("MPI_Barrier", {"comm": 0, "seq": 4, "size": n}),
             ("MPI_Finalize", {})]
    return want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mpi", choices=sorted(cm.MPIS))
    ap.add_argument("--bin", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--uid", type=int)
    a = ap.parse_args()
    m = cm.MPIS[a.mpi]
    libdir = os.path.dirname(os.path.abspath(a.plugin))
    if not shutil.which(m["cc"]) or not shutil.which(m["run"]) or \
            not os.path.exists(os.path.join(libdir, "libinstr-mpi-%s.so" % a.mpi)):
        print("%s or libinstr-mpi-%s.so not there: skipped" % (a.mpi, a.mpi))
        sys.exit(77)
    if a.uid is not None and (os.geteuid() != 0 or not shutil.which("setpriv")):
        print("not root or no setpriv: skipped")
        sys.exit(77)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "home"))
    if a.uid is not None:
        os.chmod(work, 0o755)
        os.chown(os.path.join(work, "home"), a.uid, a.uid)
    exe = os.path.join(work, "msgs")
    env = dict(os.environ)
    env.update(m["env"])
    cm.run([m["cc"], "-O2", "-g", "-fplugin=" + a.plugin, os.path.join(a.src, "msgs.c"), "-o", exe,
            "-L" + libdir, "-linstr-mpi-" + a.mpi, "-Wl,-rpath," + libdir], env=env)
    os.chmod(exe, 0o755)
    run_dir = os.path.join(work, "run")
    os.makedirs(run_dir)
    if a.uid is not None:
        os.chmod(run_dir, 0o777)
    cm.launch(m, exe, run_dir, work, a.uid, steps="1")
    jdir = os.path.join(run_dir, next(e for e in os.listdir(run_dir) if e.endswith(".instr.d")))
    for d in sorted(os.listdir(jdir)):
        r = int(re.match(r"rank(\d+)\.", d).group(1))
        calls, switches = mpi_events(a.bin, os.path.join(jdir, d))
        got = [(c[0], c[2]) for c in calls]
        want = expected(r)
        if got != want:
            fail_lines = ["rank %d: MPI events differ" % r]
            for i in range(max(len(got), len(want))):
                g = got[i] if i < len(got) else None
                w = want[i] if i < len(want) else None
                fail_lines.append("%s %s\n   want %s" % ("  " if g == w else "!!", g, w))
            cm.fail("\n".join(fail_lines))
        if switches != [0, 1]:
            cm.fail("rank %d: switch events %s, not off then on (MPI_Pcontrol)" % (r, switches))
        # the ticks a call took: Init's the longest of the small job's calls but Finalize's
        if not all(c[1] >= 0 for c in calls) or calls[0][1] < max(c[1] for c in calls[1:-1]):
            cm.fail("rank %d: call ticks %s" % (r, [(c[0], c[1]) for c in calls]))
    # a program not built with the plugin, the library linked: the calls pass through, nothing written
    plain = os.path.join(work, "msgs-plain")
    cm.run([m["cc"], "-O2", os.path.join(a.src, "msgs.c"), "-o", plain, "-L" + libdir, "-linstr-mpi-" + a.mpi,
            "-Wl,-rpath," + libdir], env=env)
    os.chmod(plain, 0o755)
    pdir = os.path.join(work, "plain")
    os.makedirs(pdir)
    if a.uid is not None:
        os.chmod(pdir, 0o777)
    cm.launch(m, plain, pdir, work, a.uid, steps="1")
    if os.listdir(pdir):
        cm.fail("a plain build with the wrappers wrote %s" % os.listdir(pdir))
    print("pmpi: %d ranks' MPI events as sent" % NRANKS)
    print("ok")


if __name__ == "__main__":
    main()

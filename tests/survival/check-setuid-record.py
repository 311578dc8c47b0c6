#!/usr/bin/env python3
"""Issue 14 item 13 with -DINSTR_RECORD_SETUID: a set-user-ID program built
to record loads its runtime only from where only root can write.  The
binding (binding-gen: the plugin's assembly, built with INSTR_RECORD_SETUID)
is linked into small set-user-ID-root programs whose runtime path points at
a library (planted.c) that leaves a marker with its effective user ID.  Run
as uid 65534:
  - runtime in a world-writable directory: not loaded;
  - runtime owned by the user, in a root-owned directory: not loaded;
  - a root-owned symbolic link to a runtime in a writable directory: not loaded;
  - a root-owned runtime under root-owned, unwritable directories: loaded
    (the check does not just refuse everything);
and without set-user-ID the writable one is loaded (the test's premise).
Exit 77 = skipped (needs root, setpriv, a root-owned build tree)."""
import argparse, os, shutil, stat, subprocess, sys, tempfile

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, failures  # noqa: E402


def safe_chain(path):
    p = os.path.abspath(path)
    while True:
        st = os.stat(p)
        if st.st_uid != 0 or st.st_mode & 0o022:
            return False
        if p == "/":
            return True
        p = os.path.dirname(p)


def build(a, runtime, out):
    asm = subprocess.run([a.gen, runtime], capture_output=True, text=True, check=True).stdout
    s = out + ".s"
    with open(s, "w") as f:
        f.write(asm)
    subprocess.run([a.cc, "-o", out, a.main, s, "-ldl"], check=True)
    os.chown(out, 0, 0)
    os.chmod(out, 0o4755)
    return out


def plant(a, path, owner=0):
    shutil.copy(a.planted, path)
    os.chown(path, owner, owner)
    os.chmod(path, 0o755)


def ran(dirs):
    """The marker the planted library left (next to the path it was loaded by)."""
    text = None
    for d in dirs if isinstance(dirs, list) else [dirs]:
        m = os.path.join(d, "planted-ran")
        if os.path.exists(m):
            text = open(m).read().strip()
            os.unlink(m)
    return text


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--gen", "--cc", "--main", "--planted", "--work"):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        print("SKIP: needs root and setpriv")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.chmod(a.work, 0o755)
    if not safe_chain(a.work):
        print(f"SKIP: {a.work} or a directory above it is not root-owned and unwritable by others")
        return 77
    writable = tempfile.mkdtemp(dir=a.work)
    os.chmod(writable, 0o777)
    safe = tempfile.mkdtemp(dir=a.work)
    os.chmod(safe, 0o755)
    cases = []
    # A world-writable directory.
    plant(a, os.path.join(writable, "libinstr-rt.so"))
    cases.append(("a runtime in a world-writable directory", os.path.join(writable, "libinstr-rt.so"),
                  writable, False))
    # Owned by the user, in a root-owned directory.
    userdir = tempfile.mkdtemp(dir=a.work)
    os.chmod(userdir, 0o755)
    plant(a, os.path.join(userdir, "libinstr-rt.so"), owner=65534)
    cases.append(("a runtime owned by uid 65534", os.path.join(userdir, "libinstr-rt.so"), userdir, False))
    # A root-owned link to the writable one.
    linkdir = tempfile.mkdtemp(dir=a.work)
    os.chmod(linkdir, 0o755)
    os.symlink(os.path.join(writable, "libinstr-rt.so"), os.path.join(linkdir, "libinstr-rt.so"))
    cases.append(("a root-owned link to a runtime in a writable directory",
                  os.path.join(linkdir, "libinstr-rt.so"), [linkdir, writable], False))
    # Root's, under root-owned unwritable directories.
    plant(a, os.path.join(safe, "libinstr-rt.so"))
    cases.append(("a root-owned runtime under unwritable directories", os.path.join(safe, "libinstr-rt.so"),
                  safe, True))
    if subprocess.run(NOBODY + ["test", "-x", a.work], capture_output=True).returncode:
        print("SKIP: uid 65534 cannot reach the work directory")
        return 77
    for i, (what, rt, marker_dir, loads) in enumerate(cases):
        exe = build(a, rt, os.path.join(a.work, f"suid-{i}"))
        if i == 0:
            # Premise: without set-user-ID the planted library is loaded.
            subprocess.run([exe], capture_output=True)
            check(ran(marker_dir) is not None, "an ordinary run loads the planted library (the test's premise)")
        p = subprocess.run(NOBODY + [exe], capture_output=True, text=True, cwd=a.work)
        check(p.returncode == 0 and p.stdout.strip() == "euid 0",
              f"{what}: the set-user-ID program runs ({p.returncode}, {p.stdout.strip()!r})")
        got = ran(marker_dir)
        if loads:
            check(got == "euid 0", f"{what}: loaded ({got})")
        else:
            check(got is None, f"{what}: not loaded ({got})")
    shutil.rmtree(a.work, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

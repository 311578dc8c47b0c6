#!/usr/bin/env python3
"""check-cache-attacks.py GEN BIN WORK - the profile cache is input another
local user could have planted (model/profile-cache.c, read/private-dir.c):

- a cache directory of another user's, or one others may write, is refused
  with one line, and the report is the walk's (a planted profile's numbers
  never shown); nothing is written there, so a link planted at the name of
  the temporary file overwrites nothing (run as root, the attacker is uid
  65534: both users);
- a dump rewritten in place with its old size and modification time is
  walked again, not reported from the old profile;
- a damaged profile (bytes changed, an index out of range with a right
  checksum) is ignored with one line; the report is the walk's, no crash;
- INSTR_REPORT_CACHE_SIZE bounds the directory, profiles of dumps that are
  gone are dropped, and --clear-cache empties it."""
import os, shutil, stat, struct, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from instrtest import check, exit_status  # noqa: E402

gen, bindir, work = sys.argv[1:4]
report = os.path.join(bindir, "instr-report")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chmod(work, 0o755)
dump = os.path.join(work, "big.instr")
subprocess.run([gen, dump, "13000000", "2"], check=True)
os.chmod(dump, 0o644)
ARGS = ["--view", "calltree", "--depth", "4"]


def run(cache, args=ARGS, path=dump, user=None):
    env = dict(os.environ, INSTR_REPORT_CACHE=cache)
    pre = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if user else []
    return subprocess.run(pre + [report, *args, path], capture_output=True, text=True, env=env)


walk = run("off")
check(walk.returncode == 0, f"the walk exits 0 ({walk.returncode}: {walk.stderr[-300:]})")
mine = os.path.join(work, "mine")
first = run(mine)
names = [n for n in os.listdir(mine) if n.endswith(".profile")]
check(first.stdout == walk.stdout and len(names) == 1, f"a profile kept in the user's own directory ({names})")
name = names[0]
genuine = open(os.path.join(mine, name), "rb").read()

# The file's layout (profile-cache.c): head = magic, path_len u32, pad u32,
# body_len u64, sum u64, then the key; the path; the body (scalars first:
# total.ei is its first u64).
HEAD = 8 + 4 + 4 + 8 + 8 + (7 * 8 + 8 + 3 * 8 + 4 + 4 + 6 * 4)
path_len = struct.unpack_from("<I", genuine, 8)[0]
BODY = HEAD + path_len
M64 = (1 << 64) - 1


def checksum(b, h=0):
    n8 = len(b) // 8 * 8
    for (w,) in struct.iter_unpack("<Q", b[:n8]):
        h = ((h ^ w) * 0x9E3779B97F4A7C15) & M64
        h ^= h >> 29
    for c in b[n8:]:
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def resum(b):
    b = bytearray(b)
    struct.pack_into("<Q", b, 24, checksum(bytes(b[HEAD:])))
    return bytes(b)


check(resum(genuine) == genuine, "the test's checksum is the cache's")
planted = bytearray(genuine)
struct.pack_into("<Q", planted, BODY, 123456789012345)  # total.ei: a planted figure
planted = resum(planted)


def plant(d, data, mode=0o777, uid=None):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    os.chmod(d, mode)
    if uid is not None:
        os.chown(d, uid, uid)
        os.chown(os.path.join(d, name), uid, uid)


def without(out, note):
    return "".join(line for line in out.splitlines(True) if not note or note not in line)


def same_as_walk(p, what, note):
    check(p.returncode == 0 and without(p.stdout, note) == walk.stdout,
          f"{what}: the report is the walk's ({p.returncode}: {p.stderr[-300:]})")
    check(("profile cache: " in p.stderr) == bool(note), f"{what}: one line says so ({p.stderr.strip()[-300:]})")


# Others may write the directory: refused, even the user's own.
shared = os.path.join(work, "shared")
plant(shared, planted, 0o777)
p = run(shared)
same_as_walk(p, "a directory others may write", "profile cache")
check("writable by others" in p.stderr, "the reason is given")
check(open(os.path.join(shared, name), "rb").read() == planted and len(os.listdir(shared)) == 1,
      "nothing written into a directory refused")

if os.geteuid() == 0:
    # Root reads a cache directory uid 65534 made (and may write).
    plant(shared, planted, 0o755, uid=65534)
    p = run(shared)
    same_as_walk(p, "another user's directory (root's report)", "profile cache")
    check("owned by uid 65534" in p.stderr, "the owner is named")
    # A link planted where the temporary file could go, at every name a
    # report of this pid could use: the victim file stays.
    victim = os.path.join(work, "root-owned")
    with open(victim, "w") as f:
        f.write("root's data\n")
    os.chmod(victim, 0o600)
    plant(shared, planted, 0o777, uid=65534)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os.environ["INSTR_REPORT_CACHE"] = shared
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execv(report, [report, *ARGS, dump])
    os.close(r)
    for n in (name, f"{name}.{pid}.tmp"):
        try:
            os.remove(os.path.join(shared, n))
        except FileNotFoundError:
            pass
        os.symlink(victim, os.path.join(shared, n))
    os.write(w, b"x")
    os.close(w)
    os.waitpid(pid, 0)
    check(open(victim, "rb").read() == b"root's data\n" and os.stat(victim).st_uid == 0,
          "a link planted at the profile's and the temporary file's names overwrites nothing")
    # uid 65534's report with a directory root made for everyone.
    plant(shared, planted, 0o777)
    p = run(shared, user=65534)
    same_as_walk(p, "uid 65534, a directory root left writable to all", "profile cache")
    theirs = os.path.join(work, "theirs")
    os.makedirs(theirs)
    os.chown(theirs, 65534, 65534)
    os.chmod(theirs, 0o700)
    p = run(theirs, user=65534)
    check(p.returncode == 0 and p.stdout == walk.stdout and os.listdir(theirs),
          "uid 65534 keeps a profile in its own directory")
else:
    print("note: not root: the two-user cases (another user's directory, planted links) are not run")

# A damaged profile in the user's own directory: ignored, with one line.
for what, data in (("a byte changed", genuine[:BODY + 40] + bytes([genuine[BODY + 40] ^ 0x55]) + genuine[BODY + 41:]),
                   ("cut short", genuine[:-100]),
                   ("another version", b"INSTRPC9" + genuine[8:])):
    plant(mine, data, 0o700)
    same_as_walk(run(mine), what, "profile cache")

# Indices out of range with a right checksum, in the call trees: node 0 is
# the first thread's root (parent 0, function UINT32_MAX, thread 0); a node
# is parent, func, thread (u32), padding, then 7 u64.
NODE = 4 + 4 + 4 + 4 + 7 * 8
node1 = genuine.index(struct.pack("<III", 0, 0xFFFFFFFF, 0), BODY) + NODE
for what, field, value in (("a node's function out of range", 4, 0x7FFFFFF0),
                           ("a node's parent out of range", 0, 0x7FFFFFF0),
                           ("a node's parent after it (a cycle)", 0, 5),
                           ("a node's thread out of range", 8, 77)):
    bad = bytearray(genuine)
    struct.pack_into("<I", bad, node1 + field, value)
    plant(mine, resum(bad), 0o700)
    p = run(mine)
    check(p.returncode >= 0, f"{what}: no crash ({p.returncode})")
    same_as_walk(p, what, "profile cache")

# A dump rewritten in place, its size and modification time kept: walked again.
other = bytearray(open(dump, "rb").read())
struct.pack_into("<Q", other, 24, 4242)  # the header's pid
shutil.rmtree(mine)
run(mine)
st = os.stat(dump)
with open(dump, "r+b") as f:
    f.write(other)
os.utime(dump, ns=(st.st_atime_ns, st.st_mtime_ns))
p = run(mine)
fresh = run("off")
check("pid 4242" in fresh.stdout and p.stdout == fresh.stdout,
      "a dump rewritten in place with its old size and time is walked again")

# Bounded: profiles of dumps gone are dropped at the next save; the size cap
# evicts the least recently used; --clear-cache empties the directory.
def profiles():
    return [n for n in os.listdir(mine) if n.endswith(".profile")]


shutil.rmtree(mine)
copy = os.path.join(work, "copy.instr")
shutil.copy(dump, copy)
run(mine, path=copy)
run(mine)
check(len(profiles()) == 2, f"two dumps, two profiles ({len(profiles())})")
os.remove(copy)
run(mine, ["--raw"])
check(len(profiles()) == 2, f"the profile of a dump that is gone is dropped at the next save ({len(profiles())} of 3)")
env = dict(os.environ, INSTR_REPORT_CACHE=mine, INSTR_REPORT_CACHE_SIZE="1K")
subprocess.run([report, "--clear-cache"], capture_output=True, env=env)
subprocess.run([report, dump], capture_output=True, env=env)
subprocess.run([report, "--raw", dump], capture_output=True, env=env)
check(len(profiles()) <= 1, f"INSTR_REPORT_CACHE_SIZE=1K keeps at most the newest ({len(profiles())})")
subprocess.run([report, "--clear-cache"], capture_output=True, env=env)
for bad in ("12Q", "-1", "1KB", "99999999999999999999"):
    p = subprocess.run([report, *ARGS, dump], capture_output=True, text=True,
                       env=dict(env, INSTR_REPORT_CACHE_SIZE=bad))
    check(p.returncode == 0 and p.stdout.count("profile cache: INSTR_REPORT_CACHE_SIZE") == 1,
          f"INSTR_REPORT_CACHE_SIZE={bad}: the report's one line says so ({p.returncode}: {p.stderr[-300:]})")
    check("INSTR_REPORT_CACHE_SIZE" in p.stderr and not profiles(),
          f"INSTR_REPORT_CACHE_SIZE={bad}: said, and nothing kept with a bound nobody asked for ({profiles()})")
run(mine, ["--format", "json"])
c = subprocess.run([report, "--clear-cache"], capture_output=True, text=True,
                   env=dict(os.environ, INSTR_REPORT_CACHE=mine))
check(c.returncode == 0 and "removed" in c.stdout and not [n for n in os.listdir(mine) if n.endswith(".profile")],
      f"--clear-cache empties the cache ({c.stdout.strip()} {c.stderr.strip()})")
c = subprocess.run([report, "--clear-cache"], capture_output=True, text=True,
                   env=dict(os.environ, INSTR_REPORT_CACHE=shared))
check(c.returncode != 0 and "not touched" in c.stderr and os.listdir(shared),
      "--clear-cache of a directory refused touches nothing")
os.remove(dump)
sys.exit(exit_status())

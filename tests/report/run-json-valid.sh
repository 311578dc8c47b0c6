#!/bin/sh
# JSON output is valid JSON whatever the dump holds: bytes that are not
# UTF-8 in paths and names become U+FFFD (valid UTF-8 passes through), and
# values that cannot be computed (no tick rate: runtime_ns, *_ns) are null,
# never nan or inf.  Every view, and --diff.
#   run-json-valid.sh BIN_DIR WORK_DIR
set -u
bin=$1 work=$2
mkdir -p "$work"
{
    printf 'instr-dump 1\n'
    printf 'header pid=7 exe=/bin/caf\303\251-\351\377 start_tsc=0 start_ns=0 flags=none\n'
    printf 'module 0 /bin/m\376dule\n'
    printf 'function 1 module=0 line=3 file=\300\257.c name=main\n'
    printf 'function 2 module=0 line=9 file=b.c name=f\355\240\200\n'
    printf '0 10 enter 1\n0 12 enter 2\n0 15 exit\n0 20 exit\n'
} >"$work/bytes.txt"
"$bin/instr-dump" --from-text "$work/bytes.txt" -o "$work/bytes.instr" || exit 1
fail=0
for args in "" "--view calltree" "--view callers main" "--view callees main" "--diff $work/bytes.instr"; do
    # shellcheck disable=SC2086
    "$bin/instr-report" --format json $args "$work/bytes.instr" >"$work/out.json" 2>/dev/null
    rc=$?
    [ $rc -le 3 ] || { echo "FAIL: --format json $args -> exit $rc"; fail=1; }
    python3 - "$work/out.json" "$args" <<'PY' || fail=1
import json, sys
raw = open(sys.argv[1], "rb").read()
def bad(c):
    raise ValueError("not JSON: " + c)
try:
    text = raw.decode("utf-8")          # strict: valid UTF-8 throughout
    r = json.loads(text, parse_constant=bad)  # NaN, Infinity: refused
except ValueError as e:
    sys.exit("FAIL (%s): %s" % (sys.argv[2], e))
if sys.argv[2].startswith("--diff"):
    names = [f["name"] for f in r["functions"]]
    assert any("\ufffd" in n for n in names), names
    sys.exit(0)
s = r["session"]
assert s["program"] == "/bin/caf\u00e9-\ufffd\ufffd", repr(s["program"])
assert s["runtime_ns"] is None and s["duration_ns"] is None, (s["runtime_ns"], s["duration_ns"])
assert r["modules"][0]["module"] == "/bin/m\ufffddule", r["modules"]
files = sorted(f["file"] for f in r["functions"])
# C0 AF is an overlong '/', ED A0 80 a surrogate: neither is UTF-8.
assert files == ["b.c", "\ufffd\ufffd.c"], files
assert any(f["mangled"] == "f\ufffd\ufffd\ufffd" for f in r["functions"]), [f["mangled"] for f in r["functions"]]
assert all(f["elapsed_inclusive_ns"] is None for f in r["functions"])
PY
done
exit $fail

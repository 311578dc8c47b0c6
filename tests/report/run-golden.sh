#!/bin/sh
# Golden report test: text traces -> instr-dump --from-text -> binary dumps ->
# instr-report --units ticks (text, json and csv), compared byte for byte with
# expected/NAME.txt, .json and .csv.  INSTR_UPDATE_GOLDEN=1 rewrites
# the expected files instead (review the diff before committing).
# INSTR_GOLDEN_ARGS adds instr-report options (a view: --view calltree);
# INSTR_GOLDEN_STATUS is the exit status expected (3: a warning; default 0).
# The text is the whole one (--verbose, and -F all in a table view), unless
# INSTR_GOLDEN_DEFAULT=1: the default header and columns.
#   run-golden.sh BIN_DIR SRC_DIR WORK_DIR NAME TRACE...
set -eu
bin=$1 src=$2 work=$3 name=$4
shift 4
mkdir -p "$work"
dumps=
for t in "$@"; do
    d="$work/$name-$(basename "$t" .txt).instr"
    "$bin/instr-dump" --from-text "$src/traces/$t" -o "$d"
    dumps="$dumps $d"
done
fail=0
whole="--verbose -F all"
case " ${INSTR_GOLDEN_ARGS:-} " in
*" --view calltree "* | *" --view callers "* | *" --view callees "*) whole="--verbose" ;;
esac
formats="text json csv"
# JSON and CSV have no default: the whole goldens hold them.
[ "${INSTR_GOLDEN_DEFAULT:-0}" = 1 ] && whole= formats=text
for fmt in $formats; do
    extra=
    [ "$fmt" = text ] && extra=$whole
    ext=$fmt; [ "$fmt" = text ] && ext=txt
    out="$work/$name.$ext"
    # shellcheck disable=SC2086
    st=0
    "$bin/instr-report" --units ticks --format "$fmt" $extra ${INSTR_GOLDEN_ARGS:-} $dumps >"$out" || st=$?
    [ "$st" = "${INSTR_GOLDEN_STATUS:-0}" ] ||
        { echo "instr-report exited $st, expected ${INSTR_GOLDEN_STATUS:-0}"; fail=1; }
    # A warning names its dump: by its name in the work directory.
    sed -i "s|$work/||g" "$out"
    exp="$src/expected/$name.$ext"
    if [ "${INSTR_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$out" "$exp"
        echo "updated $exp"
    elif ! cmp -s "$out" "$exp"; then
        echo "MISMATCH $exp"
        diff -u "$exp" "$out" || true
        fail=1
    fi
done
[ "$formats" = text ] && exit $fail
# The JSON parses, and Elapsed/Application Exclusive % add up to 100.
python3 - "$work/$name.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
fs = r["functions"]
if fs:
    for k in ("elapsed_exclusive_pct", "application_exclusive_pct"):
        total = sum(f[k] for f in fs)
        ok = abs(total - 100) < 0.01 or (k.startswith("application") and r["session"]["totals"]["application_inclusive_ticks"] == 0)
        if not ok:
            sys.exit("%s sums to %f" % (k, total))
    for f in fs:
        assert f["elapsed_inclusive_ticks"] >= f["elapsed_exclusive_ticks"] >= f["application_exclusive_ticks"]
        assert f["elapsed_inclusive_ticks"] >= f["application_inclusive_ticks"] >= f["application_exclusive_ticks"]
PY
exit $fail

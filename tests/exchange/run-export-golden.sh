#!/bin/sh
# Golden exporter test: a text trace (or a visualiser file) -> instr-report
# with ARGS, compared byte for byte with expected/NAME.  INSTR_UPDATE_GOLDEN=1
# rewrites the expected file instead (review the diff before committing).
#   run-export-golden.sh BIN_DIR SRC_DIR WORK_DIR NAME INPUT [INPUT2] -- ARGS...
set -eu
bin=$1 src=$2 work=$3 name=$4
shift 4
dir="$work/$name.in" # inputs under a fixed name: paths in the output are stripped
mkdir -p "$dir"
inputs=
while [ "$1" != -- ]; do
    case $1 in
    *.txt)
        if grep -q '^instr-dump 1' "$1"; then
            d="$dir/$(basename "$1" .txt).instr"
            "$bin/instr-dump" --from-text "$1" -o "$d"
            inputs="$inputs $d"
        else
            # a visualiser file: read as it is, from the work directory
            cp "$1" "$dir/$(basename "$1")"
            inputs="$inputs $dir/$(basename "$1")"
        fi ;;
    *) inputs="$inputs $1" ;;
    esac
    shift
done
shift
out="$work/$name"
rc=0
# shellcheck disable=SC2086
"$bin/instr-report" "$@" $inputs >"$out" 2>"$out.err" || rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
    echo "instr-report failed ($rc)"; cat "$out.err"; exit 1
fi
# Input paths vary with the build directory: written as INPUT.
sed -i "s#$dir/##g" "$out"
exp="$src/expected/$name"
if [ "${INSTR_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$out" "$exp"
    echo "updated $exp"
elif ! cmp -s "$out" "$exp"; then
    echo "MISMATCH $exp"
    diff -u "$exp" "$out" || true
    exit 1
fi

#!/bin/sh
# A Chrome trace past what browsers open (256 MB) warns and says how to make
# it fit; a smaller one and a split one do not warn.  The export is whole
# either way (exit 0).
#   run-big-trace.sh BIN_DIR GEN_BIG_DUMP WORK_DIR
set -eu
bin=$1 gen=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
fail=0
# 7 M events: about 300 MB of trace events (compact JSON, no args on calls).
"$gen" "$work/big.instr" 7000000 >/dev/null
"$bin/instr-report" --export chrome -o "$work/big.json" "$work/big.instr" 2>"$work/big.err" ||
    { echo "FAIL: exit $?"; fail=1; }
size=$(stat -c %s "$work/big.json")
rm -f "$work/big.json"
[ "$size" -gt 268435456 ] || { echo "FAIL: the trace is only $size bytes"; fail=1; }
grep -q 'warning: the trace is [0-9]* MB; browser trace viewers fail past about 256 MB: split it (--split-size' \
    "$work/big.err" || { echo "FAIL: no warning: $(cat "$work/big.err")"; fail=1; }
"$bin/instr-report" --export chrome --split-size 120 -o "$work/part.json" "$work/big.instr" 2>"$work/split.err"
[ -s "$work/split.err" ] && { echo "FAIL: split parts warned: $(cat "$work/split.err")"; fail=1; }
ls "$work"/part*.json | wc -l | grep -qx 3 || { echo "FAIL: parts: $(ls "$work")"; fail=1; }
rm -f "$work"/part*.json
"$gen" "$work/small.instr" 100000 >/dev/null
"$bin/instr-report" --export chrome -o "$work/small.json" "$work/small.instr" 2>"$work/small.err"
[ -s "$work/small.err" ] && { echo "FAIL: a small trace warned: $(cat "$work/small.err")"; fail=1; }
[ $fail = 0 ] && echo "big trace warning: ok"
exit $fail

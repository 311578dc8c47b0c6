#!/bin/sh
# A Chrome trace of more calls than browsers load keeps the longest by
# default and says so in a note; asked for every call (--min-duration 0)
# past what browsers open (256 MB), it warns and says how to make it fit;
# a smaller one and a split one do neither.  Exit 0 each time.
#   run-big-trace.sh BIN_DIR GEN_BIG_DUMP WORK_DIR
set -eu
bin=$1 gen=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
fail=0
# 7 M events, 3.5 M calls: about 300 MB of trace events (compact JSON, no
# args on calls), past the 2 M calls kept by default.
"$gen" "$work/big.instr" 7000000 >/dev/null
# chrome NAME [OPTION...]: the chrome export of big.instr into NAME.json,
# stderr in NAME.err; $size its bytes (the file is removed).
chrome() {
    name=$1
    shift
    "$bin/instr-report" --export chrome "$@" -o "$work/$name.json" "$work/big.instr" 2>"$work/$name.err" ||
        { echo "FAIL: $name: exit $?"; fail=1; }
    size=$(stat -c %s "$work/$name.json")
    rm -f "$work/$name.json"
}
chrome thin
[ "$size" -lt 268435456 ] || { echo "FAIL: the thinned trace is $size bytes"; fail=1; }
grep -qx 'instr-report: note: the trace keeps the [0-9]* longest of [0-9]* calls (every one of at least [0-9.]* µs): browser trace viewers load about 2000000; --min-duration 0 keeps every call' \
    "$work/thin.err" || { echo "FAIL: no note: $(cat "$work/thin.err")"; fail=1; }
chrome big --min-duration 0
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
[ $fail = 0 ] && echo "big trace: thinned with a note by default, a warning when whole: ok"
exit $fail

#!/bin/sh
# Under qemu-user (no rseq registration, perf_event_open refused) and on
# aarch64 (no sud, no rdpmc), a program asking for every detector by name
# runs unchanged, the runtime says of each why it cannot run, and the dump
# says which ran (cpuclock).
#   check-fallback.sh RUNNER EXE REPORT
set -eu
runner=$1
exe=$2
report=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# shellcheck disable=SC2086
INSTR_DETECTOR=rseq_cs+sud+perf+rdpmc+cpuclock INSTR_LOG=stderr INSTR_OUTPUT="$work/%e.%p.instr" \
    $runner "$exe" >out 2>err || { cat err; echo "FAIL: the program's exit status changed"; exit 1; }
grep -q "sum=2505265" out || { echo "FAIL: the program's output changed"; exit 1; }
status=0
for want in "detector sud unavailable: sud off: x86-64 only" "detector rdpmc unavailable: rdpmc off: x86-64 only" \
    "detector rseq_cs unavailable" "detector perf unavailable"; do
    grep -q "$want" err || { echo "FAIL: stderr lacks '$want'"; status=1; }
done
"$report" --verbose "$work"/*.instr >rep
grep -q "^Detector:   cpuclock \[" rep || { echo "FAIL: the report's detector line is not cpuclock's"; status=1; }
sed -n '/^Detector:/p' rep
cat err
[ $status = 0 ] && echo "PASS: every detector asked for answered, cpuclock ran"
exit $status

#!/bin/sh
# consumer.sh PREFIX WORK [CC]
# Builds tests/install/consumer (find_package(instr), instr_instrument(),
# instr::instr) against the instr installed in PREFIX, runs both programs
# and reports them with PREFIX/bin/instr-report.  Also run by
# scripts/ci-extra.sh against the Debian package (PREFIX /usr).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=$1 work=$2 cc=${3:-gcc}
report=$prefix/bin/instr-report
rm -rf "$work"
mkdir -p "$work"

# A version the installation does not have is refused.
if cmake -S "$here/consumer" -B "$work/wrong-version" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$prefix" -DINSTR_CONSUMER_VERSION=99.0 >"$work/wrong-version.log" 2>&1; then
    echo "find_package(instr 99.0) succeeded"
    exit 1
fi

cmake -S "$here/consumer" -B "$work/build" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
grep "instr " "$work/configure.log"
plugin=$(sed -n 's/^-- instr [0-9.]*: //p' "$work/configure.log")
[ "$(realpath "$plugin")" = "$(realpath "$prefix/lib/instr/instr.so")" ] || {
    echo "find_package found $plugin, not the one in $prefix"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

status=0
check() { # check PROGRAM FUNCTION CALLS
    got=$(sh "$here/report-calls.sh" "$report" "$work/$1.instr" "$2")
    if [ "$got" != "$3" ]; then
        echo "$1: $2: expected calls '$3', report says '$got'"
        status=1
    fi
}
for program in app app_target; do
    (cd "$work" && INSTR_OUTPUT="$work/$program.instr" "$work/build/$program")
    "$report" "$work/$program.instr"
    check "$program" main 1
    check "$program" work 5
done
check app skipped ""
check app_target skipped 2
[ $status = 0 ] && echo "consumer: ok"
exit $status

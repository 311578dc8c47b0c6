#!/bin/sh
# The process's command line and working directory (PROCESS record):
# recorded by the runtime, kept by the text form, shown in the header, used
# by callgrind for relative source paths; and instr-report without a file
# takes the newest *.instr dump of the current directory.
#   run-process.sh BIN_DIR SRC_DIR WORK_DIR EXE
set -eu
bin=$1 src=$2 work=$3 exe=$4
rm -rf "$work"
mkdir -p "$work/run" "$work/newest" "$work/none"
fail=0
say() { echo "FAIL: $*"; fail=1; }

# Text form -> dump -> text form: the record survives.
"$bin/instr-dump" --from-text "$src/traces/process.txt" -o "$work/p.instr"
"$bin/instr-dump" "$work/p.instr" >"$work/p.txt"
grep -qx "process cwd=/home/u/proj arg=./app arg=\"--size=3\" arg=\"two words\" arg=it's" "$work/p.txt" ||
    say "text form: $(grep '^process' "$work/p.txt")"
# The header (--verbose: the default leaves the command out).
"$bin/instr-report" --verbose "$work/p.instr" >"$work/p.report"
grep -qx "Command:    ./app --size=3 'two words' 'it'\\\\''s'" "$work/p.report" ||
    say "header: $(grep '^Command' "$work/p.report")"
# Callgrind: the relative file under the working directory, absolute stays.
"$bin/instr-report" --export callgrind -o "$work/p.callgrind" "$work/p.instr"
grep -qx 'fl=([0-9]*) /home/u/proj/src/app.c' "$work/p.callgrind" || say "callgrind: relative file not resolved"
grep -qx 'fl=([0-9]*) /usr/include/x.h' "$work/p.callgrind" || say "callgrind: absolute file changed"
# A dump without the record (older runtimes): no Command line.
"$bin/instr-dump" --from-text "$src/traces/single-call.txt" -o "$work/old.instr"
"$bin/instr-report" --verbose "$work/old.instr" | grep -q '^Command:' && say "Command line without a record"

# A real run records its directory and arguments.
(cd "$work/run" && INSTR_OUTPUT="$work/run/r.%p.instr" "$exe" first "second arg" >/dev/null)
"$bin/instr-dump" "$work"/run/r.*.instr | grep -qx "process cwd=$work/run arg=$exe arg=first arg=\"second arg\"" ||
    say "runtime record: $("$bin/instr-dump" "$work"/run/r.*.instr | grep '^process')"

# No file: the newest dump here, named on stderr.
cp "$work/old.instr" "$work/newest/a.instr"
cp "$work/p.instr" "$work/newest/b.instr"
touch -d '2020-01-01 00:00:00' "$work/newest/b.instr"
touch -d '2021-01-01 00:00:00' "$work/newest/a.instr"
(cd "$work/newest" && "$bin/instr-report" --units ticks >"$work/newest.out" 2>"$work/newest.err")
grep -qx 'instr-report: reading a.instr (the newest \*.instr dump here)' "$work/newest.err" ||
    say "newest: $(cat "$work/newest.err")"
"$bin/instr-report" --units ticks "$work/newest/a.instr" >"$work/a.out"
cmp -s "$work/newest.out" "$work/a.out" || say "newest: not the report of a.instr"
touch -d '2022-01-01 00:00:00' "$work/newest/b.instr"
(cd "$work/newest" && "$bin/instr-report" 2>&1 >/dev/null) | grep -q 'reading b.instr' || say "newest: b after touch"
# None: a usage error.
rc=0
(cd "$work/none" && "$bin/instr-report" >/dev/null 2>"$work/none.err") || rc=$?
[ "$rc" = 1 ] && grep -q 'no \*.instr dump here' "$work/none.err" || say "no dump: exit $rc, $(cat "$work/none.err")"
[ $fail = 0 ] && echo "process record and newest dump: ok"
exit $fail

#!/bin/sh
# Bad input: each case must give a one-line reason and the documented exit
# code (2 unusable, 3 reported with warnings).
#   run-bad.sh BIN_DIR SRC_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
mkdir -p "$work"
fail=0
expect() { # expect CODE PATTERN -- command...
    code=$1 pat=$2
    shift 3
    "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -ne "$code" ]; then
        echo "FAIL: $* -> exit $rc, want $code"; cat "$work/err"; fail=1
    elif ! grep -q -- "$pat" "$work/err"; then
        echo "FAIL: $* -> stderr lacks '$pat':"; cat "$work/err"; fail=1
    elif [ "$code" = 2 ] && [ "$(wc -l <"$work/err")" -ne 1 ]; then
        echo "FAIL: $* -> more than one line:"; cat "$work/err"; fail=1
    fi
}
"$bin/instr-dump" --from-text "$src/traces/nesting.txt" -o "$work/good.instr" || exit 1
# A chunk size small enough that the trace spans several chunks.
sed 's/flags=complete,tsc_invariant/flags=complete chunk_size=256/' "$src/traces/nesting.txt" >"$work/small.txt"
"$bin/instr-dump" --from-text "$work/small.txt" -o "$work/small.instr" || exit 1

printf 'hello world, not a dump\n' >"$work/notdump"
expect 2 "not an instr dump" -- "$bin/instr-report" "$work/notdump"
: >"$work/empty"
expect 2 "not an instr dump" -- "$bin/instr-report" "$work/empty"
expect 2 "No such file" -- "$bin/instr-report" "$work/missing.instr"
# Wrong version: bytes 8..11.
cp "$work/good.instr" "$work/v9.instr"
printf '\011\000\000\000' | dd of="$work/v9.instr" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 2 "dump version 9" -- "$bin/instr-report" "$work/v9.instr"
# Header cut short.
head -c 2000 "$work/good.instr" >"$work/short-header.instr"
expect 2 "ends inside the header" -- "$bin/instr-report" "$work/short-header.instr"
# Absurd chunk size.
cp "$work/good.instr" "$work/bigchunk.instr"
printf '\377\377\377\177' | dd of="$work/bigchunk.instr" bs=1 seek=16 conv=notrunc 2>/dev/null
expect 2 "bad chunk_size" -- "$bin/instr-report" "$work/bigchunk.instr"
# A chunk's own size (version 2: chunk header bytes 32..35) that is no
# size leaves no way to the next chunk: refused, saying which and why.
# Not a multiple of 8; more than the dump's chunk_size (256 here); a
# chunk header's size alone.  Version 1 has no such field: the same bytes
# are ignored there.
cp "$work/small.instr" "$work/oddsize.instr"
printf '\144\000\000\000' | dd of="$work/oddsize.instr" bs=1 seek=$((4096 + 256 + 32)) conv=notrunc 2>/dev/null
expect 2 "chunk 1 at offset 4352: bad chunk_size 100" -- "$bin/instr-report" "$work/oddsize.instr"
cp "$work/small.instr" "$work/bigsize.instr"
printf '\000\002\000\000' | dd of="$work/bigsize.instr" bs=1 seek=$((4096 + 32)) conv=notrunc 2>/dev/null
expect 2 "chunk 0 at offset 4096: bad chunk_size 512" -- "$bin/instr-dump" "$work/bigsize.instr"
cp "$work/small.instr" "$work/hdrsize.instr"
printf '\100\000\000\000' | dd of="$work/hdrsize.instr" bs=1 seek=$((4096 + 32)) conv=notrunc 2>/dev/null
expect 2 "bad chunk_size 64" -- "$bin/instr-report" "$work/hdrsize.instr"
cp "$work/oddsize.instr" "$work/v1.instr"
printf '\001' | dd of="$work/v1.instr" bs=1 seek=8 conv=notrunc 2>/dev/null
"$bin/instr-report" "$work/v1.instr" >"$work/v1.out" 2>&1 || { echo "FAIL: a version-1 dump's reserved bytes read as a size"; cat "$work/v1.out"; fail=1; }
# Corrupt chunk header (magic of the second chunk): reported with a warning, exit 3.
cp "$work/small.instr" "$work/badchunk.instr"
printf 'XXXX' | dd of="$work/badchunk.instr" bs=1 seek=$((4096 + 256)) conv=notrunc 2>/dev/null
expect 3 "corrupt chunk header" -- "$bin/instr-report" "$work/badchunk.instr"
# Truncated in the middle of a chunk: partial values, a warning, exit 3.
size=$(wc -c <"$work/small.instr")
head -c $((size - 100)) "$work/small.instr" >"$work/cut.instr"
expect 3 "truncated" -- "$bin/instr-report" --units ticks "$work/cut.instr"
grep -q "Warning:    .*truncated" "$work/out" || { echo "FAIL: no truncation warning in the report"; fail=1; }
expect 3 "truncated" -- "$bin/instr-dump" "$work/cut.instr"
# Truncated while a leaf ran, the process going on for 1 s after: the
# time after the thread's last surviving event is unknown, said as such,
# never charged to the leaf (issue 37 §3: a cut dump gave is_prime 106 ms
# of Application time for 24 calls).
{
    printf 'instr-dump 1\nheader pid=7 ppid=1 exe=/opt/app start_tsc=0 start_ns=0 end_tsc=1000000000 '
    printf 'end_ns=1000000000 flags=complete chunk_size=256\nmodule 1 /opt/app\n'
    printf 'function 1 module=1 line=1 file=app.c name=main\nfunction 2 module=1 line=9 file=app.c name=leaf\n'
    printf 'thread 0 tid=7 name=main\n0 10 enter 1\n'
    i=0
    while [ $i -lt 300 ]; do
        printf '0 %d enter 2\n0 %d exit\n' $((100 + 10 * i)) $((105 + 10 * i))
        i=$((i + 1))
    done
    printf '0 4000 exit\n'
} >"$work/leafy.txt"
"$bin/instr-dump" --from-text "$work/leafy.txt" -o "$work/leafy.instr" || exit 1
head -c $((4096 + 900)) "$work/leafy.instr" >"$work/leafy-cut.instr"
expect 3 "truncated" -- "$bin/instr-report" --format json "$work/leafy-cut.instr"
python3 - "$work/out" <<'PYEOF' || { echo "FAIL: a cut thread's unknown time charged to a function"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
r = j["session"]["repairs"]
# The cut took the function names too (they follow the chunks): leaf is
# the one called many times, main the other.
leaf, main = sorted(j["functions"], key=lambda x: -x["calls"])
# Each leaf call lasts 5 ns: what the cut left of them, and no more.
assert r["cut_threads"] == 1 and leaf["calls"] > 0, r
assert leaf["elapsed_exclusive_ns"] <= 5 * leaf["calls"] + 5, leaf
assert r["unrecorded_ns"] > 990000000, r
assert main["elapsed_inclusive_ns"] + r["unrecorded_ns"] == 1000000000 - 10, (main, r)
print("cut: leaf %d calls %d ns, unknown %d ns" % (leaf["calls"], leaf["elapsed_exclusive_ns"], r["unrecorded_ns"]))
PYEOF
"$bin/instr-report" "$work/leafy-cut.instr" 2>/dev/null | grep -q "^Unknown: .* after the last event of 1 thread whose record was cut" ||
    { echo "FAIL: no Unknown: line"; fail=1; }
# Syntax errors in the text form give file:line.
printf 'instr-dump 1\nheader pid=1\n0 10 enter\n' >"$work/bad.txt"
expect 2 "bad.txt:3: enter takes 1 argument" -- "$bin/instr-dump" --from-text "$work/bad.txt" -o "$work/bad.instr"
printf 'instr-dump 1\nheader pid=1\n0 10 enter 1\n0 5 exit\n' >"$work/back.txt"
expect 2 "back.txt:4: tick 5 is before" -- "$bin/instr-dump" --from-text "$work/back.txt" -o "$work/back.instr"
# Usage errors.
expect 1 "unknown sort column" -- "$bin/instr-report" --sort nope "$work/good.instr"
expect 1 "bad value" -- "$bin/instr-report" --units hours "$work/good.instr"
# Option extremes (issue 38 §4): --threshold 1e308 printed a 300-digit
# percentage, --split-size 0.000001 wrote a file per call.
expect 1 "percentage from 0 to 100, not '1e308'" -- "$bin/instr-report" --view calltree --threshold 1e308 "$work/good.instr"
expect 1 "percentage from 0 to 100, not '-1'" -- "$bin/instr-report" --view calltree --threshold -1 "$work/good.instr"
expect 1 "percentage from 0 to 100, not 'nan'" -- "$bin/instr-report" --view calltree --threshold nan "$work/good.instr"
expect 1 "percentage from 0 to 100, not '101'" -- "$bin/instr-report" --suggest-exclude 101 "$work/good.instr"
"$bin/instr-report" --view calltree --threshold 100 "$work/good.instr" >/dev/null || { echo "FAIL: --threshold 100 refused"; fail=1; }
rm -rf "$work/split" && mkdir -p "$work/split"
expect 1 "megabytes (1 to 1000000)" -- "$bin/instr-report" --export chrome --split-size 0.000001 -o "$work/split/t.json" "$work/good.instr"
expect 1 "megabytes (1 to 1000000)" -- "$bin/instr-report" --export chrome --split-size 1e308 -o "$work/split/t.json" "$work/good.instr"
[ -z "$(ls "$work/split")" ] || { echo "FAIL: --split-size refused, yet files written: $(ls "$work/split")"; fail=1; }
"$bin/instr-report" --export chrome --split-size 1 -o "$work/split/t.json" "$work/good.instr" ||
    { echo "FAIL: --split-size 1 refused"; fail=1; }
# Round trip: dump -> text -> dump -> text is stable.
"$bin/instr-dump" "$work/small.instr" >"$work/rt1.txt"
"$bin/instr-dump" --from-text "$work/rt1.txt" -o "$work/rt.instr"
"$bin/instr-dump" "$work/rt.instr" >"$work/rt2.txt"
cmp -s "$work/rt1.txt" "$work/rt2.txt" || { echo "FAIL: round trip differs"; diff "$work/rt1.txt" "$work/rt2.txt"; fail=1; }
exit $fail

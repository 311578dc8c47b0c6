#!/bin/sh
# check-filter.sh CC PLUGIN SRCDIR WORK REPORT DUMP
# The record-time filters (runtime/filter.c) on filter.c, whose calls are
# known: INSTR_DEPTH records the frames down to the limit and counts every
# call below it; INSTR_MIN_DURATION takes the short calls out and counts
# them, so recorded + folded calls are the program's calls; INSTR_TRIGGER
# records what runs between the trigger's entry and its return (or to the
# end without an :off), and the report says which window that was.  A
# wrong value is said in one line and the run is recorded whole.
set -e
cc=$1 plugin=$2 srcdir=$3 work=$4 report=$5 dump=$6
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no $cc"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$cc" -O2 -g -fplugin="$plugin" "$srcdir/filter.c" -o f
run() { # NAME ENV...: the dump NAME.instr of a run with ENV
    name=$1; shift
    env "$@" INSTR_OUTPUT="$work/$name.instr" ./f > "$name.out" 2> "$name.err"
}
calls() { # DUMP FUNCTION: calls of FUNCTION in DUMP's report (0 if absent)
    "$report" --format csv --sort name "$1" 2>/dev/null |
        awk -F, -v f="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "calls") c = i; if ($i == "function") n = i } next }
                           $n == f && !found { print $c; found = 1 } END { if (!found) print 0 }'
}
field() { # DUMP KEY: KEY= of instr-dump's header line
    "$dump" "$1" | sed -n "s/^header .* $2=\([0-9]*\).*/\1/p"
}
enters() { # DUMP: ENTER events in it (function calls recorded)
    "$dump" "$1" | grep -c '^[0-9]* [0-9]* enter '
}
fail=0
check() { # WHAT GOT EXPECTED
    if [ "$2" != "$3" ]; then echo "FAIL: $1: $2, expected $3"; fail=1; fi
}
want() { sed -n "s/^$1 //p" all.out; }
run all
total=0
for fn in leaf mid slow phase outside main; do
    check "all: $fn calls" "$(calls all.instr $fn)" "$(want $fn)"
    total=$((total + $(want $fn)))
done
check "all: enters" "$(enters all.instr)" $total

# Depth 2: main (1), outside and phase (2); mid, leaf and slow not.
run depth INSTR_DEPTH=2
for fn in main outside phase; do check "depth: $fn calls" "$(calls depth.instr $fn)" "$(want $fn)"; done
for fn in mid leaf slow; do check "depth: $fn calls" "$(calls depth.instr $fn)" 0; done
check "depth: filtered_depth" "$(field depth.instr filtered_depth)" $(($(want mid) + $(want leaf) + $(want slow)))
"$report" depth.instr 2>/dev/null | grep -q "^Filtered:   .* 307 deeper than 2 (INSTR_DEPTH)" ||
    { echo "FAIL: depth: the report's Filtered: line"; "$report" depth.instr | head -8; fail=1; }
# phase's own time now holds slow's: its exclusive time is most of its inclusive.
"$report" --format json depth.instr | python3 -c '
import json, sys
fs = {f["name"]: f for f in json.load(sys.stdin)["functions"]}
p = fs["phase"]
assert p["elapsed_exclusive_ns"] > 0.9 * p["elapsed_inclusive_ns"], p' ||
    { echo "FAIL: depth: phase does not hold its unrecorded callees time"; fail=1; }

# Calls under 20 us (leaf, mid, outside: a few ns each) are folded: the
# recorded calls and the folded ones add up to the program's calls; slow
# (milliseconds) stays.
run short INSTR_MIN_DURATION=20us
check "short: enters + filtered_short" $(($(enters short.instr) + $(field short.instr filtered_short))) $total
for fn in slow phase main; do check "short: $fn calls" "$(calls short.instr $fn)" "$(want $fn)"; done
n=$(calls short.instr leaf)
[ "$n" -le 3 ] || { echo "FAIL: short: leaf still has $n calls recorded"; fail=1; }

# Triggers: phase's calls only; then from phase on to the end.
run trig INSTR_TRIGGER=phase:on,phase:off
for fn in phase slow; do check "trigger: $fn calls" "$(calls trig.instr $fn)" "$(want $fn)"; done
check "trigger: mid calls" "$(calls trig.instr mid)" 100
check "trigger: leaf calls" "$(calls trig.instr leaf)" 200
for fn in main outside; do check "trigger: $fn calls" "$(calls trig.instr $fn)" 0; done
# entered while off: main, outside twice, their mids and leaves
check "trigger: filtered_off" "$(field trig.instr filtered_off)" 9
got=$("$report" --format json trig.instr | python3 -c 'import json, sys
p = json.load(sys.stdin)["session"]["programs"][0]
print(p.get("started_off"), p.get("switches"), len(p.get("recorded_windows", [])), p["filters"]["filtered_off"])')
check "trigger: started_off switches windows filtered_off" "$got" "True 2 1 9"
run trigon INSTR_TRIGGER=phase:on
check "trigger on: outside calls" "$(calls trigon.instr outside)" 1
check "trigger on: main calls" "$(calls trigon.instr main)" 0
check "trigger on: leaf calls" "$(calls trigon.instr leaf)" 202

# Wrong values: one line each, and everything recorded.
run bad INSTR_LOG=stderr INSTR_DEPTH=0 INSTR_MIN_DURATION=fast INSTR_TRIGGER=phase:maybe
for v in INSTR_DEPTH=0 INSTR_MIN_DURATION=fast INSTR_TRIGGER=phase:maybe; do
    grep -q "$v" bad.err || { echo "FAIL: bad: no message naming $v"; cat bad.err; fail=1; }
done
check "bad: leaf calls" "$(calls bad.instr leaf)" "$(want leaf)"
[ $fail = 0 ] && echo "ok: record-time filters ($cc)"
exit $fail

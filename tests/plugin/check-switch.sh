#!/bin/sh
# check-switch.sh CC PLUGIN SRCDIR WORK REPORT INCLUDE OPT
# -fplugin-arg-instr-switchable: the program prints what the plain build
# prints; started (the default) it records every call; with INSTR_START=off
# the dump holds exactly the calls made between instr_start() and
# instr_stop(), as the program counted them.
set -e
cc=$1 plugin=$2 srcdir=$3 work=$4 report=$5 include=$6 opt=$7
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no $cc"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$cc" $opt -g -I"$include" "$srcdir/switch.c" -o plain
"$cc" $opt -g -I"$include" -fplugin="$plugin" -fplugin-arg-instr-switchable "$srcdir/switch.c" -o sw
./plain > plain.out
INSTR_OUTPUT="$work/on.instr" ./sw > on.out
INSTR_START=off INSTR_OUTPUT="$work/off.instr" ./sw > off.out
cmp plain.out on.out || { echo "FAIL: switchable build (started) printed other output than plain"; exit 1; }
cmp plain.out off.out || { echo "FAIL: switchable build (stopped) printed other output than plain"; exit 1; }
calls() { # DUMP FUNCTION: calls of FUNCTION in DUMP's report (0 if absent)
    "$report" --format csv --sort name "$1" 2>/dev/null |
        awk -F, -v f="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "calls") c = i; if ($i == "function") n = i } next }
                           $n == f && !found { print $c; found = 1 } END { if (!found) print 0 }'
}
want() { sed -n "s/^$1 //p" plain.out; }
fail=0
check() { # DUMP FUNCTION EXPECTED
    got=$(calls "$1" "$2")
    if [ "$got" != "$3" ]; then echo "FAIL: $1: $2 has $got calls, expected $3"; fail=1; fi
}
# Stopped at the start: only the phase's calls (main itself ran unhooked).
check off.instr in_phase "$(want in_phase)"
check off.instr rec "$(want rec)"
check off.instr outside 0
check off.instr main 0
# Started: every call up to instr_stop(); the loop after it runs unhooked
# (half of outside's calls).
check on.instr in_phase "$(want in_phase)"
check on.instr outside "$(( $(want outside) / 2 ))"
check on.instr main 1
# The report says when the hooks were on: stopped at the start, one
# window (instr_start to instr_stop, 2 switches); started, one window from
# the start to instr_stop (1 switch).
windows() { # DUMP: started_off switches windows, from the JSON
    "$report" --format json "$1" 2>/dev/null | python3 -c 'import json, sys
p = json.load(sys.stdin)["session"]["programs"][0]
print(p.get("started_off"), p.get("switches"), len(p.get("recorded_windows", [])))'
}
got=$(windows off.instr)
[ "$got" = "True 2 1" ] || { echo "FAIL: off.instr: started_off, switches, windows: $got (want True 2 1)"; fail=1; }
got=$(windows on.instr)
[ "$got" = "False 1 1" ] || { echo "FAIL: on.instr: started_off, switches, windows: $got (want False 1 1)"; fail=1; }
"$report" off.instr 2>/dev/null | grep -q "^Recorded:   1 window, .*off at the start, 2 switches" ||
    { echo "FAIL: off.instr: the text report's Recorded: line"; "$report" off.instr | head -8; fail=1; }

# The same switch on a build not compiled switchable (issue 37 §1): its
# hooks keep running, recording stops in their slow path, and the dump
# holds the same calls as the switchable build's.
"$cc" $opt -g -I"$include" -fplugin="$plugin" "$srcdir/switch.c" -o unsw
INSTR_OUTPUT="$work/uon.instr" ./unsw > uon.out
INSTR_START=off INSTR_OUTPUT="$work/uoff.instr" ./unsw > uoff.out
cmp plain.out uon.out || { echo "FAIL: unswitchable build (started) printed other output than plain"; exit 1; }
cmp plain.out uoff.out || { echo "FAIL: unswitchable build (stopped) printed other output than plain"; exit 1; }
for f in in_phase rec outside main; do
    check uoff.instr $f "$(calls off.instr $f)"
    check uon.instr $f "$(calls on.instr $f)"
done
got=$(windows uoff.instr)
[ "$got" = "True 2 1" ] || { echo "FAIL: uoff.instr: started_off, switches, windows: $got (want True 2 1)"; fail=1; }
got=$(windows uon.instr)
[ "$got" = "False 1 1" ] || { echo "FAIL: uon.instr: started_off, switches, windows: $got (want False 1 1)"; fail=1; }
"$report" uoff.instr 2>/dev/null | grep -q "^Filtered:.* entered while recording was off" ||
    { echo "FAIL: uoff.instr: the calls left out are not said"; "$report" uoff.instr | head -12; fail=1; }
[ $fail = 0 ] && echo "ok: switchable and unswitchable $cc $opt"
exit $fail

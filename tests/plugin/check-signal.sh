#!/bin/sh
# check-signal.sh CC PLUGIN SRCDIR WORK REPORT
# INSTR_SIGNAL (runtime/switch.c): switch-signal.c raises SIGUSR2 between
# four phases of 100 calls; each signal toggles the switchable build's
# hooks, so begun off the dump holds phases 2 and 4 (200 calls, 3
# switches, 2 windows) and begun on phases 1 and 3; as root and as an
# ordinary user.  A signal that is not allowed is said in one line.
set -e
cc=$1 plugin=$2 srcdir=$3 work=$4 report=$5
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no $cc"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$cc" -O2 -g -fplugin="$plugin" -fplugin-arg-instr-switchable "$srcdir/switch-signal.c" -o sig
chmod 755 "$work" sig
fail=0
case_() { # WHO PREFIX START [SPELLING]: the run and its checks
    who=$1 prefix=$2 start=$3 spelling=${4:-USR2}
    rm -f "$work/$who-$start.instr"
    $prefix env INSTR_START=$start INSTR_SIGNAL=$spelling INSTR_OUTPUT="$work/$who-$start.instr" ./sig > "$who-$start.out" ||
        { echo "FAIL: $who $start: the program did not survive its signals"; fail=1; return; }
    got=$("$report" --format json "$work/$who-$start.instr" | python3 -c 'import json, sys
j = json.load(sys.stdin)
p = j["session"]["programs"][0]
calls = sum(f["calls"] for f in j["functions"] if f["name"] == "work" and not f.get("pseudo"))
print(calls, p.get("switches"), len(p.get("recorded_windows", [])))')
    [ "$got" = "200 3 2" ] || { echo "FAIL: $who $start: work calls, switches, windows: $got (want 200 3 2)"; fail=1; }
}
for start in off on; do
    case_ root "" $start
    if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
        chmod 777 "$work"
        case_ user "setpriv --reuid=65534 --regid=65534 --clear-groups" $start
    fi
done
# The other spellings of the same signal: any case, SIG before it, its number.
for spelling in usr2 SigUsr2 12; do
    case_ "spelling-$spelling" "" off "$spelling"
done
# HUP and WINCH by name are taken (the test program raises SIGUSR2, which
# then ends it): no line refusing them.
for spelling in HUP sigwinch RTMIN+1; do
    INSTR_LOG=stderr INSTR_SIGNAL=$spelling INSTR_OUTPUT="$work/named.instr" ./sig > named.out 2> named.err || true
    ! grep -q "INSTR_SIGNAL=.* is not" named.err || { echo "FAIL: INSTR_SIGNAL=$spelling refused"; cat named.err; fail=1; }
done
INSTR_LOG=stderr INSTR_SIGNAL=SEGV INSTR_OUTPUT="$work/bad.instr" ./sig > bad.out 2> bad.err && {
    echo "FAIL: SIGUSR2 did not end the program without a handler"; fail=1; }
grep -q "INSTR_SIGNAL=SEGV is not" bad.err || { echo "FAIL: no line naming INSTR_SIGNAL=SEGV"; cat bad.err; fail=1; }
[ $fail = 0 ] && echo "ok: INSTR_SIGNAL ($cc)"
exit $fail

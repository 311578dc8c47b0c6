#!/bin/sh
# The report header of a session of many processes: each process's exit
# status, and lines that processes share printed once with how many share
# them (not one Program/Tick rate/Detector block per process).
#   run-header.sh BIN_DIR SRC_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
mkdir -p "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# 12 processes of /bin/app (pids 1001..1012): 10 with an invariant TSC;
# 1012 ended by exit(1).
dumps=
for i in $(seq 1 12); do
    sed "s/pid=100 ppid=1/pid=$((1000 + i)) ppid=1/" "$src/traces/nesting.txt" >"$work/p$i.txt"
    [ "$i" -gt 10 ] && sed -i 's/flags=complete,tsc_invariant/flags=complete/' "$work/p$i.txt"
    [ "$i" -eq 12 ] && sed -i 's/^header /header exit_status=1 /' "$work/p$i.txt"
    "$bin/instr-dump" --from-text "$work/p$i.txt" -o "$work/p$i.instr" || exit 1
    dumps="$dumps $work/p$i.instr"
done
# shellcheck disable=SC2086
"$bin/instr-report" --units ticks --verbose $dumps >"$work/out" 2>"$work/err" || bad "exit $?"
sed -n '2,/^Repairs/p' "$work/out" >"$work/header"
cat >"$work/want" <<'TXT'
Program:    /bin/app (exit status 0) (11 processes: pids 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, ...)
Program:    /bin/app (exit status 1) (pid 1012)
Threads:    12
Duration:   1.000 ms
Tick rate:  1.000000 GHz (invariant TSC) (10 processes: pids 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, ...)
Tick rate:  1.000000 GHz (TSC not known invariant: times assume a constant rate) (2 processes: pids 1011, 1012)
Detector:   rseq_cs (12 processes: pids 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, ...)
  sees:     context switches (preemption, blocking, sleep, migrations), signals
  not seen: system calls that do not block, page faults that do not block, hardware interrupts
TXT
grep -v "^Repairs" "$work/header" | cmp -s - "$work/want" || { bad "grouped header"; diff "$work/want" "$work/header"; }
# A few processes keep a Program line each, with the exit status; JSON has it too.
"$bin/instr-report" --units ticks --verbose "$work/p1.instr" "$work/p12.instr" >"$work/two" || bad "two: exit $?"
grep -qx "Program:    /bin/app (pid 1001, ppid 1, exit status 0)" "$work/two" || bad "no Program line of 1001"
grep -qx "Program:    /bin/app (pid 1012, ppid 1, exit status 1)" "$work/two" || bad "no exit status 1 of 1012"
# Without --verbose: the program's file name, the pid and how it ended.
"$bin/instr-report" --units ticks "$work/p1.instr" "$work/p12.instr" >"$work/two" || bad "two: exit $?"
grep -qx "Program:    app (pid 1012, exit status 1)" "$work/two" || bad "no short Program line of 1012"
"$bin/instr-report" --format json "$work/p12.instr" | grep -q '"exit_status": 1,' || bad "JSON exit_status"
exit $fail

#!/bin/sh
# A FIFO (or any file that is not a regular file) given to the tools: one
# line saying why, exit 2, at once (no blocking open waiting for a writer).
report=$1 dump=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && mkfifo "$work/pipe" || exit 1
fail=0
for tool in "$report" "$dump"; do
    timeout 10 "$tool" "$work/pipe" >"$work/out" 2>"$work/err"
    rc=$?
    lines=$(wc -l <"$work/err")
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "not a regular file" "$work/err"; then
        echo "FAIL: $(basename "$tool") on a FIFO: exit $rc (want 2), stderr:"; cat "$work/err"
        fail=1
    else
        echo "ok: $(basename "$tool") on a FIFO: exit 2: $(cat "$work/err")"
    fi
done
exit $fail

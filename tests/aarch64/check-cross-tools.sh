#!/bin/sh
# The tools cross-built for aarch64 (the fixture's build in CROSS, with
# arm64's libraries unpacked by scripts/fetch-arm64-root.sh), run under
# qemu-user (RUNNER: with LD_LIBRARY_PATH to those libraries):
#  - instr-report reads an aarch64 dump and an x86-64 dump, and says
#    byte for byte what the native instr-report says of each;
#  - instr-unwind-self: the sampler's unwinder, with aarch64's registers in
#    perf's order and libunwind-aarch64, walks a sample the program made of
#    itself back to main (tests/sampling/unwind-self.c);
#  - instr-sample refuses in one line, exit 124: qemu-user has no
#    perf_event_open (ENOSYS), and nothing of PROGRAM runs.
# Exit 77 (skipped) when the cross build has no tools, saying why.
#   check-cross-tools.sh CROSS NATIVE_REPORT NATIVE_GCC NATIVE_PLUGIN SRC RUNNER...
set -eu
cross=$1
report=$2
gcc=$3
plugin=$4
src=$5
shift 5
if [ ! -x "$cross/bin/instr-report" ]; then
    echo "SKIP: no aarch64 tools in $cross: its configure says which arm64 libraries are missing (scripts/fetch-arm64-root.sh)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

# A dump of each architecture: the same program, plugin of each compiler.
INSTR_OUTPUT="$work/a64.instr" "$@" "$cross/e2e-calls-O2" >/dev/null
"$gcc" -O2 -fplugin="$plugin" -o "$work/calls" "$src/tests/e2e/calls.c"
INSTR_OUTPUT="$work/x64.instr" "$work/calls" >/dev/null
for d in a64 x64; do
    for view in "" "--view calltree" "--format json"; do
        # shellcheck disable=SC2086
        "$report" $view "$work/$d.instr" >"$work/native" 2>&1 || true
        # shellcheck disable=SC2086
        "$@" "$cross/bin/instr-report" $view "$work/$d.instr" >"$work/cross" 2>&1 || true
        if cmp -s "$work/native" "$work/cross" && grep -q "main" "$work/native"; then
            echo "ok: $d dump, instr-report ${view:-(text)}: aarch64's report = x86-64's ($(wc -l <"$work/native") lines)"
        else
            echo "FAIL: $d dump, instr-report ${view:-(text)}: the aarch64 report differs from the native one"
            diff "$work/native" "$work/cross" | head -20
            status=1
        fi
    done
done

if "$@" "$cross/tools/instr-unwind-self" >"$work/unwind" 2>&1; then
    echo "ok: unwind-self under qemu"
else
    echo "FAIL: unwind-self under qemu"
    status=1
fi
cat "$work/unwind"

rc=0
"$@" "$cross/bin/instr-sample" -o "$work/s.instr" "$cross/e2e-calls-O2" >"$work/out" 2>"$work/err" || rc=$?
if [ $rc = 124 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q "perf events are absent here" "$work/err" &&
    [ ! -s "$work/out" ] && ! ls "$work"/s.instr* >/dev/null 2>&1; then
    echo "ok: instr-sample under qemu refuses, exit 124: $(cat "$work/err")"
else
    echo "FAIL: instr-sample under qemu: exit $rc, stderr:"
    cat "$work/err"
    status=1
fi
[ $status = 0 ] && echo "PASS: the aarch64 tools under qemu"
exit $status

#!/bin/sh
# Runs one rt-test scenario as uid/gid 65534 (no privileges), in a private
# world-writable directory.  Exit 77 (skipped) without setpriv or root.
set -u
test_bin=$1
name=$2
command -v setpriv >/dev/null 2>&1 || { echo "setpriv missing: skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "not root, cannot drop to 65534: skipped"; exit 77; }
work=$(mktemp -d /tmp/instr-rt-unpriv.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cp "$test_bin" "$work/rt-test"
chmod 755 "$work" "$work/rt-test"
mkdir "$work/tmp" && chmod 1777 "$work/tmp"
cd "$work/tmp" || exit 1
TMPDIR="$work/tmp" setpriv --reuid=65534 --regid=65534 --clear-groups "$work/rt-test" "$name"

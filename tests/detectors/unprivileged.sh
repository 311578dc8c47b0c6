#!/bin/sh
# Runs the detector scenarios as uid/gid 65534 with the default set (auto),
# and prints which set was chosen.  Exit 77 (skipped) without setpriv or root.
set -u
test_bin=$1
command -v setpriv >/dev/null 2>&1 || { echo "setpriv missing: skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "not root, cannot drop to 65534: skipped"; exit 77; }
work=$(mktemp -d /tmp/instr-det-unpriv.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cp "$test_bin" "$work/det-test"
chmod 755 "$work" "$work/det-test"
mkdir "$work/tmp" && chmod 1777 "$work/tmp"
cd "$work/tmp" || exit 1
failed=0
for t in syscalls nanosleep pipe signal migrate minfault perf-late other-thread clean sigmask sigmask-early sigsys-chain threads-fork; do
  TMPDIR="$work/tmp" setpriv --reuid=65534 --regid=65534 --clear-groups "$work/det-test" "$t"
  rc=$?
  [ $rc = 0 ] || [ $rc = 77 ] || { echo "$t failed ($rc)"; failed=1; }
done
exit $failed

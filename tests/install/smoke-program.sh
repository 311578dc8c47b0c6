#!/bin/sh
# smoke-program.sh INSTR-REPORT WORK
# What a user of an installed instr does, from the installed paths only:
# compile with gcc -fplugin=$(pkg-config --variable=plugin instr) and the
# include flags of pkg-config --cflags instr, run, report with
# INSTR-REPORT.  pkg-config finds instr.pc through PKG_CONFIG_PATH (a
# prefix) or its default path (/usr); the tree may have been moved since
# it was installed, so --define-prefix takes the prefix from where
# instr.pc is (as a user of a moved tree does).  Also run by
# scripts/ci-extra.sh against the installed Debian package.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
report=$1 work=$2
cc=${CC:-gcc}
rm -rf "$work"
mkdir -p "$work"
cd "$work"
plugin=$(pkg-config --define-prefix --variable=plugin instr)
runtime=$(pkg-config --define-prefix --variable=runtime instr)
echo "plugin: $plugin"
# The paths as a user reads them: absolute, with no ../ in them.
case "$plugin $runtime" in
*/../* | *//* | [!/]*) echo "pkg-config prints unnormalised paths: $plugin $runtime"; exit 1 ;;
esac
# shellcheck disable=SC2046
"$cc" -O2 $(pkg-config --define-prefix --cflags instr) -fplugin="$plugin" -o smoke "$here/smoke.c"
# The binding loads the runtime beside the plugin that compiled it.
expected=$(realpath "$runtime")
if ! strings smoke | grep -qxF "$expected"; then
    echo "smoke does not load $expected; it names: $(strings smoke | grep libinstr-rt || true)"
    exit 1
fi
INSTR_OUTPUT="$work/smoke.%p.instr" ./smoke
set -- "$work"/smoke.*.instr
[ $# = 1 ] && [ -f "$1" ] || { echo "expected one dump, got: $*"; exit 1; }
"$report" "$1"
calls=$(sh "$here/report-calls.sh" "$report" "$1" leaf)
[ "$calls" = 7 ] || { echo "leaf: expected 7 calls, report says '$calls'"; exit 1; }
calls=$(sh "$here/report-calls.sh" "$report" "$1" main)
[ "$calls" = 1 ] || { echo "main: expected 1 call, report says '$calls'"; exit 1; }
echo "smoke: ok"

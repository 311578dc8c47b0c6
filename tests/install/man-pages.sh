#!/bin/sh
# man-pages.sh PREFIX: every installed tool has its man page, every
# installed man page renders without a groff warning, and man finds each
# by name under PREFIX/share/man.
set -eu
prefix=$1
status=0
count=0
for page in "$prefix"/share/man/man1/*.1.gz "$prefix"/share/man/man7/*.7.gz; do
    count=$((count + 1))
    if ! MANWIDTH=80 man --warnings -l "$page" >"$page.txt" 2>"$page.err"; then
        echo "$page: man failed"; status=1
    fi
    if [ -s "$page.err" ]; then
        echo "$page: warnings:"; cat "$page.err"; status=1
    fi
    grep -q '^NAME' "$page.txt" || { echo "$page: no NAME section rendered"; status=1; }
    rm -f "$page.txt" "$page.err"
done
[ $count -ge 3 ] || { echo "expected at least 3 man pages, found $count"; status=1; }
names="7:instr"
for tool in "$prefix"/bin/*; do
    names="$names 1:$(basename "$tool")"
done
for name in $names; do
    found=$(MANPATH="$prefix/share/man" man -w "${name%%:*}" "${name#*:}") ||
        { echo "man -w ${name#*:}: not found (a tool without its man page?)"; status=1; continue; }
    case $found in
    "$prefix"/*) ;;
    *) echo "man -w ${name#*:}: $found is not under $prefix"; status=1 ;;
    esac
done
exit $status

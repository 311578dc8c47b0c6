#!/bin/sh
# check-count.sh - the plugin's mode=count (issue 10), built, run and
# reported for real: exact calls of a multi-threaded program, its forked
# child's own counts, and the report compared with a golden file.
#
#   check-count.sh <cc> <plugin> <instr-report> <srcdir> <workdir> <opt>
set -u
cc=$1 plugin=$2 report=$3 srcdir=$4 work=$5 opt=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }
arg=-fplugin-arg-$(basename "$plugin" .so)

"$cc" "$opt" -pthread -fplugin="$plugin" "$arg-mode=count" "$srcdir/count.c" -o count || fail "build"
INSTR_OUTPUT="$work/%p.instr" ./count || fail "run"
parent=$(ls ./*.instr | sort -t/ -k2 -n | head -1)
child=$(ls ./*.instr | sort -t/ -k2 -n | tail -1)
[ "$parent" != "$child" ] || fail "expected two dumps (parent and forked child)"

# The parent: the header, the table and the call graph, byte for byte
# (the dump's path, pid and the source directory taken out).
"$report" "$parent" >parent.txt || fail "report"
sed -e "s|^Dump: .*|Dump: X|" -e "s|$srcdir/||g" parent.txt >parent.norm
diff -u "$srcdir/count.expected" parent.norm || fail "parent report differs from count.expected"

# The child counts from the fork on: 7 calls of mid, 14 of leaf.
"$report" "$child" >child.txt || fail "report child"
cat child.txt
grep -Eq '^ +7  mid  ' child.txt || fail "child: mid 7"
grep -Eq '^ +14  leaf  ' child.txt || fail "child: leaf 14"
grep -q ' worker ' child.txt && fail "child: worker counted before the fork"

# Views of a count dump: callers; a time view is refused with a reason.
"$report" --view callers leaf "$parent" >callers.txt || fail "--view callers"
grep -Eq '^ +802000  mid$' callers.txt || fail "callers of leaf"
"$report" --view calltree "$parent" >/dev/null 2>err.txt && fail "calltree accepted"
grep -q 'calls only' err.txt || fail "no reason for refusing calltree"
exit 0

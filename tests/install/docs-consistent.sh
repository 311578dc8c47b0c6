#!/bin/sh
# docs-consistent.sh INSTR-REPORT INSTR-DUMP PLUGIN SOURCE-DIR [INSTR-SAMPLE]
# The man pages and the completion say what the programs do: every option
# of `instr-report --help` is in instr-report(1) and in its completion,
# every option of `instr-dump --help` in instr-dump(1) and its completion, of
# `instr-sample --help` (when this build made it) in instr-sample(1) and its
# completion, every plugin argument the plugin accepts and every INSTR_
# variable of docs/environment.md in instr(7).  A failure names what to add
# where.
set -eu
report=$1 dump=$2 plugin=$3 src=$4 sample=${5:-}
man=$src/docs/man
status=0

# The options of a --help text: the --long and -x words that start the
# lines of its option list ("  -o, --output FILE  what it does").
options_of() {
    "$1" --help | sed -n -E 's/^ +(-.*)/\1/p' | sed 's/  .*//' |
        tr ' \t[]()=,|' '\n' | grep -E '^--?[a-z][a-z-]*$' | sort -u
}
# mentions FILE WORD: WORD in FILE (roff \- read as -), as a whole word.
mentions() {
    sed 's/\\-/-/g' "$1" | grep -qE -- "(^|[^a-zA-Z-])$2([^a-zA-Z-]|\$)"
}
# A tagged paragraph of instr(7), rendered once, starting with WORD.
tagged() {
    grep -qE "^       $1(=| |\$)" "$tmp/instr.7.txt"
}

for opt in $(options_of "$report"); do
    mentions "$man/instr-report.1" "$opt" || { echo "docs/man/instr-report.1: $opt is missing"; status=1; }
    mentions "$src/completion/instr-report.bash" "$opt" ||
        { echo "completion/instr-report.bash: $opt is missing"; status=1; }
done
for opt in $(options_of "$dump"); do
    mentions "$man/instr-dump.1" "$opt" || { echo "docs/man/instr-dump.1: $opt is missing"; status=1; }
    mentions "$src/completion/instr-dump.bash" "$opt" ||
        { echo "completion/instr-dump.bash: $opt is missing"; status=1; }
done
if [ -n "$sample" ]; then
    for opt in $(options_of "$sample"); do
        mentions "$man/instr-sample.1" "$opt" || { echo "docs/man/instr-sample.1: $opt is missing"; status=1; }
        mentions "$src/completion/instr-sample.bash" "$opt" ||
            { echo "completion/instr-sample.bash: $opt is missing"; status=1; }
    done
fi

# The plugin lists the keys it accepts when given one it does not.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MANWIDTH=200 man -l "$man/instr.7" >"$tmp/instr.7.txt" 2>/dev/null
echo 'int f(void) { return 0; }' >"$tmp/f.c"
keys=$(gcc -fplugin="$plugin" -fplugin-arg-instr-no-such-key -c "$tmp/f.c" -o "$tmp/f.o" 2>&1 |
       sed -n 's/.*valid: //p' | tr -d ',')
[ -n "$keys" ] || { echo "the plugin did not list its arguments"; status=1; }
for key in $keys; do
    tagged "$key" || { echo "docs/man/instr.7: plugin argument $key is missing"; status=1; }
done

vars=$(sed -n 's/^| `\(INSTR_[A-Z_]*\)`.*/\1/p' "$src/docs/environment.md")
[ -n "$vars" ] || { echo "docs/environment.md: no INSTR_ variable found in its table"; status=1; }
for var in $vars; do
    tagged "$var" || { echo "docs/man/instr.7: $var is missing"; status=1; }
done
exit $status

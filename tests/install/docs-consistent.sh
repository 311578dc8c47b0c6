#!/bin/sh
# docs-consistent.sh INSTR-REPORT INSTR-DUMP PLUGIN SOURCE-DIR [INSTR-SAMPLE]
# The man pages and the completion say what the programs do: every option
# of `instr-report --help` is in instr-report(1) and in its completion,
# every option of `instr-dump --help` in instr-dump(1) and its completion, of
# `instr-sample --help` (when this build made it) in instr-sample(1) and its
# completion, every plugin argument the plugin accepts in instr(7) and in
# instrumenting.md's table, every INSTR_ variable of docs/environment.md in
# instr(7), and every value of --view, --format, --export, --sort and -F
# (from the lists the tools print when given a wrong one) in
# instr-report(1), the completion and (views) reading-a-report.md.  A
# failure names what to add where.
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
keys_plugin=$keys

vars=$(sed -n 's/^| `\(INSTR_[A-Z_]*\)`.*/\1/p' "$src/docs/environment.md")
[ -n "$vars" ] || { echo "docs/environment.md: no INSTR_ variable found in its table"; status=1; }
for var in $vars; do
    tagged "$var" || { echo "docs/man/instr.7: $var is missing"; status=1; }
done
# The values of instr-report's options, from the tools' own tables (the
# lists their refusals print): every view, format, export, sort key and
# column key is in instr-report(1) and in the completion's list for that
# option; every view in reading-a-report.md.
"$dump" --from-text "$src/tests/report/traces/nesting.txt" -o "$tmp/n.instr"
# listed ARGS...: the "(one of: a, b, c)" or "(its columns: a, b; ...)"
# list of the refusal instr-report prints for ARGS.
listed() {
    "$report" "$@" "$tmp/n.instr" 2>&1 >/dev/null | sed -n -E 's/.*\((one of|its columns): ([^;)]*).*/\2/p' |
        tr -d ',' | tr ' ' '\n' | grep .
}
# completes OPTION WORD: the completion offers WORD after OPTION.
completes() {
    sed -n "/^ *$1) echo/p" "$src/completion/instr-report.bash" | grep -qE -- "[\" ]$2[\" ]"
}
for what in "--view" "--format" "--export" "--sort"; do
    values=$(listed "$what" bogus)
    [ -n "$values" ] || { echo "instr-report $what bogus did not list its values"; status=1; }
    for v in $values; do
        mentions "$man/instr-report.1" "$v" || { echo "docs/man/instr-report.1: $what $v is missing"; status=1; }
        completes "$what" "$v" || { echo "completion/instr-report.bash: $what $v is missing"; status=1; }
    done
done
for v in $(listed --view bogus); do
    grep -q -- "--view $v" "$src/docs/reading-a-report.md" ||
        { echo "docs/reading-a-report.md: --view $v is missing"; status=1; }
done
for view in functions threads modules processes; do
    keys=$(listed --view "$view" -F bogus)
    [ -n "$keys" ] || { echo "instr-report --view $view -F bogus did not list its columns"; status=1; }
    for k in $keys; do
        mentions "$man/instr-report.1" "$k" || { echo "docs/man/instr-report.1: -F $k ($view) is missing"; status=1; }
    done
done

# Every plugin argument is in instrumenting.md's table too.
for key in $keys_plugin; do
    grep -qE "^\| \`$key(=|\`)" "$src/docs/instrumenting.md" ||
        { echo "docs/instrumenting.md: plugin argument $key is missing from its table"; status=1; }
done
exit $status

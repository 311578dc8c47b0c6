#!/bin/bash
# completion.sh PREFIX: the installed bash completions for instr-report,
# instr-dump and instr-sample load (directly, and through
# bash-completion's loader from PREFIX/share) and complete options, their
# values, dump files, and for instr-sample the program and its words.
set -u
prefix=$1
script=$prefix/share/bash-completion/completions/instr-report
status=0

# complete WORDS...: COMPREPLY for the last word, space-separated, from
# the completion function of the command WORDS starts with.
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    "_${1//-/_}"
    echo "${COMPREPLY[*]}"
}
expect() { # expect WANT WORDS...
    local want=$1
    shift
    local got
    got=$(complete_words "$@")
    if [ "$got" != "$want" ]; then
        echo "completing '$*': expected '$want', got '$got'"
        status=1
    fi
}

# shellcheck source=/dev/null
. "$script" || { echo "$script does not load"; exit 1; }
[ "$(complete -p instr-report)" = "complete -F _instr_report instr-report" ] ||
    { echo "no completion registered for instr-report"; status=1; }
expect "--view" instr-report --vi
expect "--format" instr-report --form
expect "text csv json" instr-report --format ""
expect "json" instr-report --format = j
expect "--units=ms" instr-report --units=m
expect "calltree callers callees" instr-report a.instr --view call
expect "ei ei%" instr-report --sort ei
expect "@locks,@io" instr-report --not-application @locks,@i
# A list's values already given are not offered again.
expect "sched,syscall,signal" instr-report --os-events sched,syscall,s
expect "--os-events=sched,syscall --os-events=sched,signal" instr-report --os-events=sched,s
expect "+ei,ee +ei,ei% +ei,ee% +ei,external" instr-report -F +ei,e
expect "" instr-report --depth ""
# The format and export names are those of instr-report's format table
# (tools/formats.c), which its "bad value" message lists.
for opt in format export; do
    names=$("$prefix/bin/instr-report" --$opt=nosuch 2>&1 | sed -n 's/.*(one of: \(.*\))$/\1/p' | sed 's/, / /g')
    [ -n "$names" ] || { echo "instr-report --$opt=nosuch does not list the names"; status=1; }
    expect "$names" instr-report --$opt ""
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/sub"
touch "$dir/run.123.instr" "$dir/run.123.instr.1" "$dir/notes.txt" "$dir/run.instrx"
cd "$dir" || exit 1
expect "sub run.123.instr run.123.instr.1" instr-report ""
expect "run.123.instr run.123.instr.1" instr-report --units us r

# instr-dump: its options, dumps as inputs, any file after --from-text.
# shellcheck source=/dev/null
. "$prefix/share/bash-completion/completions/instr-dump" || { echo "instr-dump's completion does not load"; exit 1; }
expect "--from-text" instr-dump --fr
expect "sub run.123.instr run.123.instr.1" instr-dump ""
expect "notes.txt" instr-dump --from-text n

# instr-sample (when this build made it): its options, then the program,
# then the program's own words (as files here: bash-completion is not
# loaded in this shell).
if [ -x "$prefix/bin/instr-sample" ]; then
    # shellcheck source=/dev/null
    . "$prefix/share/bash-completion/completions/instr-sample" || { echo "instr-sample's completion does not load"; exit 1; }
    expect "--rate" instr-sample --ra
    expect "--stack-size" instr-sample --st
    expect "" instr-sample --rate ""
    expect "notes.txt" instr-sample -o n
    touch prog && chmod +x prog
    expect "./prog" instr-sample --rate 100 ./pr
    expect "notes.txt" instr-sample ./prog n
    expect "notes.txt" instr-sample -- ./prog --rate n
    expect "$(compgen -c -- instr-rep | sort -u | head -1)" instr-sample instr-rep
fi

# bash-completion finds it under PREFIX/share on first use.
if [ ! -f /usr/share/bash-completion/bash_completion ]; then
    echo "bash-completion is not installed (scripts/install-deps.sh installs it)"
    exit 1
fi
tools="instr-report instr-dump"
[ -x "$prefix/bin/instr-sample" ] && tools="$tools instr-sample"
for tool in $tools; do
    loaded=$(env XDG_DATA_DIRS="$prefix/share" bash --norc -c '
        . /usr/share/bash-completion/bash_completion
        __load_completion "$1" && complete -p "$1"' - "$tool")
    [ "$loaded" = "complete -F _${tool//-/_} $tool" ] ||
        { echo "bash-completion did not load $tool's from $prefix/share: '$loaded'"; status=1; }
done
# With bash-completion, instr-sample hands the program's words to the
# program's own completion (here instr-dump's, installed beside it).
if [ -x "$prefix/bin/instr-sample" ]; then
    got=$(cd "$dir" && env XDG_DATA_DIRS="$prefix/share" PATH="$prefix/bin:$PATH" bash --norc -c '
        . /usr/share/bash-completion/bash_completion
        __load_completion instr-sample
        COMP_WORDS=(instr-sample --rate 100 instr-dump --fr); COMP_CWORD=4
        COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
        _instr_sample; echo "${COMPREPLY[*]}"')
    [ "$got" = "--from-text" ] ||
        { echo "instr-sample --rate 100 instr-dump --fr: expected instr-dump's '--from-text', got '$got'"; status=1; }
fi
exit $status

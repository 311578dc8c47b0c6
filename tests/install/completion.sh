#!/bin/bash
# completion.sh PREFIX: the installed bash completion for instr-report
# loads (directly, and through bash-completion's loader from
# PREFIX/share) and completes options, their values and dump files.
set -u
prefix=$1
script=$prefix/share/bash-completion/completions/instr-report
status=0

# complete WORDS...: COMPREPLY for the last word, space-separated.
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    _instr_report
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

# bash-completion finds it under PREFIX/share on first use.
if [ ! -f /usr/share/bash-completion/bash_completion ]; then
    echo "bash-completion is not installed (scripts/install-deps.sh installs it)"
    exit 1
fi
loaded=$(env XDG_DATA_DIRS="$prefix/share" bash --norc -c '
    . /usr/share/bash-completion/bash_completion
    __load_completion instr-report && complete -p instr-report')
[ "$loaded" = "complete -F _instr_report instr-report" ] ||
    { echo "bash-completion did not load it from $prefix/share: '$loaded'"; status=1; }
exit $status

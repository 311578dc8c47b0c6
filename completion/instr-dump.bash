# bash completion for instr-dump.  Installed as
# share/bash-completion/completions/instr-dump (bash-completion loads it on
# first use); without bash-completion, source it.  Keep the options in step
# with `instr-dump --help' (tests/install checks every option is here).

_instr_dump_options="--from-text -o --output -h --help --version"

_instr_dump()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev='' i extglob
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    case $prev in
    --from-text | -o | --output)
        # Any file: a text trace, or the dump to write.
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        for i in $_instr_dump_options; do
            [[ $i == "$cur"* ]] && COMPREPLY+=("$i")
        done
        return 0
    fi
    # A dump (*.instr, *.instr.N) and the directories that lead to one.
    extglob=$(shopt -p extglob)
    shopt -s extglob
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.instr?(.+([0-9]))' -- "$cur")
    eval "$extglob"
    return 0
}

complete -F _instr_dump instr-dump

# bash completion for instr-sample.  Installed as
# share/bash-completion/completions/instr-sample (bash-completion loads it
# on first use); without bash-completion, source it.  Keep the options in
# step with `instr-sample --help' (tests/install checks every option is
# here).  Like `time' or `sudo': its own options, then a program, then
# that program's arguments, completed by the program's own completion
# when bash-completion is loaded (_command_offset), else as file names.

_instr_sample_options="--rate -o --output --stack-size --fp-chain --help --version --"
_instr_sample_valued=" --rate -o --output --stack-size "

_instr_sample()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev='' i word
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # The first word that is neither an option nor an option's value is
    # the program: from there on, the words are the program's.
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -- ]]; then
            ((i++))
            break
        elif [[ $_instr_sample_valued == *" $word "* ]]; then
            ((i++))
        elif [[ $word != -* ]]; then
            break
        fi
    done
    if ((i < COMP_CWORD)); then
        if declare -F _command_offset >/dev/null; then
            _command_offset "$i"
        else
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
    fi

    case $prev in
    -o | --output)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0 ;;
    --rate | --stack-size)
        return 0 ;;  # a number
    esac
    if [[ $cur == -* ]]; then
        for i in $_instr_sample_options; do
            [[ $i == "$cur"* ]] && COMPREPLY+=("$i")
        done
        return 0
    fi
    # The program: a command on PATH, or a file (./prog).
    compopt -o filenames 2>/dev/null
    if [[ $cur == */* ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    fi
    return 0
}

complete -F _instr_sample instr-sample

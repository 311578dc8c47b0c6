# bash completion for instr-report.  Installed as
# share/bash-completion/completions/instr-report (bash-completion loads it
# on first use); without bash-completion, source it.  Plain bash: it needs
# no helper of bash-completion.  Keep the lists in step with
# `instr-report --help' (tests/install checks every option is here).

# Every option; those taking a value end with '=' in _instr_report_valued.
_instr_report_options="--view --depth --threshold --sort --units --format --limit
    --flagged --not-application --os-events --mpi-prefixes --clones --wall --export --weight --folded-root --time-range --min-duration
    --split-size --diff --raw --compensate --suggest-exclude --self -F --columns -v --verbose -o --output -h --help
    --no-compress --clear-cache --version"
_instr_report_valued=" --view --depth --threshold --sort --units --format --limit
    --not-application --os-events --mpi-prefixes --clones --wall --export --weight --folded-root --time-range --min-duration --split-size --suggest-exclude --self -F --columns -o --output "

# The values an option takes, or nothing for free-form values.
_instr_report_values()
{
    case $1 in
    --view) echo "functions threads modules processes calltree callers callees lines samples ranks mpi" ;;
    --sort) echo "name calls self ei ee ai ae ei% ee% ai% ae% ci ce ci% ce% wall po flagged module file pid tid" ;;
    --units) echo "ticks ns us ms" ;;
    --format) echo "text csv json" ;;
    --export) echo "visualiser chrome callgrind folded pprof html perfetto" ;;
    --weight) echo "elapsed application" ;;
    --folded-root) echo "none process thread" ;;
    --not-application) echo "@locks @io @alloc @sleep" ;;
    --os-events) echo "sched syscall fault signal irq unknown all none" ;;
    --mpi-prefixes) echo "MPI_ PMPI_ none" ;; # any prefix; +PREFIX adds to the defaults
    --clones) echo "fold split" ;;
    -F | --columns) echo "all calls self ei ee ai ae ci ce ei% ee% ai% ae% ci% ce% wall conc alive% external probe
        flagged flagged-time off-cpu sched sched-time syscall syscall-time fault fault-time signal signal-time
        module file function pid thread tid name program" ;;
    esac
}

_instr_report()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev='' opt='' head='' i
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # bash splits '--format=js' into '--format' '=' 'js' (COMP_WORDBREAKS).
    if [[ $cur == = ]]; then
        opt=$prev
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        opt=${COMP_WORDS[COMP_CWORD - 2]}
    elif [[ $cur == --*=* ]]; then
        # '=' not a word break: the reply replaces the whole '--opt=val'.
        opt=${cur%%=*}
        head=$opt=
        cur=${cur#*=}
    elif [[ $_instr_report_valued == *" $prev "* ]]; then
        opt=$prev
    fi

    if [[ -n $opt ]]; then
        local values
        values=$(_instr_report_values "$opt")
        if [[ -n $values ]]; then
            # A value list: --not-application, --os-events, --mpi-prefixes and
            # --columns take several, comma-joined (--columns +KEY and
            # --mpi-prefixes +PREFIX add to the defaults).
            if [[ $opt == --not-application || $opt == --os-events || $opt == --mpi-prefixes || $opt == -F ||
                $opt == --columns ]] &&
                [[ $cur == *,* ]]; then
                head+=${cur%,*},
                cur=${cur##*,}
            elif [[ $cur == +* ]]; then
                head+=+
                cur=${cur#+}
            fi
            # Values already in the list are not offered again.
            local given=",${head#"$opt"=},"
            given=${given/#,+/,}
            for i in $values; do
                [[ $given == *",$i,"* ]] && continue
                [[ $i == "$cur"* ]] && COMPREPLY+=("$head$i")
            done
        elif [[ $opt == -o || $opt == --output || $opt == --self ]]; then
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
    fi

    if [[ $cur == -* ]]; then
        for i in $_instr_report_options; do
            [[ $i == "$cur"* ]] && COMPREPLY+=("$i")
        done
        return 0
    fi

    # Inputs: dumps (*.instr, and the *.instr.1, .2... written when the
    # name was taken) and the directories that lead to them.
    local extglob
    extglob=$(shopt -p extglob)
    shopt -s extglob
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.instr?(.+([0-9]))' -- "$cur")
    eval "$extglob"
    return 0
}

complete -F _instr_report instr-report

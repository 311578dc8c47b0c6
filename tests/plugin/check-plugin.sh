#!/bin/sh
# check-plugin.sh - plugin tests, one case per invocation (see CMakeLists.txt).
#
#   check-plugin.sh <case> <cc> <plugin> <srcdir> <workdir> [extra flags...]
#
# Exit 0 on success, 77 (CTest SKIP_RETURN_CODE) when the case cannot run
# here, 1 with a message on failure.
set -u
case_name=$1 cc=$2 plugin=$3 srcdir=$4 work=$5
shift 5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# Plugin arguments are named after the plugin file: instr.so -> instr.
arg=-fplugin-arg-$(basename "$plugin" .so)
# No runtime here: hooks stay no-ops, which is what these tests want.
norun="$arg-runtime=$work/no-such-runtime.so"

# compile <source> <flags...>: compiles to x.o with every tree dump (GCC
# parses -fdump-tree-<name> before loading plugins, so -fdump-tree-instr is
# refused; -fdump-tree-all picks up the plugin's pass).
compile() {
    src=$1; shift
    case $src in *.cc) drv=$(echo "$cc" | sed 's/gcc/g++/') ;; *) drv=$cc ;; esac
    "$drv" -fplugin="$plugin" "$norun" "$@" -fdump-tree-all -c "$srcdir/$src" -o x.o \
        >out.txt 2>&1 || { cat out.txt >&2; fail "compile $src $*"; }
}

# summary: one line per function of the plugin's dump:
#   <asm-name> <instrumented|skipped:reason> enter=N exit=N landing=N returns=N unhooked=N
# where unhooked counts returns not directly preceded by an __instr_exit call.
summary() {
    awk '
    function flush() { if (fn != "") printf "%s %s enter=%d exit=%d landing=%d returns=%d unhooked=%d\n", fn, st, en, ex, la, re, un }
    /^;; Function / { flush(); fn = $4; gsub(/[(,]/, "", fn); st = "?"; en = ex = la = re = un = 0; prev = ""; next }
    /^instr: instrumented/ { st = "instrumented" }
    /^instr: skipped: / { st = "skipped:" $3 }
    /__instr_enter \(/ { en++ }
    /__instr_exit \(/ { ex++ }
    /__instr_landing \(/ { la++ }
    /^ *return[ ;]/ { re++; if (prev !~ /__instr_exit \(/) un++ }
    /^ *$/ || /# DEBUG/ { next }
    { prev = $0 }
    END { flush() }' ./*.instr > summary.txt
    cat summary.txt
}

expect() { # expect <asm-name> <pattern>: the summary line of the function matches
    line=$(grep "^$1 " summary.txt) || fail "$1 not in the dump"
    echo "$line" | grep -Eq -- "$2" || fail "$1: expected /$2/, got: $line"
}

all_exits_hooked() { # every instrumented function: one enter, every return hooked
    grep ' instrumented ' summary.txt | grep -v ' enter=1 ' && fail "entry hook count"
    grep ' instrumented ' summary.txt | grep -v ' unhooked=0$' && fail "unhooked return"
    grep -q ' instrumented ' summary.txt || fail "nothing instrumented"
}

case $case_name in
exits)
    compile exits.c "$@"
    summary
    all_exits_hooked
    expect many_returns 'instrumented .*exit=[1-9]'
    expect loop_at_entry 'instrumented'
    expect quiet 'skipped:no_instrument_function .*enter=0 exit=0'
    # Descriptors carry the names, no debug info needed.
    # (name, file, line) as consecutive strings; symbol names alone are not
    # followed by the file name.
    tr '\0' '\n' <x.o | grep -A2 -x many_returns | tr '\n' ' ' | grep -q 'exits.c 3' \
        || fail "no descriptor for many_returns in x.o"
    tr '\0' '\n' <x.o | grep -A1 -x quiet | grep -q 'exits.c$' \
        && fail "descriptor for no_instrument_function quiet"
    # No frame pointer just for the CFA: at -O2 the leaf-like helpers must
    # not set one up.
    case " $* " in *" -O2 "*)
        "$cc" -fplugin="$plugin" "$norun" "$@" -S "$srcdir/exits.c" -o x.s || fail "-S"
        sed -n '/^many_returns:/,/\.size.many_returns/p' x.s | grep -q 'movq.%rsp, %rbp' \
            && fail "frame pointer in many_returns at -O2"
        ;;
    esac
    ;;
eh)
    compile eh.cc "$@"
    summary
    all_exits_hooked
    expect _Z10with_catchi 'instrumented .*landing=[1-9]'
    expect _Z12with_cleanupi 'instrumented .*landing=[1-9]'
    # GCC's static-initialisation functions are skipped as artificial.
    grep '_GLOBAL__sub_I' summary.txt | grep -v 'skipped:artificial' && fail "_GLOBAL__sub_I instrumented"
    # C++ descriptors also carry the demangled name, after the line.
    tr '\0' '\n' <x.o | grep -m1 -A3 -x _Z10with_catchi | tail -1 | grep -qx 'with_catch(int)' \
        || fail "no demangled name in the descriptor of with_catch"
    ;;
eh-switchable)
    # switchable on C++ with exceptions: a function that catches is left
    # out, said with -verbose (its regions' type filters cannot be copied:
    # gcc-12 stopped with an internal error); one with only cleanups is
    # split; the program runs as the plain build.
    drv=$(echo "$cc" | sed 's/gcc/g++/')
    "$drv" -fplugin="$plugin" "$norun" "$arg-switchable" "$arg-verbose" "$@" "$srcdir/eh.cc" -o sw \
        >out.txt 2>&1 || { cat out.txt >&2; fail "switchable build of eh.cc"; }
    grep -q "left out .*with_catch.*catches exceptions" out.txt || { cat out.txt >&2; fail "with_catch not left out"; }
    grep -q "with_cleanup.*catches exceptions" out.txt && fail "with_cleanup left out"
    "$drv" "$@" "$srcdir/eh.cc" -o plain || fail "plain build"
    ./plain 2 >plain.out; p=$?
    ./sw 2 >sw.out; i=$?
    [ "$p" = "$i" ] && cmp -s plain.out sw.out || fail "output differs: $(cat plain.out) vs $(cat sw.out)"
    ;;
run)
    # The runtime is missing: the program must behave exactly as without the plugin.
    drv=$(echo "$cc" | sed 's/gcc/g++/')
    "$drv" "$@" "$srcdir/eh.cc" -o plain || fail "plain build"
    "$drv" -fplugin="$plugin" "$norun" "$@" "$srcdir/eh.cc" -o instrumented || fail "instrumented build"
    ./plain 2 >plain.out; p=$?
    ./instrumented 2 >instr.out; i=$?
    [ "$p" = "$i" ] && cmp -s plain.out instr.out || fail "output differs: $(cat plain.out) vs $(cat instr.out)"
    # One binding group per module, however many objects carry it.
    "$cc" -fplugin="$plugin" "$norun" "$@" -c "$srcdir/exits.c" -o a.o || fail "a.o"
    "$cc" -fplugin="$plugin" "$norun" "$@" -c "$srcdir/filters.c" -o b.o || fail "b.o"
    "$cc" a.o b.o -o two || fail "link two objects"
    n=$(nm two | grep -c ' __instr_hook_table$')
    [ "$n" = 1 ] || fail "$n hook tables"
    "$cc" -shared -fPIC -fplugin="$plugin" "$norun" "$@" "$srcdir/filters.c" -o libf.so || fail "-shared"
    "$cc" "$@" "$srcdir/exits.c" "$srcdir/filters.c" -o two-plain || fail "plain two"
    ./two 3 >two.out; t=$?
    ./two-plain 3 >two-plain.out; tp=$?
    [ "$t" = "$tp" ] && cmp -s two.out two-plain.out || fail "two: exit $t vs $tp"
    ;;
split-call)
    # Every call site's frame closes by its return hook, on every path: no
    # frame left open for the report to unwind (pass-empty-sites.cc kept the
    # call hook but removed the inline path's return).
    dump=$1
    shift
    "$cc" -fplugin="$plugin" "$@" "$srcdir/split-call.c" -o split -lm || fail "build"
    rm -f split.instr
    INSTR_OUTPUT=split.instr ./split 4 || fail "run"
    "$dump" split.instr >split.txt || fail "instr-dump"
    calls=$(grep -cE '^[0-9]+ [0-9]+ call ' split.txt) returns=$(grep -cE '^[0-9]+ [0-9]+ return' split.txt)
    unwinds=$(grep -c unwind split.txt)
    [ "$calls" = "$returns" ] && [ "$unwinds" = 0 ] ||
        fail "$calls call hooks, $returns returns, $unwinds unwinds"
    ;;
source-path)
    # The function records name the source file as the debug information
    # does: absolute (a relative name joined to the compile directory),
    # then -ffile-prefix-map applied; the program runs from elsewhere.
    dump=$1
    shift
    mkdir -p src && printf 'int main(void) { return 0; }\n' >src/p.c
    "$cc" -fplugin="$plugin" "$@" src/p.c -o p || fail "build with a relative source name"
    (cd / && INSTR_OUTPUT="$work/p.instr" "$work/p") || fail "run p"
    "$dump" p.instr | grep -q "^function .* file=$work/src/p.c name=main" ||
        fail "file not absolute: $("$dump" p.instr | grep '^function')"
    "$cc" -fplugin="$plugin" -ffile-prefix-map="$work=/build" "$@" src/p.c -o q || fail "build with a prefix map"
    INSTR_OUTPUT="$work/q.instr" ./q || fail "run q"
    "$dump" q.instr | grep -q "^function .* file=/build/src/p.c name=main" ||
        fail "prefix map not applied: $("$dump" q.instr | grep '^function')"
    ;;
filters)
    compile filters.c "$@" "$arg-include=*keep*,drop_me" "$arg-exclude=also_*"
    summary
    expect keep_me instrumented
    expect drop_me instrumented
    expect also_keep 'skipped:not'
    compile filters.c "$@" "$arg-exclude-file=*/filt*.c"
    summary
    grep ' instrumented ' summary.txt && fail "exclude-file ignored"
    compile filters.c "$@" "$arg-include=keep_me" "$arg-verbose"
    grep -q "instrumented 'keep_me'\|instrumented .keep_me." out.txt || fail "verbose note missing"
    ;;
callsites)
    # callsites <mode> [flags]: __instr_call/__instr_return pairs in caller.
    mode=$1 want=$2
    shift 2
    compile callsites.c "$@" "$arg-callsites=$mode"
    body=$(sed -n '/^;; Function caller /,/^;; Function /p' ./*.instr)
    calls=$(echo "$body" | grep -c '__instr_call (')
    rets=$(echo "$body" | grep -c '__instr_return (')
    echo "callsites=$mode: $calls calls, $rets returns"
    [ "$calls" = "$want" ] && [ "$rets" = "$want" ] || fail "expected $want call sites with callsites=$mode"
    # The indirect call passes its target; direct calls pass a null pointer.
    if [ "$want" -gt 0 ]; then
        echo "$body" | grep '__instr_call (' | grep -vq ', 0B)' || fail "no target passed for fp()"
    fi
    [ "$mode" = none ] || echo "$body" | grep -q "call site skipped (noreturn" || fail "abort() not skipped as noreturn"
    ;;
sandbox)
    # Calls that may install a seccomp filter are marked for the runtime
    # (it stops recording before they run); other prctl and syscall calls,
    # and options that are not constants, are not.
    compile sandbox.c "$@"
    marks() { sed -n "/^;; Function $1 /,/^;; Function /p" ./*.instr | grep "call site may enter a seccomp sandbox$2"; }
    n=$(marks marked ': ' | wc -l); echo "marked: $n"
    [ "$n" = 5 ] || fail "marked: expected 5 marked call sites, got $n"
    n=$(marks marked_strict ' (strict): ' | wc -l); echo "marked_strict: $n strict"
    [ "$n" = 3 ] || fail "marked_strict: expected 3 strict call sites, got $n"
    n=$(marks unmarked '' | wc -l); echo "unmarked: $n"
    [ "$n" = 0 ] || fail "unmarked: expected no marked call site, got $n"
    sed -n '/^;; Function unmarked /,/^;; Function /p' ./*.instr | grep -q '__instr_call (' ||
        fail "unmarked: its calls are call sites all the same"
    ;;
builtins)
    # In the assembly, every call instruction of the program is bracketed
    # by __instr_call ... __instr_return, and no such pair brackets nothing.
    "$cc" -fplugin="$plugin" "$norun" "$@" -S "$srcdir/builtins.c" -o x.s || fail "-S"
    awk '
    /^[A-Za-z_][A-Za-z0-9_.]*:/ { fn = $1; sub(/:$/, "", fn); prev = ""; next }
    $1 == "call" || ($1 == "jmp" && $2 ~ /@PLT$/) {
        t = $2; sub(/@PLT$/, "", t)
        if (t ~ /^__instr_(enter|exit|landing)$/ || fn ~ /^__instr_/) next
        if (t == "__instr_return" && prev == "__instr_call") { print "FAIL empty pair in " fn; bad = 1 }
        if (t != "__instr_call" && t != "__instr_return") {
            if (prev != "__instr_call") { print "FAIL unhooked call " t " in " fn; bad = 1 }
            calls[fn] = calls[fn] " " t; open[fn] = t
        }
        if (t == "__instr_return" && prev != "__instr_call" && open[fn] == "") { print "FAIL stray return in " fn; bad = 1 }
        if (t == "__instr_return") open[fn] = ""
        prev = t
    }
    END {
        for (f in calls) print "calls " f ":" calls[f]
        exit bad
    }' x.s >calls.txt
    st=$?
    cat calls.txt
    [ $st = 0 ] || fail "call-site hooks do not match the call instructions"
    for f in copy_var:memcpy set_var:memset move_var:memmove plain_var:memcpy copy_big:memcpy clear_big:memset \
        eq_var:memcmp; do
        grep -q "^calls ${f%%:*}: ${f#*:}$" calls.txt || fail "${f%%:*} should make one hooked call to ${f#*:}"
    done
    for f in copy_const plain_const expect copy_mid; do
        grep -q "^calls $f:" calls.txt && fail "$f makes a call"
        sed -n "/^$f:/,/\.size.$f,/p" x.s | grep -q __instr_call && fail "$f has call-site hooks"
    done
    case " $* " in
    *" -O0 "*) grep -q "^calls cmp_const: strcmp$" calls.txt || fail "cmp_const should call strcmp at -O0" ;;
    *" -O2 "*)
        for f in clear_loop:memset copy_loop:memcpy; do
            grep -q "^calls ${f%%:*}: ${f#*:}$" calls.txt || fail "${f%%:*} should make one hooked call to ${f#*:}"
        done
        for f in eq_small streq_lit; do # compared inline at -O2, calls at -O0
            grep -q "^calls $f:" calls.txt && fail "$f makes a call"
            sed -n "/^$f:/,/\.size.$f,/p" x.s | grep -q __instr_call && fail "$f has call-site hooks"
        done ;;
    esac
    ;;
diagnostics)
    # The same warnings, at the same places, plain and instrumented.
    warnings() { # warnings <out>: file:line:col and the option of each warning, sorted
        grep -o '^[^ ]*:[0-9]*:[0-9]*: warning: .*\[-W[a-z-]*[=0-9a-z-]*\]$' "$1" |
            sed 's/: warning: .*\[/ [/' | sort -u
    }
    "$cc" -Wall -Wextra "$@" -c "$srcdir/diagnostics.c" -o plain.o >plain.txt 2>&1 || { cat plain.txt >&2; fail "plain compile"; }
    "$cc" -fplugin="$plugin" "$norun" -Wall -Wextra "$@" -c "$srcdir/diagnostics.c" -o x.o >instr.txt 2>&1 ||
        { cat instr.txt >&2; fail "instrumented compile"; }
    warnings plain.txt >plain.w
    warnings instr.txt >instr.w
    echo "plain:"; cat plain.w; echo "instrumented:"; cat instr.w
    grep -q unused-parameter plain.w || fail "no -Wunused-parameter in the plain build: the case warns about nothing"
    diff plain.w instr.w >&2 || fail "the instrumented build's warnings differ from the plain build's"
    case " $* " in *" -O2 "*)
        grep -q 'diagnostics.c:[0-9]*:[0-9]* \[-Wstringop-truncation\]' plain.w ||
            fail "no -Wstringop-truncation at -O2: the loud cases warn about nothing"
        n=$(grep -c 'stringop-truncation' plain.w)
        [ "$n" = 2 ] || fail "-Wstringop-truncation $n times, expected 2 (loud_strncpy, loud_length)" ;;
    esac
    ;;
threshold)
    # threshold=5 leaves out tiny (no loop, no call, under 5 statements)
    # and the call-site hooks around calls to it; threshold=0 leaves out
    # nothing.  The unit then carries its threshold record (hook-abi.h).
    compile threshold.c "$@" "$arg-threshold=5"
    summary
    expect tiny 'skipped:under .*enter=0 exit=0'
    expect looping 'instrumented'
    expect calling 'instrumented'
    expect big 'instrumented'
    # (tiny is const: its call is left to the late pass, instr-late)
    cat ./*.instr ./*.instr-late | grep -q 'call site skipped (callee left out' || fail "call to tiny still hooked"
    grep -q 'skipped: under threshold=5 ([0-4] statements' ./*.instr || fail "statement count not in the dump"
    "$cc" -fplugin="$plugin" "$norun" "$@" "$arg-threshold=5" -S "$srcdir/threshold.c" -o x.s || fail "-S"
    grep -q '^\.Linstr_unit:' x.s || fail "no unit record"
    grep -A2 '^\.Linstr_unit:' x.s | grep -q '\.long.5, 1, 3' || fail "unit record: $(grep -A2 '^.Linstr_unit:' x.s)"
    compile threshold.c "$@" "$arg-threshold=0"
    summary
    expect tiny 'instrumented'
    grep -q 'callee left out' ./*.instr && fail "threshold=0 left a call out"
    "$cc" -fplugin="$plugin" "$norun" "$@" -S "$srcdir/threshold.c" -o y.s || fail "-S"
    grep -q 'Linstr_unit' y.s && fail "unit record without threshold="
    ;;
bind-late)
    # main's first call is the late binding, then its entry hook; no other
    # function calls it; the unit defines __instr_main_here, which every
    # unit's binding references (weak).
    compile bind-late.c "$@"
    awk '/^;; Function main /{f=1; next} /^;; Function /{f=0} f && /__instr_(bind_late|enter) \(/{print $1; exit}' \
        ./*.instr | grep -qx '__instr_bind_late' || fail "main's first hook call is not __instr_bind_late"
    [ "$(grep -c '__instr_bind_late ()' ./*.instr)" = 1 ] || fail "__instr_bind_late called other than once, in main"
    "$cc" -fplugin="$plugin" "$norun" "$@" -S "$srcdir/bind-late.c" -o x.s || fail "-S"
    grep -q '^__instr_main_here:' x.s || fail "main's unit does not define __instr_main_here"
    # A unit without main, and count mode: the reference only.
    for flags in -DNO_MAIN "$arg-mode=count"; do
        "$cc" -fplugin="$plugin" "$norun" "$@" $flags -S "$srcdir/bind-late.c" -o y.s || fail "-S $flags"
        grep -q '\.quad.__instr_main_here' y.s || fail "$flags: no reference to __instr_main_here"
        grep -q '^__instr_main_here:' y.s && fail "$flags: __instr_main_here defined"
        grep -q 'call.*__instr_bind_late' y.s && fail "$flags: a call of __instr_bind_late"
    done
    ;;
bad-arg)
    # bad-arg <argument> <expected text>: the compile fails, naming it.
    bad=$1 want=$2
    "$cc" -fplugin="$plugin" "$arg-$bad" -c "$srcdir/filters.c" -o x.o >out.txt 2>&1 \
        && fail "compile with $arg-$bad succeeded"
    cat out.txt
    grep -q -- "$want" out.txt || fail "message does not mention '$want'"
    ;;
inline-before)
    compile exits.c -O2 "$arg-inline=before"
    summary
    # helper is inlined into main and keeps its own hooks there.
    n=$(sed -n '/^;; Function main /,/^;; Function /p' ./*.optimized | grep -c '__instr_enter (')
    [ "$n" -ge 2 ] || fail "main has $n entry hooks with inline=before"
    ;;
refused)
    # A copy of the shim without a plugin for this compiler next to it.
    [ -n "$plugin" ] || skip "no second GCC"
    cp "$plugin" lonely.so || fail "copy"
    "$cc" -fplugin="$work/lonely.so" -c "$srcdir/filters.c" -o x.o >out.txt 2>&1 && fail "accepted"
    cat out.txt
    grep -q 'was built for GCC .* but this is GCC .*: rebuild instr with this compiler (apt-get install gcc-[0-9]*-plugin-dev)' out.txt \
        || fail "unclear refusal"
    ;;
refused-by-clang)
    # clang takes -fplugin= too, loads the file and never calls
    # plugin_init: the shim stops it rather than let it build an
    # unrecorded program.
    command -v "$cc" >/dev/null 2>&1 || skip "$cc not installed"
    "$cc" -fplugin="$plugin" -c "$srcdir/filters.c" -o x.o >out.txt 2>&1 && fail "clang built x.o"
    cat out.txt
    [ ! -e x.o ] || fail "an object file was left"
    grep -q 'instr.so is a GCC plugin, which clang[-0-9]* cannot run: the program would be built without instrumentation' out.txt ||
        fail "unclear refusal"
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
echo PASS

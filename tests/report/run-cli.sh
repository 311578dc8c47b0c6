#!/bin/sh
# GNU command lines of instr-report, instr-dump and instr-sample (getopt_long): both
# spellings of a value, abbreviations, --help/--version on stdout with exit
# 0, getopt's messages for unknown or ambiguous options, '-o -', every
# error line starting with the program's name, the documented exit codes.
#   run-cli.sh BIN_DIR SRC_DIR WORK_DIR VERSION
set -u
bin=$1 src=$2 work=$3 version=$4
mkdir -p "$work"
fail=0
R="$bin/instr-report" D="$bin/instr-dump"
bad() { echo "FAIL: $*"; fail=1; }
# run CODE PROG ARGS...: runs, checks the exit code; out/err in $work.
run() {
    code=$1
    shift
    "$@" >"$work/out" 2>"$work/err"
    rc=$?
    [ $rc -eq "$code" ] || { bad "$* -> exit $rc, want $code"; cat "$work/err"; }
}
# Every stderr line starts with the program's name.
prefixed() {
    name=$1
    if grep -v "^$name: " "$work/err" | grep -q .; then
        bad "stderr lines without '$name: ':"; cat "$work/err"
    fi
    [ -s "$work/err" ] || bad "$name: nothing said on stderr"
}
"$D" --from-text "$src/traces/nesting.txt" -o "$work/n.instr" || exit 1

# Values: --opt=VALUE, --opt VALUE and an abbreviation give the same report.
run 0 "$R" --units ticks --format json "$work/n.instr"; cp "$work/out" "$work/a.json"
run 0 "$R" --units=ticks --format=json "$work/n.instr"; cmp -s "$work/out" "$work/a.json" || bad "--format=json differs"
run 0 "$R" --un=ticks --form json "$work/n.instr"; cmp -s "$work/out" "$work/a.json" || bad "--form json differs"
cmp -s "$work/a.json" "$src/expected/nesting.json" || bad "--format json is not the golden nesting.json"
# The abbreviation --help and instr-report(1) give as an example works.
for ex in $("$R" --help | sed -n 's/.*abbreviated (\(--[a-z]*=json\)).*/\1/p') \
          $(sed -n 's/^\.RB ( \\-\\-\([a-z]*=json\) );$/--\1/p' "$src/../../docs/man/instr-report.1"); do
    run 0 "$R" --units=ticks "$ex" "$work/n.instr"; cmp -s "$work/out" "$work/a.json" || bad "the documented $ex differs"
    found_ex=1
done
[ -n "${found_ex:-}" ] || bad "no abbreviation example found in --help or instr-report(1)"
# Options after the inputs (permuted), --view callers FUNC anywhere.
run 0 "$R" "$work/n.instr" --units ticks --format json; cmp -s "$work/out" "$work/a.json" || bad "options after the input"
run 0 "$R" --units ticks "$work/n.instr" --view callers bar
grep -q "Callers of bar" "$work/out" || bad "--view callers FUNC after the input"

# Several views of one walk: the header once, then each view as it is
# alone (the tables titled), in the order given; JSON: every table and
# each tree view asked; a list in CSV, or of an unknown view, refused.
run 0 "$R" --units ticks "$work/n.instr" --view threads,calltree,callers bar; cp "$work/out" "$work/list.txt"
run 0 "$R" --units ticks "$work/n.instr" --view threads; cp "$work/out" "$work/one.txt"
hdr=$(grep -n '^Totals:' "$work/one.txt" | head -1 | cut -d: -f1)
{ head -n "$hdr" "$work/one.txt"; echo; echo Threads; tail -n +"$((hdr + 2))" "$work/one.txt"
  for v in calltree "callers bar"; do
      echo; "$R" --units ticks "$work/n.instr" --view $v | tail -n +"$((hdr + 2))"
  done; } >"$work/want.txt"
cmp -s "$work/list.txt" "$work/want.txt" || { bad "--view threads,calltree,callers: not the views one after another"
                                             diff "$work/want.txt" "$work/list.txt" | head -20; }
[ "$(grep -c '^Totals:' "$work/list.txt")" = 1 ] || bad "--view with a list: the header more than once"
run 0 "$R" --units ticks --format json "$work/n.instr" --view calltree,callees bar
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if "calltree" in d and "callees" in d and "functions" in d else 1)' \
    "$work/out" || bad "--format json --view calltree,callees: both members"
run 1 "$R" --format csv --view functions,threads "$work/n.instr"; prefixed instr-report
grep -q 'one view' "$work/err" || bad "--format csv with a list of views: not refused"
run 1 "$R" --view functions,nothing "$work/n.instr"; prefixed instr-report
# An unknown view lists the views (issue 37 §6).
grep -q "bad value 'nothing' for --view (one of: functions, threads, modules, processes, calltree, callers, callees" \
    "$work/err" || bad "an unknown view does not list the views: $(cat "$work/err")"
# --view callers A,callees B: the shell makes "A,callees" the function
# and B a dump; said as such, not "B: No such file".
run 1 "$R" --view callers main,callees main "$work/n.instr"; prefixed instr-report
grep -q "one function serves the whole list: --view callers,callees FUNC" "$work/err" ||
    bad "--view callers A,callees B: $(cat "$work/err")"
# -F takes --sort's spellings of a column (po, name).
run 0 "$R" -F calls,po,name "$work/n.instr"
grep -q "Probe Overhead.*Function" "$work/out" || bad "-F po,name: $(cat "$work/out" "$work/err")"
# --os-events none: said as it is, not "only none take intervals out".
run 0 "$R" --os-events none "$work/n.instr"
grep -q "^OS events:  none take intervals out of Application time (--os-events none)" "$work/out" ||
    bad "--os-events none: $(grep 'OS events' "$work/out")"

# --help, -h: stdout, exit 0, nothing on stderr.
for h in --help -h --he; do
    run 0 "$R" $h
    grep -q "^usage: instr-report" "$work/out" || bad "$h: no usage on stdout"
    [ -s "$work/err" ] && bad "$h: stderr not empty"
    run 0 "$D" $h
    grep -q "^usage: instr-dump" "$work/out" || bad "instr-dump $h: no usage on stdout"
done
# --version: the project's version number (top-level CMakeLists.txt).
run 0 "$R" --version
[ "$(cat "$work/out")" = "instr-report (instr) $version" ] || bad "--version printed '$(cat "$work/out")'"
run 0 "$D" --version
[ "$(cat "$work/out")" = "instr-dump (instr) $version" ] || bad "instr-dump --version printed '$(cat "$work/out")'"

# instr-sample (when built): the same conventions, its own exit codes
# (125: instr-sample failed, usage included).  Options end at PROGRAM, whose
# own options are its business.
Smp="$bin/instr-sample"
if [ -x "$Smp" ]; then
    run 0 "$Smp" --version
    [ "$(cat "$work/out")" = "instr-sample (instr) $version" ] || bad "instr-sample --version printed '$(cat "$work/out")'"
    for h in --help -h --he; do
        run 0 "$Smp" $h
        grep -q "^usage: instr-sample" "$work/out" || bad "instr-sample $h: no usage on stdout"
    done
    run 125 "$Smp" --bogus true
    [ "$(head -1 "$work/err")" = "instr-sample: unrecognized option '--bogus'" ] || bad "instr-sample --bogus: $(head -1 "$work/err")"
    prefixed instr-sample
    run 125 "$Smp" --ra; grep -q "^instr-sample: option '--rate' requires an argument" "$work/err" || bad "instr-sample --ra (abbreviated, no value)"
    prefixed instr-sample
    run 125 "$Smp" --rate=0 true; prefixed instr-sample
    run 125 "$Smp"; prefixed instr-sample
    run 127 "$Smp" -o "$work/s.%p.instr" "$work/no-such-program"; prefixed instr-sample
    # A sampling dump goes through its own front end (sample-cli.c): the
    # same prefixed message for an output that cannot be written.
    "$Smp" -o "$work/sampled.instr" true >/dev/null 2>&1
    if [ $? = 0 ]; then
        run 1 "$R" -o "$work/no-such-dir/out.txt" "$work/sampled.instr"; prefixed instr-report
        run 1 "$R" --diff -o "$work/no-such-dir/out.txt" "$work/sampled.instr" "$work/sampled.instr"
        prefixed instr-report
    fi
fi

# Unknown options, before or after an input.
run 1 "$R" --bogus "$work/n.instr"
[ "$(head -1 "$work/err")" = "instr-report: unrecognized option '--bogus'" ] || bad "--bogus: $(head -1 "$work/err")"
prefixed instr-report
run 1 "$R" "$work/n.instr" --bogus
[ "$(head -1 "$work/err")" = "instr-report: unrecognized option '--bogus'" ] || bad "--bogus after a file: $(head -1 "$work/err")"
run 1 "$D" --bogus "$work/n.instr"
[ "$(head -1 "$work/err")" = "instr-dump: unrecognized option '--bogus'" ] || bad "instr-dump --bogus: $(head -1 "$work/err")"
prefixed instr-dump
# Ambiguous abbreviation (--s: --sort or --split-size), missing value.
run 1 "$R" --s ei "$work/n.instr"; grep -q "^instr-report: option '--s' is ambiguous" "$work/err" || bad "--s not ambiguous"
prefixed instr-report
run 1 "$R" "$work/n.instr" --format; grep -q "requires an argument" "$work/err" || bad "--format without value"
prefixed instr-report

# -o -: standard output; -o FILE the same bytes in FILE.
run 0 "$R" --units ticks --format json -o - "$work/n.instr"; cmp -s "$work/out" "$work/a.json" || bad "-o - is not stdout"
run 0 "$R" --units ticks --format json -o "$work/o.json" "$work/n.instr"
[ -s "$work/out" ] && bad "-o FILE wrote to stdout"
cmp -s "$work/o.json" "$work/a.json" || bad "-o FILE differs"
run 0 "$R" --units ticks --format=json --output="$work/o2.json" "$work/n.instr"
cmp -s "$work/o2.json" "$work/a.json" || bad "--output=FILE differs"
# instr-dump --from-text -o -: the dump on stdout, the same bytes as -o FILE,
# and no file named '-'.
(cd "$work" && rm -f ./- && run 0 "$D" --from-text "$src/traces/nesting.txt" -o -
 cmp -s "$work/out" "$work/n.instr" || bad "instr-dump -o - is not the dump on stdout"
 [ -e ./- ] && bad "instr-dump -o - wrote a file named '-'"
 run 2 "$D" --from-text "$work/missing.txt" -o -; prefixed instr-dump
 [ -s "$work/out" ] && bad "instr-dump -o - wrote to stdout after an error"
 exit $fail) || fail=1

run 1 "$R" -o "$work/no-such-dir/out.txt" "$work/n.instr"; prefixed instr-report

# Usage errors (exit 1) and unusable input (exit 2): one reason, prefixed.
for args in "--units hours" "--format yaml" "--export nope" "--depth x" "--sort nope" "--diff" \
            "--split-size 1" "--view callers nosuchfunction"; do
    # shellcheck disable=SC2086
    run 1 "$R" $args "$work/n.instr"
    prefixed instr-report
done
run 1 "$R"; prefixed instr-report
run 2 "$R" "$work/missing.instr"; prefixed instr-report
run 1 "$D"; prefixed instr-dump
run 1 "$D" "$work/n.instr" "$work/n.instr"; prefixed instr-dump
run 2 "$D" --from-text "$work/missing.txt" -o "$work/m.instr"; prefixed instr-dump
run 2 "$D" "$work/missing.instr"; prefixed instr-dump
# Exit 3: a damaged dump (cut inside a chunk) is reported with a warning.
sed 's/flags=complete,tsc_invariant/flags=complete chunk_size=256/' "$src/traces/nesting.txt" >"$work/small.txt"
"$D" --from-text "$work/small.txt" -o "$work/small.instr" || exit 1
size=$(wc -c <"$work/small.instr")
head -c $((size - 100)) "$work/small.instr" >"$work/cut.instr"
run 3 "$R" "$work/cut.instr"; prefixed instr-report

# Options the chosen view or format does not read: a warning, exit 0.
run 0 "$R" --depth 3 "$work/n.instr"
grep -q "^instr-report: warning: --depth does nothing without --view calltree" "$work/err" || bad "--depth: no warning"
run 0 "$R" --weight application --format csv "$work/n.instr"
grep -q "^instr-report: warning: --weight does nothing without --export folded" "$work/err" || bad "--weight: no warning"
run 0 "$R" --depth 3 --view calltree "$work/n.instr"
[ -s "$work/err" ] && bad "--depth with --view calltree warned: $(cat "$work/err")"
# --units an export does not read (issue 37 §6); folded reads ticks only.
run 0 "$R" --units us --export folded "$work/n.instr"
grep -q "^instr-report: warning: --units us does nothing with --export folded" "$work/err" || bad "--units us folded: no warning"
run 0 "$R" --units ticks --export folded "$work/n.instr"
[ -s "$work/err" ] && bad "--units ticks with --export folded warned: $(cat "$work/err")"
run 0 "$R" --units ms --export pprof -o "$work/p.pb.gz" "$work/n.instr"
grep -q "^instr-report: warning: --units ms does nothing with --export pprof" "$work/err" || bad "--units ms pprof: no warning"
# Self % asked where it cannot show.
run 0 "$R" --sort self "$work/n.instr"
grep -q "^instr-report: warning: --sort self: no Self % without a sampling dump" "$work/err" || bad "--sort self: no warning"
smp="$src/../../fuzz/corpus/dump-reader/sampling.dump"
"$R" --self "$smp" --view threads "$work/n.instr" >"$work/out" 2>"$work/err"
grep -q "^instr-report: warning: --self does nothing with --view threads" "$work/err" || bad "--self --view threads: no warning"

# The same dump twice (an overlapping glob) is counted once, with a warning.
run 0 "$R" --units ticks --format json "$work/n.instr" "$work/n.instr"
cmp -s "$work/out" "$work/a.json" || bad "a dump given twice is not counted once"
grep -q "^instr-report: warning: .*n.instr is the same process as .*n.instr (pid 100, same start): counted once" \
    "$work/err" || bad "no duplicate warning: $(cat "$work/err")"

# The text table's columns (-F/--columns, perf's -F) and the header's
# detail (--verbose); the default fits 120 columns in a file too.
run 0 "$R" --units ticks "$work/n.instr"
awk 'length($0) > 120 { exit 1 }' "$work/out" || bad "default report wider than 120: $(awk 'length($0) > 120' "$work/out")"
grep -q '^Tick rate:' "$work/out" && bad "Tick rate (an invariant TSC) in the default header"
grep -qx 'Calls  Elapsed Incl  Elapsed Excl  App Incl  App Excl  Function' "$work/out" || bad "default columns"
run 0 "$R" --units ticks --verbose "$work/n.instr"
grep -q '^Tick rate:' "$work/out" || bad "no Tick rate with --verbose"
run 0 "$R" --units ticks -v "$work/n.instr"
grep -q '^Tick rate:' "$work/out" || bad "no Tick rate with -v"
run 0 "$R" --units ticks --columns=ee,function "$work/n.instr"
grep -qx 'Elapsed Excl  Function' "$work/out" || bad "--columns=ee,function"
run 0 "$R" --units ticks -F ee,calls "$work/n.instr"
grep -qx 'Elapsed Excl  Calls' "$work/out" || bad "-F ee,calls: the list's order"
run 0 "$R" --units ticks --columns +ee%,module "$work/n.instr"
grep -qx 'Calls  Elapsed Incl  Elapsed Excl  App Incl  App Excl *EE% *Module *Function' "$work/out" ||
    bad "--columns +ee%,module: added in table order"
run 0 "$R" --units ticks -F all "$work/n.instr"
grep -q 'EI%.*File:Line  Function$' "$work/out" || bad "-F all"
run 1 "$R" -F ee,bogus "$work/n.instr"
grep -q "^instr-report: --columns: no column 'bogus' in this view (its columns: calls, self, ei, ee" "$work/err" ||
    bad "-F bogus: $(cat "$work/err")"
run 1 "$R" --view threads -F function "$work/n.instr"
grep -q "no column 'function'.*tid, name" "$work/err" || bad "-F function in the threads view: $(cat "$work/err")"
run 0 "$R" --format json -F ee "$work/n.instr"
grep -q "^instr-report: warning: --columns does nothing here" "$work/err" || bad "-F with JSON: no warning"

# What to look at next: after a text report on a terminal only.
run 0 "$R" "$work/n.instr"
grep -q "^Next:" "$work/out" && bad "hint printed into a pipe"
# A name of 150 characters (n.instr's foo(int)), for the width checks.
sed 's/name=_Z3fooi/name=a_function_name_long_enough_to_be_cut_on_any_terminal_of_a_reasonable_width_which_is_what_the_report_does_when_stdout_is_one_x/' \
    "$src/traces/nesting.txt" >"$work/long.txt"
"$D" --from-text "$work/long.txt" -o "$work/long.instr" || exit 1
python3 - "$R" "$work/n.instr" "$work/long.instr" <<'PY' || fail=1
import fcntl, os, struct, subprocess, sys, termios
def on_tty(*args, cols=80):
    """The output of instr-report ARGS on a terminal COLS wide."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    p = subprocess.Popen([sys.argv[1], *args], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            d = os.read(master, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    p.wait()
    os.close(master)
    return out.decode().replace("\r\n", "\n")
lines = on_tty(sys.argv[2]).splitlines()
if not any(l.startswith("Next: --view calltree") for l in lines[-4:]):
    sys.exit("FAIL: no hint on a terminal: %r" % lines[-4:])
# The width follows the terminal: long names are cut to fit ("..."), the
# hints fit 80 columns; a narrow terminal keeps at least 24 of a name.
for cols in (80, 100):
    wide = [l for l in on_tty(sys.argv[2], cols=cols).splitlines() if len(l) > cols]
    if wide:
        sys.exit("FAIL: lines wider than a %d-column terminal: %r" % (cols, wide[:3]))
long = on_tty(sys.argv[3], cols=80)
if "..." not in long or max(len(l) for l in long.splitlines()) > 80:
    sys.exit("FAIL: a long name not cut to fit 80 columns: %r" % long[-600:])
if "Next:" in on_tty("--format", "csv", sys.argv[2]):
    sys.exit("FAIL: hint after CSV")
# A binary or whole-page export is refused on a terminal, as gzip does, and
# written when -o or a redirection says where.
for exp in ("pprof", "perfetto", "html"):
    out = on_tty("--export", exp, sys.argv[2])
    if "--export %s is not for a terminal: give -o FILE" % exp not in out or len(out.splitlines()) != 1:
        sys.exit("FAIL: --export %s on a terminal: %r" % (exp, out[:200]))
if "not for a terminal" in on_tty("--export", "folded", sys.argv[2]):
    sys.exit("FAIL: --export folded (a few text lines) refused on a terminal")
PY
run 0 "$R" --export pprof "$work/n.instr"
[ -s "$work/out" ] || bad "--export pprof into a pipe wrote nothing"

# '-' reads the dump from standard input: a redirected file or a pipe.
run 0 "$R" --units ticks --format json "$work/n.instr"
"$R" --units ticks --format json - <"$work/n.instr" >"$work/out.stdin" 2>"$work/err" || bad "- < dump failed: $(cat "$work/err")"
cmp -s "$work/out.stdin" "$work/a.json" || bad "- < dump differs from the dump read by name"
cat "$work/n.instr" | "$R" --units ticks --format json - >"$work/out.stdin" 2>"$work/err" || bad "cat dump | - failed: $(cat "$work/err")"
cmp -s "$work/out.stdin" "$work/a.json" || bad "a dump piped to - differs from the dump read by name"
head -c 100 "$work/n.instr" | "$R" - >/dev/null 2>"$work/err"
[ $? -eq 2 ] || bad "a truncated dump on standard input: not exit 2"
grep -q "^instr-report: -: " "$work/err" || bad "a truncated dump on standard input: $(cat "$work/err")"
exit $fail

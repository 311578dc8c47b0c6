#!/bin/sh
# check-count.sh - the plugin's mode=count (issue 10), built, run and
# reported for real: exact calls of a multi-threaded program, its forked
# child's own counts, and the report compared with a golden file; in both
# forms of the counting code (TLS cells for an executable, the per-thread
# copies of -fPIC code); and the TLS form's code, which must be the plain
# build's with the target's increment added; a signal handler counting
# in a tight loop against the thread it interrupts; the registers kept
# across a thread's arming.  For another architecture (tests/aarch64) the
# programs run through RUNNER (qemu-aarch64-static -L ...), and the parts
# that read instructions or registers take that architecture's.
#
#   check-count.sh <cc> <plugin> <instr-report> <srcdir> <workdir> <opt> [RUNNER...]
set -u
cc=$1 plugin=$2 report=$3 srcdir=$4 work=$5 opt=$6
shift 6
runner="$*"
case $("$cc" -dumpmachine) in
aarch64*) arch=aarch64 ;;
*) arch=x86_64 ;;
esac
objdump=$("$cc" -print-prog-name=objdump)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }
# The dumps of ./*.instr that a forked child wrote (which = child) or not
# (which = parent), by the header's flags: the pids may have wrapped
# around between the two.
dump_of() {
    for d in ./*.instr; do
        if "$(dirname "$report")/instr-dump" "$d" | grep -q '^header .*flags=[^ ]*fork_child'; then
            [ "$1" = child ] && echo "$d"
        else
            [ "$1" = parent ] && echo "$d"
        fi
    done
}
arg=-fplugin-arg-$(basename "$plugin" .so)

"$cc" "$opt" -pthread -fplugin="$plugin" "$arg-mode=count" "$srcdir/count.c" -o count || fail "build"
INSTR_OUTPUT="$work/%p.instr" $runner ./count || fail "run"
parent=$(dump_of parent)
child=$(dump_of child)
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

# The -fPIC form (what a shared object gets): the same counts.
mkdir pic && cd pic || exit 1
"$cc" "$opt" -fPIC -pthread -fplugin="$plugin" "$arg-mode=count" "$srcdir/count.c" -o count || fail "build -fPIC"
INSTR_OUTPUT="$work/pic/%p.instr" $runner ./count || fail "run -fPIC"
pic=$(dump_of parent)
"$report" "$pic" | sed -e "s|^Dump: .*|Dump: X|" -e "s|$srcdir/||g" >parent.norm
diff -u "$srcdir/count.expected" parent.norm || fail "-fPIC report differs from count.expected"
cd .. || exit 1

# The TLS form's code: a function only called directly (static, address
# not taken) gets exactly one increment and keeps the plain build's frame;
# a public one adds the arming test.  x86-64: the increment is one
# instruction, `addq $1, %fs:...`, at -O0 too (a signal handler counting
# between a load and a store would lose its count), and the arming call
# is stepped around the red zone.  aarch64: the cell's address from
# tpidr_el0 and an ldxr/stxr loop, the only lines added to sq at -O2; the
# arming call keeps x29 and x30 on the stack around its bl.  -O0 does not
# tell static functions apart, so there every function has the test.
cat >codegen.c <<'EOF'
__attribute__((noinline)) static int sq(int x) { return x * x + 7; }
int api(int x) { return sq(x) + sq(x + 1); }
EOF
insns() { # insns OBJECT FUNCTION: the function's instructions, one a line
    "$objdump" -d --no-show-raw-insn "$1" | awk -v f="<$2[.>]" '
        $0 ~ "^[0-9a-f]+ " f { on = 1; next } on && /^$/ { on = 0 } on && /:\t/ && !/\tnop|\tdata16/ { sub(/^[^\t]*\t/, ""); print }'
}
"$cc" "$opt" -c codegen.c -o plain.o || fail "build plain codegen.c"
"$cc" "$opt" -c -fplugin="$plugin" "$arg-mode=count" codegen.c -o count.o || fail "build counted codegen.c"
insns plain.o sq >sq.plain
insns count.o sq >sq.count
[ -s sq.plain ] || fail "no sq in plain.o"
if [ $arch = aarch64 ]; then
    [ "$(grep -c '^ldxr' sq.count)" = 1 ] && [ "$(grep -c '^stxr' sq.count)" = 1 ] ||
        { cat sq.count; fail "sq: not one exclusive increment"; }
    # The increment's lines at -O2: tpidr_el0, the two adds of the offset,
    # the loop (-O0 computes the address again for the asm's input operand).
    grep -Ev '^(mrs[[:space:]].*tpidr_el0|ldxr|stxr|cbnz[[:space:]]+w|add[[:space:]]+x[0-9]+, x[0-9]+, #0x(0, lsl #12|0|1)$)' sq.count >sq.rest
    if [ "$opt" != -O0 ]; then
        [ "$(($(wc -l <sq.count) - $(wc -l <sq.rest)))" = 7 ] || { cat sq.count; fail "sq: the increment is not 7 instructions"; }
        diff -u sq.plain sq.rest || fail "sq: the code around the count is not the plain build's"
    fi
    insns count.o api >api.count
    grep -q '^ldrb' api.count && grep -q '^stp[[:space:]]*x29, x30, \[sp, #-16\]!' api.count &&
        grep -q '^ldp[[:space:]]*x29, x30, \[sp\], #16' api.count || { cat api.count; fail "api: no arming test"; }
else
    [ "$(grep -c 'addq *\$0x1,%fs:' sq.count)" = 1 ] || { cat sq.count; fail "sq: not one TLS increment"; }
    grep -v 'addq *\$0x1,%fs:' sq.count >sq.rest
    [ "$opt" = -O0 ] || diff -u sq.plain sq.rest || fail "sq: the code around the count is not the plain build's"
    insns count.o api >api.count
    grep -q 'cmpb *\$0x0,%fs:' api.count || { cat api.count; fail "api: no arming test"; }
    grep -q 'lea *-0x80(%rsp),%rsp' api.count || fail "api: the arming call does not step over the red zone"
fi

# A thread that reaches counted code only through an excluded function is
# still known to the runtime (the excluded function keeps the arming test
# in the TLS form): its 1000 calls of helper are in the dump.
cat >excluded.c <<'EOF'
#include <pthread.h>
__attribute__((noinline)) static int helper(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ x; return s; }
static void *worker(void *a) { long s = 0; for (int i = 0; i < 1000; i++) s += helper(i); return (void *)s; }
int main(void) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_join(t, 0); return helper(3) < 0; }
EOF
"$cc" "$opt" -pthread -fplugin="$plugin" "$arg-mode=count" "$arg-exclude=worker" excluded.c -o excluded || fail "build excluded.c"
INSTR_OUTPUT="$work/excluded.instr" $runner ./excluded || fail "run excluded"
"$report" excluded.instr >excluded.txt || fail "report excluded"
grep -Eq '^ +1001  helper ' excluded.txt || { cat excluded.txt; fail "excluded.c: helper is not 1001"; }
grep -q ' worker ' excluded.txt && fail "excluded.c: worker counted"

# A thread whose first count comes before the runtime is bound (here a
# constructor that runs before the binding's, priority 50) is armed again
# once bound: all 11 calls of f are in the dump, not lost with the thread.
cat >early.c <<'EOF'
__attribute__((noinline)) int f(int x) { return x + 1; }
volatile int sink;
__attribute__((constructor(50))) static void early(void) { sink += f(1); }
int main(void) { for (int i = 0; i < 10; i++) sink += f(i); return 0; }
EOF
"$cc" "$opt" -w -fplugin="$plugin" "$arg-mode=count" early.c -o early || fail "build early.c"
INSTR_OUTPUT="$work/early.instr" $runner ./early || fail "run early"
"$report" early.instr >early.txt || { cat early.txt; fail "report early"; }
grep -Eq '^ +11  f ' early.txt || { cat early.txt; fail "early.c: f is not 11"; }

# Cells far from the thread pointer: 300 KB of the program's own TLS
# come first, so each cell's offset needs more than 12 bits (aarch64's
# records hold it as two 12-bit halves): all 8000 calls of f, from two
# threads, are in the dump.
cat >bigtls.c <<'EOF'
#include <pthread.h>
__thread char big[300000] = {1};
volatile long sink;
__attribute__((noinline)) int f(int x) { big[x % 300000]++; return x + big[x % 300000]; }
static void *w(void *a) { for (int i = 0; i < 5000; i++) sink += f(i); return a; }
int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); for (int i = 0; i < 3000; i++) sink += f(i); pthread_join(t, 0); return 0; }
EOF
"$cc" "$opt" -pthread -fplugin="$plugin" "$arg-mode=count" bigtls.c -o bigtls || fail "build bigtls.c"
INSTR_OUTPUT="$work/bigtls.instr" $runner ./bigtls || fail "run bigtls"
"$report" bigtls.instr >bigtls.txt || fail "report bigtls"
grep -Eq '^ +8000  f ' bigtls.txt || { cat bigtls.txt; fail "bigtls.c: f is not 8000"; }

# Churn: threads that end by pthread_exit or cancellation, while a signal
# handler counts too; the program prints how many calls of f it made
# (and fails if a thread ended inside a handler: its own count would be
# off by the call it cut short, count-stress.c).
# Three runs of each form, each under a time limit: a signal between a
# function's arming test and the trampoline once armed a thread twice and
# hung it; and at -O0 the -fPIC form's count was a load, an add and a
# store, between which the handler's count of f could be lost.
for form in "" -fPIC; do
    "$cc" "$opt" $form -pthread -fplugin="$plugin" "$arg-mode=count" "$srcdir/count-stress.c" -o stress ||
        fail "build count-stress.c $form"
    for run in 1 2 3; do
        rm -f stress*.instr
        INSTR_OUTPUT="$work/stress.instr" timeout 120 $runner ./stress >stress.out || fail "run $run of count-stress $form"
        want=$(sed -n 's/^expected f //p' stress.out)
        "$report" stress.instr >stress.txt || fail "report count-stress"
        grep -Eq "^ +$want  f " stress.txt ||
            { cat stress.out; grep ' f ' stress.txt; fail "count-stress $form: f is not $want"; }
    done
done

# A signal handler counting against the code it interrupts: the main
# thread calls f in a tight loop while a SIGALRM handler calls it 50 times
# a signal, 1000 signals (count-signal.c); the dump must say every call,
# in both forms.  Under qemu-user, a signal comes only between translated
# blocks, never inside an increment: QEMU_SINGLESTEP makes every
# instruction a block of its own.  There, the same program with aarch64's
# exclusive pair made a plain load and store (its assembly edited) must
# lose counts: the check sees what a wrong increment would do.
if [ -n "$runner" ]; then
    QEMU_SINGLESTEP=1
    export QEMU_SINGLESTEP
fi
for form in "" -fPIC; do
    "$cc" "$opt" $form -S -fplugin="$plugin" "$arg-mode=count" "$srcdir/count-signal.c" -o signal.s ||
        fail "build count-signal.c $form"
    "$cc" $form signal.s -o signal || fail "assemble count-signal.c $form"
    rm -f signal.instr
    INSTR_OUTPUT="$work/signal.instr" timeout 120 $runner ./signal >signal.out || fail "run count-signal $form"
    want=$(sed -n 's/^expected f //p' signal.out)
    "$report" signal.instr >signal.txt || fail "report count-signal"
    grep -Eq "^ +$want  f " signal.txt ||
        { cat signal.out; grep ' f ' signal.txt; fail "count-signal $form: f is not $want"; }
    if [ $arch = aarch64 ] && [ -n "$runner" ]; then
        sed -E -e 's/\tldxr\t/\tldr\t/' \
            -e 's/\tstxr\t(w[0-9]+), (x[0-9]+), (\[x[0-9]+\])/\tstr\t\2, \3\n\tmov\t\1, #0/' signal.s >plain-rmw.s
        grep -q ldxr plain-rmw.s && fail "plain-rmw.s: an ldxr left"
        "$cc" $form plain-rmw.s -o plain-rmw || fail "assemble plain-rmw.s"
        # Whether a signal lands inside a count is chance: up to 3 runs.
        lost=0
        for try in 1 2 3; do
            rm -f signal.instr
            INSTR_OUTPUT="$work/signal.instr" timeout 120 $runner ./plain-rmw >signal.out || fail "run plain-rmw $form"
            want=$(sed -n 's/^expected f //p' signal.out)
            "$report" signal.instr >signal.txt || fail "report plain-rmw"
            echo "a load and a store instead of the exclusive pair ($form, run $try): $want calls made, $(grep ' f ' signal.txt)"
            grep -Eq "^ +$want  f " signal.txt || { lost=1; break; }
        done
        [ $lost = 1 ] || fail "plain-rmw $form: a load and a store lost no count in 3 runs (signals not inside?)"
    fi
done
unset QEMU_SINGLESTEP

if [ $arch = aarch64 ]; then
    # The registers across the arming test (TLS form): a thread arms in
    # mix, whose arguments are still in x0-x7 and q0-q7 (and at -O2 a copy
    # of q0 in q16), while the runtime's path goes through a
    # pthread_setspecific that writes every q register and x9-x15
    # (clobber-simd.c, preloaded); mix must return what its plain build
    # does.
    "$cc" "$opt" -c "$srcdir/count-simd-main.c" -o cs-main.o || fail "build count-simd-main.c"
    "$cc" "$opt" -c -Dmix=mix_ref "$srcdir/count-simd.c" -o cs-ref.o || fail "build count-simd.c plain"
    "$cc" "$opt" -c -fplugin="$plugin" "$arg-mode=count" "$srcdir/count-simd.c" -o cs.o || fail "build count-simd.c"
    "$cc" -pthread -fplugin="$plugin" "$arg-mode=count" cs-main.o cs-ref.o cs.o -o count-simd || fail "link count-simd"
    "$cc" -O2 -shared -fPIC "$srcdir/clobber-simd.c" -o clobber-simd.so -ldl || fail "build clobber-simd.c"
    # The CPU qemu was given (QEMU_CPU, if any), back after each run that
    # chose its own.
    cpu0=${QEMU_CPU-}
    restore_cpu() { if [ -n "$cpu0" ]; then export QEMU_CPU="$cpu0"; else unset QEMU_CPU; fi; }
    # armed_run PROG FUNC CPU WHAT FAILURE [VAR=VALUE...]: PROG run on qemu's
    # CPU (native: as given), its two threads' first counted call FUNC,
    # which must get its arguments back whole; its dump counts FUNC twice.
    armed_run() {
        prog=$1 fn=$2 cpu=$3 what=$4 failure=$5
        shift 5
        rm -f "$prog.instr"
        [ "$cpu" = native ] || export QEMU_CPU="$cpu"
        env INSTR_OUTPUT="$work/$prog.instr" "$@" $runner "./$prog" >"$prog.out" ||
            { cat "$prog.out"; fail "$prog ($what): $failure"; }
        restore_cpu
        cat "$prog.out"
        "$report" "$prog.instr" >"$prog.txt" || fail "report $prog"
        grep -Eq "^ +2  $fn " "$prog.txt" || { cat "$prog.txt"; fail "$prog: $fn is not 2"; }
    }
    # The entry keeps q0-q31 where the CPU has no SVE, the Z and P
    # registers where it has: under qemu-user both (a Cortex-A57, and its
    # default CPU, which has SVE).
    cpus=""
    [ -n "$runner" ] && cpus="cortex-a57 max"
    for cpu in ${cpus:-native}; do
        armed_run count-simd mix "$cpu" "$cpu" "an argument register changed while the thread armed" \
            LD_PRELOAD="$work/clobber-simd.so"
    done
    # SVE: the arguments of a function of the SVE calling convention in
    # z0-z3 and p0-p1 at 256 and 512 bits (qemu-user's SVE), or at the
    # CPU's own length where it has SVE; skipped where neither.
    if [ -n "$runner" ] || grep -qw sve /proc/cpuinfo 2>/dev/null; then
        sve=-march=armv8.2-a+sve
        "$cc" "$opt" $sve -c "$srcdir/count-sve-main.c" -o cv-main.o || fail "build count-sve-main.c"
        "$cc" "$opt" $sve -c -Dmixs=mixs_ref "$srcdir/count-sve.c" -o cv-ref.o || fail "build count-sve.c plain"
        "$cc" "$opt" $sve -c -fplugin="$plugin" "$arg-mode=count" "$srcdir/count-sve.c" -o cv.o ||
            fail "build count-sve.c"
        "$cc" -pthread -fplugin="$plugin" "$arg-mode=count" cv-main.o cv-ref.o cv.o -o count-sve || fail "link count-sve"
        lengths=""
        [ -n "$runner" ] && lengths="32 64"
        for vl in ${lengths:-native}; do
            cpu=native
            [ "$vl" = native ] || cpu=max,sve-default-vector-length=$vl
            armed_run count-sve mixs "$cpu" "$vl bytes" "an SVE argument changed while the thread armed"
        done
    else
        echo "no SVE here: count-sve skipped"
    fi
else
    # Vector registers across the arming test (TLS form): a thread arms in
    # sum8, whose __m256 argument is still in ymm0, while the runtime's path
    # runs a vzeroupper (clobber-vectors.c, preloaded: what glibc's AVX2
    # routines do); the sum comes back 36, not 10.  Where the CPU has no
    # AVX2 the program says so and this part is skipped.
    "$cc" "$opt" -mavx2 -c "$srcdir/count-vectors-main.c" -o cv-main.o || fail "build count-vectors-main.c"
    "$cc" "$opt" -mavx2 -fplugin="$plugin" "$arg-mode=count" -c "$srcdir/count-vectors.c" -o cv.o ||
        fail "build count-vectors.c"
    "$cc" -pthread -fplugin="$plugin" "$arg-mode=count" cv-main.o cv.o -o count-vectors || fail "link count-vectors"
    INSTR_OUTPUT="$work/cv-check.instr" ./count-vectors >cv.out
    rc=$?
    if [ $rc = 77 ]; then
        cat cv.out
    else
        [ $rc = 0 ] || { cat cv.out; fail "count-vectors without the shim"; }
        "$cc" -O2 -shared -fPIC "$srcdir/clobber-vectors.c" -o clobber-vectors.so -ldl || fail "build clobber-vectors.c"
        INSTR_OUTPUT="$work/cv.instr" LD_PRELOAD="$work/clobber-vectors.so" ./count-vectors >cv.out ||
            { cat cv.out; fail "count-vectors: an argument in ymm0 lost its upper half while the thread armed"; }
        "$report" cv.instr >cv.txt || fail "report count-vectors"
        grep -Eq '^ +2  sum8 ' cv.txt || { cat cv.txt; fail "count-vectors: sum8 is not 2"; }
    fi
fi

# GCC's clones: at -O2 scale is only scale.constprop.0 (IPA-CP), which the
# report folds into scale's row, callers and callees too, as the time
# report does, and shows as a row of its own with --clones=split.
if [ "$opt" = -O2 ]; then
    "$cc" -O2 -fplugin="$plugin" "$arg-mode=count" "$srcdir/count-clones.c" -o clones || fail "build count-clones.c"
    INSTR_OUTPUT="$work/clones.instr" $runner ./clones 1000 >/dev/null || fail "run count-clones"
    "$report" clones.instr >clones.txt || fail "report count-clones"
    "$report" --clones=split clones.instr >clones-split.txt 2>clones.err || fail "report count-clones --clones=split"
    grep -Eq '^ +2000  scale  ' clones.txt && ! grep -q constprop clones.txt ||
        { cat clones.txt; fail "count-clones: scale.constprop.0 not folded into scale"; }
    grep -Eq '^ +2000  scale\.constprop\.0  ' clones-split.txt && [ ! -s clones.err ] ||
        { cat clones-split.txt clones.err; fail "count-clones: --clones=split shows no scale.constprop.0"; }
fi

# Views of a count dump: callers; a time view is refused with a reason.
"$report" --view callers leaf "$parent" >callers.txt || fail "--view callers"
grep -Eq '^ +1202000  mid$' callers.txt || fail "callers of leaf"
"$report" --view calltree "$parent" >/dev/null 2>err.txt && fail "calltree accepted"
grep -q 'calls only' err.txt || fail "no reason for refusing calltree"

# Options a count dump cannot honour are said, each once; --sort calls is its order.
"$report" --sort ei -F ei --units us --raw --flagged "$parent" >/dev/null 2>warn.txt || fail "report with time options"
for o in sort columns units raw flagged; do
    [ "$(grep -c -- "--$o does nothing with a count-mode dump" warn.txt)" = 1 ] || { cat warn.txt; fail "--$o not said once"; }
done
"$report" --sort calls "$parent" >/dev/null 2>warn.txt || fail "--sort calls"
[ -s warn.txt ] && { cat warn.txt; fail "--sort calls warned"; }

# JSON and CSV hold the text's calls and edges (issue 37 §4).
"$report" --format json "$parent" >parent.json || fail "--format json"
"$report" --format csv "$parent" >parent.csv || fail "--format csv"
"$report" --format csv --view callers leaf "$parent" >callers.csv || fail "--format csv --view callers"
"$report" --format json --view callers leaf "$parent" >callers.json || fail "--format json --view callers"
python3 - parent.txt parent.json parent.csv callers.csv callers.json <<'EOF' || fail "JSON or CSV differ from the text"
import csv, json, re, sys
txt, js, cs, ccs, cjs = sys.argv[1:6]
table = {}
for line in open(txt):
    m = re.match(r"^ +(\d+)  (\S.*?)  \((.*):(\d+)\)$", line.rstrip("\n"))
    if m:
        table[m.group(2)] = int(m.group(1))
j = json.load(open(js))
assert j["mode"] == "count" and j["view"] == "functions", j.get("mode")
fj = {f["name"]: f["calls"] for f in j["functions"]}
assert table and fj == table, ("json", fj, table)
fc = {r["function"]: int(r["calls"]) for r in csv.DictReader(open(cs))}
assert fc == table, ("csv", fc, table)
leaf = [f for f in j["functions"] if f["name"] == "leaf"][0]
edges = {e["name"] or "<" + e["what"] + ">": e["calls"] for e in leaf["callers"]}
assert edges.get("mid") == 1202000, edges
rows = {r["caller"]: int(r["calls"]) for r in csv.DictReader(open(ccs))}
assert rows == edges, ("csv callers", rows, edges)
one = json.load(open(cjs))["functions"]
assert len(one) == 1 and {e["name"] or "<" + e["what"] + ">": e["calls"] for e in one[0]["callers"]} == edges, one
print("JSON and CSV: %d functions, leaf's callers %s" % (len(table), edges))
EOF
# The exports with counts (issue 37 §4): folded, callgrind and pprof say
# the JSON's calls per edge and per function; the others are refused.
for f in folded callgrind pprof; do
    "$report" --export $f -o "parent.$f" "$parent" || fail "--export $f of a count dump"
done
"$report" --export chrome -o parent.chrome "$parent" 2>refused.txt && fail "--export chrome of a count dump accepted"
grep -q "has no count form (callgrind, folded, pprof do)" refused.txt || { cat refused.txt; fail "--export chrome: no reason"; }
[ -e parent.chrome ] && fail "--export chrome refused but left parent.chrome"
"$report" --export folded --folded-root thread "$parent" >/dev/null 2>warn.txt || fail "--folded-root"
grep -q -- "--folded-root does nothing with a count-mode dump" warn.txt || { cat warn.txt; fail "--folded-root not warned"; }
PYTHONPATH="$srcdir/../lib" python3 - parent.json parent.folded parent.callgrind parent.pprof <<'EOF' ||
import gzip, json, re, sys
from exchange_common import pb_fields
js, fo, cg, pp = sys.argv[1:5]
j = json.load(open(js))
# Per (caller, callee): calls; (None, f): f's entries from elsewhere.
want = {}
for f in j["functions"]:
    for e in f["callers"]:
        want[(e["name"], f["name"])] = e["calls"]
    for e in f["callees"]:
        want[(f["name"], e["name"])] = e["calls"]
want = {k: v for k, v in want.items() if v}
got = {}
for line in open(fo):
    stack, n = line.rsplit(" ", 1)
    fr = stack.split(";")
    got[(fr[0], fr[1]) if len(fr) == 2 else (None, fr[0])] = int(n)
assert got == want, ("folded", sorted(set(got.items()) ^ set(want.items()), key=str)[:6])
# callgrind: fn= then its callees' calls= lines.
names, got, fn, callee = {}, {}, None, None
for line in open(cg):
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "fn":
            fn = names[m.group(2)]
        else:
            callee = names[m.group(2)]
        continue
    m = re.match(r"^calls=(\d+) ", line)
    if m:
        got[(fn, callee)] = int(m.group(1))
edges = {k: v for k, v in want.items() if k[0]}
assert got == edges, ("callgrind", sorted(set(got.items()) ^ set(edges.items()), key=str)[:6])


def varints(b):
    out, cur, shift = [], 0, 0
    for x in b:
        cur |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            out.append(cur)
            cur = shift = 0
    return out


# pprof: samples [callee, caller] or [f], their values.
prof = list(pb_fields(gzip.decompress(open(pp, "rb").read())))
strings = [v.decode() for f, wt, v in prof if f == 6]
funcs, locs, got = {}, {}, {}
for f, wt, v in prof:
    if f == 5:
        d = {ff: vv for ff, _, vv in pb_fields(v)}
        funcs[d[1]] = strings[d.get(2, 0)]
for f, wt, v in prof:
    if f == 4:
        d = {ff: vv for ff, _, vv in pb_fields(v)}
        locs[d[1]] = funcs[{ff: vv for ff, _, vv in pb_fields(d[4])}[1]]
for f, wt, v in prof:
    if f == 2:
        d = {ff: vv for ff, _, vv in pb_fields(v)}
        st = [locs[x] for x in varints(d[1])]
        got[(st[1], st[0]) if len(st) == 2 else (None, st[0])] = varints(d[2])[0]
assert got == want, ("pprof", sorted(set(got.items()) ^ set(want.items()), key=str)[:6])
print("exports: %d edges and entries, folded, callgrind and pprof alike" % len(want))
EOF
    fail "an export's counts differ from the JSON"

# --diff of two count dumps: each side's calls, matched by name.
"$report" --diff "$parent" "$child" >diff.txt || fail "--diff of count dumps"
"$report" --diff --format json "$parent" "$child" >diff.json || fail "--diff --format json"
"$report" --format json "$child" >child.json || fail "--format json child"
python3 - parent.json child.json diff.json diff.txt <<'EOF' || fail "--diff differs from the two reports"
import json, sys
pa, ch, df, txt = sys.argv[1:5]
a = {f["mangled"]: f["calls"] for f in json.load(open(pa))["functions"]}
b = {f["mangled"]: f["calls"] for f in json.load(open(ch))["functions"]}
d = json.load(open(df))
rows = {f["mangled"]: f for f in d["functions"]}
for name in set(a) | set(b):
    if a.get(name) == b.get(name):
        assert name not in rows, name
        continue
    r = rows[name]
    assert r["calls_a"] == a.get(name, 0) and r["calls_b"] == b.get(name, 0), (name, r, a.get(name), b.get(name))
    assert r["calls_change"] == b.get(name, 0) - a.get(name, 0) and r["in_a"] == (name in a), r
assert d["diff"]["unchanged"] == sum(1 for k in a if a[k] == b.get(k)), d["diff"]
t = open(txt).read()
assert "Matched:" in t and "mid" in t, t
print("--diff: %d changed, %d unchanged" % (len(rows), d["diff"]["unchanged"]))
EOF
cat diff.txt
exit 0

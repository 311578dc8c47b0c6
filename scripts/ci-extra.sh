#!/bin/sh
# CI, after the README's test command (scripts/test.sh): the gates that
# need other builds or change the machine.
#  0. The Debian package (scripts/package-smoke.sh): cpack -G DEB in build/,
#     apt-get install, a program and a CMake project built and reported
#     from the installed paths only, apt-get purge.
#  1. ASan + UBSan build of the tools and their tests (INSTR_SANITIZE=ON):
#     unit, golden, bad-input, fuzz-replay, and every end-to-end and
#     survival test, whose dumps then go through the sanitized instr-report.
#  2. The call-count oracles on a real program (tests/oracle/run-lua.sh):
#     Lua 5.4 from Debian's source (apt-get source, from the archives apt
#     is configured with), built with the plugin and run under callgrind,
#     and built plain, whose calls the instrumented build must make.  The
#     README's test command skips them (no source fetched).
#  2b. aarch64 (issue 36): ctest -L aarch64 in build/ cross-builds the
#     runtime, the plugin and the tools for aarch64, compiles the end-to-end
#     programs with them, runs them under qemu-aarch64-static and reports
#     them with the native tools; the aarch64 tools under qemu, and the
#     arm64 .deb with the plugin for arm64's own GCC (docs/platforms.md).
#  3. Each fuzz target under libFuzzer (clang), starting from
#     fuzz/corpus/<target>/ and the regressions: a fixed number of inputs
#     with a fixed seed (about a minute each here), so a CI run is
#     reproducible and a new crash shows up in a developer's run before it
#     reaches CI.  INSTR_FUZZ_SECONDS=N fuzzes for N seconds with a random
#     seed instead (explore further; run it before committing reader
#     changes).  A crash fails; its input is kept in build-fuzz/artifacts/:
#     add it to fuzz/regressions/<target>/ with the fix, where it stays a test.
set -eu
cd "$(dirname "$0")/.."
INSTR_WITH_FUZZ=1 INSTR_WITH_AARCH64=1 scripts/install-deps.sh
jobs=$(nproc)
seconds=${INSTR_FUZZ_SECONDS:-}

# Inputs per target for one to three minutes on a 2-core VM, the three
# side by side (executions differ by target: the visualiser reader also
# runs every exporter; one after the other, in a loaded fresh-clone run,
# dump-reader's 20000 took 142 s, text-trace's 30000 185 s, visualiser's
# 12000 110 s; profile-cache writes a dump and a profile and reports
# twice an input: about 50 a second alone, 11 a second beside the other
# three under ASan in a fresh-clone CI run, so 3000 end with them).
# Halved since the aarch64 and MPI gates joined CI (a fresh-clone
# .ci/run took 26 min with the full counts, near CI's 30): about two
# and a half minutes for the four side by side.
fuzz_runs() {
    case $1 in
    dump-reader) echo 10000 ;;
    text-trace) echo 15000 ;;
    visualiser) echo 6000 ;;
    profile-cache) echo 1500 ;;
    *) echo 10000 ;;
    esac
}

status=0
echo "== Debian package (build/instr_*.deb), installed, used, removed"
scripts/package-smoke.sh || status=1

echo "== Call counts of Lua 5.4 against callgrind (build/, Debian's lua5.4 source)"
lua_src=$(python3 -c 'import sys; sys.path.insert(0, "bench"); import benchutil; print(benchutil.run_real().fetch_lua(sys.argv[1]))' "$PWD/build/real")
cmake -S . -B build -DINSTR_LUA_SOURCE="$lua_src" >/dev/null
if (cd build && ctest -V -j2 -R '^oracle-callgrind-(plain-)?lua$') >build/lua-oracle.log 2>&1 &&
    ! grep -q Skipped build/lua-oracle.log; then
    grep -E 'PASS:|tests passed' build/lua-oracle.log
else
    grep -vE '^[0-9]+: [A-Za-z_0-9]+ +calls' build/lua-oracle.log | tail -60
    echo "the Lua oracles failed or were skipped (build/lua-oracle.log)"
    status=1
fi

echo "== aarch64 under qemu (ctest -L aarch64: the cross build in build/aarch64, its programs, the native report)"
if (cd build && ctest --output-on-failure -j"$jobs" -L aarch64) >build/aarch64.log 2>&1 &&
    grep -q 'tests passed' build/aarch64.log && ! grep -q 'No tests were found' build/aarch64.log; then
    grep -E 'tests passed' build/aarch64.log
else
    tail -60 build/aarch64.log
    echo "the aarch64 tests failed or are missing (build/aarch64.log; configure says what is missing)"
    status=1
fi

echo "== ASan/UBSan build (build-san)"
cmake -S . -B build-san -DINSTR_SANITIZE=ON >/dev/null
cmake --build build-san -j"$jobs" >build-san/build.log 2>&1 || { tail -40 build-san/build.log; exit 1; }
# INSTR_TEST_IDENTITIES=self: each case once, as the invoking user (here
# the sanitizers check the tools on the dumps; the ordinary run above runs
# the cases as every identity).
(cd build-san && INSTR_TEST_IDENTITIES=self ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    INSTR_REPORT_CACHE="$PWD/report-cache" \
    ctest --output-on-failure -j"$jobs" -L 'report|fuzz|e2e|survival')

echo "== libFuzzer build (build-fuzz)"
cmake -S fuzz -B build-fuzz -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build build-fuzz -j"$jobs" >build-fuzz/build.log 2>&1 || { tail -40 build-fuzz/build.log; exit 1; }
mkdir -p build-fuzz/artifacts
# The targets run side by side (each is one process): their logs and
# exit statuses are read once all have ended.
targets=$(sed -n 's/^set(INSTR_FUZZ_TARGETS \(.*\))$/\1/p' fuzz/CMakeLists.txt)
for target in $targets; do
    work=build-fuzz/corpus-$target
    mkdir -p "$work"
    seeds=fuzz/corpus/$target
    [ -d "fuzz/regressions/$target" ] && seeds="$seeds fuzz/regressions/$target"
    if [ -n "$seconds" ]; then
        budget="-max_total_time=$seconds"
        echo "-- fuzz-$target for ${seconds}s"
    else
        budget="-runs=$(fuzz_runs "$target") -seed=1"
        echo "-- fuzz-$target: $budget"
    fi
    # shellcheck disable=SC2086
    (if build-fuzz/fuzz-"$target" $budget -rss_limit_mb=2048 -max_len=65536 \
            -timeout=20 -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"$target"- \
            "$work" $seeds >build-fuzz/"$target".log 2>&1; then r=0; else r=1; fi
     echo $r >build-fuzz/"$target".status) &
done
wait
for target in $targets; do
    echo "-- fuzz-$target"
    if [ "$(cat build-fuzz/"$target".status)" != 0 ]; then
        tail -60 build-fuzz/"$target".log
        echo "fuzz-$target found a crash: see build-fuzz/artifacts/"
        status=1
    fi
    grep -E '^stat::number_of_executed_units|^Done' build-fuzz/"$target".log || true
done
exit $status

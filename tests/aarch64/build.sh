#!/bin/sh
# The aarch64 test fixture (tests/aarch64): the cross build of the runtime
# and of the plugin for the cross compiler (cmake/aarch64-linux-gnu.cmake)
# in OUT, then the end-to-end test programs (tests/e2e) and the survival
# program (tests/survival, with its uninstrumented oracle) compiled with
# them at -O0 and -O2 (the end-to-end programs in count mode too),
# tests/libc's defer-free program (plain and instrumented) and
# tests/runtime's small-dumps program; with the tools for aarch64 and the
# plugin for arm64's own GCC where their packages are at hand
# (check-cross-tools.sh, check-deb.sh).
#   build.sh SRC OUT GCC_MAJOR
set -eu
src=$1
out=$2
major=$3
# Debian's arm64 packages of the tools' libraries and of arm64's own GCC,
# unpacked (not installed) in OUT-root: the tools are built for aarch64,
# and the package's plugin against that GCC's headers (check-cross-tools.sh,
# check-deb.sh).  Without them (offline) the cross build makes the runtime
# and the plugin only, and those tests say so.
root=""
if sh "$src/scripts/fetch-arm64-root.sh" "$out-root" "$major" >/dev/null; then
    root=$out-root
else
    echo "aarch64: arm64's packages could not be fetched: no aarch64 tools, no arm64 plugin" >&2
fi
# A cross build configured with another root (none, before the root was
# fetched) keeps that root's searches in its cache: start it afresh.
if [ -f "$out/CMakeCache.txt" ] && ! grep -qx "INSTR_TARGET_ROOT:PATH=$root" "$out/CMakeCache.txt"; then
    rm -rf "$out"
fi
cmake -S "$src" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
    -DINSTR_CROSS_MAJOR="$major" -DINSTR_TARGET_ROOT="$root" >/dev/null
cmake --build "$out" -j2 >/dev/null
plugin=$out/plugin/instr.so
e2e=$src/tests/e2e
for opt in O0 O2; do
    # Each in time mode and in count mode (check-count-e2e.py compares them).
    for mode in time count; do
        name=e2e
        [ $mode = count ] && name=e2e-count
        for case in calls jump threads; do
            "aarch64-linux-gnu-gcc-$major" "-$opt" -fplugin="$plugin" -fplugin-arg-instr-mode=$mode \
                -o "$out/$name-$case-$opt" "$e2e/$case.c" -pthread
        done
        "aarch64-linux-gnu-g++-$major" "-$opt" -fplugin="$plugin" -fplugin-arg-instr-mode=$mode \
            -o "$out/$name-unwind-$opt" "$e2e/unwind.cpp" -pthread
    done
    # tests/survival's program, instrumented and plain (its oracle).
    for variant in instr plain; do
        flag=""
        [ $variant = instr ] && flag="-fplugin=$plugin"
        "aarch64-linux-gnu-gcc-$major" "-$opt" ${flag:+"$flag"} -o "$out/survive-$variant-$opt" "$src/tests/survival/survive.c" -pthread
        "aarch64-linux-gnu-g++-$major" "-$opt" ${flag:+"$flag"} -o "$out/survive-terminate-$variant-$opt" \
            "$src/tests/survival/survive-terminate.cpp" -pthread
    done
done
# tests/libc's programs whose free (and malloc) need their constructor:
# the binding waits for main (check-defer.py), plain and instrumented.
for variant in free malloc-free; do
    def="" arg=""
    [ $variant = malloc-free ] && def=-DWRAP_MALLOC arg=-fplugin-arg-instr-threshold=2
    "aarch64-linux-gnu-gcc-$major" -O1 -g -fno-builtin $def -o "$out/defer-$variant-plain" "$src/tests/libc/defer-free.c" -ldl
    "aarch64-linux-gnu-gcc-$major" -O1 -g -fno-builtin $def -fplugin="$plugin" $arg -o "$out/defer-$variant-instr" \
        "$src/tests/libc/defer-free.c" -ldl
done
# tests/runtime's few-calls program (check-small-dumps.py): small dumps.
"aarch64-linux-gnu-gcc-$major" -O1 -fplugin="$plugin" -o "$out/small-dumps" "$src/tests/runtime/small-dumps.c" -pthread
echo "aarch64: runtime, plugin and test programs built in $out"

#!/bin/sh
# install-tree.sh BUILD WORK GCC_MAJOR
# `cmake --install BUILD --prefix WORK/first`, then moves the whole tree to
# WORK/moved, where the other install tests use it: a relocatable tree
# works wherever it lands.  Checks the layout of the README, that
# pkg-config prints the plugin's path as a user reads it, and that no
# installed file but instr.pc (prefix=, as every .pc file) still holds
# the first prefix.
set -eu
build=$1 work=$2 major=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/first" >"$work/install.log"
status=0
got=$(PKG_CONFIG_PATH="$work/first/lib/pkgconfig" pkg-config --variable=plugin instr)
[ "$got" = "$work/first/lib/instr/instr.so" ] ||
    { echo "pkg-config --variable=plugin instr: '$got', not '$work/first/lib/instr/instr.so'"; status=1; }
mv "$work/first" "$work/moved"
p=$work/moved
for f in bin/instr-report bin/instr-dump \
         lib/instr/instr.so "lib/instr/instr-gcc$major.so" lib/instr/libinstr-rt.so \
         include/instr/instr.h \
         lib/cmake/instr/instrConfig.cmake lib/cmake/instr/instrConfigVersion.cmake \
         lib/cmake/instr/instr-instrument.cmake lib/pkgconfig/instr.pc \
         share/man/man1/instr-report.1.gz share/man/man1/instr-dump.1.gz share/man/man7/instr.7.gz \
         share/bash-completion/completions/instr-report share/bash-completion/completions/instr-dump; do
    [ -f "$p/$f" ] || { echo "missing: $f"; status=1; }
done
# instr-sample, when this build made it (libunwind found).
tools="bin/instr-report bin/instr-dump"
[ -x "$build/bin/instr-sample" ] && tools="$tools bin/instr-sample"
# instr-report-mpi, when this build made it (an MPI found): with its page.
if [ -x "$build/bin/instr-report-mpi" ]; then
    tools="$tools bin/instr-report-mpi"
    [ -f "$p/share/man/man1/instr-report-mpi.1.gz" ] || { echo "missing: the page of instr-report-mpi"; status=1; }
fi
for f in $tools; do
    [ -x "$p/$f" ] || { echo "not executable or missing: $f"; status=1; }
    "$p/$f" --version >/dev/null || { echo "installed $f --version failed"; status=1; }
done
# Nothing installed may name where it was installed (binaries included).
if grep -rl --exclude=instr.pc "$work/first" "$p"; then
    echo "these files hold the install prefix $work/first: the tree is not relocatable"
    status=1
fi
"$p/bin/instr-report" --help >/dev/null || { echo "installed instr-report --help failed"; status=1; }
exit $status

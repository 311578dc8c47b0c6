#!/bin/sh
# CI (scripts/ci-extra.sh): the Debian package, as a user gets it.
# Builds build/instr_<version>_<arch>.deb with `cpack -G DEB`, checks it
# with lintian (no error), installs it
# with apt (which checks its dependencies), then uses it from the installed
# paths only: a program compiled with
# gcc -fplugin=$(pkg-config --variable=plugin instr) and reported with
# /usr/bin/instr-report, and the CMake consumer project against /usr.
# The package is purged at the end, whatever happened.
set -eu
cd "$(dirname "$0")/.."
work=$PWD/build/package-smoke
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

rm -f build/instr_*.deb
(cd build && cpack -G DEB >cpack.log 2>&1) || { tail -30 build/cpack.log; exit 1; }
set -- build/instr_*.deb
[ $# = 1 ] && [ -f "$1" ] || { echo "cpack made no single instr_*.deb: $*"; exit 1; }
deb=$1
dpkg-deb --field "$deb" Package Version Depends Suggests
# No MPI in the package: instr-report-mpi (cmake --install's "mpi"
# component) stays out, so no dependency on one MPI's libraries.
if dpkg-deb --contents "$deb" | grep -q 'instr-report-mpi' ||
    dpkg-deb --field "$deb" Depends | grep -qiE 'mpi|libopenmpi'; then
    echo "$deb holds instr-report-mpi or depends on an MPI"; exit 1
fi
# Debian's own checks of a package: no error (a copyright file, a
# changelog, a real maintainer address); the warnings are printed.
lintian --fail-on error --allow-root "$deb" || { echo "lintian found errors in $deb"; exit 1; }

$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "./$deb" >/dev/null
# purge, not only remove: no trace of instr left in dpkg's database either.
trap '$SUDO apt-get purge -y -qq -o DPkg::Lock::Timeout=600 instr >/dev/null' EXIT

rm -rf "$work"
mkdir -p "$work"
unset PKG_CONFIG_PATH
[ "$(pkg-config --variable=plugin instr | xargs realpath)" = /usr/lib/instr/instr.so ] ||
    { echo "pkg-config does not find /usr/lib/instr/instr.so"; exit 1; }
tests/install/smoke-program.sh /usr/bin/instr-report "$work/program"
tests/install/consumer.sh /usr "$work/consumer"
echo "package: ok ($deb)"

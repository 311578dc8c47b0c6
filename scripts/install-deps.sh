#!/bin/sh
# Installs the Debian packages instr needs to build and test, if any are
# missing.  Run as root, or with sudo available.
#
#   scripts/install-deps.sh [--list]
#   --list: print the list and install nothing (scripts/test-newer-gcc.sh
#   installs the same list in its chroot: one list).
# INSTR_GCC_MAJOR (12), INSTR_WITH_GCC11 (1), INSTR_WITH_BROWSERS (1),
# INSTR_WITH_AARCH64 (0), INSTR_WITH_FUZZ (0), INSTR_WITH_SPEEDSCOPE (1)
# choose the parts.
set -eu
GCC_MAJOR=${INSTR_GCC_MAJOR:-12}
PACKAGES="gcc-$GCC_MAJOR g++-$GCC_MAJOR gcc-$GCC_MAJOR-plugin-dev cmake make python3 libiberty-dev libunwind-dev binutils"
# valgrind: callgrind_annotate reads our --export callgrind files (tests/exchange).
PACKAGES="$PACKAGES valgrind"
# tests/install: pkg-config (instr.pc), man-db (the man pages render
# without warnings), bash-completion (the completion loads); cpack -G DEB
# reads the dependencies of the ELF files with dpkg-shlibdeps and file;
# lintian checks the package (scripts/package-smoke.sh).
PACKAGES="$PACKAGES pkg-config man-db bash-completion dpkg-dev file lintian"
# zlib: --export pprof writes gzip, --export perfetto zlib-compressed packets; golang-go: `go tool pprof` reads it (tests/exchange).
PACKAGES="$PACKAGES zlib1g-dev golang-go"
# libdw: --view lines of sampling dumps reads DWARF line tables.
PACKAGES="$PACKAGES libdw-dev"
# libc6-dbg: libc's debug file (under /usr/lib/debug) names the samples in
# its local functions, memset's ifunc variants, which are not in libc.so.6's
# .dynsym (tests/sampling hybrid.py libc, instr-sample: without it both fail,
# the frames "[libc.so.6]").  valgrind depends on it too.
PACKAGES="$PACKAGES libc6-dbg"
# Open MPI and MPICH: tests/mpi builds an MPI job with each (mpicc.openmpi,
# mpicc.mpich) and runs it with 4 ranks; mpi/ builds libinstr-mpi for each
# (MPICH's mpi.h is in libmpich-dev).
PACKAGES="$PACKAGES openmpi-bin libopenmpi-dev mpich libmpich-dev"
# chromium, firefox-esr: the --export html page is loaded headless in both
# (tests/exchange: exchange-html-chromium, exchange-html-firefox).
[ "${INSTR_WITH_BROWSERS:-1}" = 1 ] && PACKAGES="$PACKAGES chromium firefox-esr"
# nodejs, npm: speedscope's importer reads our chrome and folded exports
# (tests/exchange check-speedscope.py; the npm package is installed below).
# A node that did not come from Debian (with its own npm) is kept.
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"
# gcc-11 lets the tests prove the plugin builds and runs with a second GCC.
[ "${INSTR_WITH_GCC11:-1}" = 1 ] && PACKAGES="$PACKAGES gcc-11 g++-11 gcc-11-plugin-dev"
# aarch64 (issue 36; tests label aarch64, run by scripts/ci-extra.sh;
# cmake/aarch64-linux-gnu.cmake):
# the cross compiler, its plugin headers, arm64's libc, and qemu-user to
# run what it builds.
[ "${INSTR_WITH_AARCH64:-0}" = 1 ] && PACKAGES="$PACKAGES gcc-$GCC_MAJOR-aarch64-linux-gnu g++-$GCC_MAJOR-aarch64-linux-gnu gcc-$GCC_MAJOR-plugin-dev-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
# Fuzzing (scripts/ci-extra.sh): clang's libFuzzer.
[ "${INSTR_WITH_FUZZ:-0}" = 1 ] && PACKAGES="$PACKAGES clang libclang-rt-14-dev"

if [ "${1:-}" = --list ]; then
    echo "$PACKAGES"
    exit 0
fi

# aarch64: the cross build's arm64 libraries and arm64's own GCC are
# fetched by apt-get download and unpacked, not installed
# (scripts/fetch-arm64-root.sh: installed, libc6:arm64 would come with
# them and break qemu -L /usr/aarch64-linux-gnu); apt needs arm64 among
# its architectures for that, which installs nothing.
if [ "${INSTR_WITH_AARCH64:-0}" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "instr: adding arm64 to apt's architectures (for scripts/fetch-arm64-root.sh)"
    SUDO_ARCH=""
    [ "$(id -u)" = 0 ] || SUDO_ARCH="sudo"
    $SUDO_ARCH dpkg --add-architecture arm64
    $SUDO_ARCH apt-get update -qq
fi

# speedscope from npm, once node is there (after the Debian packages).
install_speedscope() {
    [ "${INSTR_WITH_SPEEDSCOPE:-1}" = 1 ] && command -v npm >/dev/null 2>&1 || return 0
    [ -d "$(npm root -g 2>/dev/null)/speedscope/dist/release" ] && return 0
    echo "instr: installing speedscope (npm)"
    $SUDO npm install -g --no-audit --no-fund speedscope >/dev/null 2>&1 ||
        echo "instr: npm install -g speedscope failed: the speedscope test will be skipped" >&2
}
# Perfetto's trace processor (tests/exchange check-perfetto.py
# trace-processor) is in neither Debian nor npm: that test runs where
# trace_processor_shell is on PATH (or $TRACE_PROCESSOR) or the Python
# package perfetto is installed, and is skipped elsewhere.

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    install_speedscope
    exit 0
fi

echo "instr: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
install_speedscope

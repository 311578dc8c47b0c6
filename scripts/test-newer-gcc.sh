#!/bin/sh
# Builds instr with GCC 13 and GCC 14 and runs the test suite with each, in a
# Debian 13 (trixie) chroot: Debian 12 ships only GCC 11 and 12.  Not part of
# CI (it downloads ~400 MB and takes 20-40 min: 22 min on 2 shared cores,
# docs/platforms.md); run it before claiming a change keeps GCC 13/14
# working.  Needs root and debootstrap.  It ends with one line per GCC: the
# build's time and compiler warnings, ctest's result and time.
#
#   scripts/test-newer-gcc.sh [CHROOT_DIR] [GCC_MAJOR...]
#   (defaults: /var/tmp/instr-trixie, 13 14)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-/var/tmp/instr-trixie}
[ $# -gt 0 ] && shift
majors=${*:-13 14}
# The archive this machine's apt uses (a mirror, proxy or snapshot), unless
# DEBIAN_MIRROR names another.
mirror=${DEBIAN_MIRROR:-$(python3 "$src/scripts/apt_sources.py" --mirror)}

if [ "$(id -u)" != 0 ]; then
    echo "test-newer-gcc.sh: needs root (debootstrap, chroot, mounts)" >&2
    exit 2
fi
command -v debootstrap >/dev/null ||
    apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends debootstrap

if [ ! -x "$root/usr/bin/apt-get" ]; then
    debootstrap --variant=minbase trixie "$root" "$mirror"
fi

mounted=""
cleanup() {
    for m in $mounted; do umount "$root/$m" 2>/dev/null || umount -l "$root/$m" || :; done
}
trap cleanup EXIT INT TERM
# /dev/shm is a mount of its own: without it the chroot's is a directory of
# /dev that only root can write (MPICH's shared memory as uid 65534 fails).
for m in proc sys dev dev/pts dev/shm; do
    if ! mountpoint -q "$root/$m"; then
        mount --bind "/$m" "$root/$m"
        mounted="$m $mounted"
    fi
done

# The packages scripts/install-deps.sh installs (one list), for each GCC,
# without the browsers and the second GCC the chroot's tests do not use.
pkgs=""
for v in $majors; do
    pkgs="$pkgs $(INSTR_GCC_MAJOR=$v INSTR_WITH_GCC11=0 INSTR_WITH_BROWSERS=0 INSTR_WITH_SPEEDSCOPE=0 \
                  sh "$src/scripts/install-deps.sh" --list)"
done
pkgs=$(echo $pkgs | tr ' ' '\n' | sort -u | tr '\n' ' ')
chroot "$root" sh -c "DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null"

# The tree as committed, plus uncommitted changes to tracked files.
rm -rf "$root/src" && mkdir -p "$root/src"
(cd "$src" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$root/src"

# Each GCC: the build's output in src/build-gccV.log, ctest's in
# src/ctest-gccV.log (under the chroot), and one line of summary at the end.
status=0
summary=""
for v in $majors; do
    echo "== GCC $v"
    t0=$(date +%s)
    if chroot "$root" sh -c "cd /src && rm -rf build-gcc$v &&
        cmake -S . -B build-gcc$v -DINSTR_GCC=gcc-$v -DCMAKE_C_COMPILER=gcc-$v \
              -DCMAKE_CXX_COMPILER=g++-$v >build-gcc$v.log 2>&1 &&
        cmake --build build-gcc$v -j$(nproc) >>build-gcc$v.log 2>&1"; then
        t1=$(date +%s)
        chroot "$root" sh -c "cd /src/build-gcc$v &&
            ctest -LE 'bench|consumers|install' -j$(nproc) --output-on-failure -O /src/ctest-gcc$v.log" ||
            status=1
        t2=$(date +%s)
        result=$(grep 'tests passed' "$root/src/ctest-gcc$v.log" || echo "ctest gave no result")
        line="built in $((t1 - t0)) s, $(grep -c 'warning:' "$root/src/build-gcc$v.log" || :) compiler warnings; $result, in $((t2 - t1)) s"
    else
        tail -n 40 "$root/src/build-gcc$v.log"
        status=1
        line="the build failed after $(($(date +%s) - t0)) s (src/build-gcc$v.log)"
    fi
    summary="$summary
GCC $v ($(chroot "$root" "gcc-$v" -dumpfullversion)): $line"
done
echo "== summary (logs in $root/src)$summary"
exit $status

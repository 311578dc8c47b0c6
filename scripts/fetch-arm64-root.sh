#!/bin/sh
# Unpacks, into DIR (cmake -DINSTR_TARGET_ROOT=DIR with
# cmake/aarch64-linux-gnu.cmake), Debian's arm64 packages the cross build
# needs beyond the cross compiler, fetched with apt-get download and
# dpkg-deb -x, not installed:
#  - the tools' libraries and headers (zlib, libdw, libunwind, libiberty
#    and what they link): installed as multiarch packages, libc6:arm64
#    would come with them, and qemu-aarch64-static -L /usr/aarch64-linux-gnu
#    would then load its libc.so.6 from /lib/aarch64-linux-gnu beside the
#    cross ld.so, a mismatched pair (threaded programs hang under qemu);
#  - the arm64 GCC an arm64 machine's plugin is built against (its plugin
#    headers, gmp.h) and, for the test under qemu, its cc1 and the
#    libraries cc1 links: gcc-12:arm64 does not install beside the amd64
#    gcc-12.
# Needs arm64 in apt's architectures (dpkg --add-architecture arm64;
# apt-get update: INSTR_WITH_AARCH64=1 scripts/install-deps.sh), which
# installs nothing.  Writes DIR/gcc-plugin-dev.version (the version the
# arm64 .deb's Depends: gcc-12 (= V) names).  Does nothing when DIR has it.
#   scripts/fetch-arm64-root.sh DIR [GCC_MAJOR]
set -eu
dir=$1
major=${2:-12}
[ -s "$dir/gcc-plugin-dev.version" ] && exit 0
mkdir -p "$dir/debs"
cd "$dir/debs"
tools="zlib1g zlib1g-dev libdw1 libdw-dev libelf1 libelf-dev libunwind8 libunwind-dev libiberty-dev
       liblzma5 liblzma-dev libbz2-1.0 libzstd1"
gcc="gcc-$major-plugin-dev libgmp-dev gcc-$major cpp-$major libisl23 libmpc3 libmpfr6 libgmp10"
# shellcheck disable=SC2086
apt-get download -q=2 $(for p in $tools $gcc; do echo "$p:arm64"; done) 2>&1 |
    grep -v '^W: Download is performed unsandboxed' >&2 || true
for deb in *.deb; do
    dpkg-deb -x "$deb" "$dir"
done
# Absolute links (libz.so -> /lib/aarch64-linux-gnu/libz.so.1.2.13) point
# into DIR.
find "$dir" -type l | while read -r link; do
    case $(readlink "$link") in
    /*) ln -sfn "$dir$(readlink "$link")" "$link" ;;
    esac
done
dpkg-deb -f "gcc-$major-plugin-dev_"*_arm64.deb Version >"$dir/gcc-plugin-dev.version.tmp"
cd "$dir"
rm -rf debs
mv gcc-plugin-dev.version.tmp gcc-plugin-dev.version
echo "instr: arm64 libraries and gcc-$major $(cat gcc-plugin-dev.version) unpacked in $dir"

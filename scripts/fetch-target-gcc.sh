#!/bin/sh
# Unpacks, into DIR (cmake -DINSTR_TARGET_GCC_ROOT=DIR), the arm64 GCC a native arm64 machine's instr plugin is
# built against (its plugin headers and gmp.h) and run by (cc1 and the
# libraries it links, for the test under qemu): Debian's arm64 packages,
# fetched with apt-get download (dpkg --add-architecture arm64 and apt-get
# update first: INSTR_WITH_AARCH64=1 scripts/install-deps.sh), not
# installed: gcc-12:arm64 does not install beside the amd64 gcc-12.
# Writes DIR/gcc-plugin-dev.version (the package version, which the arm64
# .deb's Depends: gcc-12 (= V) names).  Does nothing when DIR has it.
#   scripts/fetch-target-gcc.sh DIR [GCC_MAJOR]
set -eu
dir=$1
major=${2:-12}
[ -s "$dir/gcc-plugin-dev.version" ] && exit 0
mkdir -p "$dir/debs"
cd "$dir/debs"
# Headers for the build, cc1 and its libraries for the test.
apt-get download -q=2 "gcc-$major-plugin-dev:arm64" libgmp-dev:arm64 "gcc-$major:arm64" "cpp-$major:arm64" \
    libisl23:arm64 libmpc3:arm64 libmpfr6:arm64 libgmp10:arm64 libzstd1:arm64 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true
for deb in *.deb; do
    dpkg-deb -x "$deb" "$dir"
done
dpkg-deb -f "gcc-$major-plugin-dev_"*_arm64.deb Version >"$dir/gcc-plugin-dev.version.tmp"
cd "$dir"
rm -rf debs
mv gcc-plugin-dev.version.tmp gcc-plugin-dev.version
echo "instr: arm64 gcc-$major $(cat gcc-plugin-dev.version) unpacked in $dir"

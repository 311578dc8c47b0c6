#!/bin/sh
# The arm64 Debian package of the cross build (cpack -G DEB in CROSS):
# dpkg-deb says Architecture: arm64, every ELF file in it is aarch64
# (readelf -h), its Depends name the libraries they link, and its
# instr-report, extracted, runs under qemu and reports a dump of an
# aarch64 program.  RUNNER finds the libraries of the tools and of cc1
# (LD_LIBRARY_PATH into TARGET_ROOT).  The plugin: with TARGET_ROOT (arm64
# packages unpacked by scripts/fetch-arm64-root.sh, the build's
# INSTR_TARGET_ROOT, with gcc-12) the
# package's plugin is an aarch64 object that arm64's own cc1, run under
# qemu, loads: it instruments tests/e2e/calls.c, and the program's calls
# equal those of the same source built by the cross compiler with the
# build's cross plugin; Depends names that gcc-12 exactly.  With TARGET_ROOT
# "-" the package must hold no plugin (the build's is the cross
# compiler's, an x86-64 object; cmake/instr-package.cmake).
# Exit 77 (skipped) when the cross build has no tools, saying why.
#   check-deb.sh CROSS TARGET_ROOT|- SRC RUNNER...
set -eu
cross=$1
tgcc=$2
src=$3
shift 3
if [ ! -x "$cross/bin/instr-report" ]; then
    echo "SKIP: no aarch64 tools in $cross: its configure says which arm64 libraries are missing (scripts/fetch-arm64-root.sh)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
rm -f "$cross"/instr_*_arm64.deb
(cd "$cross" && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
deb=$(ls "$cross"/instr_*_arm64.deb)
echo "package: $(basename "$deb")"
dpkg-deb -I "$deb" >"$work/info"
arch=$(dpkg-deb -f "$deb" Architecture)
[ "$arch" = arm64 ] && echo "ok: Architecture: arm64" || { echo "FAIL: Architecture: $arch"; status=1; }
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libdw1 libelf1 zlib1g libunwind8; do
    echo "$depends" | grep -q "$lib" || { echo "FAIL: Depends lacks $lib"; status=1; }
done
dpkg-deb -x "$deb" "$work/root"
elves=0
for f in $(find "$work/root" -type f); do
    head -c 4 "$f" | grep -q "ELF" || continue
    elves=$((elves + 1))
    machine=$(readelf -h "$f" | sed -n 's/^ *Machine: *//p')
    if [ "$machine" = AArch64 ]; then
        echo "ok: ${f#"$work/root"} is AArch64"
    else
        echo "FAIL: ${f#"$work/root"} is $machine"
        status=1
    fi
done
[ $elves -ge 4 ] || { echo "FAIL: $elves ELF files (instr-report, instr-dump, instr-sample, libinstr-rt.so expected)"; status=1; }
plugin=$work/root/usr/lib/instr/instr.so
if [ "$tgcc" != - ] && [ ! -s "$tgcc/gcc-plugin-dev.version" ]; then
    echo "note: no arm64 gcc in $tgcc (tests/aarch64/build.sh could not fetch it): checking that the package has no plugin"
    tgcc=-
fi
if [ "$tgcc" = - ]; then
    if find "$work/root" -name 'instr*.so' | grep -q .; then
        echo "FAIL: a plugin in the arm64 package: $(find "$work/root" -name 'instr*.so')"
        status=1
    fi
elif [ ! -f "$plugin" ]; then
    echo "FAIL: no plugin in the arm64 package"
    status=1
else
    version=$(cat "$tgcc/gcc-plugin-dev.version")
    echo "$depends" | grep -qF "gcc-12 (= $version)" || { echo "FAIL: Depends lacks gcc-12 (= $version)"; status=1; }
    # arm64's own cc1 (not the cross compiler's) with the package's
    # plugin; the cross compiler preprocesses, assembles and links (under
    # qemu-user a driver cannot exec cc1 without binfmt_misc).
    cc1=$(find "$tgcc/usr/lib/gcc/aarch64-linux-gnu" -name cc1 | head -1)
    aarch64-linux-gnu-gcc-12 -E "$src/tests/e2e/calls.c" -o "$work/calls.i"
    if "$@" "$cc1" -fpreprocessed -quiet -O2 \
        -fplugin="$plugin" "$work/calls.i" -o "$work/calls.s" 2>"$work/cc1.err" &&
        aarch64-linux-gnu-gcc-12 -o "$work/calls" "$work/calls.s" 2>>"$work/cc1.err"; then
        echo "ok: arm64's cc1 ($version) under qemu loaded the package's plugin"
        INSTR_OUTPUT="$work/native.instr" "$@" "$work/calls" >/dev/null
        INSTR_OUTPUT="$work/cross.instr" "$@" "$cross/e2e-calls-O2" >/dev/null
        "$@" "$work/root/usr/bin/instr-report" "$work/native.instr" | awk '/^Calls/ {t = 1; next} t && NF {print $1, $NF}' | sort >"$work/native.calls"
        "$@" "$work/root/usr/bin/instr-report" "$work/cross.instr" | awk '/^Calls/ {t = 1; next} t && NF {print $1, $NF}' | sort >"$work/cross.calls"
        if [ -s "$work/native.calls" ] && cmp -s "$work/native.calls" "$work/cross.calls"; then
            echo "ok: its calls equal the cross-built program's: $(tr '\n' ' ' <"$work/native.calls")"
        else
            echo "FAIL: calls of the program arm64's cc1 built, then of the cross-built one:"
            cat "$work/native.calls" "$work/cross.calls"
            status=1
        fi
    else
        echo "FAIL: arm64's cc1 with the package's plugin:"
        cat "$work/cc1.err"
        status=1
    fi
fi
INSTR_OUTPUT="$work/a64.instr" "$@" "$cross/e2e-calls-O2" >/dev/null
"$@" "$work/root/usr/bin/instr-report" "$work/a64.instr" >"$work/report" 2>&1 || true
if grep -q "main" "$work/report" && grep -q "aarch64" "$work/report"; then
    echo "ok: the package's instr-report under qemu reports the aarch64 dump"
else
    echo "FAIL: the package's instr-report under qemu:"
    status=1
fi
cat "$work/report"
[ $status = 0 ] && echo "PASS: the arm64 package"
exit $status

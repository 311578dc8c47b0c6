#!/bin/sh
# Call counts of a real program against callgrind: Lua 5.4 (Debian's
# source, as bench/run-real.py fetches it), built with the plugin at -O2,
# running oracle.lua; check-callgrind.py compares every function.
#   run-lua.sh [--plain] GCC PLUGIN LUA_SRC_DIR WORK_DIR CHECK_ARGS...
# --plain: Lua is built without the plugin too, and callgrind runs that
# build (check-callgrind.py --plain): the instrumented Lua must make the
# calls the plain one makes.
# LUA_SRC_DIR: the source package's src/ (lua.c, lvm.c...); empty or
# missing: skipped (77).  bench/run-real.py --only lua leaves one under
# BUILD/bench/real/src/lua5.4-*/src.
set -eu
plain=
if [ "${1:-}" = --plain ]; then
    plain=1
    shift
fi
cc=$1 plugin=$2 src=$3 work=$4
shift 4
if [ -z "$src" ] || [ ! -f "$src/lvm.c" ]; then
    echo "SKIP: no Lua source (configure with -DINSTR_LUA_SOURCE=.../lua5.4-*/src)"
    exit 77
fi
mkdir -p "$work/inc"
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$work/inc/lua5.4-deb-multiarch.h"
files=
for f in "$src"/*.c; do
    [ "$(basename "$f")" = luac.c ] || files="$files $f"
done
# --plain: two builds, two runs.  Lua's string-hash seed mixes addresses
# and the time, and the hash collisions decide how often internshrstr
# compares and mainpositionTV runs; table.sort takes its pivots from
# clock() and time(): both made constant make the two runs the same.
# luaS_new's cache of C strings picks its slot by the string's address,
# which differs between the two builds: with one slot of one entry, a hit
# depends on the strings looked up alone (before: 6 more calls of
# luaS_newlstr from luaS_new in the instrumented build).
fixed=
if [ -n "$plain" ]; then
    fixed="-Dluai_makeseed(L)=0u -Dl_randomizePivot()=0u -DSTRCACHE_N=1 -DSTRCACHE_M=1"
fi
# shellcheck disable=SC2086 # files and fixed are lists
"$cc" -O2 -I"$work/inc" -DLUA_USE_POSIX $fixed -fplugin="$plugin" -o "$work/lua" $files -lm
if [ -n "$plain" ]; then
    # The plain build at a path as long as the instrumented one's: Lua
    # keeps argv[0] in a string, and a few bytes more moved a collector
    # step (reallymarkobject called once more in one checkout, not in
    # another).
    mkdir -p "$work/p"
    # shellcheck disable=SC2086
    "$cc" -O2 -I"$work/inc" -DLUA_USE_POSIX $fixed -o "$work/p/lua" $files -lm
    mkdir -p "$work/i"
    mv "$work/lua" "$work/i/lua"
    exec "$@" --exe "$work/i/lua" --plain "$work/p/lua" --arg "$(dirname "$0")/oracle.lua"
fi
exec "$@" --exe "$work/lua" --arg "$(dirname "$0")/oracle.lua"

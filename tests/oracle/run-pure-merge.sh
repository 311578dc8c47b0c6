#!/bin/sh
# pure-merge.c built in count mode against callgrind on its plain build,
# with one compiler and one form of the counters (check-callgrind.py
# --count): count mode must count the calls the plain build makes.
#   run-pure-merge.sh GCC PLUGIN SRC_DIR WORK_DIR FORM CHECK_ARGS...
# FORM: tls (an executable's thread-local cells) or pic (-fPIC: per-thread
# copies; with -fno-semantic-interposition, in both builds, so that GCC
# may find weight const and lookup pure as it does in an executable).
set -eu
cc=$1 plugin=$2 src=$3 work=$4 form=$5
shift 5
flags=
if [ "$form" = pic ]; then
    flags="-fPIC -fno-semantic-interposition"
fi
mkdir -p "$work"
# shellcheck disable=SC2086 # flags is a list
"$cc" -O2 $flags "$src/pure-merge.c" -o "$work/plain"
# shellcheck disable=SC2086
"$cc" -O2 $flags -fplugin="$plugin" -fplugin-arg-instr-mode=count "$src/pure-merge.c" -o "$work/count"
exec "$@" --exe "$work/count" --count --plain "$work/plain"

#!/bin/sh
# One command from a fresh clone to a report: installs what is missing,
# builds instr and its examples, runs an instrumented example and reports it.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build >/dev/null
echo "building instr and the examples (log: build/build.log)"
cmake --build build -j"$(nproc)" >build/build.log 2>&1 || { tail -40 build/build.log; exit 1; }
rm -rf build/demo && mkdir -p build/demo && cd build/demo
../examples/primes
echo
../bin/instr-report primes.*.instr

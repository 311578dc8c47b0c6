#!/bin/sh
# One command from a fresh clone to a report: installs what is missing,
# builds instr and its examples, runs an instrumented example and reports it.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
rm -rf build/demo && mkdir -p build/demo && cd build/demo
../examples/primes
echo
../bin/instr-report primes.*.instr
